//! The MCP client: the servers of the agent file's `mcp:` (SPEC §5), their tools offered to the
//! model like any other tool.
//!
//! - [`client`]: JSON-RPC requests and answers over a transport, with picomcp's wire types;
//!   the server's requests (ping, elicitation) and notifications (progress, tools changed);
//!   the era probe, `input_required` rounds.
//! - [`era`]: legacy (2025-11-25, `initialize`) or modern (2026-07-28, `server/discover` and
//!   per-request `_meta` and headers): the probe's verdict, `_meta`, headers, `x-mcp-header`.
//! - [`http`] (Streamable HTTP) and [`stdio`] (a child process): the two transports.
//! - [`tool`]: one server tool as a [`crate::Tool`], validated by the same [`crate::Params`] as
//!   a declared tool, its result turned into text.
//!
//! [`connect`] starts every server at once, each within the start-up timeout; a server that
//! fails is a warning and mm goes on without it.

mod client;
mod era;
mod http;
mod stdio;
#[cfg(test)]
mod tests;
mod tool;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub use client::{
    CallError, Client, ClientOptions, ElicitHandler, PROTOCOL_VERSION, SUPPORTED_VERSIONS,
    ServerInfo, accept_with_defaults,
};
pub use era::{Era, MODERN_VERSIONS, McpProtocol};
pub use tool::McpTool;

use client::StartError;

use crate::config::{McpServerConfig, McpTransport};

/// How long a server may take to start and list its tools.
pub const STARTUP_TIMEOUT: Duration = Duration::from_secs(10);

/// A connected server and its tools.
pub struct McpServer {
    pub name: String,
    pub client: Arc<Client>,
    pub tools: Vec<Arc<McpTool>>,
}

/// Connects to one server over `url` (Streamable HTTP), its era known (and, legacy,
/// initialized).
pub async fn connect_http(
    url: &str,
    headers: &[(String, String)],
    options: ClientOptions,
    timeout: Duration,
) -> Result<Client, CallError> {
    let (inbox, messages) = tokio::sync::mpsc::unbounded_channel();
    let transport = http::HttpTransport::new(url, headers, inbox).map_err(CallError::Transport)?;
    match Client::start(Arc::new(transport), messages, options, timeout).await {
        Ok(client) => Ok(client),
        Err(StartError::Failed(error) | StartError::ProbeEndedIt(error)) => Err(error),
    }
}

/// A stdio server to start: `program args…` in `cwd` with `env` added, confined by `sandbox`.
#[derive(Debug, Clone, Copy)]
pub struct StdioCommand<'a> {
    pub program: &'a Path,
    pub args: &'a [String],
    pub env: &'a [(String, String)],
    pub cwd: &'a Path,
    pub sandbox: crate::SandboxMode,
}

/// Starts a stdio server (its stderr to `log`), its era known (and, legacy, initialized). A
/// server that exits on the `server/discover` probe is started again and spoken to legacy.
pub async fn connect_stdio(
    server: StdioCommand<'_>,
    log: Option<PathBuf>,
    mut options: ClientOptions,
    timeout: Duration,
) -> Result<Client, CallError> {
    use client::Transport as _;
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let (inbox, messages) = tokio::sync::mpsc::unbounded_channel();
        let transport = stdio::StdioTransport::spawn(server, log.clone(), inbox)
            .map_err(CallError::Transport)?;
        let transport = Arc::new(transport);
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let started = Client::start(transport.clone(), messages, options.clone(), left).await;
        match started {
            Ok(client) => return Ok(client),
            Err(StartError::ProbeEndedIt(_)) if options.protocol == McpProtocol::Auto => {
                transport.close().await;
                options.protocol = McpProtocol::Legacy;
            }
            Err(StartError::Failed(error) | StartError::ProbeEndedIt(error)) => {
                transport.close().await;
                return Err(error);
            }
        }
    }
}

