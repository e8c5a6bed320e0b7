//! mm-core: the engine of mm, with no terminal I/O.
//!
//! Data flows one way: an agent file is loaded ([`load_agent`]) into an [`AgentConfig`]; the config
//! builds a tool [`Registry`]; the turn loop ([`run_turn`]) sends the conversation to a
//! [`provider::Provider`], runs the tool calls the model makes through the registry and reports
//! every step as an [`Event`] to the caller (the `mm` binary renders them).

mod agent_file;
mod args;
mod config;
mod events;
mod loop_guard;
mod permissions;
mod process;
pub mod provider;
pub mod tools;
mod turn;

pub use agent_file::{AgentFileError, load_agent, parse_agent};
pub use args::{Invalid, ParamSpec, ParamType, Params};
pub use config::{AgentConfig, DeclaredToolConfig, Limits, ToolCallMode};
pub use events::{Event, EventSink, ToolCallRecord};
pub use permissions::{ConsentAsker, Decision, Permissions};
pub use process::{OutputSink, ProcessOutcome, ProcessSpec, run_process};
pub use tools::{Registry, Tool, ToolCtx, ToolKind, ToolOutput, ToolSpec};
pub use turn::{StopReason, TurnOptions, TurnResult, run_turn};
