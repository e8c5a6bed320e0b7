//! Declared tools through the real binary: argv, coercion, invalid calls answered, consent.

use mm_test_support::{Reply, ScriptedServer};
use serde_json::json;

use super::{Case, agent_with_tools, last_tool_message, tool_messages};

const ECHO_TOOL: &str = r#"  echoargs:
    description: Record the value.
    parameters:
      value: {type: string, description: "Any text."}
    command: ["./rec", "{{value}}", "--flag={{value}}"]
"#;

#[test]
fn hostile_values_reach_the_program_as_one_unchanged_argv_entry() {
    let hostile = [
        "1.4.2; rm -rf ~",
        "$(id)",
        "`id`",
        "a | cat /etc/passwd",
        "line one\nline two",
        "-rf",
        "--help",
        "'quoted' \"double\" \\ back",
        "> /tmp/redirected",
    ];
    for value in hostile {
        let case = Case::new(&agent_with_tools(ECHO_TOOL));
        let server = ScriptedServer::start(vec![
            Reply::tool_call("echoargs", json!({ "value": value }).to_string()),
            Reply::text("done"),
        ]);
        case.mm(&server)
            .args(["-p", "go"])
            .assert()
            .success()
            .stdout("done\n");
        assert_eq!(
            case.calls(),
            vec![vec![value.to_string(), format!("--flag={value}")]],
            "value {value:?}"
        );
        server.assert_every_tool_call_answered();
    }
}

