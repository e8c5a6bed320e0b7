//! Tools: what the model can call. Built-ins, declared tools and MCP tools share one trait, one
//! validator ([`crate::Params`]), one process runner (built-ins and declared tools) and one call
//! pipeline.

mod bash;
mod declared;
mod files;

use std::path::PathBuf;
use std::time::Duration;

use async_trait::async_trait;
use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::args::ValidArgs;
use crate::args::{ParamSpec, Params};
use crate::output::Output;
use crate::process::{ProcessOutcome, ProcessSpec, run_process};
use crate::sandbox::SandboxMode;

pub use bash::BashTool;
pub use declared::DeclaredTool;
pub(crate) use declared::describe;
pub use files::{FILE_TOOLS, file_tool};

/// Built-in tool names: reserved for declared tools even when the built-in is turned off.
pub const BUILTIN_NAMES: &[&str] = &[
    "bash",
    "read_file",
    "write_file",
    "edit_file",
    "list_files",
    "grep",
    "read_skill",
    "web_fetch",
    "todo",
];

/// The built-ins that exist in this version: the first ones of [`BUILTIN_NAMES`] (the others
/// are reserved for later); naming another one in `builtins:` is an agent-file error until it
/// is written.
pub const IMPLEMENTED_BUILTINS: &[&str] = BUILTIN_NAMES.split_at(7).0;

/// A tool exactly as the model sees it (the OpenAI `function` object).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// A JSON Schema object: `{"type":"object","properties":{...}}`.
    pub parameters: Value,
}

impl ToolSpec {
    /// A built-in tool's spec: `params` (which refuse unknown names) in the compact
    /// [`Params::builtin_schema`] form. Returns the params too, for [`Tool::params`].
    pub(crate) fn builtin(name: &str, description: &str, params: Vec<ParamSpec>) -> (Self, Params) {
        let params = Params {
            params,
            deny_unknown: true,
        };
        let spec = Self {
            name: name.into(),
            description: description.into(),
            parameters: params.builtin_schema(),
        };
        (spec, params)
    }
}

/// Where a tool comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolKind {
    Builtin,
    Declared,
    Mcp,
}

/// How a tool's run ended. The call pipeline words it for the model (`exit code N`, `timed out
/// after Ns`, `cancelled`); the tool itself only writes its output.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Outcome {
    /// Done: exit code 0, or a tool that is not a process and succeeded.
    Success,
    /// The program exited with this non-zero code.
    Exit(i32),
    /// Killed by a signal mm did not send.
    Killed,
    TimedOut(Duration),
    Cancelled,
    /// The tool could not do its job (a program that cannot start, a refused value, an MCP
    /// tool error); its output says why.
    Failed,
}

impl Outcome {
    /// The outcome of a process run to its end.
    pub fn of_process(outcome: &ProcessOutcome, timeout: Duration) -> Self {
        if outcome.timed_out {
            Outcome::TimedOut(timeout)
        } else if outcome.cancelled {
            Outcome::Cancelled
        } else {
            match outcome.exit_code {
                Some(0) => Outcome::Success,
                Some(code) => Outcome::Exit(code),
                None => Outcome::Killed,
            }
        }
    }

    pub fn exit_code(self) -> Option<i32> {
        match self {
            Outcome::Success => Some(0),
            Outcome::Exit(code) => Some(code),
            _ => None,
        }
    }
}

/// How far a long call has got (an MCP server's `notifications/progress`): shown to the user,
/// never sent to the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Progress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// Receives a running call's progress.
pub type ProgressSink = std::sync::Arc<dyn Fn(Progress) + Send + Sync>;

/// What a running tool may use.
#[derive(Clone)]
pub struct ToolCtx {
    /// mm's working directory.
    pub cwd: PathBuf,
    /// Fired on Ctrl-C (or a signal): the tool stops and reports [`Outcome::Cancelled`].
    pub cancel: CancellationToken,
    /// Where progress goes, when someone shows it.
    pub progress: Option<ProgressSink>,
}

impl ToolCtx {
    /// A context without progress reporting.
    pub fn new(cwd: PathBuf, cancel: CancellationToken) -> Self {
        Self {
            cwd,
            cancel,
            progress: None,
        }
    }
}

/// A tool the model can call. A tool only *runs*: it writes its output to `out` and says how it
/// ended. Validation, consent, hooks, truncation and echo are the call pipeline's, the same for
/// every kind of tool.
#[async_trait]
pub trait Tool: Send + Sync {
    /// What the model sees.
    fn spec(&self) -> &ToolSpec;
    /// What arguments are checked against before the tool runs.
    fn params(&self) -> &Params;
    fn kind(&self) -> ToolKind;
    /// A tool that only reads (`read_file`, `grep`, `read_skill`, …) never asks for consent;
    /// every other tool follows `yolo` and `allow:`.
    fn read_only(&self) -> bool {
        false
    }
    /// How this tool's runs are confined (`bash` and declared tools follow `sandbox:`; a tool
    /// that starts no process is `Off`).
    fn sandbox(&self) -> SandboxMode {
        SandboxMode::Off
    }
    /// What a consent dialog shows for this call when it is more exact than the arguments
    /// (a declared tool: the command line that will run). `None`: the arguments.
    fn preview(&self, _args: &ValidArgs) -> Option<String> {
        None
    }
    /// The file or folder this call reads or writes, as the model wrote it, when the tool
    /// names one (the file tools' `path`). Consent resolves it (`..`, symlinks) before it
    /// matches rules, and a reading tool asks for one outside the working folder.
    fn path<'a>(&self, _args: &'a ValidArgs) -> Option<&'a str> {
        None
    }
    /// Runs the tool with validated, coerced arguments. Failures are written to `out` (the model
    /// reads them) and reported as an [`Outcome`]; this never returns an error.
    async fn run(&self, args: &ValidArgs, ctx: &ToolCtx, out: &mut Output) -> Outcome;
}

/// Runs a process for a tool, its output into `out` (shared by `bash` and declared tools).
pub(crate) async fn run_in(spec: &ProcessSpec, ctx: &ToolCtx, out: &mut Output) -> Outcome {
    let mut sink = |chunk: &[u8]| out.write(chunk);
    match run_process(spec, &ctx.cancel, &mut sink).await {
        Ok(outcome) => Outcome::of_process(&outcome, spec.timeout),
        // Could not start (not found, not executable…): the model reads why.
        Err(e) => {
            out.write_str(&e.to_string());
            Outcome::Failed
        }
    }
}
