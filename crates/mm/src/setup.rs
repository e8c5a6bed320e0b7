//! From flags to a ready engine: working directory, agent file, overrides, tools, provider.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use mm_core::mcp::McpServer;
use mm_core::provider::{Provider, ProviderConfig};
use mm_core::skills::Catalogue;
use mm_core::{
    AgentConfig, Consent, ConsentAsker, EventSink, Hooks, Permissions, Registry, TurnOptions,
    load_agent,
};
use tokio_util::sync::CancellationToken;

use crate::Failure;
use crate::cli::Cli;

/// The system prompt of an agent whose file gives no instructions. Kept short: small models pay
/// for every token.
/// Everything a run needs, resolved from flags, environment and the agent file.
pub struct Env {
    pub cwd: PathBuf,
    pub config: AgentConfig,
    pub registry: Registry,
    /// The skills found (`skills:` folders, then ~/.config/mm/skills, then ./.mm/skills).
    pub skills: Arc<Catalogue>,
    /// Where the agent came from, for messages (`default agent` when none).
    pub source: String,
    /// The MCP servers that answered at start-up ([`connect_mcp`](Self::connect_mcp)).
    pub mcp: Vec<McpServer>,
    /// The consent rules, with the session's "always" answers (consent.rs).
    pub permissions: Permissions,
    /// Who is asked when a call needs consent (`None`: no terminal, the call is refused).
    pub asker: Option<Arc<dyn ConsentAsker>>,
    /// `--temperature` and `--seed`, sent with every request when given.
    pub temperature: Option<f64>,
    pub seed: Option<u64>,
    /// What the folder's own files grant, and whether the agent is the folder's (trust.rs).
    pub folder: crate::trust::Folder,
    /// The folder's trust once settled (interactive mode and `mm tools`).
    pub trust: Option<Arc<crate::trust::Settled>>,
}

impl Env {
    /// Leaves out what the folder grants (it is not trusted): its MCP stdio servers, hooks,
    /// `yolo`, allow rules (of the agent file and `.mm/permissions`), and the key sent to its
    /// `base_url`.
    pub fn untrust(&mut self, cli: &Cli) {
        let agent_too = self.folder.agent_is_the_folders;
        if agent_too {
            mm_core::trust::take_back(&mut self.config, cli.yolo, cli.base_url.is_none());
        }
        self.permissions = self.permissions.clone().without_grants(agent_too, cli.yolo);
        self.registry = mm_core::Registry::from_config(&self.config, &self.skills);
        crate::render::warn(&format!(
            "this folder is not trusted: what its files grant is not applied (MCP commands, hooks, \
             yolo, allow rules, the API key); the answer is kept in {}",
            crate::trust::store().path().display()
        ));
    }

    /// The system prompt (mm-core assembles it: the instructions, then the skills catalogue).
    pub fn instructions(&self) -> String {
        self.registry
            .system_prompt(&self.config.instructions, &self.skills)
    }

    /// The options of one turn: where tools run, the limits, consent (asked on the terminal
    /// when there is one), and where events and Ctrl-C come from.
    pub fn turn_options(&self, events: EventSink, cancel: CancellationToken) -> TurnOptions {
        TurnOptions {
            cwd: self.cwd.clone(),
            limits: self.config.limits,
            consent: Consent::Rules {
                permissions: self.permissions.clone(),
                asker: self.asker.clone(),
            },
            hooks: Hooks::new(self.config.hooks.clone()),
            events,
            cancel,
        }
    }

    /// Connects the agent's MCP servers (all at once, each within the start-up timeout) and
    /// offers their tools after the others. A server that fails, and a tool whose name is
    /// taken, is a warning; mm goes on without it. Returns the clients, to close on the way out.
    pub async fn connect_mcp(&mut self) -> Vec<Arc<mm_core::mcp::Client>> {
        if self.config.mcp.is_empty() {
            return Vec::new();
        }
        let (servers, warnings) =
            mm_core::mcp::connect(&self.config.mcp, &self.cwd, mm_core::mcp::STARTUP_TIMEOUT).await;
        for warning in warnings {
            crate::render::warn(&warning);
        }
        self.mcp = servers;
        self.rebuild_registry();
        self.mcp.iter().map(|s| s.client.clone()).collect()
    }

    /// Lists again the tools of servers that said theirs changed (`tools/list_changed`);
    /// called between turns, so a turn keeps the tools it started with.
    pub async fn refresh_mcp(&mut self) {
        let mut changed = false;
        for server in &mut self.mcp {
            let Some(config) = self.config.mcp.iter().find(|c| c.name == server.name) else {
                continue;
            };
            match server.refresh(config).await {
                Ok(replaced) => changed |= replaced,
                Err(e) => crate::render::warn(&format!(
                    "MCP server {}: cannot list its tools again: {e}",
                    server.name
                )),
            }
        }
        if changed {
            self.rebuild_registry();
        }
    }

