use std::path::PathBuf;

use serde_json::json;

use super::*;
use crate::config::ToolMatcher;

/// A hook running `sh -c SCRIPT`, for tools matching `pattern` (all when `None`).
fn hook(pattern: Option<&str>, script: &str, timeout: Duration) -> HookConfig {
    HookConfig {
        matcher: pattern.map(|p| ToolMatcher::new(p).unwrap_or_else(|e| panic!("{e}"))),
        command: vec!["sh".into(), "-c".into(), script.into()],
        program: PathBuf::from("sh"),
        timeout,
    }
}

fn pre(hooks: Vec<HookConfig>) -> Hooks {
    Hooks::new(HooksConfig {
        pre_tool_call: hooks,
        post_tool_call: vec![],
    })
}

fn args() -> Map<String, Value> {
    json!({"command": "rm -rf /", "n": 3})
        .as_object()
        .cloned()
        .unwrap_or_default()
}

const SECOND: Duration = Duration::from_secs(1);
const LONG: Duration = Duration::from_secs(20);

async fn before(hooks: &Hooks, tool: &str) -> Result<(), String> {
    hooks
        .before(
            tool,
            &args(),
            &std::env::temp_dir(),
            &CancellationToken::new(),
        )
        .await
}

#[tokio::test]
async fn exit_zero_lets_the_call_go_on() {
    let hooks = pre(vec![hook(None, "cat >/dev/null; exit 0", LONG)]);
    assert_eq!(before(&hooks, "bash").await, Ok(()));
}

#[tokio::test]
async fn any_other_exit_blocks_with_the_hooks_stderr() {
    for code in [1, 2, 42] {
        let script = format!("echo 'no rm here' >&2; echo ignored; exit {code}");
        let hooks = pre(vec![hook(Some("bash"), &script, LONG)]);
        assert_eq!(
            before(&hooks, "bash").await,
            Err(format!(
                "The call to bash was not run: the preToolCall hook sh -c {script} blocked it (exit code {code}: no rm here)."
            ))
        );
    }
}

#[tokio::test]
async fn a_crash_a_timeout_and_a_missing_program_block() {
    let crash = pre(vec![hook(None, "echo dying >&2; kill -9 $$", LONG)]);
    let why = before(&crash, "bash").await.err().unwrap_or_default();
    assert!(
        why.ends_with("blocked it (it was killed by a signal: dying)."),
        "{why}"
    );

    let slow = pre(vec![hook(None, "sleep 30", Duration::from_millis(300))]);
    let started = std::time::Instant::now();
    let why = before(&slow, "bash").await.err().unwrap_or_default();
    assert!(
        why.ends_with("blocked it (it did not finish within 0.3s)."),
        "{why}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));

    let mut missing = hook(None, "", LONG);
    missing.command = vec!["./no-such-guard.sh".into()];
    missing.program = PathBuf::from("./no-such-guard.sh");
    let why = before(&pre(vec![missing]), "bash")
        .await
        .err()
        .unwrap_or_default();
    assert_eq!(
        why,
        "The call to bash was not run: the preToolCall hook ./no-such-guard.sh blocked it (it could not start: cannot run ./no-such-guard.sh: no such file)."
    );
}

#[tokio::test]
async fn only_matching_hooks_run_and_the_first_block_wins() {
    let hooks = pre(vec![
        hook(Some("release|bash"), "echo first >&2; exit 1", LONG),
        hook(None, "echo second >&2; exit 1", LONG),
    ]);
    let why = before(&hooks, "bash").await.err().unwrap_or_default();
    assert!(why.ends_with("(exit code 1: first)."), "{why}");
    // `release|bash` is anchored: `bash_extra` does not match it, the second hook blocks.
    let why = before(&hooks, "bash_extra").await.err().unwrap_or_default();
    assert!(why.ends_with("(exit code 1: second)."), "{why}");
}

#[tokio::test]
async fn hooks_get_the_exact_json_on_stdin() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let seen = dir.path().join("seen.json");
    let script = format!("cat > '{}'", seen.display());
    let hooks = Hooks::new(HooksConfig {
        pre_tool_call: vec![hook(None, &script, LONG)],
        post_tool_call: vec![hook(None, &format!("{script}.post"), LONG)],
    });
    let cwd = dir.path();
    let cancel = CancellationToken::new();
    assert_eq!(hooks.before("bash", &args(), cwd, &cancel).await, Ok(()));
    let warnings = hooks
        .after("bash", &args(), "out\nput", Some(3), cwd, &cancel)
        .await;
    assert!(warnings.is_empty(), "{warnings:?}");
    let read = |path: PathBuf| -> Value {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        assert!(text.ends_with("}\n"), "{text:?}");
        serde_json::from_str(&text).unwrap_or_default()
    };
    let cwd = cwd.to_string_lossy();
    assert_eq!(
        read(seen.clone()),
        json!({"event": "preToolCall", "tool": "bash", "arguments": {"command": "rm -rf /", "n": 3}, "cwd": cwd})
    );
    assert_eq!(
        read(dir.path().join("seen.json.post")),
        json!({"event": "postToolCall", "tool": "bash", "arguments": {"command": "rm -rf /", "n": 3},
               "cwd": cwd, "output": "out\nput", "exit_code": 3})
    );
}

#[tokio::test]
async fn a_failing_post_hook_is_a_warning() {
    let hooks = Hooks::new(HooksConfig {
        pre_tool_call: vec![],
        post_tool_call: vec![hook(None, "echo full disk >&2; exit 1", LONG)],
    });
    let warnings = hooks
        .after(
            "status",
            &args(),
            "ok",
            Some(0),
            &std::env::temp_dir(),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(
        warnings,
        [
            "the postToolCall hook sh -c echo full disk >&2; exit 1 failed for status: exit code 1: full disk"
        ]
    );
}

#[tokio::test]
async fn a_hook_that_never_reads_stdin_and_prints_a_lot_does_not_hang() {
    // 1 MiB on stdout before exiting, never reading the JSON.
    let hooks = pre(vec![hook(
        None,
        "head -c 1048576 /dev/zero; exit 0",
        SECOND * 20,
    )]);
    assert_eq!(before(&hooks, "bash").await, Ok(()));
}

#[tokio::test]
async fn a_post_hook_that_times_out_is_a_warning_and_does_not_hold_the_turn() {
    let hooks = Hooks::new(HooksConfig {
        pre_tool_call: vec![],
        post_tool_call: vec![hook(None, "sleep 30", Duration::from_millis(300))],
    });
    let started = std::time::Instant::now();
    let warnings = hooks
        .after(
            "status",
            &args(),
            "ok",
            Some(0),
            &std::env::temp_dir(),
            &CancellationToken::new(),
        )
        .await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(
        warnings,
        ["the postToolCall hook sh -c sleep 30 failed for status: it did not finish within 0.3s"]
    );
}
