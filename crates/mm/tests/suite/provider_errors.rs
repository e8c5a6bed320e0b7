//! A model server that is down, failing or sending garbage: retries, then one clear line, exit 1.

use mm_test_support::{Reply, ScriptedServer};

use super::Case;

fn one_line_error(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let errors: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("mm: ") && !l.contains("retry"))
        .collect();
    assert_eq!(errors.len(), 1, "exactly one error line: {text}");
    errors[0].to_string()
}

#[test]
fn a_server_that_is_down_gives_a_clear_error_and_exit_1() {
    let case = Case::new("---\n---\nTest.\n");
    // A port that was just free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port());
    let url = format!("http://127.0.0.1:{}/v1", port.unwrap_or(9));
    let out = case
        .mm_offline()
        .args(["--base-url", &url, "-p", "hi"])
        .assert()
        .code(1)
        .stdout("");
    let line = one_line_error(&out.get_output().stderr);
    assert!(
        line.contains("cannot reach") && line.contains(&url),
        "{line}"
    );
}

#[test]
fn a_server_answering_500_is_retried_then_reported() {
    let case = Case::new("---\n---\nTest.\n");
    let server = ScriptedServer::start(
        (0..10)
            .map(|_| Reply::status(500, "boom: internal error"))
            .collect(),
    );
    let out = case.mm(&server).args(["-p", "hi"]).assert().code(1);
    let line = one_line_error(&out.get_output().stderr);
    assert!(line.contains("500") && line.contains("boom"), "{line}");
    assert!(server.requests().len() > 1, "retried");
}

#[test]
fn a_500_then_success_recovers() {
    let case = Case::new("---\n---\nTest.\n");
    let server = ScriptedServer::start(vec![Reply::status(503, "busy"), Reply::text("recovered")]);
    case.mm(&server)
        .args(["-p", "hi"])
        .assert()
        .success()
        .stdout("recovered\n");
}

#[test]
fn a_garbage_stream_gives_a_clear_error_and_exit_1() {
    let case = Case::new("---\n---\nTest.\n");
    let server = ScriptedServer::start((0..10).map(|_| Reply::garbage_stream()).collect());
    let out = case.mm(&server).args(["-p", "hi"]).assert().code(1);
    let line = one_line_error(&out.get_output().stderr);
    assert!(line.contains("cannot read"), "{line}");
}

#[test]
fn a_broken_stream_is_retried() {
    let case = Case::new("---\n---\nTest.\n");
    let server = ScriptedServer::start(vec![Reply::broken_stream(), Reply::text("whole")]);
    case.mm(&server)
        .args(["-p", "hi"])
        .assert()
        .success()
        .stdout("whole\n");
}

#[test]
fn the_api_key_comes_from_the_variable_named_by_api_key_env() {
    let case = Case::new("---\napi_key_env: MM_TEST_KEY\n---\nTest.\n");
    let server = ScriptedServer::start(vec![Reply::text("hi")]);
    case.mm(&server)
        .env("MM_TEST_KEY", "sk-test-123")
        .args(["-p", "hi"])
        .assert()
        .success();
    assert_eq!(
        server.authorizations(),
        vec![Some("Bearer sk-test-123".to_string())]
    );
}

/// `MM_LOG` shows the libraries' diagnostics on stderr (here the retry's debug line); without
/// it only warnings would show, and stdout still carries only the answer.
#[test]
fn mm_log_shows_diagnostics_on_stderr_only_when_asked() {
    let case = Case::new("---\n---\nTest.\n");
    for (log, shown) in [(Some("mm_core=debug"), true), (None, false)] {
        let server =
            ScriptedServer::start(vec![Reply::status(503, "busy"), Reply::text("recovered")]);
        let mut command = case.mm(&server);
        command.env_remove("MM_LOG");
        if let Some(log) = log {
            command.env("MM_LOG", log);
        }
        let out = command
            .args(["-p", "hi"])
            .assert()
            .success()
            .stdout("recovered\n");
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert_eq!(
            stderr.contains("retrying the model request"),
            shown,
            "MM_LOG={log:?}: {stderr}"
        );
    }
}
