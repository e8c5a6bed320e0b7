//! The set of tools offered to the model, built from the resolved config: built-ins, declared
//! tools, MCP tools and `read_skill`. Above `tools`, `mcp` and `skills`, which it gathers.

use std::sync::Arc;

use crate::config::AgentConfig;
use crate::mcp::McpServer;
use crate::skills::{Catalogue, ReadSkillTool};
use crate::tools::{
    BUILTIN_NAMES, BashTool, DeclaredTool, FILE_TOOLS, Tool, ToolKind, ToolSpec, file_tool,
};

/// The instructions of an agent that has none.
pub const DEFAULT_INSTRUCTIONS: &str = "You are mm, an assistant in the user's terminal. Use the tools when they help. Answer briefly.";

/// The tools offered to the model, in the order they are offered.
#[derive(Default, Clone)]
pub struct Registry {
    tools: Vec<Arc<dyn Tool>>,
    /// The skills `read_skill` reads (empty without it): a call to one of these names is
    /// answered with how to read it.
    skills: Vec<String>,
    /// Each name's place in `tools`: a server listing 20,000 tools is looked up in constant
    /// time per call and per tool added, not by a scan of them all.
    index: std::collections::HashMap<String, usize>,
    /// The agent's `sandbox:`: its process tools run in it, and the in-process file tools that
    /// write keep to the working folder (the call pipeline refuses the rest).
    sandbox: crate::SandboxMode,
}

impl Registry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool; a later tool with the same name is not added (the first keeps the name).
    pub fn add(&mut self, tool: Arc<dyn Tool>) -> bool {
        let name = tool.spec().name.clone();
        if self.index.contains_key(&name) {
            return false;
        }
        self.index.insert(name, self.tools.len());
        self.tools.push(tool);
        true
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.index.get(name).and_then(|&at| self.tools.get(at))
    }

    /// The agent's `sandbox:` mode.
    pub fn sandbox(&self) -> crate::SandboxMode {
        self.sandbox
    }

    /// The names of the skills the model can read with `read_skill`.
    pub fn skill_names(&self) -> &[String] {
        &self.skills
    }

    /// The skill a call's name means (case and `-`/`_` ignored), when it names one.
    pub fn skill_named(&self, name: &str) -> Option<&str> {
        let key = |s: &str| s.to_lowercase().replace('-', "_");
        let wanted = key(name);
        self.skills
            .iter()
            .find(|s| key(s) == wanted)
            .map(String::as_str)
    }

    /// The names of every offered tool's parameters, each once (for the junk judge: a call
    /// written as text under an invented name still gives the tools' parameters).
    pub fn parameter_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for param in self.tools.iter().flat_map(|t| &t.params().params) {
            if !names.contains(&param.name) {
                names.push(param.name.clone());
            }
        }
        names
    }

    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools.iter().map(|t| t.spec().clone()).collect()
    }

    /// Per tool, in the order of [`specs`](Self::specs): the schema its arguments must match in
    /// constrained mode, with `required` and `enum` (which the specs leave out for the model).
    pub fn strict_schemas(&self) -> Vec<serde_json::Value> {
        self.tools
            .iter()
            .map(|t| t.params().strict_schema())
            .collect()
    }

    /// The system prompt: the agent's instructions (mm's default ones when it has none), then
    /// the skills catalogue when `read_skill` is offered and there are skills.
    pub fn system_prompt(&self, instructions: &str, skills: &Catalogue) -> String {
        let text = instructions.trim();
        let text = if text.is_empty() {
            DEFAULT_INSTRUCTIONS
        } else {
            text
        };
        if self.get("read_skill").is_some() {
            format!("{text}{}", skills.prompt_section())
        } else {
            text.to_string()
        }
    }

    /// The agent's declared tools alone, in file order (what `mm serve` offers).
    pub fn declared(config: &AgentConfig) -> Self {
        let mut registry = Self {
            sandbox: config.sandbox,
            ..Self::new()
        };
        for tool in &config.tools {
            registry.add(Arc::new(
                DeclaredTool::presented(tool.clone(), config.presentation)
                    .sandboxed(config.sandbox),
            ));
        }
        registry
    }

    /// The tools of an agent: its declared tools in file order, then the built-ins it offers
    /// (`read_skill` only when there are skills).
    pub fn from_config(config: &AgentConfig, skills: &Arc<Catalogue>) -> Self {
        let mut registry = Self::declared(config);
        if config.offers("bash") {
            registry.add(Arc::new(BashTool::new().sandboxed(config.sandbox)));
        }
        for tool in FILE_TOOLS
            .iter()
            .filter(|name| config.offers(name))
            .filter_map(|name| file_tool(name))
        {
            registry.add(tool);
        }
        if config.offers("read_skill") && !skills.is_empty() {
            registry.add(Arc::new(ReadSkillTool::new(skills.clone())));
            registry.skills = skills.names().into_iter().map(str::to_owned).collect();
        }
        registry
    }

    /// Adds the tools of connected MCP servers after the others (SPEC §2, §5). A tool whose
    /// name is a built-in's (even one turned off) or is taken by a declared tool or an earlier
    /// server is skipped: one warning each.
    pub fn add_mcp(&mut self, servers: &[McpServer]) -> Vec<String> {
        let mut warnings = Vec::new();
        for server in servers {
            for tool in &server.tools {
                let name = &tool.spec().name;
                let clash = if BUILTIN_NAMES.contains(&name.as_str()) {
                    Some("the built-in of that name".to_string())
                } else {
                    self.get(name).map(|other| match other.kind() {
                        ToolKind::Declared => "the declared tool of that name".to_string(),
                        _ => "a tool of an earlier MCP server".to_string(),
                    })
                };
                match clash {
                    Some(holder) => warnings.push(format!(
                        "MCP server {}: its tool {} is not offered as `{name}`: {holder} keeps the name (set `prefix` to rename it)",
                        server.name,
                        tool.remote_name(),
                    )),
                    None => {
                        self.add(tool.clone());
                    }
                }
            }
        }
        warnings
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.tools.iter()
    }
}
