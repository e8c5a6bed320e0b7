//! The resolved configuration of an agent: what the rest of mm-core works from.
//!
//! `agent_file` parses and checks the file into these types; nothing downstream sees YAML.

use std::path::PathBuf;
use std::time::Duration;

use crate::args::Params;

/// How tool calls are asked of the model (SPEC §2b).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolCallMode {
    /// The API's tool calling.
    Native,
    /// A JSON-schema-constrained reply: `{"tool","arguments"}` or `{"answer"}`.
    Constrained,
    /// `Constrained` when the server says its template cannot do tools, else `Native`.
    #[default]
    Auto,
}

/// `limits:` of the agent file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_turns: u32,
    /// Bytes of tool output kept (head + tail) before truncation.
    pub max_output: usize,
    /// The identical-call count at which the loop detector stops the turn.
    pub loop_threshold: u32,
    pub max_tokens: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Self { max_turns: 30, max_output: 8000, loop_threshold: 5, max_tokens: 2048 }
    }
}

/// One declared tool (`tools.NAME` in the agent file), checked.
#[derive(Debug, Clone, PartialEq)]
pub struct DeclaredToolConfig {
    pub name: String,
    pub description: String,
    pub params: Params,
    /// The command template, one argv entry per element; `command[0]` holds no placeholder.
    pub command: Vec<String>,
    /// `command[0]` resolved: a relative path containing `/` is joined to the agent file's folder.
    pub program: PathBuf,
    pub timeout: Duration,
}

/// A resolved agent.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentConfig {
    /// The agent file, when there is one (`None`: the default agent).
    pub path: Option<PathBuf>,
    pub name: Option<String>,
    pub model: String,
    pub base_url: String,
    pub api_key_env: Option<String>,
    pub tool_calls: ToolCallMode,
    pub yolo: bool,
    /// `allow:` entries: a tool name, or `tool:glob` on the call's main argument (`bash:git status*`).
    pub allow: Vec<String>,
    /// Built-ins offered; `None` = all.
    pub builtins: Option<Vec<String>>,
    pub tools: Vec<DeclaredToolConfig>,
    pub limits: Limits,
    /// The agent's instructions (the Markdown body or `instructions:`).
    pub instructions: String,
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            path: None,
            name: None,
            model: "default".into(),
            base_url: "http://127.0.0.1:8080/v1".into(),
            api_key_env: None,
            tool_calls: ToolCallMode::Auto,
            yolo: false,
            allow: Vec::new(),
            builtins: None,
            tools: Vec::new(),
            limits: Limits::default(),
            instructions: String::new(),
        }
    }
}