#[test]
fn a_value_holding_a_placeholder_stays_literal() {
    let tools = r#"  pair:
    description: Record two values.
    parameters:
      a: {type: string}
      b: {type: string}
    command: ["./rec", "{{a}}", "{{ b }}"]
"#;
    let case = Case::new(&agent_with_tools(tools));
    let server = ScriptedServer::start(vec![
        Reply::tool_call("pair", r#"{"a":"{{b}}","b":"x {{a}}"}"#),
        Reply::text("ok"),
    ]);
    case.mm(&server).args(["-p", "go"]).assert().success();
    assert_eq!(
        case.calls(),
        vec![vec!["{{b}}".to_string(), "x {{a}}".to_string()]]
    );
}

const RELEASE_TOOL: &str = r#"  release:
    description: Publish a release of the product to a channel.
    parameters:
      version: {type: string, description: "The version, like 1.4.2."}
      channel: {type: string, enum: [stable, beta]}
      dry_run: {type: boolean, required: false}
    command: ["./rec", "{{version}}", "--channel={{channel}}", "--dry-run={{dry_run}}"]
"#;

#[test]
fn a_packed_call_is_answered_with_the_call_quoted_back_then_the_corrected_call_runs() {
    let case = Case::new(&agent_with_tools(RELEASE_TOOL));
    let packed = r#"{"version":"1.4.2 1.4.2, channel beta"}"#;
    let server = ScriptedServer::start(vec![
        Reply::tool_call("release", packed),
        Reply::tool_call("release", r#"{"version":"1.4.2","channel":"beta"}"#),
        Reply::text("Released."),
    ]);
    case.mm(&server)
        .args(["-p", "release 1.4.2 to beta"])
        .assert()
        .success()
        .stdout("Released.\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let answer = &tool_messages(&requests[1])[0];
    assert!(answer.contains(packed), "the call is quoted back: {answer}");
    assert!(
        answer.contains("channel"),
        "names the missing parameter: {answer}"
    );
    assert!(
        answer.contains("stable") && answer.contains("beta"),
        "lists allowed values: {answer}"
    );
    // Only the corrected call ran; the omitted optional's entry was dropped.
    assert_eq!(
        case.calls(),
        vec![vec!["1.4.2".to_string(), "--channel=beta".to_string()]]
    );
    server.assert_every_tool_call_answered();
}

#[test]
fn lenient_coercion_accepts_numeric_and_boolean_strings() {
    let tools = r#"  typed:
    description: Typed values.
    parameters:
      count: {type: integer}
      flag: {type: boolean}
      ratio: {type: number}
    command: ["./rec", "{{count}}", "{{flag}}", "{{ratio}}"]
"#;
    let case = Case::new(&agent_with_tools(tools));
    let server = ScriptedServer::start(vec![
        Reply::tool_call("typed", r#"{"count":"3","flag":"true","ratio":"2.5"}"#),
        Reply::text("ok"),
    ]);
    case.mm(&server).args(["-p", "go"]).assert().success();
    assert_eq!(
        case.calls(),
        vec![vec!["3".to_string(), "true".to_string(), "2.5".to_string()]]
    );
}

#[test]
fn guesses_are_refused_with_the_reason() {
    let tools = r#"  typed:
    description: Typed values.
    parameters:
      count: {type: integer}
      flag: {type: boolean}
    command: ["./rec", "{{count}}", "{{flag}}"]
"#;
    for (args, bad) in [
        (r#"{"count":3,"flag":"yes"}"#, "flag"),
        (r#"{"count":"three","flag":true}"#, "count"),
        (r#"{"count":"3.5","flag":true}"#, "count"),
        (r#"{"count":[3],"flag":true}"#, "count"),
        (r#"{"count":null,"flag":true}"#, "count"),
        (r#"{"count":3,"flag":true,"extra":1}"#, "extra"),
    ] {
        let case = Case::new(&agent_with_tools(tools));
        let server =
            ScriptedServer::start(vec![Reply::tool_call("typed", args), Reply::text("ok")]);
        case.mm(&server).args(["-p", "go"]).assert().success();
        let answer = last_tool_message(&server);
        assert!(
            answer.contains(bad),
            "{args}: the answer names {bad}: {answer}"
        );
        assert!(
            answer.contains(args),
            "{args}: the call is quoted back: {answer}"
        );
        assert!(
            case.calls().is_empty(),
            "{args}: the invalid call was not run"
        );
    }
}

#[test]
fn enum_is_enforced() {
    let case = Case::new(&agent_with_tools(RELEASE_TOOL));
    let server = ScriptedServer::start(vec![
        Reply::tool_call("release", r#"{"version":"1.4.2","channel":"alpha"}"#),
        Reply::text("ok"),
    ]);
    case.mm(&server).args(["-p", "go"]).assert().success();
    let answer = last_tool_message(&server);
    assert!(
        answer.contains("alpha") && answer.contains("stable"),
        "{answer}"
    );
    assert!(case.calls().is_empty());
}

#[test]
fn unparseable_arguments_are_quoted_raw() {
    let case = Case::new(&agent_with_tools(RELEASE_TOOL));
    let raw = "{version: 1.4.2, channel=beta";
    let server = ScriptedServer::start(vec![Reply::tool_call("release", raw), Reply::text("ok")]);
    case.mm(&server).args(["-p", "go"]).assert().success();
    let answer = last_tool_message(&server);
    assert!(answer.contains(raw), "{answer}");
    assert!(case.calls().is_empty());
}

#[test]
fn arguments_sent_as_a_json_string_are_decoded_once() {
    let case = Case::new(&agent_with_tools(ECHO_TOOL));
    let inner = json!({"value": "x"}).to_string();
    let server = ScriptedServer::start(vec![
        Reply::tool_call(
            "echoargs",
            serde_json::to_string(&inner).unwrap_or_default(),
        ),
        Reply::text("ok"),
    ]);
    case.mm(&server).args(["-p", "go"]).assert().success();
    assert_eq!(
        case.calls(),
        vec![vec!["x".to_string(), "--flag=x".to_string()]]
    );
}

#[test]
fn several_calls_in_one_reply_run_in_order_and_whole_chunk_calls_work() {
    let case = Case::new(&agent_with_tools(ECHO_TOOL));
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(vec![
            ("echoargs", r#"{"value":"one"}"#),
            ("echoargs", r#"{"value":"two"}"#),
        ]),
        Reply::tool_call("echoargs", r#"{"value":"three"}"#).whole(),
        Reply::text("ok"),
    ]);
    case.mm(&server)
        .args(["-p", "go"])
        .assert()
        .success()
        .stdout("ok\n");
    let firsts: Vec<String> = case.calls().into_iter().map(|c| c[0].clone()).collect();
    assert_eq!(firsts, ["one", "two", "three"]);
    server.assert_every_tool_call_answered();
}

#[test]
fn without_yolo_and_without_a_terminal_calls_are_refused_and_the_model_told() {
    let agent = format!("---\ntools:\n{ECHO_TOOL}---\nTest.\n");
    let case = Case::new(&agent);
    let server = ScriptedServer::start(vec![
        Reply::tool_call("echoargs", r#"{"value":"x"}"#),
        Reply::text("ok"),
    ]);
    case.mm(&server).args(["-p", "go"]).assert().success();
    assert!(case.calls().is_empty(), "not run without consent");
    assert!(last_tool_message(&server).contains("did not allow"));

    // --yolo, and an allow: entry, let it run.
    let server = ScriptedServer::start(vec![
        Reply::tool_call("echoargs", r#"{"value":"x"}"#),
        Reply::text("ok"),
    ]);
    case.mm(&server)
        .args(["--yolo", "-p", "go"])
        .assert()
        .success();
    assert_eq!(case.calls().len(), 1);
    let allowed = Case::new(&format!(
        "---\nallow: [echoargs]\ntools:\n{ECHO_TOOL}---\nTest.\n"
    ));
    let server = ScriptedServer::start(vec![
        Reply::tool_call("echoargs", r#"{"value":"x"}"#),
        Reply::text("ok"),
    ]);
    allowed.mm(&server).args(["-p", "go"]).assert().success();
    assert_eq!(allowed.calls().len(), 1);
}

#[test]
fn bash_follows_the_same_rules() {
    let case = Case::new("---\nyolo: true\n---\nTest.\n");
    let server = ScriptedServer::start(vec![
        Reply::tool_call("bash", r#"{"command":"echo hello; exit 3"}"#),
        Reply::text("ok"),
    ]);
    case.mm(&server).args(["-p", "go"]).assert().success();
    let answer = last_tool_message(&server);
    assert!(
        answer.contains("hello") && answer.contains("exit code 3"),
        "{answer}"
    );
}

#[test]
fn an_unknown_tool_is_answered_with_the_tool_list() {
    let case = Case::new(&agent_with_tools(ECHO_TOOL));
    let server = ScriptedServer::start(vec![Reply::tool_call("nope", "{}"), Reply::text("ok")]);
    case.mm(&server).args(["-p", "go"]).assert().success();
    let answer = last_tool_message(&server);
    assert!(
        answer.contains("nope") && answer.contains("echoargs"),
        "{answer}"
    );
}
