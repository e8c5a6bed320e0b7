use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::*;

pub(crate) fn spec(program: &str, args: &[&str]) -> ProcessSpec {
    ProcessSpec {
        program: program.into(),
        args: args.iter().map(OsString::from).collect(),
        cwd: std::env::temp_dir(),
        timeout: Duration::from_secs(20),
        sandbox: SandboxMode::Off,
    }
}

pub(crate) fn sh(script: &str) -> ProcessSpec {
    spec("sh", &["-c", script])
}

/// A finished process with its whole output.
struct Ran {
    output: String,
    exit_code: Option<i32>,
    timed_out: bool,
    cancelled: bool,
    duration: Duration,
}

async fn run_with(spec: &ProcessSpec, cancel: &CancellationToken) -> io::Result<Ran> {
    let mut bytes = Vec::new();
    let mut sink = |chunk: &[u8]| bytes.extend_from_slice(chunk);
    let outcome = run_process(spec, cancel, &mut sink).await?;
    Ok(Ran {
        output: String::from_utf8_lossy(&bytes).into_owned(),
        exit_code: outcome.exit_code,
        timed_out: outcome.timed_out,
        cancelled: outcome.cancelled,
        duration: outcome.duration,
    })
}

async fn run(spec: &ProcessSpec) -> Ran {
    run_with(spec, &CancellationToken::new())
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

async fn start_error(spec: &ProcessSpec) -> io::Error {
    match run_with(spec, &CancellationToken::new()).await {
        Ok(ran) => panic!("it ran: {}", ran.output),
        Err(e) => e,
    }
}

/// The first line of the output: the pid that `echo $$` printed, which is the group's id.
fn pgid_of(output: &str) -> i32 {
    output
        .lines()
        .next()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("no pid in {output:?}"))
}