    /// Warns when the first request would pass the budget a small model can afford
    /// ([`mm_core::budget::FIRST_REQUEST_BUDGET`]), naming what made it big; call once the MCP
    /// tools are known.
    pub fn warn_over_budget(&self) {
        let catalogue = if self.registry.get("read_skill").is_some() {
            self.skills.prompt_section()
        } else {
            String::new()
        };
        let cost = mm_core::budget::first_request(
            &self.instructions(),
            &catalogue,
            self.skills.names().len(),
            &self.registry,
            &self.mcp,
        );
        if let Some(warning) = cost.over_budget() {
            crate::render::warn(&warning);
        }
    }

    /// Warns about rules of `.mm/permissions` that name no tool (see
    /// [`Permissions::unknown_tools`]); call once the MCP tools are known.
    pub fn warn_unknown_rule_tools(&self) {
        let mut names: Vec<&str> = mm_core::tools::BUILTIN_NAMES.to_vec();
        names.extend(self.registry.iter().map(|t| t.spec().name.as_str()));
        for warning in self.permissions.unknown_tools(&names) {
            crate::render::warn(&warning);
        }
    }

    fn rebuild_registry(&mut self) {
        let mut registry = Registry::from_config(&self.config, &self.skills);
        for warning in registry.add_mcp(&self.mcp) {
            crate::render::warn(&warning);
        }
        self.registry = registry;
    }

    pub fn provider(&self, stream: bool) -> Result<Provider, Failure> {
        let mut pc = ProviderConfig::new(self.config.base_url.clone(), self.config.model.clone());
        pc.mode = self.config.tool_calls;
        pc.stream = stream;
        pc.reply_deadline = self.config.limits.reply_timeout;
        pc.temperature = self.temperature;
        pc.seed = self.seed;
        if let Some(var) = &self.config.api_key_env {
            match std::env::var(var) {
                Ok(key) if !key.is_empty() => pc.api_key = Some(key),
                _ => eprintln!("mm: warning: {var} (api_key_env) is not set; sending no API key"),
            }
        }
        Provider::new(pc).map_err(|e| Failure::runtime(e.to_string()))
    }
}

/// Applies `-C`, finds and loads the agent file, applies the flags that override it.
pub fn resolve(cli: &Cli) -> Result<Env, Failure> {
    if let Some(dir) = &cli.cd {
        std::env::set_current_dir(dir)
            .map_err(|e| Failure::usage(format!("-C {}: {e}", dir.display())))?;
    }
    let cwd = std::env::current_dir()
        .map_err(|e| Failure::runtime(format!("no working directory: {e}")))?;
    let path = match &cli.agent {
        Some(path) => Some(path.clone()),
        None => Some(PathBuf::from("mm.md")).filter(|p| p.is_file()),
    };
    let found_by_default = cli.agent.is_none();
    let (mut config, source) = match path {
        Some(path) => {
            // The path as the user wrote it, so that messages read `mm.md:14: …`; the loader anchors
            // relative program paths itself.
            let config = load_agent(&path).map_err(|e| Failure::usage(e.to_string()))?;
            for warning in &config.warnings {
                crate::render::warn(&warning.to_string());
            }
            (config, path.display().to_string())
        }
        None => (AgentConfig::default(), "default agent".to_string()),
    };
    // What the folder grants, read before the flags override the file (`--yolo` and
    // `--base-url` are the user's, not the folder's).
    let project_allows = {
        let (rules, _) =
            mm_core::Permissions::default().with_project_file(&mm_core::project_file(&cwd));
        rules.project_allows()
    };
    let folder_agent = (found_by_default && config.path.is_some()).then_some(&config);
    let grants = mm_core::trust::Grants::of(folder_agent, cli.base_url.is_none(), &project_allows);
    let folder = crate::trust::Folder {
        grants,
        agent_is_the_folders: found_by_default && config.path.is_some(),
    };
    if let Some(model) = &cli.model {
        config.model = model.clone();
    }
    if let Some(url) = &cli.base_url {
        // Checked like the agent-file key: a typo is a usage error now, not seconds of retries.
        config.base_url = mm_core::base_url(url).ok_or_else(|| {
            Failure::usage(format!(
                "--base-url: `{url}` is not an http(s) URL; write like http://127.0.0.1:8080/v1"
            ))
        })?;
    }
    if cli.yolo {
        config.yolo = true;
    }
    if let Some(n) = cli.max_turns {
        config.limits.max_turns = n;
    }
    if let Some(mode) = cli.sandbox {
        config.sandbox = mode;
    }
    let skills = Arc::new(load_skills(&config, &cwd));
    let registry = Registry::from_config(&config, &skills);
    let permissions = crate::consent::permissions(&config, &cwd);
    Ok(Env {
        cwd,
        config,
        registry,
        skills,
        source,
        mcp: Vec::new(),
        permissions,
        asker: crate::consent::terminal_asker(),
        temperature: cli.temperature,
        seed: cli.seed,
        folder,
        trust: None,
    })
}

