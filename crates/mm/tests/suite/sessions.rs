//! Sessions through the real binary: every conversation is appended to
//! `$XDG_DATA_HOME/mm/sessions/<id>.jsonl`; `--continue` and `--resume ID` go on with one (in
//! print and interactive mode); a session killed mid-turn loses nothing that was written;
//! `mm sessions` lists them.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use mm_test_support::{Reply, ScriptedServer};
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use serde_json::Value;

use super::pty::{CTRL_D, Pty};
use super::signals::{SLEEPERS, TOOL, running_group};
use super::{Case, agent_with_tools};

fn sessions_dir(data: &Path) -> PathBuf {
    data.join("mm/sessions")
}

/// Every session file's lines, parsed, one file only.
fn only_session(data: &Path) -> (String, Vec<Value>) {
    let files: Vec<PathBuf> = std::fs::read_dir(sessions_dir(data))
        .expect("sessions")
        .map(|e| e.expect("entry").path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let id = files[0]
        .file_stem()
        .and_then(|s| s.to_str())
        .expect("id")
        .to_string();
    let text = std::fs::read_to_string(&files[0]).expect("read");
    let lines = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    (id, lines)
}

/// `(role, content or tool names)` of each message of a request.
fn conversation(request: &Value) -> Vec<(String, String)> {
    request["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| {
            let role = m["role"].as_str().unwrap_or_default().to_string();
            let text = match m["tool_calls"].as_array() {
                Some(calls) => calls
                    .iter()
                    .map(|c| c["function"]["name"].as_str().unwrap_or_default())
                    .collect::<Vec<_>>()
                    .join(","),
                None => m["content"].as_str().unwrap_or_default().to_string(),
            };
            (role, text)
        })
        .collect()
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn print_mode_writes_a_session_and_continue_goes_on_with_it() {
    let case = Case::new("---\nyolo: true\n---\nTest agent.\n");
    let data = case.path().join("data");
    let server = ScriptedServer::start(vec![
        Reply::tool_call("bash", r#"{"command":"echo hi"}"#),
        Reply::text("It said hi."),
        Reply::text("You asked about hi."),
    ]);
    let run = |args: &[&str]| {
        case.mm(&server)
            .env("XDG_DATA_HOME", &data)
            .args(args)
            .output()
            .expect("mm")
    };
    let out = run(&["-p", "say hi", "--output-format", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    let (id, lines) = only_session(&data);
    assert_eq!(report["session_id"], id.as_str());
    let types: Vec<&str> = lines.iter().filter_map(|l| l["type"].as_str()).collect();
    assert_eq!(
        types,
        [
            "session",
            "user",
            "tool_call",
            "tool_result",
            "assistant_message",
            "message",
            "message",
            "message",
            "turn_end"
        ]
    );
    assert_eq!(
        lines[0]["cwd"],
        case.path()
            .canonicalize()
            .expect("cwd")
            .to_str()
            .expect("utf-8")
    );

    let out = run(&["-c", "-p", "what did it say?"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "You asked about hi.\n"
    );
    let requests = server.requests();
    // The earlier turn is folded into the new message: its question, its tool's output on one
    // line, its answer; not the call (the session file keeps it; docs/sessions.md).
    assert_eq!(
        conversation(&requests[2]),
        pairs(&[
            ("system", "Test agent."),
            (
                "user",
                "Earlier in this conversation:\nMe: say hi\n(The tool bash answered: hi)\n\
                 You: It said hi.\n\nMy message now: what did it say?"
            ),
        ])
    );
    // The same file, appended to.
    let (same, lines) = only_session(&data);
    assert_eq!(same, id);
    assert!(lines.iter().any(|l| l["type"] == "resumed"));
}

#[test]
fn a_session_killed_mid_turn_loses_nothing_that_was_written() {
    let case = Case::new(&agent_with_tools(TOOL));
    case.script("sleepers", SLEEPERS);
    let data = case.path().join("data");
    let server = ScriptedServer::start(vec![
        Reply::text("First answer."),
        Reply::tool_call("sleepers", "{}"),
        Reply::text("never sent"),
    ]);
    case.mm(&server)
        .env("XDG_DATA_HOME", &data)
        .args(["-p", "first"])
        .assert()
        .success();

    // The second turn runs a tool that sleeps; mm is killed (no chance to clean up).
    let mut mm = Command::new(assert_cmd::cargo::cargo_bin("mm"))
        .current_dir(case.path())
        .env_remove("MM_AGENT")
        .env_remove("MM_MODEL")
        .env_remove("MM_BASE_URL")
        .env("HOME", case.path())
        .env("TMPDIR", case.path())
        .env("XDG_DATA_HOME", &data)
        .args(["--base-url", &server.base_url(), "-c", "-p", "second"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("mm");
    let (group, _) = running_group(case.path());
    let (_, before) = only_session(&data);
    kill(
        Pid::from_raw(i32::try_from(mm.id()).expect("pid")),
        Signal::SIGKILL,
    )
    .expect("kill");
    let _ = mm.wait();
    // SIGKILL left the tool's group behind: end it here.
    let _ = killpg(
        Pid::from_raw(i32::try_from(group).expect("pgid")),
        Signal::SIGKILL,
    );
    let (_, after) = only_session(&data);
    assert_eq!(after, before, "the file changed after the kill");
    let last: Vec<&str> = after
        .iter()
        .rev()
        .take(2)
        .filter_map(|l| l["type"].as_str())
        .collect();
    assert_eq!(last, ["tool_call", "user"]);

    // Resumed: the first turn whole, the second as far as it got, then the new message.
    let server2 = ScriptedServer::start(vec![Reply::text("Third answer.")]);
    let out = case
        .mm(&server2)
        .env("XDG_DATA_HOME", &data)
        .args(["-c", "-p", "third"])
        .output()
        .expect("mm");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        conversation(&server2.requests()[0]),
        pairs(&[
            ("system", "You are a test agent."),
            ("user", "first"),
            ("assistant", "First answer."),
            ("user", "second"),
            ("assistant", "sleepers"),
            (
                "tool",
                "The result of this call is unknown: mm was stopped while it ran."
            ),
            ("user", "third"),
        ])
    );
}

#[test]
fn mm_sessions_lists_the_sessions_of_this_folder() {
    let case = Case::new("---\nmodel: m\n---\nTest agent.\n");
    let data = case.path().join("data");
    let server = ScriptedServer::start(vec![Reply::text("A."), Reply::text("B.")]);
    for prompt in ["the first question", "the second question"] {
        case.mm(&server)
            .env("XDG_DATA_HOME", &data)
            .args(["-p", prompt])
            .assert()
            .success();
    }
    let out = case
        .mm_offline()
        .env("XDG_DATA_HOME", &data)
        .arg("sessions")
        .output()
        .expect("mm");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows.len(), 3, "{text}");
    assert!(rows[0].ends_with("the first question"), "{text}");
    assert!(rows[0].contains("  1 turn"), "{text}");
    assert!(rows[1].ends_with("the second question"), "{text}");
    assert!(rows[2].starts_with("2 session(s) in "), "{text}");

    // Elsewhere: none here, all with --all.
    let elsewhere = tempfile::tempdir().expect("dir");
    let out = case
        .mm_offline()
        .env("XDG_DATA_HOME", &data)
        .args(["-C", &elsewhere.path().display().to_string(), "sessions"])
        .output()
        .expect("mm");
    assert!(String::from_utf8_lossy(&out.stderr).contains("mm: no sessions in "));
    let out = case
        .mm_offline()
        .env("XDG_DATA_HOME", &data)
        .args([
            "-C",
            &elsewhere.path().display().to_string(),
            "sessions",
            "--all",
        ])
        .output()
        .expect("mm");
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 3);

    // Unknown ids and nothing to continue are usage errors.
    let out = case
        .mm_offline()
        .env("XDG_DATA_HOME", &data)
        .args(["--resume", "nope", "-p", "x"])
        .output()
        .expect("mm");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "mm: no session nope (mm sessions lists them)\n"
    );
    let out = case
        .mm_offline()
        .env("XDG_DATA_HOME", case.path().join("empty"))
        .args(["--continue", "-p", "x"])
        .output()
        .expect("mm");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn interactive_resume_shows_where_the_conversation_was() {
    let case = Case::new("---\nmodel: m\n---\nTest agent.\n");
    let data = case.path().join("data");
    let server = ScriptedServer::start(vec![
        Reply::text("The answer is 42."),
        Reply::text("Still 42."),
    ]);
    case.mm(&server)
        .env("XDG_DATA_HOME", &data)
        .args(["-p", "what is the answer?"])
        .assert()
        .success();
    let (id, _) = only_session(&data);
    let mut mm = Pty::mm(&case, &server, &data, &["--resume", &id[..15]]);
    mm.expect("Resumed: 2 earlier message(s).");
    mm.expect("> what is the answer?");
    mm.expect("The answer is 42.");
    mm.say("sure?");
    mm.expect("Still 42.");
    mm.expect("> ");
    mm.send(CTRL_D);
    mm.expect(&format!("Session {id} saved"));
    assert_eq!(mm.wait().code(), Some(0));
    let requests = server.requests();
    assert_eq!(
        conversation(&requests[1]),
        pairs(&[
            ("system", "Test agent."),
            (
                "user",
                "Earlier in this conversation:\nMe: what is the answer?\nYou: The answer is 42.\n\n\
                 My message now: sure?"
            ),
        ])
    );
}

#[test]
fn an_interactive_session_killed_mid_turn_is_resumed_with_its_cut_turn() {
    let case = Case::new(&agent_with_tools(TOOL));
    case.script("sleepers", SLEEPERS);
    let data = case.path().join("data");
    let server = ScriptedServer::start(vec![
        Reply::text("Hello there."),
        Reply::tool_call("sleepers", "{}"),
        Reply::text("Picked up again."),
    ]);
    let mut mm = Pty::mm(&case, &server, &data, &[]);
    mm.say("hi");
    mm.expect("Hello there.");
    mm.say("sleep please");
    let (group, _) = running_group(case.path());
    // SIGKILL to mm itself (script's child): nothing of mm runs after it.
    let pids = std::fs::read_dir("/proc")
        .expect("proc")
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/exe"))
                .is_ok_and(|exe| exe == assert_cmd::cargo::cargo_bin("mm"))
                && std::fs::read_to_string(format!("/proc/{pid}/environ"))
                    .is_ok_and(|env| env.contains(&data.display().to_string()))
        })
        .collect::<Vec<_>>();
    assert_eq!(pids.len(), 1, "{pids:?}");
    kill(Pid::from_raw(pids[0]), Signal::SIGKILL).expect("kill");
    let _ = mm.wait();
    let _ = killpg(
        Pid::from_raw(i32::try_from(group).expect("pgid")),
        Signal::SIGKILL,
    );

    let mut mm = Pty::mm(&case, &server, &data, &["--continue"]);
    mm.expect("Resumed: 5 earlier message(s); the last turn was cut short");
    mm.say("go on");
    mm.expect("Picked up again.");
    mm.expect("> ");
    mm.send(CTRL_D);
    assert_eq!(mm.wait().code(), Some(0));
    assert_eq!(
        conversation(&server.requests()[2]),
        pairs(&[
            ("system", "You are a test agent."),
            ("user", "hi"),
            ("assistant", "Hello there."),
            ("user", "sleep please"),
            ("assistant", "sleepers"),
            (
                "tool",
                "The result of this call is unknown: mm was stopped while it ran."
            ),
            ("user", "go on"),
        ])
    );
}

#[test]
fn a_session_in_use_by_another_mm_is_refused_not_garbled() {
    let case = Case::new("---\nyolo: true\n---\nTest agent.\n");
    let data = case.path().join("data");
    let first = ScriptedServer::start(vec![Reply::text("first answer")]);
    let out = case
        .mm(&first)
        .env("XDG_DATA_HOME", &data)
        .args(["-p", "start"])
        .output()
        .expect("mm");
    assert!(out.status.success());
    let (id, _) = only_session(&data);
    // A: goes on with the session and waits on its model, holding it.
    let slow = ScriptedServer::start(vec![Reply::hang()]);
    let mut a = Command::new(assert_cmd::cargo::cargo_bin("mm"))
        .current_dir(case.path())
        .env_remove("MM_AGENT")
        .env_remove("MM_MODEL")
        .env_remove("MM_BASE_URL")
        .env("HOME", case.path())
        .env("XDG_DATA_HOME", &data)
        .args(["--base-url", &slow.base_url(), "-r", &id, "-p", "A"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn A");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while slow.request_count() == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "A never asked its model"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // B: the same session at the same time is refused, and writes nothing to it.
    let before = std::fs::read(sessions_dir(&data).join(format!("{id}.jsonl"))).expect("read");
    let other = ScriptedServer::start(vec![Reply::text("B's answer")]);
    let out = case
        .mm(&other)
        .env("XDG_DATA_HOME", &data)
        .args(["-r", &id, "-p", "B"])
        .output()
        .expect("mm B");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("the session {id} is in use by another mm")),
        "{stderr}"
    );
    assert_eq!(other.request_count(), 0);
    let after = std::fs::read(sessions_dir(&data).join(format!("{id}.jsonl"))).expect("read");
    assert_eq!(before, after, "B wrote to A's session");
    let pid = Pid::from_raw(i32::try_from(a.id()).expect("pid"));
    kill(pid, Signal::SIGTERM).expect("end A");
    assert_eq!(a.wait().expect("wait A").code(), Some(143));
    // Once A is gone, the session can be resumed again.
    let out = case
        .mm(&other)
        .env("XDG_DATA_HOME", &data)
        .args(["-r", &id, "-p", "B"])
        .output()
        .expect("mm B again");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_fifo_named_like_a_session_hangs_nothing() {
    let case = Case::new("---\nyolo: true\n---\nTest agent.\n");
    let data = case.path().join("data");
    let server = ScriptedServer::start(vec![Reply::text("one"), Reply::text("two")]);
    let run = |args: &[&str]| {
        case.mm(&server)
            .env("XDG_DATA_HOME", &data)
            .args(args)
            .timeout(std::time::Duration::from_secs(20))
            .output()
            .expect("mm")
    };
    assert!(run(&["-p", "first"]).status.success());
    let fifo = sessions_dir(&data).join("20991231-235959-ffff.jsonl");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).expect("mkfifo");
    // Newest by name and by time: every look-up would try it first.
    let out = run(&["sessions"]);
    assert!(out.status.success(), "{:?}", out);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().count(),
        2,
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let out = run(&["-c", "-p", "second"]);
    assert!(out.status.success(), "{:?}", out);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "two\n");
    for id in ["20991231-235959-ffff", "20991231"] {
        let out = run(&["-r", id, "-p", "third"]);
        assert_eq!(out.status.code(), Some(2), "{:?}", out);
    }
}
