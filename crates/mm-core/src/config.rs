//! The resolved configuration of an agent: what the rest of mm-core works from.
//!
//! `agent_file` parses and checks the file into these types; nothing downstream sees YAML.

use std::ops::Range;
use std::path::PathBuf;
use std::time::Duration;

use crate::args::Params;
use crate::diagnostic::AgentFileError;
use crate::sandbox::SandboxMode;

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
    /// The longest one model reply may take from request to last byte (`limits.reply_timeout`),
    /// however busy the stream looks.
    pub reply_timeout: Duration,
}

/// `ProviderConfig::reply_deadline` (and `limits.reply_timeout`) unless set: longer than any reply a local model writes
/// within `max_tokens`, short enough that a stuck server does not hold mm for good.
pub const DEFAULT_REPLY_DEADLINE: Duration = Duration::from_secs(600);

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_turns: 30,
            max_output: 8000,
            loop_threshold: 5,
            max_tokens: 2048,
            reply_timeout: DEFAULT_REPLY_DEADLINE,
        }
    }
}

/// `presentation:` of the agent file: how declared tools are shown to the model (the schema and
/// description it reads; what runs does not change). `mm eval --variants` measures the choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Presentation {
    /// End each declared tool's description with "Give each parameter as its own field."
    /// (`closing_sentence`, default `true`).
    pub closing_sentence: bool,
    /// Where `required` and `enum` are told (`schema`, default `sentences`).
    pub schema: SchemaStyle,
}

impl Default for Presentation {
    fn default() -> Self {
        Self {
            closing_sentence: true,
            schema: SchemaStyle::Sentences,
        }
    }
}

/// How a declared tool's schema tells which parameters are required and which values are
/// allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SchemaStyle {
    /// In each parameter's description: `Required.` / `Optional.`, `One of: a, b.` (SPEC §2).
    #[default]
    Sentences,
    /// As JSON Schema keywords: `required: [...]` and each parameter's `enum`.
    Keywords,
}

impl SchemaStyle {
    pub const NAMES: &'static [&'static str] = &["sentences", "keywords"];

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "sentences" => Some(Self::Sentences),
            "keywords" => Some(Self::Keywords),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sentences => "sentences",
            Self::Keywords => "keywords",
        }
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
    /// `skills:` folders, resolved against the agent file's folder (not checked to exist here).
    pub skills: Vec<PathBuf>,
    /// `mcp:` servers, in file order.
    pub mcp: Vec<McpServerConfig>,
    pub hooks: HooksConfig,
    pub limits: Limits,
    /// `sandbox:`: how `bash` and declared tools are confined (hooks never are).
    pub sandbox: SandboxMode,
    /// `presentation:`: how declared tools are shown to the model.
    pub presentation: Presentation,
    /// The agent's instructions (the Markdown body or `instructions:`).
    pub instructions: String,
    /// Diagnostics that do not stop mm (e.g. a parameter no command entry uses), for
    /// `mm check` and start-up.
    pub warnings: Vec<AgentFileError>,
}

impl AgentConfig {
    /// Whether the built-in `name` is offered: every built-in without `builtins:`, else the
    /// ones it lists.
    pub fn offers(&self, name: &str) -> bool {
        self.builtins
            .as_ref()
            .is_none_or(|b| b.iter().any(|n| n == name))
    }
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
            skills: Vec::new(),
            mcp: Vec::new(),
            hooks: HooksConfig::default(),
            limits: Limits::default(),
            sandbox: SandboxMode::Off,
            presentation: Presentation::default(),
            instructions: String::new(),
            warnings: Vec::new(),
        }
    }
}

/// One MCP server (`mcp.NAME`), checked.
#[derive(Debug, Clone, PartialEq)]
pub struct McpServerConfig {
    /// The key under `mcp:`.
    pub name: String,
    pub transport: McpTransport,
    /// Text put before each of the server's tool names: `NAME_` by default, `P_` for
    /// `prefix: P`, nothing for `prefix: ""`.
    pub tool_prefix: String,
    /// How long one tool call may take (`timeout`, default 120s).
    pub call_timeout: Duration,
    /// A stdio server's own `sandbox:` (off unless it says; never the agent's).
    pub sandbox: SandboxMode,
    /// Which MCP era to speak (`protocol`, default `auto`: ask the server).
    pub protocol: McpProtocol,
}

