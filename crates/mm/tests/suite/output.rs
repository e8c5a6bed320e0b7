//! What mm prints and sends: `mm tools`, output formats, streaming or not, turn limits.

use mm_test_support::{Reply, ScriptedServer};
use serde_json::Value;

use super::{Case, agent_with_tools, tool_messages};

pub(crate) const TOOLS: &str = r#"  release:
    description: Publish a release of the product to a channel
    parameters:
      version: {type: string, description: "The version, like 1.4.2."}
      channel: {type: string, enum: [stable, beta]}
      dry_run: {type: boolean, required: false}
    command: ["./rec", "{{version}}", "--channel={{channel}}", "--dry-run={{dry_run}}"]
  status:
    description: Report the status of a service.
    parameters:
      service: {type: string}
    command: ["./rec", "{{service}}"]
"#;

/// Constrained mode sends no `tools`: the model reads them in the system prompt and its reply
/// must match a schema. `mm tools` prints both, as the first request carries them.
#[test]
fn mm_tools_prints_what_constrained_mode_sends_instead_of_tools() {
    let agent = agent_with_tools(TOOLS).replacen("---\n", "---\ntool_calls: constrained\n", 1);
    let case = Case::new(&agent);
    let server = ScriptedServer::start(vec![Reply::text(r#"{"answer": "hi"}"#)]);
    let printed = case
        .mm(&server)
        .arg("tools")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let printed: Value = serde_json::from_slice(&printed).expect("mm tools prints JSON");
    assert_eq!(printed["tool_calls"], "constrained");

    case.mm(&server).args(["-p", "hello"]).assert().success();
    let sent = server.requests().last().cloned().expect("a request");
    assert!(sent.get("tools").is_none_or(Value::is_null), "{sent}");
    let system = sent["messages"][0]["content"].as_str().expect("system");
    let listed = printed["tools_in_system_prompt"]
        .as_str()
        .expect("the tools' text");
    assert!(listed.starts_with("# Tools\n\n- release("), "{listed}");
    assert!(system.ends_with(listed), "{system}\n--- printed:\n{listed}");
    // The scripted server answers `/props` like llama-server: a grammar, not a schema.
    assert_eq!(printed["response_format"], sent["response_format"]);
    assert_eq!(printed["grammar"], sent["grammar"]);
    assert!(
        printed["grammar"].is_string() || printed["response_format"].is_object(),
        "{printed}"
    );
}

#[test]
fn mm_tools_prints_the_tools_exactly_as_sent_to_the_model() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let printed = case
        .mm_offline()
        .arg("tools")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let printed: Value = serde_json::from_slice(&printed).expect("mm tools prints JSON");

    let server = ScriptedServer::start(vec![Reply::text("hi")]);
    case.mm(&server).args(["-p", "hello"]).assert().success();
    let sent = server.requests()[0]["tools"].clone();
    assert_eq!(printed, sent);

    // The schema the model reads: no `required` / `enum` keywords; the rules in the descriptions.
    let release = &printed[0]["function"];
    assert_eq!(release["name"], "release");
    assert_eq!(
        release["description"],
        "Publish a release of the product to a channel. Give each parameter as its own field."
    );
    let text = release["parameters"].to_string();
    assert!(
        !text.contains("\"required\"") && !text.contains("\"enum\""),
        "{text}"
    );
    let channel = release["parameters"]["properties"]["channel"]["description"]
        .as_str()
        .unwrap_or_default();
    assert!(
        channel.contains("Required.") && channel.contains("One of: stable, beta."),
        "{channel}"
    );
    let dry = release["parameters"]["properties"]["dry_run"]["description"]
        .as_str()
        .unwrap_or_default();
    assert!(dry.contains("Optional."), "{dry}");
}

#[test]
fn streaming_and_non_streaming_servers_both_work() {
    for stream in [true, false] {
        let case = Case::new(&agent_with_tools(TOOLS));
        let server = ScriptedServer::start(vec![
            Reply::tool_call("status", r#"{"service":"billing"}"#),
            Reply::text("Billing is fine."),
        ]);
        let mut cmd = case.mm(&server);
        if !stream {
            cmd.arg("--no-stream");
        }
        cmd.args(["-p", "status of billing?"])
            .assert()
            .success()
            .stdout("Billing is fine.\n");
        let requests = server.requests();
        assert_eq!(requests[0]["stream"].as_bool().unwrap_or(false), stream);
        assert_eq!(
            requests[0]["max_tokens"], 2048,
            "every request carries max_tokens"
        );
        assert_eq!(case.calls(), vec![vec!["billing".to_string()]]);
        assert!(tool_messages(&requests[1])[0].contains("recorded 1 args"));
    }
}

#[test]
fn json_output_reports_the_turn() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let server = ScriptedServer::start(vec![
        Reply::tool_call("status", r#"{"service":"billing"}"#),
        Reply::text("fine").with_usage(10, 2),
    ]);
    let out = case
        .mm(&server)
        .args(["-p", "go", "--output-format", "json"])
        .assert()
        .success();
    let report: Value = serde_json::from_slice(&out.get_output().stdout).expect("one JSON object");
    assert_eq!(report["result"], "fine");
    assert_eq!(report["stop_reason"], "done");
    assert_eq!(report["turns"], 2);
    assert_eq!(report["tool_calls"][0]["name"], "status");
    assert_eq!(report["tool_calls"][0]["arguments"]["service"], "billing");
    assert_eq!(report["tool_calls"][0]["ok"], true);
    assert_eq!(report["tool_calls"][0]["exit_code"], 0);
    assert!(report["tool_calls"][0]["duration_ms"].is_u64());
    assert_eq!(report["usage"]["completion_tokens"], 2);
    assert!(report["duration_ms"].is_u64());
    assert_eq!(report["truncated"], false);
}

#[test]
fn temperature_and_seed_reach_every_request_and_a_cut_answer_is_reported() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let server = ScriptedServer::start(vec![
        Reply::tool_call("status", r#"{"service":"billing"}"#),
        Reply::text("The billing service is").with_finish_reason("length"),
        Reply::text("The billing").with_finish_reason("length"),
    ]);
    let out = case
        .mm(&server)
        .args(["-p", "go", "--output-format", "json"])
        .args(["--temperature", "0.7", "--seed", "12"])
        .assert()
        .success();
    let report: Value = serde_json::from_slice(&out.get_output().stdout).expect("one JSON object");
    assert_eq!(report["truncated"], true);
    for request in server.requests() {
        assert_eq!(request["temperature"], 0.7);
        assert_eq!(request["seed"], 12);
    }
    case.mm_offline()
        .args(["-p", "go", "--temperature", "hot"])
        .assert()
        .code(2);
}

#[test]
fn stream_json_prints_one_event_a_line() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let server = ScriptedServer::start(vec![
        Reply::tool_call("status", r#"{"service":"billing"}"#),
        Reply::text("fine"),
    ]);
    let out = case
        .mm(&server)
        .args(["-p", "go", "--output-format", "stream-json"])
        .assert()
        .success();
    let lines: Vec<Value> = String::from_utf8_lossy(&out.get_output().stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    let types: Vec<&str> = lines.iter().filter_map(|l| l["type"].as_str()).collect();
    assert!(
        types.contains(&"tool_call") && types.contains(&"tool_result"),
        "{types:?}"
    );
    assert_eq!(types.last(), Some(&"result"));
    assert_eq!(
        lines.last().map(|l| l["result"].clone()),
        Some(Value::from("fine"))
    );
}

#[test]
fn the_loop_detector_stops_at_the_fifth_identical_call() {
    let case = Case::new(&agent_with_tools(TOOLS));
    // An invalid call (an unknown parameter): answered, not run, and counted all the same.
    // Without llama-server's `/props` the repair step has no grammar: the model's calls stay
    // its own.
    let call = || Reply::tool_call("status", r#"{"servce":"billing"}"#);
    let server = ScriptedServer::builder()
        .without_props()
        .script(vec![
            call(),
            call(),
            call(),
            call(),
            call(),
            Reply::text("never"),
        ])
        .start();
    let out = case.mm(&server).args(["-p", "go"]).assert().code(3);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("5 times"));
    assert!(case.calls().is_empty(), "an invalid call never runs");
    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    let third = tool_messages(&requests[3]).pop().unwrap_or_default();
    assert!(
        third.contains("3 times"),
        "from the third call on the model is warned: {third}"
    );
    assert!(
        !tool_messages(&requests[2])
            .pop()
            .unwrap_or_default()
            .contains("times in a row")
    );
}

#[test]
fn a_call_that_repeats_one_that_worked_is_not_run_and_the_answer_is_asked_for() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let server = ScriptedServer::start(vec![
        Reply::tool_call("status", r#"{"service":"billing"}"#),
        // The same call, with a parameter the model invented from the output.
        Reply::tool_call("status", r#"{"service":"billing","version":"2.3.1"}"#),
        Reply::text("Billing is running."),
    ]);
    let out = case
        .mm(&server)
        .args(["-p", "go"])
        .assert()
        .success()
        .stdout("Billing is running.\n");
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert_eq!(case.calls().len(), 1, "the repeat is not run: {stderr}");
    assert!(!stderr.contains("invalid"), "{stderr}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    // The repeat is not in the conversation: the answer step follows the first result.
    let roles: Vec<&str> = requests[2]["messages"]
        .as_array()
        .map(|m| m.iter().filter_map(|m| m["role"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "user"]);
}

#[test]
fn a_repeat_with_another_call_between_runs_as_usual() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let status = || Reply::tool_call("status", r#"{"service":"billing"}"#);
    let server = ScriptedServer::start(vec![
        status(),
        Reply::tool_call("status", r#"{"service":"auth"}"#),
        status(),
        Reply::text("Both are running."),
    ]);
    case.mm(&server)
        .args(["-p", "go"])
        .assert()
        .success()
        .stdout("Both are running.\n");
    assert_eq!(case.calls().len(), 3);
}

#[test]
fn invalid_calls_count_for_the_loop_detector_too() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let call = || Reply::tool_call("status", r#"{"svc":"billing"}"#);
    let server = ScriptedServer::start(vec![
        call(),
        call(),
        call(),
        call(),
        call(),
        Reply::text("never"),
    ]);
    case.mm(&server).args(["-p", "go"]).assert().code(3);
    assert!(case.calls().is_empty());
}

#[test]
fn max_turns_stops_the_turn_with_exit_3() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let server = ScriptedServer::start(vec![
        Reply::tool_call("status", r#"{"service":"a"}"#),
        Reply::tool_call("status", r#"{"service":"b"}"#),
        Reply::tool_call("status", r#"{"service":"c"}"#),
        Reply::text("never"),
    ]);
    let out = case
        .mm(&server)
        .args(["--max-turns", "2", "-p", "go"])
        .assert()
        .code(3);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("max_turns"));
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn the_prompt_can_come_from_stdin() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let server = ScriptedServer::start(vec![Reply::text("hi")]);
    case.mm(&server)
        .args(["-p", "-"])
        .write_stdin("question from stdin")
        .assert()
        .success()
        .stdout("hi\n");
    let user = server.requests()[0]["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "user").cloned())
        .unwrap_or_default();
    assert_eq!(user["content"], "question from stdin");
}

#[test]
fn the_echo_goes_to_stderr_and_stdout_has_only_the_answer() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let server = ScriptedServer::start(vec![
        Reply::tool_call("status", r#"{"service":"billing"}"#),
        Reply::text("answer"),
    ]);
    let out = case
        .mm(&server)
        .args(["-p", "go"])
        .assert()
        .success()
        .stdout("answer\n");
    let stderr = String::from_utf8_lossy(&out.get_output().stderr);
    assert!(
        stderr.contains("status")
            && stderr.contains("billing")
            && stderr.contains("recorded 1 args"),
        "{stderr}"
    );
}

#[test]
fn constrained_mode_asks_for_the_answer_after_a_call_that_worked() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let server = ScriptedServer::builder()
        .supports_tool_calls(Some(false))
        .script(vec![
            Reply::tool_call("status", r#"{"service":"billing"}"#),
            Reply::text("Billing is running."),
        ])
        .start();
    case.mm(&server)
        .args(["-p", "go"])
        .assert()
        .success()
        .stdout("Billing is running.\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let constraint = |r: &Value| format!("{}{}", r["grammar"], r["response_format"]);
    for r in &requests {
        assert!(
            r.get("tools").is_none_or(Value::is_null),
            "constrained mode sends no tools"
        );
    }
    assert!(
        constraint(&requests[0]).contains("status"),
        "{}",
        constraint(&requests[0])
    );
    // After the call worked, only an answer is allowed; the tools are still described in the
    // prompt (the server's cached prefix).
    let last = constraint(&requests[1]);
    assert!(
        !last.contains("status") && last.contains("answer"),
        "{last}"
    );
    assert!(
        requests[1]["messages"][0]["content"]
            .as_str()
            .unwrap_or_default()
            .contains("status(")
    );
    assert_eq!(case.calls().len(), 1);
}

#[test]
fn after_a_call_written_as_text_the_answer_step_keeps_the_prompt_and_allows_no_call() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let server = ScriptedServer::start(vec![
        // A call written as text (as Qwen2.5-Coder writes it): the reply is that call.
        Reply::text("{\"name\": \"status\", \"arguments\": {\"service\": \"billing\"}}"),
        Reply::text("Billing is running."),
    ]);
    case.mm(&server)
        .args(["-p", "go"])
        .assert()
        .success()
        .stdout("Billing is running.\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let tools = |r: &Value| r["tools"].as_array().map_or(0, Vec::len);
    // The same tools (the prompt is unchanged), none callable, and on llama-server a grammar
    // that keeps call syntax out; the conversation closes with a request for the answer.
    assert_eq!(tools(&requests[1]), tools(&requests[0]));
    assert_eq!(requests[1]["tool_choice"], "none");
    assert!(requests[0].get("tool_choice").is_none());
    // An answer is short: the step asks for at most 512 tokens, the first request for the
    // agent's limit.
    assert_eq!(requests[1]["max_tokens"], 512, "{}", requests[1]);
    assert!(
        requests[0]["max_tokens"].as_u64() > Some(512),
        "{}",
        requests[0]
    );
    assert!(
        requests[1]["grammar"]
            .as_str()
            .is_some_and(|g| g.starts_with("root ::= [^{")),
        "{}",
        requests[1]
    );
    let messages = requests[1]["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let roles: Vec<&str> = messages.iter().filter_map(|m| m["role"].as_str()).collect();
    assert_eq!(roles[roles.len() - 2..], ["tool", "user"], "{roles:?}");
    let last = messages
        .last()
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default();
    assert!(last.starts_with("Now answer me"), "{last}");
    assert_eq!(case.calls().len(), 1);
}

#[test]
fn a_native_call_is_followed_by_a_normal_request() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let server = ScriptedServer::start(vec![
        Reply::tool_call("status", r#"{"service":"billing"}"#),
        Reply::text("Billing is running."),
    ]);
    case.mm(&server).args(["-p", "go"]).assert().success();
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1].get("tool_choice").is_none());
    assert!(requests[1].get("grammar").is_none());
}

#[test]
fn a_reply_that_repeats_a_call_as_text_and_runs_on_gets_the_answer_step() {
    let case = Case::new(&agent_with_tools(TOOLS));
    // Real (Qwen2.5-Coder-0.5B): the call again, then an invented one, cut.
    let broken = "{\"name\": \"status\", \"arguments\": {\"service\": \"billing\"}}\n{\"name\": \"error rate\", \"arguments\": {";
    let server = ScriptedServer::start(vec![
        Reply::tool_call("status", r#"{"service":"billing"}"#),
        Reply::text(broken),
        Reply::text("Billing is running."),
    ]);
    let out = case
        .mm(&server)
        .args(["-p", "go"])
        .assert()
        .success()
        .stdout("Billing is running.\n");
    // Nothing of the broken reply reached the screen.
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(!stderr.contains("error rate"), "{stderr}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[2]["tool_choice"], "none");
    assert_eq!(case.calls().len(), 1);
}

#[test]
fn junk_is_never_the_answer_the_output_of_the_last_call_stands_in() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let server = ScriptedServer::start(vec![
        // A call written as text: the answer step follows.
        Reply::text("{\"name\": \"status\", \"arguments\": {\"service\": \"billing\"}}"),
        // The prompt copied back, then a refusal: neither is an answer.
        Reply::text("What is the status of the billing service?"),
        Reply::text("I'm sorry, but I can't assist with that."),
    ]);
    let out = case
        .mm(&server)
        .args(["-p", "What is the status of the billing service?"])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert_eq!(stdout, "recorded 1 args\n");
    assert!(
        stderr.contains("no usable answer (a refusal") && stderr.contains("(status) follows"),
        "{stderr}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    // The retry after an answer step is the question and the results in one fresh message.
    let fresh = &requests[2];
    assert!(
        fresh["tools"].as_array().is_none_or(Vec::is_empty),
        "{fresh}"
    );
    let messages = fresh["messages"].as_array().cloned().unwrap_or_default();
    assert_eq!(messages.len(), 2);
    let text = messages[1]["content"].as_str().unwrap_or_default();
    assert!(
        text.contains("What is the status of the billing service?")
            && text.contains("recorded 1 args"),
        "{text}"
    );
}

/// A small model answers in the language of mm's request for the answer, not of the question
/// (docs/eval-results.md): the answer steps of a question in German ask in German; the same
/// steps of an English question in English.
#[test]
fn the_answer_steps_ask_in_the_language_the_user_writes_in() {
    let script = |prompt: &str| {
        vec![
            Reply::text("{\"name\": \"status\", \"arguments\": {\"service\": \"billing\"}}"),
            // The prompt copied back: the fresh answer step follows.
            Reply::text(prompt),
            Reply::text("Billing läuft, 1 Argument."),
        ]
    };
    let german = "Wie ist der Status des Billing-Dienstes?";
    let english = "What is the status of the billing service?";
    let closing = |request: &Value| {
        let messages = request["messages"].as_array().cloned().unwrap_or_default();
        let last = messages.last().cloned().unwrap_or_default();
        last["content"].as_str().unwrap_or_default().to_string()
    };
    let case = Case::new(&agent_with_tools(TOOLS));
    let server = ScriptedServer::start(script(german));
    case.mm(&server)
        .args(["-p", german])
        .assert()
        .success()
        .stdout("Billing läuft, 1 Argument.\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(
        closing(&requests[1]),
        "Antworte mir jetzt in ein oder zwei Sätzen, mit den genauen Zahlen und Referenzen aus \
         den Ergebnissen der Tools."
    );
    let fresh = closing(&requests[2]);
    assert!(
        fresh.starts_with("Meine Frage: Wie ist der Status des Billing-Dienstes?")
            && fresh.contains("Das Tool status antwortete:\nrecorded 1 args")
            && fresh.ends_with("Beantworte meine Frage in Worten, kurz, anhand dieser Ergebnisse."),
        "{fresh}"
    );

    let server = ScriptedServer::start(script(english));
    case.mm(&server).args(["-p", english]).assert().success();
    let requests = server.requests();
    assert!(closing(&requests[1]).starts_with("Now answer me"));
    assert!(closing(&requests[2]).starts_with("My question: What is the status"));
}

#[test]
fn without_a_call_two_useless_replies_are_no_answer() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let server = ScriptedServer::start(vec![Reply::text(""), Reply::text("  ")]);
    let out = case
        .mm(&server)
        .args(["-p", "hello there"])
        .assert()
        .code(3);
    assert!(out.get_output().stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains("no usable answer (an empty answer)"),
        "{stderr}"
    );
}

#[test]
fn a_call_of_a_tool_that_does_not_exist_written_as_text_is_answered_not_shown() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let server = ScriptedServer::start(vec![
        Reply::text("{\"name\": \"weather\", \"arguments\": {\"city\": \"Oslo\"}}"),
        Reply::text("I have no weather tool."),
    ]);
    case.mm(&server)
        .args(["-p", "go"])
        .assert()
        .success()
        .stdout("I have no weather tool.\n");
    let requests = server.requests();
    let answer = tool_messages(&requests[1]).pop().unwrap_or_default();
    assert!(
        answer.contains("no tool named \"weather\"") && answer.contains("status"),
        "{answer}"
    );
}

#[test]
fn dash_c_runs_as_if_started_in_the_folder() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let server = ScriptedServer::start(vec![
        Reply::tool_call("status", r#"{"service":"billing"}"#),
        Reply::text("ok"),
    ]);
    // Started elsewhere: -C finds ./mm.md and runs the tools in the folder.
    let mut cmd = case.mm(&server);
    cmd.current_dir(std::env::temp_dir());
    cmd.arg("-C")
        .arg(case.path())
        .args(["-p", "go"])
        .assert()
        .success()
        .stdout("ok\n");
    assert_eq!(case.calls(), vec![vec!["billing".to_string()]]);
}

#[test]
fn interactive_mode_runs_one_turn_per_line_and_keeps_the_conversation() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let server = ScriptedServer::start(vec![
        Reply::text("first answer"),
        Reply::text("second answer"),
    ]);
    let out = case
        .mm(&server)
        .write_stdin("hello\nand then?\n")
        .assert()
        .success();
    // Interactive mode draws the conversation on stdout.
    let shown = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        shown.contains("first answer") && shown.contains("second answer"),
        "{shown}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let second: Vec<String> = requests[1]["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .map(|m| m["content"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        second.last().map(String::as_str),
        Some(
            "Earlier in this conversation:\nMe: hello\nYou: first answer\n\nMy message now: and then?"
        ),
        "{second:?}"
    );
}

#[test]
fn a_reply_cut_at_max_tokens_is_reported_and_asked_again() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let body = r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"and so on and so"},"finish_reason":"length"}]}"#;
    let server = ScriptedServer::start(vec![Reply::raw_json(body), Reply::text("Short.")]);
    let out = case
        .mm(&server)
        .args(["--no-stream", "-p", "go"])
        .assert()
        .success();
    assert_eq!(
        String::from_utf8_lossy(&out.get_output().stdout),
        "Short.\n"
    );
    let stderr = String::from_utf8_lossy(&out.get_output().stderr);
    assert!(stderr.contains("cut at 2048 tokens"), "{stderr}");
    let requests = server.requests();
    let last = requests[1]["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string();
    assert_eq!(last, "Answer my question in words.");
}

#[test]
fn a_call_of_a_skill_by_its_name_is_answered_with_how_to_read_it() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let path = case.path().join(".mm/skills/health-check/SKILL.md");
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(
        &path,
        "---\nname: health-check\ndescription: Check every service.\n---\nCall status for each service.\n",
    )
    .expect("skill");
    let server = ScriptedServer::start(vec![
        // Written as text (the form every model used in skill mode), then natively.
        Reply::text("{\"name\": \"health-check\", \"arguments\": {}}"),
        Reply::tool_call("health_check", "{}"),
        Reply::text("Done."),
    ]);
    let out = case
        .mm(&server)
        .args(["-p", "check everything"])
        .assert()
        .success()
        .stdout("Done.\n");
    // Echoed as a call, answered by mm, never shown as the answer.
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("● health-check {}"), "{stderr}");
    let requests = server.requests();
    for request in &requests[1..] {
        let answer = tool_messages(request).pop().unwrap_or_default();
        assert!(
            answer.contains("is a skill, not a tool: read it with read_skill")
                && answer.contains("health-check"),
            "{answer}"
        );
    }
}

/// The text `--output-format stream-json` streamed (its `text_delta` events), joined.
fn streamed(stdout: &str) -> String {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "text_delta")
        .filter_map(|e| e["text"].as_str().map(str::to_string))
        .collect()
}

const LONG_ANSWER: &str = "Billing is running, version 2.3.1, and it has been up for four days \
    without trouble; its error rate is 0.02 %, well under the limit of the service, and all three \
    replicas answer.";

/// Junk is not streamed either: a refusal after a call that worked, and a copy of the prompt,
/// are held until judged and never reach the screen; the real answer streams.
#[test]
fn junk_is_not_streamed_before_it_is_judged() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let server = ScriptedServer::start(vec![
        Reply::tool_call("status", r#"{"service":"billing"}"#),
        Reply::text(
            "I'm sorry, but I can't assist with that request about the billing service today.",
        ),
        Reply::text("What is the status of the billing service? Please tell me now."),
        Reply::text(
            "Billing is running, version 2.3.1, and it has been up for four days without trouble.",
        ),
    ]);
    let out = case
        .mm(&server)
        .args([
            "-p",
            "What is the status of the billing service? Please tell me now.",
            "--output-format",
            "stream-json",
        ])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    // Two junk replies: the answer step, then the fresh one; the third is not asked for. The
    // fallback's stand-in is the tool output.
    assert_eq!(server.requests().len(), 3, "{stdout}");
    assert_eq!(streamed(&stdout), "", "{stdout}");

    let case = Case::new(&agent_with_tools(TOOLS));
    let server = ScriptedServer::start(vec![
        Reply::tool_call("status", r#"{"service":"billing"}"#),
        Reply::text("I'm sorry, but I can't assist with that."),
        Reply::text(LONG_ANSWER),
    ]);
    let out = case
        .mm(&server)
        .args(["-p", "Is billing up?", "--output-format", "stream-json"])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert_eq!(streamed(&stdout), LONG_ANSWER, "{stdout}");
    // It streamed in pieces once it could no longer be junk, not in one piece at the end.
    let deltas = stdout
        .lines()
        .filter(|l| l.contains(r#""type":"text_delta""#))
        .count();
    assert!(deltas > 1, "{stdout}");
}

#[test]
fn a_call_written_as_text_is_not_streamed_as_the_answer() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let server = ScriptedServer::start(vec![
        Reply::text("status(service=\"billing\")"),
        Reply::text("Billing is running."),
    ]);
    let out = case
        .mm(&server)
        .args(["-p", "go", "--output-format", "stream-json"])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert_eq!(streamed(&stdout), "Billing is running.", "{stdout}");
    assert_eq!(case.calls(), vec![vec!["billing".to_string()]]);
}

/// Qwen2.5-Coder-1.5B's forms on the project's suite: its call inside `<tools>` and in doubled
/// braces (mm showed the first as "the tool list written out" and did not run the second);
/// Qwen2.5-Coder-0.5B's call cut one brace short (shown as the answer); a Python dict.
#[test]
fn a_call_in_a_tag_or_doubled_braces_runs_and_is_not_streamed() {
    for written in [
        "<tools>\n{\"name\": \"status\", \"arguments\": {\"service\": \"billing\"}}\n</tools>",
        "{{\"name\": \"status\", \"arguments\": {\"service\": \"billing\"}}}Billing is fine.",
        "{\"name\": \"status\", \"arguments\": {\"service\": \"billing\"}",
        "{'name': 'status', 'arguments': {'service': 'billing'}}",
    ] {
        let case = Case::new(&agent_with_tools(TOOLS));
        let server = ScriptedServer::start(vec![
            Reply::text(written),
            Reply::text("Billing is running."),
        ]);
        let out = case
            .mm(&server)
            .args(["-p", "go", "--output-format", "stream-json"])
            .assert()
            .success();
        let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
        assert_eq!(
            streamed(&stdout),
            "Billing is running.",
            "{written}: {stdout}"
        );
        assert_eq!(case.calls(), vec![vec!["billing".to_string()]], "{written}");
    }
}

#[test]
fn a_call_written_as_text_that_failed_and_comes_again_gets_the_answer_step() {
    let case = Case::new(&agent_with_tools(TOOLS));
    // Real shape (Qwen2.5-Coder-0.5B): an enum value in the user's language, sent again as is.
    let invalid = || {
        Reply::text(
            "{\"name\": \"release\", \"arguments\": {\"version\": \"1.2\", \"channel\": \"stabile\"}}",
        )
    };
    let server = ScriptedServer::start(vec![
        invalid(),
        invalid(),
        Reply::text("The channel must be stable or beta."),
    ]);
    let out = case
        .mm(&server)
        .args(["-p", "release 1.2 on stabile"])
        .assert()
        .success()
        .stdout("The channel must be stable or beta.\n");
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains("repeated a call that did not work"),
        "{stderr}"
    );
    assert!(case.calls().is_empty());
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[2]["tool_choice"], "none");
    // The invalid call was answered once, in text; the repeat is not in the conversation.
    assert_eq!(tool_messages(&requests[2]).len(), 1);
}

/// Real shape (Qwen2.5-Coder-0.5B on the project's suite): a parameter the tool does not have,
/// sent again unchanged after the invalid call's answer. mm asks once for a call held to the
/// tools' schemas (on llama-server a grammar of the calls, no answer), runs it, and the invalid
/// round is no longer sent with the answer step (its error was copied as the answer).
#[test]
fn an_invalid_call_gets_one_repair_step_held_to_the_schemas() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let server = ScriptedServer::start(vec![
        Reply::tool_call(
            "release",
            r#"{"version":"1.2","channel":"stable","notify":true}"#,
        ),
        // Under the grammar the scripted server writes the call as `{"tool":…,"arguments":…}`.
        Reply::tool_call("release", r#"{"version":"1.2","channel":"stable"}"#),
        Reply::text("Released 1.2 on stable."),
    ]);
    let out = case
        .mm(&server)
        .args(["-p", "release 1.2 on stable and tell everyone"])
        .assert()
        .success()
        .stdout("Released 1.2 on stable.\n");
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert_eq!(stderr.matches("● release").count(), 2, "{stderr}");
    assert_eq!(
        case.calls(),
        vec![vec!["1.2".to_string(), "--channel=stable".to_string()]]
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    // The repair step: the same conversation and tools, a grammar of calls only.
    let repair = &requests[1];
    let grammar = repair["grammar"].as_str().expect("a grammar");
    let offered = requests[0]["tools"].as_array().map_or(0, Vec::len);
    let root = grammar.lines().next().unwrap_or_default();
    assert_eq!(
        root.matches("call").count(),
        offered,
        "one call per tool: {root}"
    );
    assert!(grammar.contains(r#"\"tool\":\"release\""#), "{grammar}");
    assert!(!grammar.contains("answer"), "{grammar}");
    assert_eq!(repair["tool_choice"], "none");
    assert_eq!(repair["tools"], requests[0]["tools"]);
    assert_eq!(tool_messages(repair).len(), 1, "the invalid call's answer");
    // The answer step sees the call that ran, not the invalid one.
    let answer = &requests[2];
    let results = tool_messages(answer);
    assert_eq!(results.len(), 1, "{answer}");
    assert!(!results[0].contains("invalid"), "{results:?}");
}

/// Real shape (Qwen2.5-Coder-1.5B on the project's suite): instead of calling, the model says
/// which tool to use ("you can use the `close_ticket` function"). That is never the answer: mm
/// asks once for a call held to the tools' schemas, runs it, and the model answers from it.
#[test]
fn a_tool_named_as_something_to_use_gets_the_call_step() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let server = ScriptedServer::start(vec![
        Reply::text(
            "To check it, you can use the `status` function with the service name as the argument.",
        ),
        Reply::tool_call("status", r#"{"service":"billing"}"#),
        Reply::text("Billing is running."),
    ]);
    let out = case
        .mm(&server)
        .args(["-p", "Is billing up?"])
        .assert()
        .success()
        .stdout("Billing is running.\n");
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains("a tool named as something to use instead of called"),
        "{stderr}"
    );
    assert_eq!(case.calls(), vec![vec!["billing".to_string()]]);
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let call_step = &requests[1];
    let grammar = call_step["grammar"].as_str().expect("a grammar of calls");
    assert!(!grammar.contains("answer"), "{grammar}");
    // The described call is not sent back: the same conversation as the first request.
    assert_eq!(call_step["messages"], requests[0]["messages"]);
}

/// "I need to look up the ticket": a look-up promised and not made. The model meant to call,
/// and gets the call step, as when it names the tool.
#[test]
fn a_promised_look_up_gets_the_call_step() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let server = ScriptedServer::start(vec![
        Reply::text("To get the status of billing, I need to look up the service first."),
        Reply::tool_call("status", r#"{"service":"billing"}"#),
        Reply::text("Billing is running."),
    ]);
    let out = case
        .mm(&server)
        .args(["-p", "What is the status of billing?"])
        .assert()
        .success()
        .stdout("Billing is running.\n");
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains("a promise to act instead of an answer); asking it for the call"),
        "{stderr}"
    );
    assert_eq!(case.calls(), vec![vec!["billing".to_string()]]);
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let grammar = requests[1]["grammar"].as_str().expect("a grammar of calls");
    assert!(!grammar.contains("answer"), "{grammar}");
    assert_eq!(requests[1]["messages"], requests[0]["messages"]);
}

/// A useless first reply (here empty) gets the answer step; a model that then promises the
/// look-up still gets the call step once, since no call has worked (seen on
/// Qwen2.5-Coder-1.5B: the tool list written out, then "Sure, I can help you with that. What's
/// the weather forecast for Oslo …?").
#[test]
fn a_promise_in_the_answer_step_still_gets_the_call_step() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let server = ScriptedServer::start(vec![
        Reply::text(""),
        Reply::text("Let me check the billing service."),
        Reply::tool_call("status", r#"{"service":"billing"}"#),
        Reply::text("Billing is running."),
    ]);
    case.mm(&server)
        .args(["-p", "What is the status of billing?"])
        .assert()
        .success()
        .stdout("Billing is running.\n");
    assert_eq!(case.calls(), vec![vec!["billing".to_string()]]);
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(requests[1]["tool_choice"], "none", "the answer step");
    assert!(requests[2]["grammar"].is_string(), "the call step");
}

/// "I'll think about it.": words promised, not a call. Asked for the answer (no call step), the
/// model gives it; the promise is never shown.
#[test]
fn promised_words_get_the_answer_step_not_the_call_step() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let server = ScriptedServer::start(vec![
        Reply::text("I'll think about it."),
        Reply::text(
            "Grey waves fold and break, / salt wind over the harbour, / gulls ride the cold swell.",
        ),
    ]);
    let out = case
        .mm(&server)
        .args(["-p", "Write a haiku about the sea."])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(stdout.starts_with("Grey waves"), "{stdout}");
    assert!(!stdout.contains("think about it"), "{stdout}");
    assert!(case.calls().is_empty());
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1]["tool_choice"], "none", "{}", requests[1]);
}

/// Real shape (Qwen2.5-Coder-0.5B, `bookshop/reserve-gift`; the 1.5B on a question no tool
/// answers): asked for the call once, the model names the tool again without calling. That is
/// still no answer, and never printed: the answer step follows, with no tool to name.
#[test]
fn a_tool_named_again_after_the_call_step_gets_the_answer_step() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let described = "To find out, you can use the `status` function with the right parameters.";
    let server = ScriptedServer::start(vec![
        Reply::text(described),
        Reply::text(described),
        Reply::text("New York is 6 hours behind Paris."),
    ]);
    let out = case
        .mm(&server)
        .args(["-p", "How many hours behind Paris is New York?"])
        .assert()
        .success()
        .stdout("New York is 6 hours behind Paris.\n");
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("asking it for one"), "{stderr}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[1]["grammar"].is_string(), "the call step");
    assert_eq!(requests[2]["tool_choice"], "none", "the answer step");
    assert!(case.calls().is_empty());
}

