//! The hardening issue through the real binary: control characters escaped on the terminal,
//! keys nothing implements refused, hooks that fail closed, numbers passed in their shortest
//! form and refused when they would change, `--base-url` checked at once, empty replies warned.

use std::process::Command as StdCommand;
use std::time::{Duration, Instant};

use mm_test_support::{Reply, ScriptedServer};
use serde_json::json;

use super::{Case, agent_with_tools, last_tool_message};

const ESC_ARGS: &str = "git status\u{1b}[2K\r\u{1b}[1Atouch /tmp/x";

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn the_echo_shows_control_characters_escaped() {
    let case = Case::new("---\nyolo: true\n---\nTest agent.\n");
    let server = ScriptedServer::start(vec![
        // Raw control characters in the arguments text (not JSON-escaped): answered as invalid,
        // and both the call line and the answer are drawn escaped.
        Reply::tool_call("bash", format!(r#"{{"command":"{ESC_ARGS}"}}"#)),
        Reply::tool_call(
            "bash",
            json!({ "command": r"printf 'red\033[31m bell\007 \302\233x'" }).to_string(),
        ),
        Reply::text("done"),
    ]);
    let out = case.mm(&server).args(["-p", "go"]).output().expect("mm");
    assert!(out.status.success(), "{}", stderr_of(&out));
    let err = stderr_of(&out);
    assert!(
        !out.stderr
            .iter()
            .any(|&b| b == 0x1b || b == 0x07 || b == b'\r'),
        "raw control bytes on stderr: {err:?}"
    );
    // The call line (arguments) and the output (with the C1 CSI `\u{9b}`) are both escaped.
    assert!(
        err.contains(r#"● bash {"command":"git status\x1b[2K\r\x1b[1Atouch /tmp/x"}"#),
        "{err}"
    );
    assert!(
        err.contains(r#"You sent: {"command":"git status\x1b[2K\r\x1b[1Atouch /tmp/x"}"#),
        "{err}"
    );
    assert!(err.contains(r"red\x1b[31m bell\x07 \u{9b}x"), "{err}");
    // The model still gets the bytes as they were.
    assert!(last_tool_message(&server).contains("red\u{1b}[31m bell\u{7}"));
}

/// Runs mm under `script` (a terminal on stdin and stderr, so it asks), answers "n" to the
/// consent dialog, and returns what the terminal showed.
fn answer_no_to_the_dialog(case: &Case, server: &ScriptedServer) -> String {
    let mm = assert_cmd::cargo::cargo_bin("mm");
    let line = format!(
        "cd '{}' && HOME=. TMPDIR=. XDG_DATA_HOME= '{}' --base-url '{}' -p go",
        case.path().display(),
        mm.display(),
        server.base_url()
    );
    let log = case.path().join("typescript");
    let mut child = StdCommand::new("script")
        .args(["-qefc", &line])
        .arg(&log)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("script");
    // Answer once the dialog is up.
    let started = Instant::now();
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("[n] no")
    {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no dialog: {:?}",
            std::fs::read_to_string(&log)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    {
        use std::io::Write;
        let stdin = child.stdin.as_mut().expect("stdin");
        stdin.write_all(b"n\n\n").expect("answer");
    }
    let out = child.wait_with_output().expect("script ends");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_consent_dialog_shows_exactly_what_will_run() {
    let case = Case::new("---\nmodel: m\n---\nTest agent.\n");
    let command = format!("echo {ESC_ARGS}");
    let server = ScriptedServer::start(vec![
        Reply::tool_call("bash", json!({ "command": command }).to_string()),
        Reply::text("done"),
    ]);
    let screen = answer_no_to_the_dialog(&case, &server);
    assert!(
        screen.contains(r"Allow bash: echo git status\x1b[2K\r\x1b[1Atouch /tmp/x"),
        "{screen:?}"
    );
    let dialog = screen
        .lines()
        .find(|l| l.contains("Allow bash"))
        .unwrap_or_default();
    assert!(!dialog.contains('\u{1b}'), "{dialog:?}");
    assert!(
        last_tool_message(&server).starts_with("The user did not allow this call."),
        "{}",
        last_tool_message(&server)
    );
}

#[test]
fn the_consent_dialog_of_a_declared_tool_shows_the_command_line_that_will_run() {
    let case = Case::new(
        "---\nmodel: m\ntools:\n  rec:\n    description: Record.\n    parameters:\n      v: {type: string}\n    command: [./rec, \"--v={{v}}\", end]\n---\nTest agent.\n",
    );
    let server = ScriptedServer::start(vec![
        Reply::tool_call("rec", json!({"v": "1; rm -rf ~ \u{1b}[2K"}).to_string()),
        Reply::text("done"),
    ]);
    let screen = answer_no_to_the_dialog(&case, &server);
    assert!(
        screen.contains(r"Allow rec: ./rec '--v=1; rm -rf ~ \x1b[2K' end"),
        "{screen:?}"
    );
    assert!(case.calls().is_empty(), "{:?}", case.calls());
}

#[test]
fn keys_nothing_implements_yet_are_agent_file_errors() {
    let cases = [(
        "---\nbuiltins: [bash, todo]\n---\n",
        "mm: mm.md:2: builtins[1]: the built-in `todo` is not supported yet in this version of mm; remove the key; built-ins available now: bash, read_file, write_file, edit_file, list_files, grep, read_skill\n",
    )];
    for (agent, message) in cases {
        let case = Case::new(agent);
        let out = case.mm_offline().arg("check").output().expect("mm");
        assert_eq!(out.status.code(), Some(2), "{agent}");
        assert_eq!(stderr_of(&out), message);
    }
}

#[test]
fn a_pre_tool_call_hook_blocks_and_its_stderr_reaches_the_model() {
    let agent = "---\nyolo: true\nhooks:\n  preToolCall: [{match: \"bash\", command: [\"./guard.sh\"]}]\n  postToolCall: [{command: [\"./audit.sh\"]}]\n---\nTest agent.\n";
    for (guard, blocked) in [
        (
            "#!/bin/sh\ncat > seen.json\necho 'no writes here' >&2\nexit 2\n",
            true,
        ),
        (
            "#!/bin/sh\ncat > seen.json\necho 'no writes here' >&2\nexit 1\n",
            true,
        ),
        ("#!/bin/sh\necho 'no writes here' >&2\nkill -9 $$\n", true),
        ("#!/bin/sh\ncat > seen.json\nexit 0\n", false),
    ] {
        let case = Case::new(agent);
        case.script("guard.sh", guard);
        case.script("audit.sh", "#!/bin/sh\ncat > audit.json\n");
        let server = ScriptedServer::start(vec![
            Reply::tool_call("bash", r#"{"command":"touch pwned; echo made"}"#),
            Reply::text("done"),
        ]);
        let out = case.mm(&server).args(["-p", "go"]).output().expect("mm");
        assert!(out.status.success(), "{}", stderr_of(&out));
        assert_eq!(case.path().join("pwned").exists(), !blocked, "{guard}");
        let answer = last_tool_message(&server);
        if blocked {
            assert!(
                answer.starts_with(
                    "The call to bash was not run: the preToolCall hook ./guard.sh blocked it ("
                ) && answer.ends_with(": no writes here)."),
                "{answer}"
            );
            assert!(!case.path().join("audit.json").exists());
        } else {
            assert_eq!(answer, "made\n");
            let audit: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(case.path().join("audit.json")).unwrap_or_default(),
            )
            .expect("audit JSON");
            assert_eq!(audit["output"], "made\n");
            assert_eq!(audit["exit_code"], 0);
        }
        if guard.contains("cat >") {
            let seen: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(case.path().join("seen.json")).unwrap_or_default(),
            )
            .expect("hook JSON");
            assert_eq!(
                seen,
                json!({"event": "preToolCall", "tool": "bash",
                       "arguments": {"command": "touch pwned; echo made", "timeout": 120},
                       "cwd": std::fs::canonicalize(case.path()).expect("cwd").to_string_lossy()})
            );
        }
    }
}

const NUMBERS_TOOL: &str = r#"  scale:
    description: Scale by a ratio.
    parameters:
      ratio: {type: number}
      count: {type: integer, required: false}
    command: ["./rec", "{{ratio}}", "--count={{count}}"]
"#;

#[test]
fn numbers_reach_the_program_in_their_shortest_form_or_are_refused() {
    let case = Case::new(&agent_with_tools(NUMBERS_TOOL));
    // Without llama-server's `/props` the repair step after the invalid call is an ordinary
    // request, so every call below arrives as the model wrote it (a grammar's reply would be
    // re-serialised by the scripted server).
    let server = ScriptedServer::builder()
        .without_props()
        .script(vec![
            Reply::tool_call("scale", r#"{"ratio":3.0,"count":2.0}"#),
            Reply::tool_call("scale", r#"{"ratio":-0.0}"#),
            Reply::tool_call("scale", r#"{"ratio":1,"count":9223372036854775808}"#),
            Reply::tool_call("scale", r#"{"ratio":0.10000000000000000001}"#),
            Reply::text("done"),
        ])
        .start();
    case.mm(&server)
        .args(["-p", "go"])
        .assert()
        .success()
        .stdout("done\n");
    assert_eq!(
        case.calls(),
        vec![
            vec!["3".to_string(), "--count=2".to_string()],
            vec!["0".to_string()],
        ]
    );
    let answers = super::tool_messages(server.requests().last().expect("request"));
    assert!(
        answers[2].contains("- count: 9223372036854775808 is not an integer in the 64-bit range"),
        "{}",
        answers[2]
    );
    assert!(
        answers[3].contains(
            "- ratio: 0.10000000000000000001 cannot be passed exactly: as a 64-bit number it becomes 0.1"
        ),
        "{}",
        answers[3]
    );
}

#[test]
fn a_bad_base_url_flag_is_a_usage_error_at_once() {
    let case = Case::new("---\nmodel: m\n---\nTest agent.\n");
    let started = Instant::now();
    let out = case
        .mm_offline()
        .args(["--base-url", "localhost:8080/v1", "-p", "hi"])
        .output()
        .expect("mm");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr_of(&out),
        "mm: --base-url: `localhost:8080/v1` is not an http(s) URL; write like http://127.0.0.1:8080/v1\n"
    );
    // No retries happened (they take seconds).
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[test]
fn an_empty_reply_is_a_warning_not_a_silent_answer() {
    let case = Case::new("---\nmodel: m\n---\nTest agent.\n");
    let server = ScriptedServer::start(vec![Reply::text("")]);
    let out = case.mm(&server).args(["-p", "hi"]).output().expect("mm");
    let err = stderr_of(&out);
    assert!(err.contains("mm: warning: "), "{err}");
    assert!(err.to_lowercase().contains("empty"), "{err}");
}
