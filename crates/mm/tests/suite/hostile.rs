//! The hostile corpus through the real binary: every signal that ends mm, special files in
//! the sessions folder, a second mm on a session in use, and special files given to the file
//! tools. Each input is checked for what must hold, and counted (`mm_test_support::Corpus`).
//! The in-process corpora are beside the code they check (`corpus_*` tests in mm-core, and
//! `consent.rs` for the dialog); docs/hardening.md has the counts.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mm_test_support::{Corpus, Reply, ScriptedServer};
use nix::sys::signal::Signal;
use serde_json::json;

use super::signals::{
    SLEEPERS, TOOL, caught_number, exit_status, live_members, running_group, send_number, spawn_mm,
};
use super::{Case, agent_with_tools, tool_messages};

/// The group is gone within 5 s (a killed process may take a moment to be reaped).
fn group_gone(pgid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if live_members(pgid).is_empty() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(i32::try_from(pgid).unwrap_or(0)),
        Signal::SIGKILL,
    );
    false
}

#[test]
fn corpus_every_ending_signal_kills_the_tool_group_first() {
    use nix::libc;
    let mut signals = vec![
        libc::SIGHUP,
        libc::SIGINT,
        libc::SIGQUIT,
        libc::SIGTERM,
        libc::SIGUSR1,
        libc::SIGUSR2,
        libc::SIGALRM,
        libc::SIGVTALRM,
        libc::SIGPROF,
        libc::SIGXCPU,
        libc::SIGXFSZ,
        libc::SIGIO,
        libc::SIGPWR,
        libc::SIGSTKFLT,
    ];
    let (min, max) = (libc::SIGRTMIN(), libc::SIGRTMAX());
    signals.extend([min, min + 1, (min + max) / 2, max - 1, max]);
    let mut corpus = Corpus::new("signals that end mm (print mode, a tool running)");
    for signal in signals {
        let case = Case::new(&agent_with_tools(TOOL));
        case.script("sleepers", SLEEPERS);
        let server = ScriptedServer::start(vec![
            Reply::tool_call("sleepers", "{}"),
            Reply::text("never"),
        ]);
        let (mut mm, _stdin) = spawn_mm(&case, &server, &["-p", "go"]);
        let pid = mm.id();
        let deadline = Instant::now() + Duration::from_secs(30);
        while !caught_number(pid, signal) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let (group, _) = running_group(case.path());
        send_number(&mm, signal);
        let code = exit_status(&mut mm).code();
        let gone = group_gone(group);
        corpus.check(signal, code == Some(128 + signal) && gone, || {
            format!("exit {code:?}, group gone: {gone}")
        });
    }
    corpus.finish();
}

/// Runs mm with a 20 s limit; its exit code (`None`: it hung and was killed).
fn bounded(mut command: assert_cmd::Command) -> (Option<i32>, String) {
    match command.timeout(Duration::from_secs(20)).output() {
        Ok(out) => (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ),
        Err(e) => (None, e.to_string()),
    }
}

#[test]
fn corpus_nothing_in_the_sessions_folder_hangs_mm() {
    let mut corpus = Corpus::new("special files in the sessions folder");
    let kinds = [
        "fifo",
        "fifo link",
        "socket",
        "folder",
        "link to /dev/zero",
        "link to /dev/urandom",
        "empty",
        "no header",
        "binary",
        "huge header line",
        "device",
    ];
    for kind in kinds {
        let case = Case::new("---\nyolo: true\n---\nTest agent.\n");
        let data = case.path().join("data");
        let server = ScriptedServer::start(vec![Reply::text("one"); 8]);
        let run = |args: &[&str]| {
            let mut command = case.mm(&server);
            command.env("XDG_DATA_HOME", &data).args(args);
            bounded(command)
        };
        assert_eq!(run(&["-p", "first"]).0, Some(0));
        let dir = data.join("mm/sessions");
        let evil = dir.join("20991231-235959-ffff.jsonl");
        let made = match kind {
            "fifo" => {
                nix::unistd::mkfifo(&evil, nix::sys::stat::Mode::from_bits_truncate(0o600)).is_ok()
            }
            "fifo link" => {
                let fifo = case.path().join("pipe");
                nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).is_ok()
                    && std::os::unix::fs::symlink(&fifo, &evil).is_ok()
            }
            "socket" => std::os::unix::net::UnixListener::bind(&evil)
                .map(std::mem::forget)
                .is_ok(),
            "folder" => std::fs::create_dir(&evil).is_ok(),
            "link to /dev/zero" => std::os::unix::fs::symlink("/dev/zero", &evil).is_ok(),
            "link to /dev/urandom" => std::os::unix::fs::symlink("/dev/urandom", &evil).is_ok(),
            "empty" => std::fs::write(&evil, "").is_ok(),
            "no header" => std::fs::write(&evil, "{\"type\":\"user\",\"text\":\"x\"}\n").is_ok(),
            "binary" => std::fs::write(&evil, [0u8, 0xff, 0xfe, 10, 0, 1]).is_ok(),
            "huge header line" => std::fs::write(&evil, vec![b'{'; 4 << 20]).is_ok(),
            "device" if nix::unistd::geteuid().is_root() => nix::sys::stat::mknod(
                &evil,
                nix::sys::stat::SFlag::S_IFCHR,
                nix::sys::stat::Mode::from_bits_truncate(0o600),
                nix::sys::stat::makedev(1, 5),
            )
            .is_ok(),
            "device" => {
                eprintln!("device left out: mknod needs root");
                continue;
            }
            _ => false,
        };
        assert!(made, "could not make {kind}");
        for args in [
            vec!["sessions"],
            vec!["sessions", "--all"],
            vec!["-c", "-p", "again"],
            vec!["-r", "20991231-235959-ffff", "-p", "again"],
            vec!["-r", "20991231", "-p", "again"],
        ] {
            let (code, stderr) = run(&args);
            corpus.check((kind, &args), matches!(code, Some(0 | 2)), || {
                format!("exit {code:?}: {stderr}")
            });
        }
    }
    corpus.finish();
}