/// Named as a tool after a call worked, the name is part of the answer: nothing more is asked.
#[test]
fn a_tool_named_after_a_call_that_worked_is_an_answer() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let server = ScriptedServer::start(vec![
        Reply::tool_call("status", r#"{"service":"billing"}"#),
        Reply::text("I used the `status` function: billing is running."),
    ]);
    case.mm(&server)
        .args(["-p", "Is billing up?"])
        .assert()
        .success()
        .stdout("I used the `status` function: billing is running.\n");
    assert_eq!(server.requests().len(), 2);
}

/// After a call that worked, an answer that opens by telling the user to call the tool says
/// nothing of what came of it (Qwen2.5-Coder-0.5B, after `log_time` ran: "To log an hour and a
/// half on INC-40721, you would call the `log_time` function with …"): the answer step follows.
#[test]
fn telling_the_user_to_call_the_tool_that_ran_gets_the_answer_step() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let server = ScriptedServer::start(vec![
        Reply::tool_call("status", r#"{"service":"billing"}"#),
        Reply::text(
            "To check billing, you would call the `status` function with the argument \
             `service=\"billing\"`. The response would then show the service's state.",
        ),
        Reply::text("Billing is running."),
    ]);
    let out = case
        .mm(&server)
        .args(["-p", "Is billing up?"])
        .assert()
        .success()
        .stdout("Billing is running.\n");
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("asking it for one"), "{stderr}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[2]["tool_choice"], "none", "the answer step");
    assert_eq!(
        case.calls(),
        vec![vec!["billing".to_string()]],
        "the tool ran once"
    );
}

