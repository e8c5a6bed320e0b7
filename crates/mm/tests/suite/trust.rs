//! Folder trust (SPEC §1) through the real binary on a terminal: a folder's own `mm.md` and
//! `.mm/permissions` grant nothing — no MCP command started, no hook run, no `yolo`, no allow
//! rule — until the user trusts the folder; the answer is remembered, and asked for again when
//! what the folder grants changes. Print mode is trusted.

use std::path::Path;

use mm_test_support::{Reply, ScriptedServer};
use serde_json::json;

use super::Case;
use super::pty::{CTRL_D, ENTER, Pty};

/// Grants everything a folder can: an MCP stdio command, a hook, `yolo`, an allow rule, and
/// (below) a `.mm/permissions` allow rule. Each program leaves a mark when it runs.
const GRANTING: &str = r#"---
yolo: true
allow: [status]
mcp:
  probe: {command: ["./probe.sh"]}
hooks:
  preToolCall: [{command: ["./hook.sh"]}]
---
You are a test agent.
"#;

fn granting_folder() -> Case {
    let case = Case::new(GRANTING);
    case.script(
        "probe.sh",
        "#!/bin/sh\ntouch \"$(dirname \"$0\")/STARTED\"\nexit 1\n",
    );
    case.script(
        "hook.sh",
        "#!/bin/sh\ntouch \"$(dirname \"$0\")/HOOKED\"\nexit 0\n",
    );
    std::fs::create_dir_all(case.path().join(".mm")).expect("mkdir .mm");
    std::fs::write(case.path().join(".mm/permissions"), "allow bash\n").expect("rules");
    case
}

fn bash(command: &str) -> Reply {
    Reply::tool_call("bash", json!({ "command": command }).to_string())
}

fn mark(case: &Case, name: &str) -> bool {
    case.path().join(name).exists()
}

fn clear_marks(case: &Case) {
    for name in ["STARTED", "HOOKED", "ran"] {
        let _ = std::fs::remove_file(case.path().join(name));
    }
}

fn quit(mut mm: Pty) {
    mm.expect("> ");
    mm.send(CTRL_D);
    assert_eq!(mm.wait().code(), Some(0));
}

#[test]
fn nothing_a_folder_grants_is_applied_until_it_is_trusted_and_the_answer_is_kept() {
    let case = granting_folder();
    let data = tempfile::tempdir().expect("data");
    let server = ScriptedServer::start(vec![bash("touch ran"), Reply::text("Refused.")]);

    // First run: the question lists every grant, before anything starts.
    let mut mm = Pty::in_folder(&case, &server, data.path(), &[]);
    let question = mm.expect("[n] no, run without them");
    for grant in [
        "This folder's files would:",
        "starts the MCP server probe: ./probe.sh",
        "runs the preToolCall hook for every call: ./hook.sh",
        "turns consent off (yolo: true): every tool call runs without asking",
        "allows without asking: status",
        "allows without asking (.mm/permissions): bash",
    ] {
        assert!(question.contains(grant), "{grant:?} not in {question}");
    }
    assert!(!mark(&case, "STARTED"), "started before the answer");
    mm.send("n");
    mm.send(ENTER);
    mm.expect("this folder is not trusted");
    // No yolo, no allow rule: the call asks; no hook ran, no server started.
    mm.say("go");
    mm.expect("Allow bash: touch ran");
    mm.say("n");
    mm.expect("Enter for no reason) ");
    mm.send(ENTER);
    mm.expect("Refused.");
    quit(mm);
    assert!(!mark(&case, "ran"));
    assert!(!mark(&case, "STARTED"), "the folder's MCP command ran");
    assert!(!mark(&case, "HOOKED"), "the folder's hook ran");

    // Second run: the answer is kept; nothing is asked, nothing starts.
    let server = ScriptedServer::start(vec![Reply::text("Hello.")]);
    let mut mm = Pty::in_folder(&case, &server, data.path(), &[]);
    mm.say("hi");
    let shown = mm.expect("Hello.");
    assert!(!shown.contains("This folder's files would"), "{shown}");
    quit(mm);
    assert!(!mark(&case, "STARTED"));

    // The folder grants one more thing: asked again; trusted, everything applies.
    std::fs::write(
        case.path().join(".mm/permissions"),
        "allow bash\nallow read_file\n",
    )
    .expect("rules");
    let server = ScriptedServer::start(vec![bash("touch ran"), Reply::text("Ran.")]);
    let mut mm = Pty::in_folder(&case, &server, data.path(), &[]);
    let question = mm.expect("[n] no, run without them");
    assert!(question.contains("allows without asking (.mm/permissions): read_file"));
    mm.send("y");
    mm.send(ENTER);
    mm.say("go");
    let shown = mm.expect("Ran.");
    assert!(!shown.contains("Allow bash"), "asked: {shown}");
    quit(mm);
    assert!(mark(&case, "ran") && mark(&case, "STARTED") && mark(&case, "HOOKED"));

    // Trusted and unchanged: not asked again.
    clear_marks(&case);
    let server = ScriptedServer::start(vec![Reply::text("Hello.")]);
    let mut mm = Pty::in_folder(&case, &server, data.path(), &[]);
    mm.say("hi");
    let shown = mm.expect("Hello.");
    assert!(!shown.contains("This folder's files would"), "{shown}");
    quit(mm);
    assert!(mark(&case, "STARTED"));
}

#[test]
fn print_mode_and_an_agent_named_with_a_are_trusted() {
    let case = granting_folder();
    let data = case.path().join("data");
    let server = ScriptedServer::start(vec![bash("touch ran"), Reply::text("done")]);
    let out = case
        .mm(&server)
        .env("XDG_DATA_HOME", &data)
        .args(["-p", "go"])
        .output()
        .expect("mm");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(mark(&case, "ran") && mark(&case, "STARTED") && mark(&case, "HOOKED"));
    assert!(!Path::new(&data).join("mm/trusted-folders.json").exists());

    // -a names the agent: it is trusted; the folder's .mm/permissions still needs trust.
    clear_marks(&case);
    std::fs::remove_file(case.path().join(".mm/permissions")).expect("rm rules");
    let server = ScriptedServer::start(vec![bash("touch ran"), Reply::text("done")]);
    let data = tempfile::tempdir().expect("data");
    let mut mm = Pty::mm(&case, &server, data.path(), &[]);
    mm.say("go");
    let shown = mm.expect("done");
    assert!(!shown.contains("This folder's files would"), "{shown}");
    quit(mm);
    assert!(mark(&case, "ran") && mark(&case, "STARTED"));
}

#[test]
fn a_rule_the_user_saves_needs_no_question_at_the_next_start() {
    let case = Case::new("---\nname: plain\n---\nYou are a test agent.\n");
    let data = tempfile::tempdir().expect("data");
    let server = ScriptedServer::start(vec![
        bash("ls -a"),
        Reply::text("Listed."),
        bash("ls -l"),
        Reply::text("Listed again."),
    ]);
    let mut mm = Pty::in_folder(&case, &server, data.path(), &[]);
    mm.say("list");
    mm.expect("Allow bash: ls -a");
    mm.say("s");
    mm.expect("Listed.");
    quit(mm);
    let mut mm = Pty::in_folder(&case, &server, data.path(), &[]);
    mm.say("again");
    let shown = mm.expect("Listed again.");
    assert!(!shown.contains("This folder's files would"), "{shown}");
    assert!(!shown.contains("Allow bash"), "{shown}");
    quit(mm);
}
