//! SIGINT, SIGTERM and SIGHUP: mm exits 130 / 143 / 129, and the running tool's process group
//! is gone by then — checked in the process table, not by timing.

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use mm_test_support::{Reply, ScriptedServer};
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

use super::{Case, agent_with_tools};

/// Records `LEADER SLEEP SLEEP` (the leader's pid is the group's id), then waits on two sleeps.
/// `./pids` is written whole (renamed into place), so it is complete once it exists.
pub(super) const SLEEPERS: &str = r#"#!/bin/sh
here="$(dirname "$0")"
sleep 100 &
a=$!
sleep 100 &
b=$!
echo "$$ $a $b" > "$here/pids.tmp"
mv "$here/pids.tmp" "$here/pids"
wait
"#;

pub(super) const TOOL: &str =
    "  sleepers:\n    description: Sleeps.\n    parameters: {}\n    command: [\"./sleepers\"]\n";

/// One row of the process table.
struct Proc {
    pid: u32,
    state: char,
    pgid: u32,
}

fn process(pid: u32) -> Option<Proc> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid pgrp …`; comm may hold spaces and parentheses.
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let pgid = fields.nth(1)?.parse().ok()?;
    Some(Proc { pid, state, pgid })
}

/// The live processes (not zombies) of a process group, from the whole process table.
pub(super) fn live_members(pgid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(process)
        .filter(|p| p.pgid == pgid && !matches!(p.state, 'Z' | 'X'))
        .map(|p| p.pid)
        .collect()
}

/// Whether `pid` has a handler for `signal` (bit `signal - 1` of `SigCgt`): mm has installed
/// its handlers, so the signal cannot kill it by default.
fn catches(pid: u32, signal: Signal) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (signal as i32 - 1)) != 0)
}

pub(super) fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `mm ARGS` in the case's folder, stdout piped, stdin piped and held open.
pub(super) fn spawn_mm(case: &Case, server: &ScriptedServer, args: &[&str]) -> (Child, ChildStdin) {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("mm"))
        .current_dir(case.path())
        .env_remove("MM_AGENT")
        .env_remove("MM_MODEL")
        .env_remove("MM_BASE_URL")
        .env_remove("XDG_DATA_HOME")
        .env("HOME", case.path())
        .env("TMPDIR", case.path())
        .arg("--base-url")
        .arg(server.base_url())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn mm");
    let stdin = child.stdin.take().expect("stdin");
    let pid = child.id();
    wait_for("mm to install its signal handlers", || {
        [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP]
            .into_iter()
            .all(|s| catches(pid, s))
    });
    (child, stdin)
}

fn send(child: &Child, signal: Signal) {
    let pid = Pid::from_raw(i32::try_from(child.id()).expect("pid"));
    kill(pid, signal).expect("signal mm");
}

/// Waits for mm's exit (killing it after 30 s, so that a failing test does not hang).
pub(super) fn exit_status(child: &mut Child) -> ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = child.try_wait().expect("wait for mm") {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("mm did not exit");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The tool's group, once its sleeps run: `(group id, the sleeps' pids)`.
pub(super) fn running_group(dir: &Path) -> (u32, Vec<u32>) {
    let file = dir.join("pids");
    wait_for("the tool to start its sleeps", || file.exists());
    let pids: Vec<u32> = std::fs::read_to_string(&file)
        .expect("pids")
        .split_whitespace()
        .map(|p| p.parse().expect("pid"))
        .collect();
    let (leader, sleeps) = (pids[0], pids[1..].to_vec());
    // The premise: the tool leads its own group, and its sleeps are in it and alive.
    let members: HashSet<u32> = live_members(leader).into_iter().collect();
    for pid in pids.iter() {
        assert!(
            members.contains(pid),
            "{pid} not in group {leader}: {members:?}"
        );
    }
    (leader, sleeps)
}

/// After mm's exit: no live process is left in the group, and the sleeps are gone.
pub(super) fn assert_group_gone(pgid: u32, sleeps: &[u32]) {
    // SIGKILL is sent before mm exits; a killed process may take a moment to be scheduled and
    // die, but an orphaned `sleep 100` would stay for 100 s.
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut left = live_members(pgid);
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        left = live_members(pgid);
    }
    if !left.is_empty() {
        let _ = killpg(
            Pid::from_raw(i32::try_from(pgid).expect("pgid")),
            Signal::SIGKILL,
        );
        panic!("mm left processes of the tool's group {pgid} running: {left:?}");
    }
    for &pid in sleeps {
        let state = process(pid).map(|p| p.state);
        assert!(
            matches!(state, None | Some('Z' | 'X')),
            "sleep {pid} is still there: {state:?}"
        );
    }
}

