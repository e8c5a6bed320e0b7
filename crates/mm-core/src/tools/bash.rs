//! The `bash` built-in: a command line run by `bash -c`, with the same process rules as declared
//! tools (stdin closed, one output stream, own process group, timeout, truncation).

use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{Outcome, Tool, ToolCtx, ToolKind, ToolSpec, run_in};
use crate::args::ValidArgs;
use crate::args::{ParamSpec, ParamType, Params};
use crate::output::Output;
use crate::process::ProcessSpec;
use crate::sandbox::SandboxMode;

/// Seconds a command may run when the model does not say.
const DEFAULT_TIMEOUT: u64 = 120;
/// The most the model may ask for: a longer wait should be a script the user starts.
const MAX_TIMEOUT: u64 = 600;

pub struct BashTool {
    spec: ToolSpec,
    params: Params,
    sandbox: SandboxMode,
}

impl BashTool {
    pub fn new() -> Self {
        let (spec, params) = ToolSpec::builtin(
            "bash",
            "Run a bash command line.",
            vec![
                ParamSpec::new("command", ParamType::String, None, true),
                ParamSpec {
                    default: Some(json!(DEFAULT_TIMEOUT)),
                    // Said as "Default 120. Optional." (args: a default is said; seconds are
                    // what a timeout of 120 reads as, and the first request keeps its bytes).
                    ..ParamSpec::new("timeout", ParamType::Integer, None, false)
                },
            ],
        );
        Self {
            spec,
            params,
            sandbox: SandboxMode::Off,
        }
    }

    /// Runs its command lines confined by `sandbox`.
    pub fn sandboxed(mut self, sandbox: SandboxMode) -> Self {
        self.sandbox = sandbox;
        self
    }
}

impl Default for BashTool {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl Tool for BashTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn params(&self) -> &Params {
        &self.params
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Builtin
    }
    fn sandbox(&self) -> SandboxMode {
        self.sandbox
    }
    async fn run(&self, args: &ValidArgs, ctx: &ToolCtx, out: &mut Output) -> Outcome {
        let mut answer = |content: &str| {
            out.write_str(content);
            Outcome::Failed
        };
        let Some(command) = args.get("command").and_then(Value::as_str) else {
            return answer("bash was not run: command is missing.");
        };
        let timeout = match args.get("timeout").and_then(Value::as_i64) {
            None => DEFAULT_TIMEOUT,
            Some(seconds) if seconds < 1 => {
                return answer("bash was not run: timeout must be at least 1 second.");
            }
            Some(seconds) => seconds.unsigned_abs().min(MAX_TIMEOUT),
        };
        let spec = ProcessSpec {
            program: "bash".into(),
            // `--`: a command line starting with `-` is still the command, not an option.
            args: vec!["-c".into(), "--".into(), command.into()],
            cwd: ctx.cwd.clone(),
            timeout: Duration::from_secs(timeout),
            sandbox: self.sandbox,
        };
        run_in(&spec, ctx, out).await
    }
}

#[cfg(test)]
mod tests {
    use tokio_util::sync::CancellationToken;

    use super::*;

    async fn bash(raw: &str) -> (String, Outcome) {
        let tool = BashTool::new();
        let args = tool
            .params()
            .validate(raw)
            .unwrap_or_else(|e| panic!("{:?}", e.problems));
        let ctx = ToolCtx::new(std::env::temp_dir(), CancellationToken::new());
        let mut out = Output::new(8000);
        let outcome = tool.run(&args, &ctx, &mut out).await;
        (out.finish().text, outcome)
    }

    #[test]
    fn the_model_sees_two_plain_parameters() {
        assert_eq!(
            BashTool::new().spec().parameters,
            json!({"type": "object", "properties": {
                "command": {"type": "string"},
                "timeout": {"type": "integer", "description": "Default 120. Optional."},
            }})
        );
    }

    #[tokio::test]
    async fn runs_a_command_line_with_its_exit_code() {
        let out = bash(r#"{"command":"echo one | tr o O; echo two >&2; exit 3"}"#).await;
        assert_eq!(out, ("One\ntwo\n".to_string(), Outcome::Exit(3)));
    }

    #[tokio::test]
    async fn a_leading_dash_is_still_the_command() {
        let (content, outcome) = bash(r#"{"command":"-x"}"#).await;
        assert!(content.contains("-x: command not found"), "{content}");
        assert_eq!(outcome, Outcome::Exit(127));
    }

    #[tokio::test]
    async fn the_timeout_is_the_models_and_kills() {
        let out = bash(r#"{"command":"echo start; sleep 30","timeout":"1"}"#).await;
        assert_eq!(
            out,
            (
                "start\n".to_string(),
                Outcome::TimedOut(Duration::from_secs(1))
            )
        );
        let out = bash(r#"{"command":"true","timeout":0}"#).await;
        assert_eq!(
            out,
            (
                "bash was not run: timeout must be at least 1 second.".to_string(),
                Outcome::Failed
            )
        );
    }
}
