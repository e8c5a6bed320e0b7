//! Hooks (SPEC §6): commands run before and after the tool calls whose name matches.
//!
//! Each hook is an argv (no shell) started through [`crate::process::spawn_piped`] in mm's
//! working directory, with one JSON object on stdin:
//! `{"event","tool","arguments","cwd"}`, and for `postToolCall` also `"output"` (the text the
//! model is sent) and `"exit_code"`. `arguments` are the validated, coerced arguments — what
//! the tool will really run with.
//!
//! A `preToolCall` hook decides: exit 0 lets the call go on; any other exit, a crash, a
//! timeout or a hook that cannot start blocks it, and its stderr is the reason given to the
//! model (fail closed). Hooks run in file order and the first one that blocks wins. A
//! `postToolCall` hook cannot change anything; when it fails the user gets a warning.

use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use crate::config::{HookConfig, HooksConfig};
use crate::process::{PipedSpec, StderrTo, spawn_piped};

/// Bytes of a hook's stderr kept for the reason (the rest is read and dropped).
const MAX_STDERR: usize = 16 * 1024;

/// The hooks of an agent.
#[derive(Debug, Clone, Default)]
pub struct Hooks {
    config: HooksConfig,
}

/// How one hook run went.
#[derive(Debug, Clone, PartialEq)]
enum HookRun {
    Passed,
    /// Why it failed, in words, with its stderr.
    Failed(String),
}

impl Hooks {
    pub fn new(config: HooksConfig) -> Self {
        Self { config }
    }

    /// Runs the matching `preToolCall` hooks in order. `Err` is the answer to the model: the
    /// call is blocked.
    pub async fn before(
        &self,
        tool: &str,
        args: &Map<String, Value>,
        cwd: &Path,
        cancel: &CancellationToken,
    ) -> Result<(), String> {
        let input = json!({
            "event": "preToolCall",
            "tool": tool,
            "arguments": args,
            "cwd": cwd.to_string_lossy(),
        });
        for hook in matching(&self.config.pre_tool_call, tool) {
            if let HookRun::Failed(why) = run_hook(hook, &input, cwd, cancel).await {
                return Err(format!(
                    "The call to {tool} was not run: the preToolCall hook {} blocked it ({why}).",
                    shown(hook)
                ));
            }
        }
        Ok(())
    }

    /// Runs the matching `postToolCall` hooks; returns a warning for each that failed.
    pub async fn after(
        &self,
        tool: &str,
        args: &Map<String, Value>,
        output: &str,
        exit_code: Option<i32>,
        cwd: &Path,
        cancel: &CancellationToken,
    ) -> Vec<String> {
        let input = json!({
            "event": "postToolCall",
            "tool": tool,
            "arguments": args,
            "cwd": cwd.to_string_lossy(),
            "output": output,
            "exit_code": exit_code,
        });
        let mut warnings = Vec::new();
        for hook in matching(&self.config.post_tool_call, tool) {
            if let HookRun::Failed(why) = run_hook(hook, &input, cwd, cancel).await {
                warnings.push(format!(
                    "the postToolCall hook {} failed for {tool}: {why}",
                    shown(hook)
                ));
            }
        }
        warnings
    }
}

fn matching<'a>(hooks: &'a [HookConfig], tool: &'a str) -> impl Iterator<Item = &'a HookConfig> {
    hooks
        .iter()
        .filter(move |h| h.matcher.as_ref().is_none_or(|m| m.is_match(tool)))
}

/// The hook's command as the user wrote it.
fn shown(hook: &HookConfig) -> String {
    hook.command.join(" ")
}

async fn run_hook(
    hook: &HookConfig,
    input: &Value,
    cwd: &Path,
    cancel: &CancellationToken,
) -> HookRun {
    let spec = PipedSpec {
        program: hook.program.clone().into_os_string(),
        args: hook.command.iter().skip(1).map(Into::into).collect(),
        cwd: cwd.to_path_buf(),
        env: Vec::new(),
        stderr: StderrTo::Piped,
        // Hooks are the agent author's own checks, run with the user's rights like mm itself,
        // never in the tools' sandbox (docs/sandbox.md).
        sandbox: crate::SandboxMode::Off,
        ..PipedSpec::default()
    };
    let mut child = match spawn_piped(spec) {
        Ok(child) => child,
        Err(e) => return HookRun::Failed(format!("it could not start: {e}")),
    };
    let mut stdin = child.stdin.take();
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let mut text = input.to_string();
    text.push('\n');

    // Stdin, stdout and stderr at once: a hook that prints before reading (or never reads)
    // must not deadlock on a full pipe.
    let feed = async {
        if let Some(mut stdin) = stdin.take() {
            // A hook that exits without reading closes the pipe: not an error.
            let _ = stdin.write_all(text.as_bytes()).await;
        }
    };
    let drain = async {
        if let Some(stdout) = &mut stdout {
            let mut sink = [0u8; 8192];
            while let Ok(1..) = stdout.read(&mut sink).await {}
        }
    };
    let collect = async {
        let mut kept = Vec::new();
        if let Some(stderr) = &mut stderr {
            let mut buf = [0u8; 8192];
            while let Ok(n @ 1..) = stderr.read(&mut buf).await {
                let room = MAX_STDERR.saturating_sub(kept.len()).min(n);
                kept.extend_from_slice(&buf[..room]);
            }
        }
        kept
    };
    let run = async {
        let ((), (), kept) = tokio::join!(feed, drain, collect);
        (child.wait().await, kept)
    };
    let ended = tokio::select! {
        ended = tokio::time::timeout(hook.timeout, run) => ended,
        () = cancel.cancelled() => return HookRun::Failed("the user interrupted it".into()),
    };
    // Dropping `child` (on every path) kills what is left of the hook's group.
    let (status, kept) = match ended {
        Ok(done) => done,
        Err(_) => {
            return HookRun::Failed(format!(
                "it did not finish within {}",
                seconds(hook.timeout)
            ));
        }
    };
    let reason = String::from_utf8_lossy(&kept).trim().to_string();
    let with_reason = |fact: String| {
        if reason.is_empty() {
            fact
        } else {
            format!("{fact}: {reason}")
        }
    };
    match status {
        Ok(status) if status.success() => HookRun::Passed,
        Ok(status) => match status.code() {
            Some(code) => HookRun::Failed(with_reason(format!("exit code {code}"))),
            None => HookRun::Failed(with_reason("it was killed by a signal".into())),
        },
        Err(e) => HookRun::Failed(format!("it could not be waited for: {e}")),
    }
}

fn seconds(d: Duration) -> String {
    format!("{}s", d.as_secs_f64())
}

#[cfg(test)]
#[path = "hooks_tests.rs"]
mod tests;