/// Which era of MCP a server is spoken to in (`protocol:` of an `mcp:` entry).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum McpProtocol {
    /// Probe with `server/discover`: modern (2026-07-28) when the server answers it, else
    /// legacy.
    #[default]
    Auto,
    /// 2026-07-28 only: a server that does not answer `server/discover` is an error.
    Modern,
    /// 2025-11-25 (`initialize`), no probe.
    Legacy,
}

impl McpProtocol {
    /// The names the agent file accepts.
    pub const NAMES: &'static [&'static str] = &["auto", "modern", "legacy"];

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "auto" => Some(Self::Auto),
            "modern" => Some(Self::Modern),
            "legacy" => Some(Self::Legacy),
            _ => None,
        }
    }
}

/// How to reach an MCP server.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum McpTransport {
    /// Streamable HTTP: `url` and optional `headers` (values taken as written).
    Http {
        url: String,
        headers: Vec<(String, String)>,
    },
    /// stdio: `command` (argv), resolved `program`, extra `env` for the child.
    Stdio {
        command: Vec<String>,
        program: PathBuf,
        env: Vec<(String, String)>,
    },
}

/// `hooks:` of the agent file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HooksConfig {
    pub pre_tool_call: Vec<HookConfig>,
    pub post_tool_call: Vec<HookConfig>,
}

/// One hook: a command run for the calls whose tool name matches.
#[derive(Debug, Clone, PartialEq)]
pub struct HookConfig {
    /// `None`: every tool.
    pub matcher: Option<ToolMatcher>,
    /// argv, as written; `command[0]` is the program.
    pub command: Vec<String>,
    /// `command[0]` resolved like a declared tool's program.
    pub program: PathBuf,
    pub timeout: Duration,
}

/// A hook's `match:`: a regex that must match the *whole* tool name (`release|bash` matches
/// `bash`, not `bash_extra`).
#[derive(Debug, Clone)]
pub struct ToolMatcher {
    pattern: String,
    regex: regex::Regex,
}

impl ToolMatcher {
    /// Compiles `pattern`, anchored at both ends.
    pub fn new(pattern: &str) -> Result<Self, regex::Error> {
        let regex = regex::Regex::new(&format!("^(?:{pattern})$"))?;
        Ok(Self {
            pattern: pattern.to_string(),
            regex,
        })
    }

    /// The pattern as written in the agent file.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    pub fn is_match(&self, tool: &str) -> bool {
        self.regex.is_match(tool)
    }
}

impl PartialEq for ToolMatcher {
    fn eq(&self, other: &Self) -> bool {
        self.pattern == other.pattern
    }
}

/// The placeholders `{{ name }}` of one command entry: each one's byte range in `entry` and its
/// name (spaces inside the braces trimmed). The one definition of the syntax, shared by the
/// agent-file check and the substitution at run time. A `{{` with no `}}` after it is literal
/// text; the name may hold no brace.
pub fn placeholders(entry: &str) -> Vec<(Range<usize>, &str)> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(rel) = entry.get(from..).and_then(|rest| rest.find("{{")) {
        let open = from + rel;
        let inner_start = open + 2;
        let Some(len) = entry.get(inner_start..).and_then(|rest| rest.find("}}")) else {
            break;
        };
        let inner = &entry[inner_start..inner_start + len];
        if inner.contains(['{', '}']) {
            // `{{{x}}`: the placeholder starts at a later brace.
            from = open + 1;
            continue;
        }
        let end = inner_start + len + 2;
        found.push((open..end, inner.trim()));
        from = end;
    }
    found
}

/// A model server's base URL as given (`base_url:` or `--base-url`), checked and without a
/// trailing `/`; `None` when it is not an http(s) URL with a host.
pub fn base_url(text: &str) -> Option<String> {
    match reqwest::Url::parse(text.trim()) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.has_host() => {
            Some(text.trim().trim_end_matches('/').to_string())
        }
        _ => None,
    }
}
