//! mm-core: the engine of mm, with no terminal I/O.
//!
//! Data flows one way: an agent file is loaded ([`load_agent`]) into an [`AgentConfig`]; the config
//! builds a tool [`Registry`]; the turn loop ([`run_turn`]) sends the conversation to a
//! [`provider::Provider`], hands each tool call the model makes to the one call pipeline
//! ([`CallPipeline`]: look-up, validation, loop detector, consent, hooks, the run, output limits)
//! and reports every step as an [`Event`] to the caller (the `mm` binary renders them). A
//! [`session::Session`] keeps the conversation across turns and writes it as JSONL.

mod agent_file;
mod args;
mod body;
pub mod budget;
mod config;
mod diagnostic;
mod events;
mod front_matter;
mod hooks;
pub mod junk;
mod language;
mod loop_guard;
pub mod mcp;
mod output;
mod permissions;
pub mod pipeline;
mod process;
pub mod provider;
mod registry;
mod regular;
pub mod sandbox;
pub mod session;
pub mod skills;
mod sources;
mod spawn_error;
mod sse;
mod text;
pub mod tools;
pub mod trust;
mod turn;
mod units;
mod yaml;

pub use agent_file::{AgentFileError, load_agent, parse_agent, yaml_to_json};
pub use args::{Arguments, Invalid, ParamSpec, ParamType, Params, ValidArgs, render_value};
pub use config::{
    AgentConfig, DeclaredToolConfig, Limits, Presentation, SchemaStyle, ToolCallMode, base_url,
    placeholders,
};
pub use events::{Event, EventSink, ToolCallRecord};
pub use hooks::Hooks;
pub use junk::{AnswerContext, Junk};
pub use language::Language;
pub use output::{Captured, Echo, Output};
pub use permissions::{
    ConsentAnswer, ConsentAsker, ConsentRequest, Decision, Permissions, Target, bash_programs,
    project_file,
};
pub use pipeline::{CallPipeline, CallResult, CallState, Consent};
pub use process::{
    PipedChild, PipedSpec, ProcessOutcome, ProcessSpec, StderrTo, Stop, run_process, spawn_piped,
};
pub use registry::Registry;
pub use sandbox::SandboxMode;
pub use text::did_you_mean;
pub use tools::{Outcome, Tool, ToolCtx, ToolKind, ToolSpec};
pub use turn::{StopReason, TurnOptions, TurnResult, own_texts, run_turn};
pub use units::millis;