#[test]
fn sigterm_sighup_and_sigint_during_a_tool_kill_its_group_and_exit_143_129_130() {
    for (signal, code) in [
        (Signal::SIGTERM, 143),
        (Signal::SIGHUP, 129),
        (Signal::SIGINT, 130),
    ] {
        let case = Case::new(&agent_with_tools(TOOL));
        case.script("sleepers", SLEEPERS);
        let server = ScriptedServer::start(vec![
            Reply::tool_call("sleepers", "{}"),
            Reply::text("never"),
        ]);
        let (mut mm, _stdin) = spawn_mm(&case, &server, &["-p", "go"]);
        let (group, sleeps) = running_group(case.path());
        send(&mm, signal);
        let status = exit_status(&mut mm);
        assert_eq!(status.code(), Some(code), "{signal}");
        assert_group_gone(group, &sleeps);
        // The turn was cancelled: the model was not asked again.
        assert_eq!(server.request_count(), 1, "{signal}");
    }
}

/// Sends signal number `n` with kill(1): nix's `Signal` has no real-time signals.
pub(super) fn send_number(child: &Child, n: i32) {
    let sent = Command::new("kill")
        .args([format!("-{n}"), child.id().to_string()])
        .status()
        .expect("kill(1)");
    assert!(sent.success(), "kill -{n}");
}

#[test]
fn every_other_ending_signal_kills_the_tool_group_and_exits_128_plus_its_number() {
    let rtmin = nix::libc::SIGRTMIN();
    let cases = [
        (Signal::SIGQUIT as i32, 131),
        (Signal::SIGUSR1 as i32, 138),
        (Signal::SIGUSR2 as i32, 140),
        (Signal::SIGALRM as i32, 142),
        (Signal::SIGVTALRM as i32, 154),
        (Signal::SIGXCPU as i32, 152),
        (rtmin + 1, 128 + rtmin + 1),
    ];
    for (signal, code) in cases {
        let case = Case::new(&agent_with_tools(TOOL));
        case.script("sleepers", SLEEPERS);
        let server = ScriptedServer::start(vec![
            Reply::tool_call("sleepers", "{}"),
            Reply::text("never"),
        ]);
        let (mut mm, _stdin) = spawn_mm(&case, &server, &["-p", "go"]);
        let pid = mm.id();
        wait_for("mm to handle the signal", || caught_number(pid, signal));
        let (group, sleeps) = running_group(case.path());
        send_number(&mm, signal);
        let status = exit_status(&mut mm);
        assert_eq!(status.code(), Some(code), "signal {signal}");
        assert_group_gone(group, &sleeps);
    }
}

/// Whether `pid` has a handler for signal number `n`.
pub(super) fn caught_number(pid: u32, n: i32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (n - 1)) != 0)
}

#[test]
fn interactive_sigterm_and_sighup_during_a_tool_kill_its_group_and_end_mm() {
    for (signal, code) in [(Signal::SIGTERM, 143), (Signal::SIGHUP, 129)] {
        let case = Case::new(&agent_with_tools(TOOL));
        case.script("sleepers", SLEEPERS);
        let server = ScriptedServer::start(vec![
            Reply::tool_call("sleepers", "{}"),
            Reply::text("never"),
        ]);
        let (mut mm, mut stdin) = spawn_mm(&case, &server, &[]);
        stdin.write_all(b"go\n").expect("type a prompt");
        let (group, sleeps) = running_group(case.path());
        send(&mm, signal);
        // stdin stays open: mm ends because of the signal, not at the end of its input.
        let status = exit_status(&mut mm);
        assert_eq!(status.code(), Some(code), "{signal}");
        assert_group_gone(group, &sleeps);
    }
}

#[test]
fn interactive_ctrl_c_kills_the_tool_group_and_the_session_goes_on() {
    let case = Case::new(&agent_with_tools(TOOL));
    case.script("sleepers", SLEEPERS);
    let server = ScriptedServer::start(vec![
        Reply::tool_call("sleepers", "{}"),
        Reply::text("second answer"),
    ]);
    let (mut mm, mut stdin) = spawn_mm(&case, &server, &[]);
    stdin.write_all(b"go\n").expect("type a prompt");
    let (group, sleeps) = running_group(case.path());
    send(&mm, Signal::SIGINT);
    assert_group_gone(group, &sleeps);
    // mm is still there: a second prompt gets an answer.
    stdin.write_all(b"again\n").expect("type a prompt");
    wait_for("the second turn's request", || server.request_count() == 2);
    drop(stdin);
    let status = exit_status(&mut mm);
    assert_eq!(status.code(), Some(0));
}