/// Connects every server in parallel, each within `timeout` (start and `tools/list`). Returns
/// the servers that answered, in file order, and a warning for each that did not.
pub async fn connect(
    configs: &[McpServerConfig],
    cwd: &Path,
    timeout: Duration,
) -> (Vec<McpServer>, Vec<String>) {
    let attempts = configs.iter().map(|config| async move {
        match tokio::time::timeout(timeout, start(config, cwd, timeout)).await {
            Ok(result) => result,
            Err(_) => Err(format!("no answer within {}s", timeout.as_secs_f64())),
        }
    });
    let mut servers = Vec::new();
    let mut warnings = Vec::new();
    for (config, result) in configs
        .iter()
        .zip(futures::future::join_all(attempts).await)
    {
        match result {
            Ok(server) => {
                warnings.extend(
                    server
                        .client
                        .take_warnings()
                        .into_iter()
                        .map(|w| format!("MCP server {}: {w}", server.name)),
                );
                warnings.extend(broken_schemas(&server));
                servers.push(server);
            }
            Err(why) => warnings.push(format!(
                "MCP server {}: {why}; going on without it",
                config.name
            )),
        }
    }
    (servers, warnings)
}

/// A warning for each parameter whose schema cannot be compiled: its values reach the server
/// unchecked by mm (the server's own tool still judges them).
fn broken_schemas(server: &McpServer) -> Vec<String> {
    let mut warnings = Vec::new();
    for tool in &server.tools {
        for (param, why) in tool.broken_schemas() {
            warnings.push(format!(
                "MCP server {}: tool {}: the schema of `{param}` cannot be used ({why}); its values are sent unchecked",
                server.name,
                tool.remote_name()
            ));
        }
    }
    warnings
}

async fn start(
    config: &McpServerConfig,
    cwd: &Path,
    timeout: Duration,
) -> Result<McpServer, String> {
    let options = ClientOptions {
        protocol: config.protocol,
        ..ClientOptions::default()
    };
    let client = match &config.transport {
        McpTransport::Http { url, headers } => connect_http(url, headers, options, timeout).await,
        McpTransport::Stdio {
            command,
            program,
            env,
        } => {
            let log = log_path(&config.name);
            let server = StdioCommand {
                program,
                args: &command[1..],
                env,
                cwd,
                sandbox: config.sandbox,
            };
            connect_stdio(server, log, options, timeout).await
        }
    }
    .map_err(|e| e.to_string())?;
    let client = Arc::new(client);
    let listed = match client.list_tools(timeout).await {
        Ok(listed) => listed,
        Err(e) => {
            client.close().await;
            return Err(format!("cannot list its tools: {e}"));
        }
    };
    let tools = tools_of(config, &client, &listed);
    Ok(McpServer {
        name: config.name.clone(),
        client,
        tools,
    })
}

fn tools_of(
    config: &McpServerConfig,
    client: &Arc<Client>,
    listed: &[serde_json::Value],
) -> Vec<Arc<McpTool>> {
    listed
        .iter()
        .filter_map(|entry| {
            McpTool::new(
                &config.name,
                &config.tool_prefix,
                entry,
                client.clone(),
                config.call_timeout,
            )
        })
        .map(Arc::new)
        .collect()
}

impl McpServer {
    /// Lists the tools again when the server said they changed (`tools/list_changed`).
    /// Returns whether they were replaced.
    pub async fn refresh(&mut self, config: &McpServerConfig) -> Result<bool, CallError> {
        if !self.client.tools_changed() {
            return Ok(false);
        }
        let listed = self.client.list_tools(STARTUP_TIMEOUT).await?;
        self.tools = tools_of(config, &self.client, &listed);
        Ok(true)
    }
}

/// Where a stdio server's stderr goes: `$XDG_STATE_HOME/mm/mcp/<name>.log` (by default under
/// `~/.local/state`). `None` without a home: stderr is dropped.
pub fn log_path(server: &str) -> Option<PathBuf> {
    // XDG: a relative `XDG_STATE_HOME` is ignored.
    let state = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|home| PathBuf::from(home).join(".local/state"))
        })?;
    Some(state.join("mm/mcp").join(format!("{server}.log")))
}