/// Live (non-zombie) processes of group `pgid`, from /proc. Zombies are left out: they hold no
/// resource and are reaped by whoever inherited them.
fn live_members(pgid: i32) -> Vec<i32> {
    let mut live = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid pgrp …`; comm may hold spaces and parentheses.
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
            continue;
        };
        let fields: Vec<&str> = after.split_whitespace().collect();
        if fields.get(2) == Some(&pgid.to_string().as_str()) && fields.first() != Some(&"Z") {
            live.push(pid);
        }
    }
    live
}

/// Asserts that group `pgid` is gone, allowing the kernel a moment to finish SIGKILLed processes.
async fn assert_group_gone(pgid: i32) {
    for _ in 0..100 {
        if live_members(pgid).is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!(
        "processes of group {pgid} survived: {:?}",
        live_members(pgid)
    );
}

#[tokio::test]
async fn values_reach_the_program_as_one_argv_entry_each() {
    let values = [
        "1.4.2; rm -rf ~",
        "$(id)",
        "`id`",
        "a | b",
        "line\nbreak",
        "-rf",
        "--help",
        " spaced ",
        "'\"",
        "",
    ];
    let mut args = vec!["%s\\0"];
    args.extend(values);
    let outcome = run(&spec("/usr/bin/printf", &args)).await;
    assert_eq!(outcome.exit_code, Some(0), "{}", outcome.output);
    let received: Vec<&str> = outcome.output.split_terminator('\0').collect();
    assert_eq!(received, values);
}

#[tokio::test]
async fn stdout_and_stderr_share_one_stream_and_exit_code_is_kept() {
    let outcome = run(&sh("echo out; echo err >&2; echo again; exit 3")).await;
    assert_eq!(outcome.output, "out\nerr\nagain\n");
    assert_eq!(outcome.exit_code, Some(3));
    assert!(!outcome.timed_out && !outcome.cancelled);
}

#[tokio::test]
async fn stdin_is_closed_and_cwd_is_used() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut spec = sh("cat; pwd");
    spec.cwd = dir.path().to_path_buf();
    let outcome = run(&spec).await;
    let cwd = std::fs::canonicalize(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(outcome.output.trim(), cwd.to_string_lossy());
}

#[tokio::test]
async fn timeout_kills_the_whole_group() {
    let mut spec = sh("echo $$; sleep 1000 & sleep 1000");
    spec.timeout = Duration::from_millis(500);
    let outcome = run(&spec).await;
    assert!(outcome.timed_out);
    assert_eq!(outcome.exit_code, None);
    assert!(
        outcome.duration < Duration::from_secs(5),
        "{:?}",
        outcome.duration
    );
    assert_group_gone(pgid_of(&outcome.output)).await;
}

#[tokio::test]
async fn cancellation_kills_the_whole_group() {
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let outcome = run_with(&sh("echo $$; sleep 1000 & sleep 1000"), &cancel)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(outcome.cancelled && !outcome.timed_out);
    assert_group_gone(pgid_of(&outcome.output)).await;
}

#[tokio::test]
async fn a_dropped_call_leaves_no_process() {
    let pid = Arc::new(Mutex::new(String::new()));
    let seen = pid.clone();
    let mut echo = move |chunk: &[u8]| {
        if let Ok(mut s) = seen.lock() {
            s.push_str(&String::from_utf8_lossy(chunk));
        }
    };
    let spec = sh("echo $$; sleep 1000 & sleep 1000");
    let cancel = CancellationToken::new();
    let mut call = Box::pin(run_process(&spec, &cancel, &mut echo));
    // Run the call until the shell has printed its pid and both sleeps are up.
    let mut pgid = None;
    for _ in 0..250 {
        tokio::select! {
            _ = &mut call => panic!("the call ended"),
            () = tokio::time::sleep(Duration::from_millis(20)) => {}
        }
        let printed = pid.lock().map(|s| s.clone()).unwrap_or_default();
        pgid = printed.ends_with('\n').then(|| pgid_of(&printed));
        if pgid.is_some_and(|g| live_members(g).len() >= 2) {
            break;
        }
    }
    let pgid = pgid.unwrap_or_else(|| panic!("no pid printed"));
    assert!(live_members(pgid).len() >= 2, "the group runs");
    drop(call);
    assert_group_gone(pgid).await;
}

#[tokio::test]
async fn a_background_child_cannot_hold_the_call_open() {
    let outcome = run(&sh("echo $$; sleep 1000 & echo done")).await;
    assert_eq!(outcome.exit_code, Some(0));
    assert!(
        outcome.duration < Duration::from_secs(5),
        "{:?}",
        outcome.duration
    );
    assert!(outcome.output.ends_with("done\n"), "{}", outcome.output);
    assert_group_gone(pgid_of(&outcome.output)).await;
}

#[tokio::test]
async fn a_missing_program_is_an_error_naming_it() {
    let e = start_error(&spec("mm-no-such-program", &[])).await;
    assert_eq!(e.kind(), io::ErrorKind::NotFound);
    assert_eq!(
        e.to_string(),
        "cannot run mm-no-such-program: no such program on PATH"
    );

    let e = start_error(&spec("./missing.sh", &[])).await;
    assert_eq!(e.to_string(), "cannot run ./missing.sh: no such file");
}

#[tokio::test]
async fn a_non_executable_file_is_an_error_naming_it() {
    let file = tempfile::NamedTempFile::new().unwrap_or_else(|e| panic!("{e}"));
    let program = file.path().to_string_lossy().into_owned();
    let e = start_error(&spec(&program, &[])).await;
    assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
    assert_eq!(
        e.to_string(),
        format!("cannot run {program}: permission denied (is it an executable file?)")
    );
}

#[tokio::test]
async fn a_nul_byte_is_refused_before_spawning() {
    let e = start_error(&spec("printf", &["%s", "a\0b"])).await;
    assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    assert_eq!(
        e.to_string(),
        "cannot run printf: argument 2 contains a NUL byte, which cannot be passed to a program"
    );
}

#[tokio::test]
async fn a_piped_child_talks_over_stdin_and_stdout_and_keeps_stderr_apart() {
    let mut child = spawn_piped(PipedSpec {
        program: "sh".into(),
        args: vec![
            "-c".into(),
            "read line; echo \"got $line\"; echo oops >&2".into(),
        ],
        cwd: std::env::temp_dir(),
        env: vec![("MM_TEST_VALUE".into(), "x".into())],
        sandbox: SandboxMode::Off,
        stderr: StderrTo::Piped,
        ..PipedSpec::default()
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("stdin"));
    stdin
        .write_all(b"hello\n")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    drop(stdin);
    let mut out = String::new();
    let mut err = String::new();
    let mut stdout = child.stdout.take().unwrap_or_else(|| panic!("stdout"));
    let mut stderr = child.stderr.take().unwrap_or_else(|| panic!("stderr"));
    stdout
        .read_to_string(&mut out)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    stderr
        .read_to_string(&mut err)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let status = child.wait().await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (out.as_str(), err.as_str(), status.code()),
        ("got hello\n", "oops\n", Some(0))
    );
}

#[tokio::test]
async fn a_dropped_piped_child_takes_its_group_with_it() {
    let mut child = spawn_piped(PipedSpec {
        program: "sh".into(),
        args: vec!["-c".into(), "echo $$; sleep 1000 & sleep 1000".into()],
        cwd: std::env::temp_dir(),
        env: vec![],
        sandbox: SandboxMode::Off,
        stderr: StderrTo::Null,
        ..PipedSpec::default()
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let mut stdout = child.stdout.take().unwrap_or_else(|| panic!("stdout"));
    let mut line = vec![0u8; 32];
    let n = stdout
        .read(&mut line)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let pgid = pgid_of(&String::from_utf8_lossy(&line[..n]));
    for _ in 0..100 {
        if live_members(pgid).len() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(live_members(pgid).len() >= 2, "the group runs");
    drop(child);
    assert_group_gone(pgid).await;
}

#[test]
fn a_piped_child_that_cannot_start_names_the_program() {
    let e = spawn_piped(PipedSpec {
        program: "mm-no-such-server".into(),
        args: vec![],
        cwd: std::env::temp_dir(),
        env: vec![],
        sandbox: SandboxMode::Off,
        stderr: StderrTo::Null,
        ..PipedSpec::default()
    })
    .err()
    .unwrap_or_else(|| panic!("it started"));
    assert_eq!(
        e.to_string(),
        "cannot run mm-no-such-server: no such program on PATH"
    );
}

#[tokio::test]
async fn a_sandboxed_run_is_refused_by_an_executable_without_the_helper() {
    // This test binary never called `sandbox::enter`: the runner must refuse, not run the
    // program unconfined (the real runs are tested through the mm binary).
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mark = dir.path().join("ran");
    let spec = ProcessSpec {
        sandbox: SandboxMode::Workspace,
        ..sh(&format!("touch '{}'", mark.display()))
    };
    let e = run_with(&spec, &CancellationToken::new())
        .await
        .err()
        .unwrap_or_else(|| panic!("it ran"));
    assert!(
        e.to_string()
            .starts_with("cannot run sh sandboxed: this executable has no sandbox helper"),
        "{e}"
    );
    assert!(!mark.exists());
    let piped = spawn_piped(PipedSpec {
        program: "sh".into(),
        args: vec!["-c".into(), format!("touch '{}'", mark.display()).into()],
        cwd: std::env::temp_dir(),
        env: vec![],
        sandbox: SandboxMode::BestEffort,
        stderr: StderrTo::Null,
        ..PipedSpec::default()
    });
    assert!(piped.is_err());
    assert!(!mark.exists());
}