#[test]
fn a_signal_while_waiting_on_the_model_server_exits_with_its_code() {
    for (signal, code) in [
        (Signal::SIGTERM, 143),
        (Signal::SIGHUP, 129),
        (Signal::SIGINT, 130),
    ] {
        let case = Case::new(&agent_with_tools(TOOL));
        let server = ScriptedServer::start(vec![Reply::hang()]);
        let (mut mm, _stdin) = spawn_mm(&case, &server, &["-p", "go"]);
        wait_for("the request", || server.request_count() == 1);
        send(&mm, signal);
        assert_eq!(exit_status(&mut mm).code(), Some(code), "{signal}");
    }
}

#[test]
fn a_signal_while_reading_the_prompt_from_stdin_exits_with_its_code() {
    for (signal, code) in [(Signal::SIGTERM, 143), (Signal::SIGHUP, 129)] {
        let case = Case::new(&agent_with_tools(TOOL));
        let server = ScriptedServer::start(vec![Reply::text("never")]);
        // stdin is held open: mm waits for the rest of the prompt.
        let (mut mm, _stdin) = spawn_mm(&case, &server, &["-p", "-"]);
        send(&mm, signal);
        assert_eq!(exit_status(&mut mm).code(), Some(code), "{signal}");
        assert_eq!(server.request_count(), 0);
    }
}

/// A tool whose sleep left the group (`setsid`) but holds the output pipe: once the group is
/// killed, the turn still drains that pipe for a while. A second signal does not wait for it.
#[test]
fn a_second_signal_ends_mm_without_waiting_for_the_turn() {
    let holder = r#"#!/bin/sh
here="$(dirname "$0")"
setsid sleep 100 &
echo $! > "$here/outside.pid"
sleep 100 &
a=$!
echo "$$ $a" > "$here/pids.tmp"
mv "$here/pids.tmp" "$here/pids"
wait
"#;
    let case = Case::new(&agent_with_tools(TOOL));
    case.script("sleepers", holder);
    let server = ScriptedServer::start(vec![
        Reply::tool_call("sleepers", "{}"),
        Reply::text("never"),
    ]);
    let (mut mm, _stdin) = spawn_mm(
        &case,
        &server,
        &["-p", "go", "--output-format", "stream-json"],
    );
    let (group, sleeps) = running_group(case.path());
    let outside: u32 = std::fs::read_to_string(case.path().join("outside.pid"))
        .expect("outside.pid")
        .trim()
        .parse()
        .expect("pid");
    send(&mm, Signal::SIGTERM);
    // The first signal was acted on once the group's leader is dead; the turn then drains the
    // pipe for at most two seconds (`process::DRAIN_GRACE`), and the second signal must land in
    // that window. Only the leader is watched here (one file read a poll): scanning the whole
    // process table between the two signals, on a machine busy with the rest of the suite, can
    // eat into that window (the test failed once under load).
    wait_for("the tool's group to be killed", || {
        process(group).is_none_or(|p| matches!(p.state, 'Z' | 'X'))
    });
    send(&mm, Signal::SIGINT);
    let status = exit_status(&mut mm);
    assert_group_gone(group, &sleeps);
    let _ = kill(
        Pid::from_raw(i32::try_from(outside).expect("pid")),
        Signal::SIGKILL,
    );
    // The first signal that ended mm decides the code.
    assert_eq!(status.code(), Some(143));
    // mm did not wait for the turn to end: it never wrote the result line.
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut mm.stdout.take().expect("stdout"), &mut stdout)
        .expect("read stdout");
    assert!(
        !stdout.contains(r#""type":"result""#),
        "the turn ended before mm did: {stdout}"
    );
}

/// `mm -p … --output-format stream-json | head -1`: once the reader is gone, nobody reads the
/// rest of the turn. mm cancels it (the tool's group is killed, the model not asked again) and
/// exits 141, as a writer a pipe ended does — without waiting for the tool's next output.
#[test]
fn a_closed_stdout_cancels_a_stream_json_turn_and_exits_141() {
    let case = Case::new(&agent_with_tools(TOOL));
    case.script("sleepers", SLEEPERS);
    let server = ScriptedServer::start(vec![
        Reply::tool_call("sleepers", "{}"),
        Reply::text("never"),
    ]);
    let (mut mm, _stdin) = spawn_mm(
        &case,
        &server,
        &["-p", "go", "--output-format", "stream-json"],
    );
    let (group, sleeps) = running_group(case.path());
    // The reader reads the first line (the call), then goes away.
    let mut stdout = std::io::BufReader::new(mm.stdout.take().expect("stdout"));
    let mut first = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut first).expect("first line");
    assert!(first.contains(r#""type":"tool_call""#), "{first}");
    drop(stdout);
    let status = exit_status(&mut mm);
    assert_eq!(status.code(), Some(141));
    assert_group_gone(group, &sleeps);
    assert_eq!(server.request_count(), 1);
}
