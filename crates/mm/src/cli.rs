//! The command line (SPEC §8).

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

/// mm: a terminal AI agent built for small local models.
#[derive(Debug, Parser)]
#[command(name = "mm", version, about, long_about = None)]
pub struct Cli {
    /// Print mode: answer PROMPT (`-` reads it from stdin) and exit; stdout carries only the answer.
    #[arg(short = 'p', long = "print", value_name = "PROMPT")]
    pub print: Option<String>,

    /// Output of print mode.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output_format: OutputFormat,

    /// The agent file (default: ./mm.md if present, else the built-in default agent).
    #[arg(short = 'a', long = "agent", env = "MM_AGENT", global = true)]
    pub agent: Option<PathBuf>,

    /// The model id sent to the server (overrides the agent file's `model`).
    #[arg(short = 'm', long = "model", env = "MM_MODEL", global = true)]
    pub model: Option<String>,

    /// The OpenAI-compatible endpoint (overrides the agent file's `base_url`).
    #[arg(long = "base-url", env = "MM_BASE_URL", global = true)]
    pub base_url: Option<String>,

    /// Nothing asks for consent (overrides `yolo: false`).
    #[arg(long, global = true)]
    pub yolo: bool,

    /// Confine `bash` and declared tools (overrides the agent file's `sandbox:`): `workspace`
    /// writes only in the working folder and has no network; `best-effort` is that as far as
    /// the kernel enforces it (docs/sandbox.md).
    #[arg(long, value_name = "MODE", global = true, value_parser = sandbox_mode())]
    pub sandbox: Option<mm_core::SandboxMode>,

    /// Run as if mm was started in DIR (applied first: relative paths are taken from DIR).
    #[arg(short = 'C', long = "cd", value_name = "DIR", global = true)]
    pub cd: Option<PathBuf>,

    /// The most model replies in one turn (overrides `limits.max_turns`).
    #[arg(long, value_name = "N", global = true, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_turns: Option<u32>,

    /// The sampling temperature sent with every request (default: the server's own).
    #[arg(long, value_name = "T", global = true, value_parser = temperature)]
    pub temperature: Option<f64>,

    /// The sampling seed sent with every request (default: the server's own). `mm eval` gives
    /// each run its own: N plus the run's number.
    #[arg(long, value_name = "N", global = true)]
    pub seed: Option<u64>,

    /// Ask the server for whole replies instead of streamed ones.
    #[arg(long)]
    pub no_stream: bool,

    /// Go on with the latest session of this folder (interactive or print mode).
    #[arg(short = 'c', long = "continue", conflicts_with = "resume")]
    pub resume_latest: bool,

    /// Go on with the session ID (`mm sessions` lists them; the start of an id is enough).
    #[arg(short = 'r', long, value_name = "ID")]
    pub resume: Option<String>,

    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the tools exactly as the model will see them.
    Tools,
    /// Check the agent file and say what it defines.
    Check,
    /// List the saved sessions of this folder.
    Sessions {
        /// Every folder's sessions.
        #[arg(long)]
        all: bool,
    },
    /// Serve the agent file's declared tools as an MCP server (stdio unless --http).
    Serve {
        /// Serve Streamable HTTP at http://ADDR/mcp instead of stdio (e.g. 127.0.0.1:8765).
        #[arg(long, value_name = "ADDR")]
        http: Option<std::net::SocketAddr>,
    },
    /// Measure how reliably a model calls the agent's tools (docs/eval.md).
    Eval(crate::eval::EvalArgs),
    /// The recording wrapper `mm eval` puts in place of each tool's program.
    #[command(hide = true)]
    EvalRecord {
        program: std::ffi::OsString,
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<std::ffi::OsString>,
    },
}

/// `--sandbox`: one of [`mm_core::SandboxMode::NAMES`] (listed by `--help` and in errors).
fn sandbox_mode() -> impl clap::builder::TypedValueParser<Value = mm_core::SandboxMode> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(mm_core::SandboxMode::NAMES)
        .map(|name: String| mm_core::SandboxMode::parse(&name).unwrap_or_default())
}

/// A temperature: a finite number, 0 or more.
fn temperature(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(t) if t.is_finite() && t >= 0.0 => Ok(t),
        _ => Err(format!(
            "`{text}` is not a temperature (a number, 0 or more, like 0.7)"
        )),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// The answer as plain text.
    Text,
    /// One JSON object at the end.
    Json,
    /// One JSON event a line, as they happen.
    StreamJson,
}