#[test]
fn corpus_a_session_in_use_is_never_shared() {
    let mut corpus = Corpus::new("a second mm on a session in use");
    for holder in ["print", "interactive"] {
        let case = Case::new("---\nyolo: true\n---\nTest agent.\n");
        let data = case.path().join("data");
        let first = ScriptedServer::start(vec![Reply::text("first")]);
        let mut start = case.mm(&first);
        start.env("XDG_DATA_HOME", &data).args(["-p", "start"]);
        assert_eq!(bounded(start).0, Some(0));
        let id = std::fs::read_dir(data.join("mm/sessions"))
            .expect("sessions")
            .filter_map(|e| e.ok()?.path().file_stem()?.to_str().map(String::from))
            .next()
            .expect("a session");
        let slow = ScriptedServer::start(vec![Reply::hang()]);
        let mut args = vec![
            "--base-url".to_string(),
            slow.base_url(),
            "-r".into(),
            id.clone(),
        ];
        if holder == "print" {
            args.extend(["-p".into(), "A".into()]);
        }
        let mut a = Command::new(assert_cmd::cargo::cargo_bin("mm"))
            .current_dir(case.path())
            .env_remove("MM_AGENT")
            .env_remove("MM_BASE_URL")
            .env("HOME", case.path())
            .env("XDG_DATA_HOME", &data)
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn A");
        if holder == "interactive" {
            use std::io::Write;
            let _ = a.stdin.as_mut().map(|s| s.write_all(b"A\n"));
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        while slow.request_count() == 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let file = data.join(format!("mm/sessions/{id}.jsonl"));
        for second in [
            vec!["-r", id.as_str(), "-p", "B"],
            vec!["-r", &id[..15], "-p", "B"],
            vec!["-c", "-p", "B"],
            vec![
                "--resume",
                id.as_str(),
                "-p",
                "B",
                "--output-format",
                "json",
            ],
        ] {
            let before = std::fs::read(&file).unwrap_or_default();
            let other = ScriptedServer::start(vec![Reply::text("B")]);
            let mut command = case.mm(&other);
            command.env("XDG_DATA_HOME", &data).args(&second);
            let (code, stderr) = bounded(command);
            let after = std::fs::read(&file).unwrap_or_default();
            let held = code == Some(2)
                && stderr.contains("is in use by another mm")
                && before == after
                && other.request_count() == 0;
            corpus.check((holder, &second), held, || {
                format!("exit {code:?}: {stderr}")
            });
        }
        let _ = a.kill();
        let _ = a.wait();
    }
    corpus.finish();
}

#[test]
fn corpus_special_files_given_to_the_file_tools_answer_at_once() {
    let case = Case::new("---\nyolo: true\n---\nTest agent.\n");
    nix::unistd::mkfifo(
        &case.path().join("pipe"),
        nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .expect("mkfifo");
    let mut calls = Vec::new();
    for path in [
        "pipe",
        "/dev/zero",
        "/dev/urandom",
        "/dev/tty",
        "/proc/self/fd/0",
        "/proc/kmsg",
    ] {
        if !Path::new(path).exists() && path != "pipe" {
            continue;
        }
        calls.push(("read_file", json!({ "path": path })));
        calls.push(("grep", json!({ "pattern": "x", "path": path })));
        calls.push((
            "edit_file",
            json!({ "path": path, "old_text": "a", "new_text": "b" }),
        ));
    }
    calls.push(("write_file", json!({ "path": "pipe", "content": "x" })));
    let mut replies: Vec<Reply> = calls
        .iter()
        .map(|(tool, args)| Reply::tool_call(*tool, args.to_string()))
        .collect();
    replies.push(Reply::text("done"));
    let server = ScriptedServer::start(replies);
    let mut command = case.mm(&server);
    command.args(["-p", "go"]);
    let started = Instant::now();
    let (code, _) = bounded(command);
    let took = started.elapsed();
    let mut corpus = Corpus::new("special files given to the file tools (real binary, yolo)");
    let answers = server
        .requests()
        .last()
        .map(tool_messages)
        .unwrap_or_default();
    for (i, call) in calls.iter().enumerate() {
        let answer = answers.get(i).cloned().unwrap_or_default();
        let held = code == Some(0)
            && (answer.contains("not a regular file")
                || answer.contains("cannot be read: No such device")
                || answer.contains("would block")
                || answer.contains("searches regular files")
                || answer.starts_with("No matches"));
        corpus.check(call, held, || {
            format!("exit {code:?} after {took:?}: {answer}")
        });
    }
    corpus.finish();
}
