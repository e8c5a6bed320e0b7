//! Tool processes: timeouts kill the whole group, huge output stays bounded, Ctrl-C interrupts.

use std::time::{Duration, Instant};

use mm_test_support::{Reply, ScriptedServer};

use super::{Case, agent_with_tools, last_tool_message};

/// Whether a process is still alive (a zombie waiting to be reaped counts as dead).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit(')')
                .next()
                .and_then(|s| s.split_whitespace().next())
                .unwrap_or("X");
            state != "Z" && state != "X"
        }
        Err(_) => false,
    }
}

fn wait_dead(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

const SLEEPER: &str = r#"#!/bin/sh
here="$(dirname "$0")"
sleep 1000 &
echo $! > "$here/child.pid"
echo $$ > "$here/main.pid"
echo started
wait
"#;

#[test]
fn a_tool_that_sleeps_forever_is_killed_at_its_timeout_with_its_children() {
    let tools = "  sleeper:\n    description: Sleeps.\n    parameters: {}\n    command: [\"./sleeper\"]\n    timeout: 1s\n";
    let case = Case::new(&agent_with_tools(tools));
    case.script("sleeper", SLEEPER);
    let server = ScriptedServer::start(vec![Reply::tool_call("sleeper", "{}"), Reply::text("ok")]);
    let started = Instant::now();
    case.mm(&server)
        .args(["-p", "go"])
        .timeout(Duration::from_secs(60))
        .assert()
        .success();
    assert!(started.elapsed() < Duration::from_secs(30));
    let answer = last_tool_message(&server);
    assert!(answer.contains("timed out after 1s"), "{answer}");
    for file in ["child.pid", "main.pid"] {
        let pid: u32 = std::fs::read_to_string(case.path().join(file))
            .expect(file)
            .trim()
            .parse()
            .expect("pid");
        assert!(wait_dead(pid), "{file} {pid} was left running");
    }
}

#[test]
fn a_gigabyte_of_output_is_truncated_and_memory_stays_flat() {
    // The script reads mm's peak RSS (its parent) once it has written 1 GB.
    let flood = r#"#!/bin/sh
here="$(dirname "$0")"
head -c 1000000000 /dev/zero | tr '\0' 'x'
grep VmHWM "/proc/$PPID/status" > "$here/hwm"
"#;
    let tools = "  flood:\n    description: Floods.\n    parameters: {}\n    command: [\"./flood\"]\n    timeout: 300s\n";
    let case = Case::new(&agent_with_tools(tools));
    case.script("flood", flood);
    let server = ScriptedServer::start(vec![Reply::tool_call("flood", "{}"), Reply::text("ok")]);
    case.mm(&server)
        .args(["-p", "go"])
        .timeout(Duration::from_secs(300))
        .assert()
        .success();

    let hwm = std::fs::read_to_string(case.path().join("hwm"))
        .expect("the script recorded mm's peak RSS");
    let kib: u64 = hwm
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .expect("VmHWM in kB");
    eprintln!("mm's peak RSS after 1 GB of tool output: {kib} KiB");
    assert!(
        kib < 64 * 1024,
        "mm's peak RSS while 1 GB went through: {kib} KiB"
    );

    let answer = last_tool_message(&server);
    assert!(
        answer.len() < 10_000,
        "the model gets head and tail only: {} bytes",
        answer.len()
    );
    assert!(
        answer.contains("1000000000"),
        "says how much there was: {}",
        &answer[..answer.len().min(600)]
    );
    // The full output was saved where the answer says.
    let saved = answer
        .split_whitespace()
        .find(|w| w.contains("mm-output"))
        .map(|w| {
            w.trim_matches(|c: char| {
                !(c.is_alphanumeric() || c == '/' || c == '.' || c == '-' || c == '_')
            })
        })
        .expect("names the file of the full output");
    let size = std::fs::metadata(saved)
        .map(|m| m.len())
        .expect("the full output file exists");
    assert_eq!(size, 1_000_000_000);
    let _ = std::fs::remove_file(saved);
}

#[test]
fn ctrl_c_kills_the_running_tool_and_exits_130() {
    let tools =
        "  sleeper:\n    description: Sleeps.\n    parameters: {}\n    command: [\"./sleeper\"]\n";
    let case = Case::new(&agent_with_tools(tools));
    case.script("sleeper", SLEEPER);
    let server = ScriptedServer::start(vec![
        Reply::tool_call("sleeper", "{}"),
        Reply::text("never"),
    ]);
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("mm"))
        .current_dir(case.path())
        .env_remove("MM_AGENT")
        .args(["--base-url", &server.base_url(), "-p", "go"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn mm");
    let child_pid_file = case.path().join("child.pid");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !child_pid_file.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(200));
    let mm_pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("pid"));
    nix::sys::signal::kill(mm_pid, nix::sys::signal::Signal::SIGINT).expect("SIGINT");
    let status = child.wait().expect("mm exits");
    assert_eq!(status.code(), Some(130));
    let pid: u32 = std::fs::read_to_string(&child_pid_file)
        .expect("pid")
        .trim()
        .parse()
        .expect("pid");
    assert!(wait_dead(pid), "the tool's child {pid} was left running");
}
