use std::sync::Mutex;

use super::*;

fn spec(program: &str, args: &[&str]) -> ProcessSpec {
    ProcessSpec {
        program: program.into(),
        args: args.iter().map(OsString::from).collect(),
        cwd: std::env::temp_dir(),
        timeout: Duration::from_secs(20),
        max_output: 8000,
    }
}

fn sh(script: &str) -> ProcessSpec {
    spec("sh", &["-c", script])
}

async fn run(spec: &ProcessSpec) -> ProcessOutcome {
    run_process(spec, &CancellationToken::new(), None)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
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
    assert_eq!(outcome.full_output, None);
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
    let outcome = run_process(&sh("echo $$; sleep 1000 & sleep 1000"), &cancel, None)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(outcome.cancelled && !outcome.timed_out);
    assert_group_gone(pgid_of(&outcome.output)).await;
}

#[tokio::test]
async fn a_dropped_call_leaves_no_process() {
    let pid = Arc::new(Mutex::new(String::new()));
    let seen = pid.clone();
    let echo: OutputSink = Arc::new(move |chunk: &[u8]| {
        if let Ok(mut s) = seen.lock() {
            s.push_str(&String::from_utf8_lossy(chunk));
        }
    });
    let spec = sh("echo $$; sleep 1000 & sleep 1000");
    let cancel = CancellationToken::new();
    let mut call = Box::pin(run_process(&spec, &cancel, Some(echo)));
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
async fn echo_sees_every_byte_as_it_comes() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let echo: OutputSink = Arc::new(move |chunk: &[u8]| {
        if let Ok(mut v) = sink.lock() {
            v.extend_from_slice(chunk);
        }
    });
    let mut spec = sh("seq 1 5000");
    spec.max_output = 100;
    let outcome = run_process(&spec, &CancellationToken::new(), Some(echo))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let expected: String = (1..=5000).map(|i| format!("{i}\n")).collect();
    assert_eq!(
        seen.lock().map(|v| v.clone()).unwrap_or_default(),
        expected.as_bytes()
    );
    if let Some(path) = outcome.full_output {
        assert_eq!(std::fs::read_to_string(&path).unwrap_or_default(), expected);
        let _ = std::fs::remove_file(path);
    } else {
        panic!("not saved");
    }
}

#[tokio::test]
async fn output_under_the_cap_is_kept_whole() {
    let mut spec = sh("seq 1 100000");
    spec.max_output = 10_000_000;
    let outcome = run(&spec).await;
    let expected: String = (1..=100_000).map(|i| format!("{i}\n")).collect();
    assert!(
        outcome.output == expected,
        "{} bytes of {}",
        outcome.output.len(),
        expected.len()
    );
    assert_eq!(outcome.full_output, None);
}

#[tokio::test]
async fn small_overflow_keeps_head_and_tail() {
    let mut spec = sh("seq 1 1000");
    spec.max_output = 20;
    let outcome = run(&spec).await;
    let path = outcome
        .full_output
        .clone()
        .unwrap_or_else(|| panic!("not saved"));
    let total: usize = (1..=1000).map(|i: i32| i.to_string().len() + 1).sum();
    assert_eq!(
        outcome.output,
        format!(
            "1\n2\n3\n4\n5\n[… {} bytes cut; full output ({total} bytes) saved to {} …]\n\n999\n1000\n",
            total - 20,
            path.display()
        )
    );
    assert!(path.starts_with(std::env::temp_dir().join("mm-output")));
    assert!(path.file_name().is_some_and(|n| {
        n.to_string_lossy()
            .starts_with(&format!("mm-output-{}-", std::process::id()))
    }));
    let _ = std::fs::remove_file(path);
}

#[tokio::test]
async fn a_gigabyte_is_streamed_to_a_file_and_memory_stays_bounded() {
    let mut spec = spec("head", &["-c", "1000000000", "/dev/zero"]);
    spec.timeout = Duration::from_secs(120);
    let outcome = run(&spec).await;
    let path = outcome
        .full_output
        .clone()
        .unwrap_or_else(|| panic!("not saved"));
    let size = std::fs::metadata(&path).map(|m| m.len());
    let _ = std::fs::remove_file(&path);
    assert_eq!(size.ok(), Some(1_000_000_000));
    assert_eq!(outcome.exit_code, Some(0));
    let note = format!(
        "\n[… 999992000 bytes cut; full output (1000000000 bytes) saved to {} …]\n",
        path.display()
    );
    assert!(
        outcome.output.contains(&note),
        "{:?}",
        &outcome.output[3990..4200]
    );
    assert_eq!(outcome.output.len(), 8000 + note.len());
}

#[tokio::test]
async fn truncation_never_splits_a_character() {
    // 3000 × "é" (2 bytes each); an odd cap puts both cut points inside a character.
    let mut spec = sh("i=0; while [ $i -lt 3000 ]; do printf 'é'; i=$((i+1)); done");
    spec.max_output = 102;
    let outcome = run(&spec).await;
    if let Some(path) = &outcome.full_output {
        let _ = std::fs::remove_file(path);
    }
    assert!(!outcome.output.contains('\u{FFFD}'), "{}", outcome.output);
    let (head, rest) = outcome.output.split_once('\n').unwrap_or_default();
    assert_eq!(head, "é".repeat(25));
    assert!(rest.ends_with(&format!("…]\n{}", "é".repeat(25))), "{rest}");
}

#[tokio::test]
async fn a_missing_program_is_an_error_naming_it() {
    let e = run_process(
        &spec("mm-no-such-program", &[]),
        &CancellationToken::new(),
        None,
    )
    .await
    .expect_err("not found");
    assert_eq!(e.kind(), io::ErrorKind::NotFound);
    assert_eq!(
        e.to_string(),
        "cannot run mm-no-such-program: no such program on PATH"
    );

    let e = run_process(&spec("./missing.sh", &[]), &CancellationToken::new(), None)
        .await
        .expect_err("not found");
    assert_eq!(e.to_string(), "cannot run ./missing.sh: no such file");
}

#[tokio::test]
async fn a_non_executable_file_is_an_error_naming_it() {
    let file = tempfile::NamedTempFile::new().unwrap_or_else(|e| panic!("{e}"));
    let program = file.path().to_string_lossy().into_owned();
    let e = run_process(&spec(&program, &[]), &CancellationToken::new(), None)
        .await
        .expect_err("not executable");
    assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
    assert_eq!(
        e.to_string(),
        format!("cannot run {program}: permission denied (is it an executable file?)")
    );
}

#[tokio::test]
async fn a_nul_byte_is_refused_before_spawning() {
    let e = run_process(
        &spec("printf", &["%s", "a\0b"]),
        &CancellationToken::new(),
        None,
    )
    .await
    .expect_err("NUL");
    assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    assert_eq!(
        e.to_string(),
        "cannot run printf: argument 2 contains a NUL byte, which cannot be passed to a program"
    );
}
