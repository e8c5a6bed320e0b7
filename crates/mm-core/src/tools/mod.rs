//! Tools: what the model can call. Built-ins, declared tools (and later MCP tools) share one
//! trait, one validator ([`crate::Params`]) and one process runner.

mod bash;
mod declared;
mod registry;

use std::path::PathBuf;

use async_trait::async_trait;
use serde::Serialize;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::args::Params;
use crate::process::OutputSink;

pub use bash::BashTool;
pub use declared::DeclaredTool;
pub use registry::{BUILTIN_NAMES, Registry};

/// A tool exactly as the model sees it (the OpenAI `function` object).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// A JSON Schema object: `{"type":"object","properties":{...}}`.
    pub parameters: Value,
}

/// Where a tool comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolKind {
    Builtin,
    Declared,
    Mcp,
}

/// What running a tool produced: the text the model reads, and facts for the user and reports.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolOutput {
    /// The result text sent to the model (output, then `exit code N` / `timed out after Ns` /
    /// `cancelled` when so).
    pub content: String,
    /// False when the tool failed (non-zero exit, timeout, cancellation, error).
    pub ok: bool,
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub cancelled: bool,
}

/// What a running tool may use.
#[derive(Clone)]
pub struct ToolCtx {
    /// mm's working directory.
    pub cwd: PathBuf,
    /// Fired on Ctrl-C: the running process group is killed.
    pub cancel: CancellationToken,
    /// The user's live view of the output.
    pub echo: Option<OutputSink>,
    /// `limits.max_output`.
    pub max_output: usize,
}

/// A tool the model can call.
#[async_trait]
pub trait Tool: Send + Sync {
    /// What the model sees.
    fn spec(&self) -> &ToolSpec;
    /// What arguments are checked against before the tool runs.
    fn params(&self) -> &Params;
    fn kind(&self) -> ToolKind;
    /// Runs the tool with validated, coerced arguments. Failures are reported in the output (the
    /// model reads them); this never returns an error.
    async fn run(&self, args: &Map<String, Value>, ctx: &ToolCtx) -> ToolOutput;
}
