//! The provider's hardening through the real binary: a reply that never ends stops at the reply
//! deadline, whole tool calls stay whole, odd replies are warnings, `/props` is asked only when
//! the mode needs it, and plain http needs no CA certificates.

use std::time::Duration;

use mm_test_support::{Reply, ScriptedServer};
use serde_json::{Value, json};

use super::{Case, agent_with_tools, tool_messages};

/// Longest a test lets mm run: far beyond what each case needs, so that a hang fails the test
/// (assert_cmd kills mm) instead of holding the suite.
const NO_HANG: Duration = Duration::from_secs(60);

const ECHO_TOOL: &str = r#"  echoargs:
    description: Record the value.
    parameters:
      value: {type: string, description: "Any text."}
    command: ["./rec", "{{value}}", "--flag={{value}}"]
"#;

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The one `mm: …` line of an error (retry notices aside).
fn one_line_error(out: &std::process::Output) -> String {
    let text = stderr_of(out);
    let errors: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("mm: ") && !l.contains("retry"))
        .collect();
    assert_eq!(errors.len(), 1, "exactly one error line: {text}");
    errors[0].to_string()
}

/// A whole (non-streamed) completion whose assistant message has these tool calls.
fn whole_reply(calls: &Value) -> String {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "scripted",
        "choices": [{"index": 0, "finish_reason": "tool_calls",
            "message": {"role": "assistant", "content": null, "tool_calls": calls}}],
    })
    .to_string()
}

#[test]
fn a_stream_of_comments_stops_at_the_reply_deadline_and_is_not_retried() {
    let case = Case::new("---\nlimits: {reply_timeout: 2s}\n---\nTest.\n");
    // A keep-alive every 100 ms: the idle timeout (300 s) never fires.
    let server = ScriptedServer::start(vec![
        Reply::comments_forever(Duration::from_millis(100)),
        Reply::text("a retry was sent"),
    ]);
    let out = case
        .mm(&server)
        .args(["-p", "hi"])
        .timeout(NO_HANG)
        .output()
        .expect("mm");
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    let line = one_line_error(&out);
    assert_eq!(
        line,
        "mm: the model server's reply did not end within 2s (the reply deadline)"
    );
    assert_eq!(server.request_count(), 1, "a deadline is not retried");
}

#[test]
fn whole_tool_calls_sharing_an_id_both_run_and_are_answered_under_distinct_ids() {
    let case = Case::new(&agent_with_tools(ECHO_TOOL));
    let call = |value: &str| {
        json!({"index": 0, "id": "dup", "type": "function",
               "function": {"name": "echoargs", "arguments": json!({"value": value}).to_string()}})
    };
    let server = ScriptedServer::start(vec![
        Reply::raw_json(whole_reply(&json!([call("one"), call("two")]))),
        Reply::text("done"),
    ]);
    let out = case
        .mm(&server)
        .args(["--no-stream", "-p", "go"])
        .timeout(NO_HANG)
        .output()
        .expect("mm");
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "done\n");
    assert_eq!(
        case.calls(),
        vec![
            vec!["one".to_string(), "--flag=one".to_string()],
            vec!["two".to_string(), "--flag=two".to_string()],
        ]
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let next = &requests[1];
    let messages = next["messages"].as_array().expect("messages");
    let assistant = messages
        .iter()
        .find(|m| m["role"] == "assistant")
        .expect("the assistant's calls");
    let call_ids: Vec<&str> = assistant["tool_calls"]
        .as_array()
        .expect("tool_calls")
        .iter()
        .map(|c| c["id"].as_str().expect("id"))
        .collect();
    let answered: Vec<&str> = messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].as_str().expect("tool_call_id"))
        .collect();
    assert_eq!(call_ids.len(), 2, "{next:#}");
    assert_ne!(call_ids[0], call_ids[1], "{next:#}");
    assert_eq!(answered, call_ids, "each call answered under its own id");
    assert_eq!(
        tool_messages(next),
        vec![
            "recorded 2 args\n".to_string(),
            "recorded 2 args\n".to_string()
        ]
    );
}

#[test]
fn a_reply_without_choices_is_a_warning() {
    let case = Case::new("---\nmodel: m\n---\nTest agent.\n");
    let server = ScriptedServer::start(vec![
        Reply::raw_json(
            json!({"id": "chatcmpl-1", "object": "chat.completion", "choices": []}).to_string(),
        ),
        Reply::text("Hello."),
    ]);
    let out = case
        .mm(&server)
        .args(["--no-stream", "-p", "hi"])
        .timeout(NO_HANG)
        .output()
        .expect("mm");
    let err = stderr_of(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.lines().any(
            |l| l == "mm: warning: the model server's reply had no choices: there is no answer"
        ),
        "{err}"
    );
    // No answer came: the model is asked once more.
    assert_eq!(server.request_count(), 2);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Hello.\n");
}

