//! Interactive mode driven for real through a pseudo-terminal (pty.rs): consent dialogs
//! answered allow once / always / save / deny, Ctrl-C during a tool and during a reply, the
//! history across sessions, the `/` commands, Ctrl-C twice and Ctrl-D.

use std::time::{Duration, Instant};

use mm_test_support::{Reply, ScriptedServer};
use serde_json::{Value, json};

use super::pty::{CTRL_C, CTRL_D, ENTER, Pty, UP};
use super::signals::{SLEEPERS, TOOL, assert_group_gone, running_group};
use super::{Case, agent_with_tools, tool_messages};

const ASKING: &str = "---\nmodel: m\n---\nTest agent.\n";

fn bash(command: &str) -> Reply {
    Reply::tool_call("bash", json!({ "command": command }).to_string())
}

fn data() -> tempfile::TempDir {
    tempfile::tempdir().expect("data dir")
}

/// The user messages of a recorded request.
fn user_messages(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .filter(|m| m["role"] == "user")
                .map(|m| m["content"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn consent_dialogs_answered_once_always_and_deny_with_a_reason() {
    let case = Case::new(ASKING);
    let server = ScriptedServer::start(vec![
        bash("echo one"),
        bash("echo two"),
        bash("echo three"),
        bash("touch denied"),
        Reply::text("All done."),
    ]);
    let data = data();
    let mut mm = Pty::mm(&case, &server, data.path(), &[]);
    mm.say("go");

    // Allow once.
    mm.expect("Allow bash: echo one");
    mm.expect("[a] always bash:echo* (this session)");
    mm.expect("[n] no");
    mm.say("y");
    mm.expect("allowed once");
    mm.expect("│ one");

    // Always: this call and the next `echo` run; the next one is not asked about.
    mm.expect("Allow bash: echo two");
    mm.say("a");
    mm.expect("always allowed: bash:echo* (this session)");
    mm.expect("│ two");
    let between = mm.expect("│ three");
    assert!(!between.contains("Allow bash"), "asked again: {between}");

    // Deny, then the reason on its own line.
    mm.expect("Allow bash: touch denied");
    mm.say("n");
    mm.expect("Enter for no reason) ");
    mm.send("not that file");
    mm.send(ENTER);
    mm.expect("denied");
    mm.expect("All done.");
    mm.expect("> ");
    mm.send(CTRL_D);
    assert_eq!(mm.wait().code(), Some(0));

    assert!(!case.path().join("denied").exists());
    let requests = server.requests();
    assert_eq!(
        tool_messages(requests.last().expect("a request")),
        [
            "one\n",
            "two\n",
            "three\n",
            "The user did not allow this call. Their reason: not that file"
        ]
    );
}

#[test]
fn an_always_answer_saved_to_the_project_is_read_at_the_next_start() {
    let case = Case::new(ASKING);
    let server = ScriptedServer::start(vec![
        bash("ls -a"),
        Reply::text("Listed."),
        bash("ls -l"),
        Reply::text("Listed again."),
    ]);
    let data = data();
    let mut mm = Pty::mm(&case, &server, data.path(), &[]);
    mm.say("list");
    mm.expect("Allow bash: ls -a");
    mm.say("s");
    mm.expect("always allowed: bash:ls* (saved to .mm/permissions)");
    mm.expect("Listed.");
    mm.expect("> ");
    mm.send("/exit");
    mm.send(ENTER);
    assert_eq!(mm.wait().code(), Some(0));
    let saved = std::fs::read_to_string(case.path().join(".mm/permissions")).expect("saved");
    assert!(saved.ends_with("allow bash:ls*\n"), "{saved}");

    // A new mm: the rule is read at start-up, and nothing asks.
    let mut mm = Pty::mm(&case, &server, data.path(), &[]);
    mm.say("list again");
    let shown = mm.expect("Listed again.");
    assert!(!shown.contains("Allow bash"), "asked: {shown}");
    // Keys typed before the prompt is up would meet a terminal in its normal mode.
    mm.expect("> ");
    mm.send(CTRL_D);
    assert_eq!(mm.wait().code(), Some(0));
}

#[test]
fn a_deny_rule_in_the_project_refuses_without_asking() {
    let case = Case::new(ASKING);
    std::fs::create_dir_all(case.path().join(".mm")).expect("mkdir");
    std::fs::write(
        case.path().join(".mm/permissions"),
        "allow bash\ndeny bash:rm*\n",
    )
    .expect("rules");
    let server = ScriptedServer::start(vec![
        bash("echo hi && rm -rf x"),
        bash("echo fine"),
        Reply::text("ok"),
    ]);
    let out = case
        .mm(&server)
        .env("XDG_DATA_HOME", case.path().join("data"))
        .args(["-p", "go"])
        .output()
        .expect("mm");
    assert!(out.status.success());
    let requests = server.requests();
    let answers = tool_messages(requests.last().expect("request"));
    assert!(
        answers[0].starts_with("The user did not allow this call: the rule `deny bash:rm*` in "),
        "{}",
        answers[0]
    );
    assert_eq!(answers[1], "fine\n");
}

#[test]
fn ctrl_c_during_a_tool_kills_its_group_and_returns_to_the_prompt_within_a_second() {
    let case = Case::new(&agent_with_tools(TOOL));
    case.script("sleepers", SLEEPERS);
    let server = ScriptedServer::start(vec![
        Reply::tool_call("sleepers", "{}"),
        Reply::text("Second turn."),
    ]);
    let data = data();
    let mut mm = Pty::mm(&case, &server, data.path(), &[]);
    mm.say("go");
    let (group, sleeps) = running_group(case.path());
    mm.expect("running sleepers");
    let pressed = Instant::now();
    mm.send(CTRL_C);
    mm.expect_within("Interrupted.", Duration::from_secs(1));
    mm.expect_within("> ", Duration::from_secs(1));
    assert!(
        pressed.elapsed() < Duration::from_secs(1),
        "{:?}",
        pressed.elapsed()
    );
    assert_group_gone(group, &sleeps);
    // The model was not asked again in the cancelled turn; the session goes on.
    assert_eq!(server.request_count(), 1);
    mm.send("again");
    mm.send(ENTER);
    mm.expect("Second turn.");
    mm.expect("> ");
    mm.send(CTRL_D);
    assert_eq!(mm.wait().code(), Some(0));
    let requests = server.requests();
    let answers = tool_messages(requests.last().expect("request"));
    assert_eq!(answers, ["cancelled"]);
}

#[test]
fn ctrl_c_while_the_model_replies_returns_to_the_prompt() {
    let case = Case::new(ASKING);
    let server = ScriptedServer::start(vec![Reply::hang(), Reply::text("Back.")]);
    let data = data();
    let mut mm = Pty::mm(&case, &server, data.path(), &[]);
    mm.say("go");
    mm.expect("waiting for m");
    // The request has reached the server (else the next one would get its hang).
    let asked = Instant::now();
    while server.request_count() < 1 {
        assert!(asked.elapsed() < Duration::from_secs(30), "no request");
        std::thread::sleep(Duration::from_millis(10));
    }
    mm.send(CTRL_C);
    mm.expect_within("Interrupted.", Duration::from_secs(2));
    mm.say("again");
    mm.expect("Back.");
    mm.expect("> ");
    mm.send(CTRL_C);
    mm.expect("Ctrl-C again or Ctrl-D to quit");
    mm.expect("> ");
    mm.send(CTRL_C);
    assert_eq!(mm.wait().code(), Some(0));
}

#[test]
fn ctrl_c_in_a_dialog_interrupts_the_turn() {
    let case = Case::new(ASKING);
    let server = ScriptedServer::start(vec![bash("touch x"), Reply::text("Next.")]);
    let data = data();
    let mut mm = Pty::mm(&case, &server, data.path(), &[]);
    mm.say("go");
    mm.expect("Allow bash: touch x");
    mm.expect("> ");
    mm.send(CTRL_C);
    mm.expect("Interrupted.");
    mm.say("on");
    mm.expect("Next.");
    mm.expect("> ");
    mm.send(CTRL_D);
    assert_eq!(mm.wait().code(), Some(0));
    assert!(!case.path().join("x").exists());
    let requests = server.requests();
    assert_eq!(
        tool_messages(requests.last().expect("request")),
        ["Not run: the user interrupted."]
    );
}

#[test]
fn the_history_is_kept_across_sessions() {
    let case = Case::new(ASKING);
    let server = ScriptedServer::start(vec![Reply::text("First."), Reply::text("Again.")]);
    let data = data();
    let mut mm = Pty::mm(&case, &server, data.path(), &[]);
    mm.say("what is in this folder?");
    mm.expect("First.");
    mm.expect("> ");
    mm.send(CTRL_D);
    assert_eq!(mm.wait().code(), Some(0));
    let history = std::fs::read_to_string(data.path().join("mm/history")).expect("history");
    assert!(history.contains("what is in this folder?"), "{history}");

    // A new session: Up brings the line back.
    let mut mm = Pty::mm(&case, &server, data.path(), &[]);
    mm.expect("> ");
    mm.send(UP);
    mm.send(ENTER);
    mm.expect("Again.");
    mm.expect("> ");
    mm.send(CTRL_D);
    assert_eq!(mm.wait().code(), Some(0));
    let requests = server.requests();
    assert_eq!(
        user_messages(requests.last().expect("request")),
        ["what is in this folder?"]
    );
}

#[test]
fn slash_commands_and_multi_line_input() {
    let case = Case::new(ASKING);
    let server = ScriptedServer::start(vec![Reply::text("One."), Reply::text("Two.")]);
    let data = data();
    let mut mm = Pty::mm(&case, &server, data.path(), &[]);
    mm.say("/help");
    mm.expect("/model NAME");
    mm.say("/tools");
    mm.expect("bash");
    mm.expect("read_file");
    mm.say("/nope");
    mm.expect("mm: no command /nope");
    // A line ending in `\` goes on on the next line.
    mm.expect("> ");
    mm.send("first line \\");
    mm.send(ENTER);
    mm.send("second line");
    mm.send(ENTER);
    mm.expect("One.");
    mm.say("/model other-model");
    mm.expect("Model: other-model");
    mm.say("/clear");
    mm.expect("A new conversation");
    mm.say("hello");
    mm.expect("Two.");
    mm.say("/exit");
    assert_eq!(mm.wait().code(), Some(0));

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(user_messages(&requests[0]), ["first line \nsecond line"]);
    // After /model and /clear: the other model, and a conversation of one message.
    assert_eq!(requests[1]["model"], "other-model");
    assert_eq!(user_messages(&requests[1]), ["hello"]);
    // Two sessions were written.
    let sessions = std::fs::read_dir(data.path().join("mm/sessions"))
        .expect("sessions")
        .count();
    assert_eq!(sessions, 2);
}

#[test]
fn markdown_is_styled_and_model_text_escaped_with_colours() {
    let case = Case::new(ASKING);
    let server = ScriptedServer::start(vec![Reply::text(
        "# Plan\n- **one** `x`\n- two \u{1b}[2J\n",
    )]);
    let data = data();
    let mut mm = Pty::mm_with(&case, &server, data.path(), &[], &[]);
    mm.say("plan");
    let shown = mm.expect("tok/s");
    assert!(shown.contains("\u{1b}[1;35mPlan"), "{shown:?}");
    assert!(shown.contains("• \u{1b}[1mone\u{1b}[0m"), "{shown:?}");
    assert!(shown.contains("\u{1b}[36mx\u{1b}[0m"), "{shown:?}");
    assert!(shown.contains("two \\x1b[2J"), "{shown:?}");
    mm.expect("> ");
    mm.send(CTRL_D);
    assert_eq!(mm.wait().code(), Some(0));
}

#[test]
fn a_long_output_is_collapsed_to_its_head_and_tail() {
    let case = Case::new("---\nyolo: true\n---\nTest agent.\n");
    let server = ScriptedServer::start(vec![bash("seq 1 40"), Reply::text("Counted.")]);
    let data = data();
    let mut mm = Pty::mm(&case, &server, data.path(), &[]);
    mm.say("count");
    mm.expect("● bash seq 1 40");
    // Without the status line's erasing, which may come before any line.
    let shown = mm.expect("└ ok").replace("\r\x1b[2K", "");
    let lines: Vec<&str> = shown
        .lines()
        .filter_map(|l| l.trim_start_matches(['\r', ' ']).strip_prefix("│ "))
        .collect();
    let mut want: Vec<String> = (1..=12).map(|n| n.to_string()).collect();
    want.push("… 24 more lines …".into());
    want.extend((37..=40).map(|n| n.to_string()));
    assert_eq!(lines, want, "{shown}");
    mm.expect("Counted.");
    mm.expect("> ");
    mm.send(CTRL_D);
    assert_eq!(mm.wait().code(), Some(0));
    // The model got all of it.
    let requests = server.requests();
    assert_eq!(
        tool_messages(requests.last().expect("request"))[0]
            .lines()
            .count(),
        40
    );
}

#[test]
fn ctrl_c_in_a_print_mode_dialog_ends_mm_with_130_at_once() {
    let case = Case::new(ASKING);
    let server = ScriptedServer::start(vec![bash("touch x"), Reply::text("never")]);
    let data = data();
    let mut mm = Pty::mm(&case, &server, data.path(), &["-p", "go"]);
    mm.expect("Allow bash: touch x");
    mm.expect("> ");
    let pressed = Instant::now();
    mm.send(CTRL_C);
    assert_eq!(mm.wait().code(), Some(130));
    // The question was withdrawn: mm did not wait for its 3 s grace, nor for an answer.
    assert!(
        pressed.elapsed() < Duration::from_secs(2),
        "{:?}",
        pressed.elapsed()
    );
    assert!(!case.path().join("x").exists());
    assert_eq!(server.request_count(), 1);
}

#[test]
fn a_useless_reply_is_followed_by_the_output_that_stands_in_for_the_answer() {
    let case = Case::new(&agent_with_tools(super::output::TOOLS));
    let server = ScriptedServer::start(vec![
        // A call written as text, then a reply that only copies the question, twice.
        Reply::text("{\"name\": \"status\", \"arguments\": {\"service\": \"billing\"}}"),
        Reply::text("What is the status of billing?"),
        Reply::text("What is the status of billing?"),
    ]);
    let data = data();
    let mut mm = Pty::mm(&case, &server, data.path(), &["--yolo"]);
    mm.say("What is the status of billing?");
    mm.expect("not an answer (a copy of the prompt)");
    mm.expect("no usable answer (a copy of the prompt)");
    // The output of the call is drawn as the answer, after the warning.
    mm.expect("recorded 1 args");
    mm.expect("> ");
    assert_eq!(server.request_count(), 3);
}