/// Scans the agent's `skills:` folders, then the user's and the project's; problems are
/// warnings and the rest still loads. Nothing is read when `read_skill` is not offered.
fn load_skills(config: &AgentConfig, cwd: &std::path::Path) -> Catalogue {
    if !config.offers("read_skill") {
        return Catalogue::default();
    }
    let mut folders = config.skills.clone();
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        folders.push(PathBuf::from(home).join(".config/mm/skills"));
    }
    folders.push(cwd.join(".mm/skills"));
    let (catalogue, warnings) = mm_core::skills::load(&folders);
    for warning in warnings {
        crate::render::warn(&warning);
    }
    catalogue
}

/// `mm tools`: the tools exactly as the model is shown them (the request's `tools` in native
/// mode; in constrained mode the system prompt's tool list and the reply's schema or grammar).
pub async fn print_tools(env: &Env) -> Result<u8, Failure> {
    let provider = env.provider(false)?;
    let shown = provider
        .tools_as_sent(&env.registry.specs(), &env.registry.strict_schemas())
        .await;
    let text = serde_json::to_string_pretty(&shown).map_err(|e| Failure::runtime(e.to_string()))?;
    write_stdout(&format!("{text}\n"))
}

/// `mm check`: the agent file is valid; say what it defines.
pub fn print_check(env: &Env) -> Result<u8, Failure> {
    let names: Vec<String> = env.config.tools.iter().map(|t| t.name.clone()).collect();
    let tools = if names.is_empty() {
        "no declared tools".to_string()
    } else {
        format!("{} declared tool(s): {}", names.len(), names.join(", "))
    };
    let skills = env.skills.names();
    let skills = match skills.len() {
        0 => String::new(),
        1 => format!("; 1 skill: {}", skills.join(", ")),
        n => format!("; {n} skills: {}", skills.join(", ")),
    };
    let servers: Vec<&str> = env.config.mcp.iter().map(|s| s.name.as_str()).collect();
    // Not contacted: `mm check` reads the file; `mm tools` shows what the servers offer.
    let servers = match servers.len() {
        0 => String::new(),
        1 => format!("; 1 MCP server: {}", servers.join(", ")),
        n => format!("; {n} MCP servers: {}", servers.join(", ")),
    };
    write_stdout(&format!(
        "{}: ok ({tools}{skills}{servers})\n{}\n",
        env.source,
        sandbox_line(env.config.sandbox)
    ))
}

/// `mm check`'s line on the sandbox: the mode and what this kernel enforces.
fn sandbox_line(mode: mm_core::SandboxMode) -> String {
    let support = mm_core::sandbox::support();
    let verdict = if support.enforces_workspace() {
        "workspace is fully enforced here".to_string()
    } else {
        format!(
            "workspace cannot be fully enforced here (missing: {})",
            support.missing().join("; ")
        )
    };
    format!(
        "sandbox: {mode}; this kernel: {}; {verdict}",
        support.summary()
    )
}

/// Before a run that can start tools: `sandbox: workspace` that this kernel cannot enforce is
/// refused now, in one line; `best-effort` says once what it does not enforce.
pub fn settle_sandbox(env: &Env) -> Result<(), Failure> {
    let support = mm_core::sandbox::support();
    match env.config.sandbox {
        mm_core::SandboxMode::Workspace => match support.refusal("tools") {
            Some(refusal) => Err(Failure::runtime(refusal)),
            None => Ok(()),
        },
        mm_core::SandboxMode::BestEffort if !support.enforces_workspace() => {
            crate::render::warn(&format!(
                "sandbox best-effort: tools run with what this kernel enforces ({}); not \
                 enforced: {}",
                support.summary(),
                support.missing().join("; ")
            ));
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Writes to stdout; a closed pipe (`mm tools | head`) is a normal end, not an error.
pub fn write_stdout(text: &str) -> Result<u8, Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(crate::exit::OK),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(crate::exit::OK),
        Err(e) => Err(Failure::runtime(format!("cannot write to stdout: {e}"))),
    }
}