#[test]
fn a_nameless_tool_call_is_a_warning_and_runs_nothing() {
    let case = Case::new(&agent_with_tools(ECHO_TOOL));
    let server = ScriptedServer::start(vec![
        Reply::raw_json(whole_reply(&json!([
            {"index": 0, "id": "c1", "type": "function",
             "function": {"name": "", "arguments": "{\"value\":\"x\"}"}}
        ]))),
        Reply::text("Nothing to do."),
    ]);
    let out = case
        .mm(&server)
        .args(["--no-stream", "-p", "go"])
        .timeout(NO_HANG)
        .output()
        .expect("mm");
    let err = stderr_of(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.lines().any(|l| l
            == r#"mm: warning: the model made a tool call without a name; it was dropped (arguments: {"value":"x"})"#),
        "{err}"
    );
    assert!(case.calls().is_empty(), "{:?}", case.calls());
    // Nothing ran and nothing was answered: the model is asked once more for an answer.
    assert_eq!(server.request_count(), 2);
}

#[test]
fn props_is_asked_only_when_the_mode_needs_it() {
    let script = || {
        vec![
            Reply::tool_call("echoargs", r#"{"value":"v"}"#),
            Reply::text("done"),
        ]
    };
    for (mode, props) in [("native", 0), ("auto", 1), ("constrained", 1)] {
        let agent = format!("---\nyolo: true\ntool_calls: {mode}\ntools:\n{ECHO_TOOL}---\nTest.\n");
        let case = Case::new(&agent);
        let server = ScriptedServer::start(script());
        let out = case
            .mm(&server)
            .args(["-p", "go"])
            .timeout(NO_HANG)
            .output()
            .expect("mm");
        assert!(out.status.success(), "{mode}: {}", stderr_of(&out));
        assert_eq!(case.calls().len(), 1, "{mode}");
        assert_eq!(server.request_count(), 2, "{mode}");
        // Read once per run at most, whatever the number of requests.
        assert_eq!(server.props_count(), props, "{mode}");
    }
    // Without any tool the request is a plain one in every mode: no `/props`.
    let case = Case::new("---\nbuiltins: []\n---\nTest.\n");
    let server = ScriptedServer::start(vec![Reply::text("hello")]);
    case.mm(&server)
        .args(["-p", "hi"])
        .timeout(NO_HANG)
        .assert()
        .success()
        .stdout("hello\n");
    assert_eq!(server.props_count(), 0);
}

/// `mm` on a machine without CA certificates: `rustls-native-certs` (through
/// `rustls-platform-verifier`) reads only `SSL_CERT_FILE` and `SSL_CERT_DIR` when either is set,
/// and never asks `openssl-probe` for the usual places; here one is missing and the other empty.
fn without_ca_certificates(case: &Case, cmd: &mut assert_cmd::Command) {
    let empty = case.path().join("no-certs");
    std::fs::create_dir_all(&empty).expect("empty cert dir");
    cmd.env("SSL_CERT_FILE", case.path().join("no-such-bundle.pem"))
        .env("SSL_CERT_DIR", &empty);
}

#[test]
fn plain_http_works_without_any_ca_certificate() {
    let case = Case::new("---\nmodel: m\n---\nTest agent.\n");
    let server = ScriptedServer::start(vec![Reply::text("no TLS needed")]);
    let mut cmd = case.mm(&server);
    without_ca_certificates(&case, &mut cmd);
    cmd.args(["-p", "hi"])
        .timeout(NO_HANG)
        .assert()
        .success()
        .stdout("no TLS needed\n");
    assert_eq!(server.request_count(), 1);
}

#[test]
fn https_without_any_ca_certificate_is_one_clear_error() {
    let case = Case::new("---\nmodel: m\n---\nTest agent.\n");
    let url = "https://127.0.0.1:1/v1";
    let mut cmd = case.mm_offline();
    without_ca_certificates(&case, &mut cmd);
    let out = cmd
        .args(["--base-url", url, "-p", "hi"])
        .timeout(NO_HANG)
        .output()
        .expect("mm");
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let line = one_line_error(&out);
    assert!(line.contains(url), "{line}");
    assert!(line.contains("CA certificates"), "{line}");
    assert!(line.contains("install ca-certificates"), "{line}");
}