/// The repair step is asked for once a turn: a repair that is invalid too (a server that
/// enforces no grammar) is answered in text as usual, and the turn goes on without one.
#[test]
fn the_repair_step_is_asked_for_once() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let server = ScriptedServer::start(vec![
        Reply::tool_call("status", r#"{"svc":"billing"}"#),
        Reply::tool_call("status", r#"{"svc":"auth"}"#),
        Reply::text("I could not check it."),
    ]);
    case.mm(&server)
        .args(["-p", "status of billing"])
        .assert()
        .success()
        .stdout("I could not check it.\n");
    assert!(case.calls().is_empty());
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[1]["grammar"].is_string());
    assert!(
        requests[2].get("grammar").is_none_or(Value::is_null),
        "{}",
        requests[2]
    );
    assert!(
        requests[2].get("tool_choice").is_none_or(Value::is_null),
        "{}",
        requests[2]
    );
    assert_eq!(
        tool_messages(&requests[2]).len(),
        2,
        "both invalid calls answered"
    );
}

/// A server that is not llama-server gets no grammar: the repair step is an ordinary request.
#[test]
fn without_llama_server_the_repair_step_is_an_ordinary_request() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let server = ScriptedServer::builder()
        .without_props()
        .script(vec![
            Reply::tool_call("status", r#"{"svc":"billing"}"#),
            Reply::tool_call("status", r#"{"service":"billing"}"#),
            Reply::text("Billing is up."),
        ])
        .start();
    case.mm(&server)
        .args(["-p", "status of billing"])
        .assert()
        .success()
        .stdout("Billing is up.\n");
    assert_eq!(case.calls(), vec![vec!["billing".to_string()]]);
    let repair = &server.requests()[1];
    assert!(repair.get("grammar").is_none_or(Value::is_null), "{repair}");
    assert!(
        repair.get("tool_choice").is_none_or(Value::is_null),
        "{repair}"
    );
}

/// A tool that opens a ticket and prints its number, as the helpdesk agent of the project's
/// suite does (eval/agents/helpdesk).
const DESK_TOOLS: &str = r#"  open_ticket:
    description: Open a ticket.
    parameters:
      title: {type: string}
    command: ["./desk", "{{title}}"]
"#;

const DESK: &str = "#!/bin/sh\necho \"Opened INC-40733 [hardware, high] for mkovacs: $1\"\n";

fn desk_case() -> Case {
    let case = Case::new(&agent_with_tools(DESK_TOOLS));
    case.script("desk", DESK);
    case
}

/// Real shape (Qwen2.5-Coder-1.5B, `hr/half-day-sick`): the call worked and printed the
/// request's number, the answer says it is done without it. mm asks once more, with the results
/// in front of the model; the first answer is never shown.
#[test]
fn an_answer_that_leaves_out_the_reference_is_asked_for_once_more() {
    let case = desk_case();
    let server = ScriptedServer::start(vec![
        Reply::tool_call("open_ticket", r#"{"title":"Laptop does not boot"}"#),
        Reply::text("Your ticket about the laptop was opened."),
        Reply::text("I opened INC-40733 for your laptop."),
    ]);
    let out = case
        .mm(&server)
        .args(["-p", "My laptop does not boot, open a ticket."])
        .assert()
        .success()
        .stdout("I opened INC-40733 for your laptop.\n");
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains("left out INC-40733 from the tool's output"),
        "{stderr}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let again = &requests[2];
    assert_eq!(again["tool_choice"], "none", "an answer, no call");
    assert_eq!(tool_messages(again).len(), 1, "the result in front");
    // The conversation, the first answer, then what it left out, named.
    let sent = again["messages"].as_array().expect("messages");
    let n = sent.len();
    assert_eq!(sent[n - 2]["role"], "assistant");
    assert_eq!(
        sent[n - 2]["content"],
        "Your ticket about the laptop was opened."
    );
    assert_eq!(sent[n - 1]["role"], "user");
    assert_eq!(
        sent[n - 1]["content"],
        "Your answer does not give INC-40733 from the tool's result. \
         Answer me again in one or two sentences, with it."
    );
    // The prefix the server has cached: the first request's messages come first, unchanged.
    let first = requests[1]["messages"].as_array().expect("messages");
    assert_eq!(&sent[..first.len()], &first[..]);
}

/// An answer that passes the number on is the answer at once; so is one after a call whose
/// only reference the user wrote themselves.
#[test]
fn an_answer_with_the_reference_or_none_new_is_the_answer_at_once() {
    let case = desk_case();
    let server = ScriptedServer::start(vec![
        Reply::tool_call("open_ticket", r#"{"title":"Laptop does not boot"}"#),
        Reply::text("Opened INC-40733."),
    ]);
    case.mm(&server)
        .args(["-p", "My laptop does not boot, open a ticket."])
        .assert()
        .success()
        .stdout("Opened INC-40733.\n");
    assert_eq!(server.requests().len(), 2);

    let case = desk_case();
    let server = ScriptedServer::start(vec![
        Reply::tool_call("open_ticket", r#"{"title":"same as INC-40733"}"#),
        Reply::text("Done."),
    ]);
    case.mm(&server)
        .args(["-p", "Open a ticket like INC-40733 again."])
        .assert()
        .success()
        .stdout("Done.\n");
    assert_eq!(server.requests().len(), 2);
}

/// Asked again, the model gives junk: the first answer stands (not the fallback's tool output).
#[test]
fn junk_after_a_left_out_reference_leaves_the_first_answer() {
    let case = desk_case();
    let server = ScriptedServer::start(vec![
        Reply::tool_call("open_ticket", r#"{"title":"Laptop does not boot"}"#),
        Reply::text("Your ticket about the laptop was opened."),
        Reply::text(""),
    ]);
    case.mm(&server)
        .args(["-p", "My laptop does not boot, open a ticket."])
        .assert()
        .success()
        .stdout("Your ticket about the laptop was opened.\n\nReference: INC-40733\n");
    assert_eq!(server.requests().len(), 3);
}

/// Real shape (Qwen2.5-Coder-1.5B, held-out `bank/transfer-42-50-to-savings`): asked again,
/// naming the reference, the model leaves it out again. The answer stands, and the line of the
/// output that holds the reference follows it, as the tool wrote it; stderr says so. When the
/// answer and that line would be a copy of the output (a one-line output), the reference
/// follows, labelled.
#[test]
fn a_reference_left_out_twice_follows_the_answer() {
    let two_lines = Case::new(&agent_with_tools(DESK_TOOLS));
    two_lines.script(
        "desk",
        "#!/bin/sh\necho \"Opened INC-40733 [hardware, high] for mkovacs: $1\"\n\
         echo \"A technician calls you within 4 hours; until then use the loan laptop at the desk.\"\n",
    );
    let prompt = "My laptop does not boot, open a ticket.";
    let replies = || {
        vec![
            Reply::tool_call("open_ticket", r#"{"title":"Laptop does not boot"}"#),
            Reply::text("Your ticket about the laptop was opened."),
            Reply::text("I opened a high priority ticket for your laptop."),
        ]
    };
    let server = ScriptedServer::start(replies());
    let out = two_lines
        .mm(&server)
        .args(["-p", prompt])
        .assert()
        .success()
        .stdout(
            "I opened a high priority ticket for your laptop.\n\n\
             Opened INC-40733 [hardware, high] for mkovacs: Laptop does not boot\n",
        );
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains("left out INC-40733 again; mm adds it under the answer"),
        "{stderr}"
    );
    assert_eq!(server.requests().len(), 3);

    let server = ScriptedServer::start(replies());
    desk_case()
        .mm(&server)
        .args(["-p", prompt])
        .assert()
        .success()
        .stdout("I opened a high priority ticket for your laptop.\n\nReference: INC-40733\n");
}

const TICKET_TOOLS: &str = r#"  ticket_status:
    description: The status of a ticket.
    parameters:
      ticket: {type: string, description: "The ticket number, like INC-40721."}
    command: ["./rec", "status", "{{ticket}}"]
  list_tickets:
    description: A user's open tickets.
    parameters:
      user: {type: string}
    command: ["./list", "{{user}}"]
"#;

fn ticket_case() -> Case {
    let case = Case::new(&agent_with_tools(TICKET_TOOLS));
    case.script(
        "list",
        "#!/bin/sh\necho 'INC-40722 printer jam (open)'\necho 'INC-40730 Excel crash (open)'\n",
    );
    case
}

/// Real shape (Qwen2.5-Coder-1.5B, `helpdesk/vpn-howto-skill`): a question no tool answers got
/// a status call with the description's example number. The call is not run and is answered
/// in text, without the repair step (the model may answer in words), and it does.
#[test]
fn a_call_with_an_identifier_from_nowhere_is_held_back_and_answered_in_text() {
    let case = ticket_case();
    let server = ScriptedServer::start(vec![
        Reply::tool_call("ticket_status", r#"{"ticket":"INC-40721"}"#),
        Reply::text("Install FortiClient and sign in with your staff account."),
    ]);
    case.mm(&server)
        .args(["-p", "How do I connect to the VPN from home?"])
        .assert()
        .success()
        .stdout("Install FortiClient and sign in with your staff account.\n");
    assert!(case.calls().is_empty(), "not run: {:?}", case.calls());
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        tool_messages(&requests[1]),
        [
            "The call to ticket_status was not run: ticket \"INC-40721\" is not in this \
             conversation (nobody gave it). If the user named it another way, like a title or \
             a name, look it up with another tool first. If the question needs no tool, answer \
             it in words."
        ]
    );
    assert!(
        requests[1].get("tool_choice").is_none(),
        "neither the repair step nor the answer step: {}",
        requests[1]["tool_choice"]
    );
}

/// Real shape (Qwen2.5-Coder-0.5B, `travel/three-nights-cost`, `shipping/vat-arithmetic`): the
/// same call with a value nobody gave, sent again. It is not run either; the next request is the
/// answer step, without the calls that did not run (the 0.5B copied mm's "was not run" as its
/// answer). Also when the model writes its calls as text.
#[test]
fn the_same_call_sent_again_after_it_was_held_back_is_not_run_and_the_answer_is_asked_for() {
    for call in [
        Reply::tool_call("ticket_status", r#"{"ticket":"INC-40721"}"#),
        Reply::text(r#"{"name": "ticket_status", "arguments": {"ticket": "INC-40721"}}"#),
    ] {
        let case = ticket_case();
        let server = ScriptedServer::start(vec![
            call.clone(),
            call,
            Reply::text("I could not find your VPN ticket; what is its number?"),
        ]);
        let out = case
            .mm(&server)
            .args(["-p", "How is my VPN ticket doing?"])
            .assert()
            .success()
            .stdout("I could not find your VPN ticket; what is its number?\n");
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(
            stderr.contains(
                "the model sent again a call with a value nobody gave; asking it for an answer"
            ),
            "{stderr}"
        );
        assert!(case.calls().is_empty(), "not run: {:?}", case.calls());
        let requests = server.requests();
        assert_eq!(requests.len(), 3);
        assert_eq!(requests[2]["tool_choice"], "none", "the answer step");
        assert_eq!(
            tool_messages(&requests[1]),
            [
                "The call to ticket_status was not run: ticket \"INC-40721\" is not in this \
                 conversation (nobody gave it). If the user named it another way, like a title \
                 or a name, look it up with another tool first. If the question needs no tool, \
                 answer it in words."
            ]
        );
        let sent = requests[2]["messages"].as_array().expect("messages");
        assert!(tool_messages(&requests[2]).is_empty(), "{sent:?}");
        assert_eq!(
            sent[..2],
            requests[0]["messages"].as_array().expect("messages")[..2]
        );
        assert!(
            sent.iter().all(|m| m["tool_calls"].is_null()),
            "the calls are not sent: {sent:?}"
        );
    }
}

/// An identifier the user wrote, or a tool printed earlier in the turn, runs at once; so does a
/// value that is no identifier (a date, a version, a word).
#[test]
fn an_identifier_the_user_gave_or_a_tool_printed_runs_at_once() {
    let case = ticket_case();
    let server = ScriptedServer::start(vec![
        Reply::tool_call("ticket_status", r#"{"ticket":"inc-40721"}"#),
        Reply::text("It is open."),
    ]);
    case.mm(&server)
        .args(["-p", "What is the status of INC 40721?"])
        .assert()
        .success()
        .stdout("It is open.\n");
    assert_eq!(case.calls(), [["status", "inc-40721"]]);

    let case = ticket_case();
    let server = ScriptedServer::start(vec![
        Reply::tool_call("list_tickets", r#"{"user":"jdoe"}"#),
        Reply::tool_call("ticket_status", r#"{"ticket":"INC-40730"}"#),
        Reply::tool_call("ticket_status", r#"{"ticket":"2026-12-09"}"#),
        Reply::text("INC-40730, the Excel crash, is open."),
    ]);
    case.mm(&server)
        .args(["-p", "How is jdoe's second ticket doing?"])
        .assert()
        .success()
        .stdout("INC-40730, the Excel crash, is open.\n");
    assert_eq!(
        case.calls(),
        [["status", "INC-40730"], ["status", "2026-12-09"]]
    );
    assert_eq!(server.requests().len(), 4);
}

/// `mm` in the test's session folder (so that `-c` goes on with the last turn).
fn in_session(case: &Case, server: &ScriptedServer, args: &[&str]) -> assert_cmd::assert::Assert {
    case.mm(server)
        .env("XDG_DATA_HOME", case.path().join("data"))
        .args(args)
        .assert()
        .success()
}

/// `ticket_case` whose `list` prints four tickets (a listing, so an answer naming none of them
/// is no answer to ask again), after a first turn of a session that listed them: the model's
/// first two replies are the list call and an answer naming no ticket; `replies` come next.
fn after_a_listing(replies: Vec<Reply>) -> (Case, ScriptedServer) {
    let case = ticket_case();
    case.script(
        "list",
        "#!/bin/sh\necho 'INC-40722 printer jam (open)'\necho 'INC-40730 Excel crash (open)'\n\
         echo 'INC-40731 VPN (open)'\necho 'INC-40732 mouse (open)'\n",
    );
    let mut script = vec![
        Reply::tool_call("list_tickets", r#"{"user":"jdoe"}"#),
        Reply::text(
            "jdoe has four open tickets: a printer jam, an Excel crash, the VPN and a mouse.",
        ),
    ];
    script.extend(replies);
    let server = ScriptedServer::start(script);
    in_session(
        &case,
        &server,
        &["-p", "Which tickets does jdoe have open?"],
    );
    (case, server)
}

/// A follow-up names what an earlier turn's tool printed ("the second one"): that output is
/// folded into the new message, so its identifiers were shown and the call runs at once.
#[test]
fn an_identifier_from_an_earlier_turns_output_runs_at_once() {
    let (case, server) = after_a_listing(vec![
        Reply::tool_call("ticket_status", r#"{"ticket":"INC-40730"}"#),
        Reply::text("INC-40730 is open."),
    ]);
    in_session(
        &case,
        &server,
        &["-c", "-p", "How is the second one doing?"],
    )
    .stdout("INC-40730 is open.\n");
    assert_eq!(case.calls(), [["status", "INC-40730"]]);
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let folded = requests[2]["messages"][1]["content"]
        .as_str()
        .unwrap_or_default();
    assert!(
        folded.contains(
            "(The tool list_tickets answered: INC-40722 printer jam (open) / INC-40730 Excel crash \
             (open) / INC-40731 VPN (open) / INC-40732 mouse (open))"
        ),
        "{folded}"
    );
}

/// Real shape (Qwen2.5-Coder-0.5B, `bookshop/the-second-one-at-part-dieu`): a follow-up answered
/// with an earlier output as the transcript shows it. That is a copy, not an answer: asked again.
#[test]
fn a_copy_of_an_earlier_output_from_the_transcript_is_no_answer() {
    let (case, server) = after_a_listing(vec![
        Reply::text(
            "INC-40722 printer jam (open) / INC-40730 Excel crash (open) / INC-40731 VPN (open) / \
             INC-40732 mouse (open)",
        ),
        Reply::text("The VPN ticket is INC-40731."),
    ]);
    let out = in_session(&case, &server, &["-c", "-p", "Which one is the VPN?"])
        .stdout("The VPN ticket is INC-40731.\n");
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("asking it for one"), "{stderr}");
    assert_eq!(server.requests().len(), 4);
}

/// Real shape (Qwen2.5-Coder-0.5B, `units/thanks-then-arithmetic`): a follow-up answered with
/// the folded conversation written out, `Me: … You: … My message now: …`. mm's framing is no
/// answer: asked again.
#[test]
fn the_folded_conversation_written_out_is_no_answer() {
    let (case, server) = after_a_listing(vec![
        Reply::text(
            "Me: Which tickets does jdoe have open?\n\nYou: jdoe has four open tickets.\n\n\
             My message now: Thanks! What is 12 times 12?",
        ),
        Reply::text("12 times 12 is 144."),
    ]);
    let out = in_session(
        &case,
        &server,
        &["-c", "-p", "Thanks! What is 12 times 12?"],
    )
    .stdout("12 times 12 is 144.\n");
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains("a copy of mm's own message") && stderr.contains("asking it for one"),
        "{stderr}"
    );
    assert_eq!(server.requests().len(), 4);
}

/// Real shape (Qwen2.5-Coder-0.5B, `calendar/cancel-the-eleven-o-clock`): a call that failed,
/// and its output, `exit code 1` and all, copied as the answer. That is no answer: asked
/// again, and the copy is never printed.
#[test]
fn a_failed_calls_output_copied_is_no_answer() {
    let case = Case::new(&agent_with_tools(
        r#"  cancel_meeting:
    description: Cancels a meeting.
    parameters:
      at: {type: string, description: "HH:MM"}
    command: ["./cancel", "{{at}}"]
"#,
    ));
    case.script(
        "cancel",
        "#!/bin/sh\necho 'The 11:00 meeting in Alster is not yours: ask its organiser'\nexit 1\n",
    );
    let server = ScriptedServer::start(vec![
        Reply::tool_call("cancel_meeting", r#"{"at":"11:00"}"#),
        Reply::text("The 11:00 meeting in Alster is not yours: ask its organiser\nexit code 1"),
        Reply::text("I could not cancel it: the 11:00 meeting is not yours."),
    ]);
    let out = case
        .mm(&server)
        .args(["-p", "Please cancel the 11 o'clock meeting."])
        .assert()
        .success()
        .stdout("I could not cancel it: the 11:00 meeting is not yours.\n");
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains("a copy of a tool's output") && stderr.contains("asking it for one"),
        "{stderr}"
    );
    assert_eq!(server.requests().len(), 3);
}

/// Real shape (Qwen2.5-Coder-0.5B and 1.5B, `helpdesk/status`, `travel/flight-on-time`): the
/// user names a ticket, the model answers about it with nothing looked up. The made-up answer
/// is never shown, not even streamed; the model is asked once for a call held to the schemas.
#[test]
fn an_answer_about_an_identifier_nobody_looked_up_gets_the_call_step() {
    let case = ticket_case();
    let server = ScriptedServer::start(vec![
        Reply::text("INC-40698 is currently open and being worked on by the service desk team."),
        Reply::tool_call("ticket_status", r#"{"ticket":"INC-40698"}"#),
        Reply::text("INC-40698 is on hold, waiting for parts."),
    ]);
    let out = case
        .mm(&server)
        .args([
            "-p",
            "What's the status of INC-40698?",
            "--output-format",
            "stream-json",
        ])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert_eq!(
        streamed(&stdout),
        "INC-40698 is on hold, waiting for parts.",
        "{stdout}"
    );
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains(
            "the model answered about INC-40698 without looking it up; asking it for the call"
        ),
        "{stderr}"
    );
    assert_eq!(case.calls(), [["status", "INC-40698"]]);
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let grammar = requests[1]["grammar"].as_str().expect("a grammar of calls");
    assert!(!grammar.contains("answer"), "{grammar}");
    assert_eq!(requests[1]["messages"], requests[0]["messages"]);
}

/// Answered at once, with no call step: no identifier in the message (a round figure, a model
/// name, a date), an identifier a tool of an earlier turn printed, or the call step asked for
/// already in this turn.
#[test]
fn an_answer_with_no_identifier_left_to_look_up_is_the_answer_at_once() {
    for question in [
        "Is 10000 steps a day enough? And how far does an A380 fly?",
        "What is 21 °C in Fahrenheit, on 2026-12-09?",
    ] {
        answered_at_once(&ticket_case(), question, "Yes.");
    }

    let (case, server) = after_a_listing(vec![Reply::text("INC-40731 is the VPN ticket.")]);
    in_session(&case, &server, &["-c", "-p", "Is INC-40731 the VPN one?"])
        .stdout("INC-40731 is the VPN ticket.\n");
    assert_eq!(server.requests().len(), 3);

    // Asked for the call, the model answers in words again: that is the answer.
    let case = ticket_case();
    let server = ScriptedServer::start(vec![
        Reply::text("INC-40698 is open."),
        Reply::text("I cannot look up INC-40698 right now."),
    ]);
    case.mm(&server)
        .args(["-p", "What's the status of INC-40698?"])
        .assert()
        .success()
        .stdout("I cannot look up INC-40698 right now.\n");
    assert_eq!(server.requests().len(), 2);
}

/// An agent with no tools of its own (only the built-in ones), or whose tools could not be given
/// the identifier (enums and numbers only), is not pushed to call: the identifier is something
/// to explain, not to look up.
#[test]
fn without_a_tool_that_could_take_it_an_identifier_asks_for_no_call() {
    let case = Case::new(&agent_with_tools(
        r#"  thermostat:
    description: Set a zone's thermostat.
    parameters:
      zone: {type: string, enum: [upstairs, downstairs]}
      target: {type: number}
    command: ["./rec", "{{zone}}", "{{target}}"]
"#,
    ));
    answered_at_once(
        &case,
        "Is a CR2032 or a CR2025 battery thicker?",
        "The CR2032 is thicker.",
    );
    answered_at_once(
        &Case::new("---\nyolo: true\n---\nYou are a test agent.\n"),
        "What does error E4021 mean?",
        "E4021 means the disk is full.",
    );
}

/// `question` in print mode, the model answering `answer` at once: that is the answer, after
/// one request.
fn answered_at_once(case: &Case, question: &str, answer: &str) {
    let server = ScriptedServer::start(vec![Reply::text(answer)]);
    case.mm(&server)
        .args(["-p", question])
        .assert()
        .success()
        .stdout(format!("{answer}\n"));
    assert_eq!(server.requests().len(), 1, "{question}");
}

/// Whatever a tool printed earlier in the conversation counts as shown, past the transcript's
/// cut too: after a turn that ended without an answer the earlier calls and outputs are sent
/// whole, as messages, and a number from the end of a long listing runs at once.
#[test]
fn an_identifier_from_a_long_earlier_output_runs_at_once() {
    let case = ticket_case();
    let listing: String = (1..=14)
        .map(|n| format!("echo 'INC-407{n:02} printer queue jammed again (open)'\n"))
        .collect();
    case.script("list", &format!("#!/bin/sh\n{listing}"));
    let server = ScriptedServer::start(vec![
        Reply::tool_call("list_tickets", r#"{"user":"jdoe"}"#),
        Reply::tool_call("ticket_status", r#"{"ticket":"INC-40714"}"#),
        Reply::text("INC-40714 is open."),
    ]);
    case.mm(&server)
        .env("XDG_DATA_HOME", case.path().join("data"))
        .args([
            "--max-turns",
            "1",
            "-p",
            "Which tickets does jdoe have open?",
        ])
        .assert()
        .code(3);
    in_session(&case, &server, &["-c", "-p", "And the last one?"]).stdout("INC-40714 is open.\n");
    assert_eq!(case.calls(), [["status", "INC-40714"]]);
    assert_eq!(server.requests().len(), 3);
}

/// Real shape (Qwen2.5-Coder-0.5B, eval/agents/kitchen `curry-for-two`): words, then a call
/// under a name of its own with exactly a tool's parameters. It is not the answer: mm asks for
/// one.
#[test]
fn a_call_in_prose_with_the_tools_parameters_is_not_the_answer() {
    let case = Case::new(&agent_with_tools(TOOLS));
    let server = ScriptedServer::start(vec![
        Reply::text(
            "Sure, here is the status of billing:\n\n{\"name\": \"billing_status_2\", \"arguments\": {\"service\": \"billing\"}}",
        ),
        Reply::text("I cannot tell without looking it up."),
    ]);
    let out = case
        .mm(&server)
        .args(["-p", "status of billing"])
        .assert()
        .success()
        .stdout("I cannot tell without looking it up.\n");
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("a tool call written as text"), "{stderr}");
    assert_eq!(server.requests().len(), 2);
}

/// The first turn's answer in [`after_a_listing`].
const LISTED: &str =
    "jdoe has four open tickets: a printer jam, an Excel crash, the VPN and a mouse.";

/// Real shape (Qwen2.5-Coder 0.5B and 1.5B, `travel/and-in-berlin`, `shipping/and-the-other-parcel`):
/// a follow-up that needs a new look-up answered, with no call, by the earlier answer told again
/// with the new name written in. Old results restated are no answer: the model is asked once
/// for the call, and the copy is never printed.
#[test]
fn a_follow_up_answered_with_the_earlier_answer_gets_the_call_step() {
    let (case, server) = after_a_listing(vec![
        Reply::text(
            "asmith has four open tickets: a printer jam, an Excel crash, the VPN and a mouse.",
        ),
        Reply::tool_call("list_tickets", r#"{"user":"asmith"}"#),
        Reply::text("asmith has the same four tickets open, INC-40722 to INC-40732."),
    ]);
    let out = in_session(
        &case,
        &server,
        &["-c", "-p", "And which tickets does asmith have open?"],
    )
    .stdout("asmith has the same four tickets open, INC-40722 to INC-40732.\n");
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains("a copy of an earlier answer") && stderr.contains("asking it for the call"),
        "{stderr}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    assert!(requests[3]["grammar"].is_string(), "{}", requests[3]);
}

/// The same call made again may give the same answer: "still open" is told the way it was.
#[test]
fn the_earlier_answer_after_the_same_call_is_the_answer() {
    let (case, server) = after_a_listing(vec![
        Reply::tool_call("list_tickets", r#"{"user":"jdoe"}"#),
        Reply::text(LISTED),
    ]);
    in_session(
        &case,
        &server,
        &[
            "-c",
            "-p",
            "Check again: which tickets does jdoe have open?",
        ],
    )
    .stdout(format!("{LISTED}\n"));
    assert_eq!(server.requests().len(), 4);
}

/// Real shape (Qwen2.5-Coder-1.5B, `helpdesk/close-the-second-one`): another call worked, and the
/// answer told the earlier listing again instead of its result. The answer step follows.
#[test]
fn the_earlier_answer_after_another_call_gets_the_answer_step() {
    let (case, server) = after_a_listing(vec![
        Reply::tool_call("ticket_status", r#"{"ticket":"INC-40730"}"#),
        Reply::text(LISTED),
        Reply::text("INC-40730, the Excel crash, is open."),
    ]);
    let out = in_session(
        &case,
        &server,
        &["-c", "-p", "What is the status of the second one?"],
    )
    .stdout("INC-40730, the Excel crash, is open.\n");
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains("a copy of an earlier answer") && stderr.contains("asking it for one"),
        "{stderr}"
    );
    assert_eq!(case.calls(), [["status", "INC-40730"]]);
    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    assert_eq!(requests[4]["tool_choice"], "none", "the answer step");
}
