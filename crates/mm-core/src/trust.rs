//! Folder trust (SPEC §1): what a folder's own files grant or start, and the user's remembered
//! answer about it.
//!
//! A folder's `./mm.md` (found by default, not named with `-a`) and its `.mm/permissions` can
//! start programs (MCP stdio servers, hooks), turn consent off (`yolo: true`), allow calls
//! without asking (allow rules), and send the user's API key (`api_key_env`) to a URL of their
//! choosing. A cloned repository must not do any of that until the user says so. [`Grants`]
//! lists those things, one line each, in a fixed order; [`TrustStore`] remembers, per folder,
//! the answer given for exactly that list, so that a change to what the folder grants asks
//! again. What only restricts (deny rules) or only offers (declared tools, which ask before
//! they run; skills; instructions) is not a grant.
//!
//! The binary decides when to ask (interactive mode on a terminal) and what to leave out when
//! the folder is not trusted; this module has no terminal I/O.

use std::collections::BTreeMap;
use std::io;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::{AgentConfig, HookConfig, McpTransport};

/// What a folder's files grant or start, one line each (unescaped: the folder wrote them).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Grants(Vec<String>);

impl Grants {
    /// The grants of the folder's own agent (`agent`: its `./mm.md`, `None` when the agent is
    /// not the folder's) and of its `.mm/permissions` allow rules. `key_to_file_url`: the API
    /// key would go to the agent file's `base_url` (no `--base-url` given).
    pub fn of(
        agent: Option<&AgentConfig>,
        key_to_file_url: bool,
        project_allows: &[String],
    ) -> Self {
        let mut lines = Vec::new();
        if let Some(agent) = agent {
            for server in &agent.mcp {
                if let McpTransport::Stdio { command, env, .. } = &server.transport {
                    let mut line =
                        format!("starts the MCP server {}: {}", server.name, argv(command));
                    if !env.is_empty() {
                        let env: Vec<String> =
                            env.iter().map(|(k, v)| format!("{k}={v}")).collect();
                        line.push_str(&format!(" (with {})", env.join(" ")));
                    }
                    lines.push(line);
                }
            }
            let hooks = [
                ("preToolCall", &agent.hooks.pre_tool_call),
                ("postToolCall", &agent.hooks.post_tool_call),
            ];
            for (event, hooks) in hooks {
                for hook in hooks {
                    lines.push(hook_line(event, hook));
                }
            }
            if agent.yolo {
                lines.push(
                    "turns consent off (yolo: true): every tool call runs without asking".into(),
                );
            }
            for rule in &agent.allow {
                lines.push(format!("allows without asking: {rule}"));
            }
            if let Some(var) = agent.api_key_env.as_deref().filter(|_| key_to_file_url) {
                lines.push(format!(
                    "sends the key in ${var} (api_key_env) to {}",
                    agent.base_url
                ));
            }
        }
        // Last, in file order: an "always, saved" answer appends one (see `with_saved_rule`).
        for rule in project_allows {
            lines.push(project_line(rule));
        }
        Self(lines)
    }

    /// Nothing is granted: there is nothing to ask about.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn lines(&self) -> &[String] {
        &self.0
    }

    /// These grants once `allow RULE` is appended to `.mm/permissions` (the user's own "always,
    /// saved" answer, which needs no question next time).
    pub fn with_saved_rule(&self, rule: &str) -> Self {
        let mut lines = self.0.clone();
        lines.push(project_line(rule));
        Self(lines)
    }
}

fn project_line(rule: &str) -> String {
    format!("allows without asking (.mm/permissions): {rule}")
}

fn hook_line(event: &str, hook: &HookConfig) -> String {
    let calls = match &hook.matcher {
        Some(matcher) => format!("calls matching {}", matcher.pattern()),
        None => "every call".into(),
    };
    format!("runs the {event} hook for {calls}: {}", argv(&hook.command))
}

/// An argv as one line: each entry as it is when plain, else single-quoted.
fn argv(command: &[String]) -> String {
    command
        .iter()
        .map(|arg| {
            let plain = !arg.is_empty()
                && arg.chars().all(|c| {
                    c.is_alphanumeric()
                        || matches!(c, '_' | '-' | '.' | '/' | ':' | '@' | '=' | ',' | '+')
                });
            if plain {
                arg.clone()
            } else {
                format!("'{}'", arg.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Takes out of the folder's own agent what [`Grants::of`] lists as its grants: its MCP stdio
/// servers, hooks, `yolo` (it becomes `yolo`, the user's own `--yolo`), `allow:` entries and,
/// when the key would go to the file's `base_url`, `api_key_env`.
pub fn take_back(agent: &mut AgentConfig, yolo: bool, key_to_file_url: bool) {
    agent
        .mcp
        .retain(|server| !matches!(server.transport, McpTransport::Stdio { .. }));
    agent.hooks = Default::default();
    agent.yolo = yolo;
    agent.allow.clear();
    if key_to_file_url {
        agent.api_key_env = None;
    }
}

/// The user's answer about one folder, for the grants it was given for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    pub trusted: bool,
    pub grants: Grants,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Stored {
    version: u32,
    /// By folder (canonical path).
    folders: BTreeMap<PathBuf, Answer>,
}

/// The largest trust file read.
const MAX_BYTES: u64 = 16 << 20;

/// The answers, one file (`$XDG_DATA_HOME/mm/trusted-folders.json`), readable by the user only.
/// Written whole (a temporary file renamed over it), so it is never seen half-written.
#[derive(Debug, Clone)]
pub struct TrustStore {
    path: PathBuf,
}

impl TrustStore {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The answer remembered for `folder`, whatever it was given for.
    pub fn recorded(&self, folder: &Path) -> Option<Answer> {
        self.read().folders.remove(&key(folder))
    }

    /// The answer remembered for `folder` and exactly these `grants`: `None` when there is
    /// none, or when the folder grants something else now (ask again).
    pub fn answer(&self, folder: &Path, grants: &Grants) -> Option<bool> {
        self.recorded(folder)
            .filter(|answer| answer.grants == *grants)
            .map(|answer| answer.trusted)
    }

    /// Remembers the answer for `folder` and these `grants`.
    pub fn remember(&self, folder: &Path, grants: &Grants, trusted: bool) -> io::Result<()> {
        let mut stored = self.read();
        stored.version = 1;
        stored.folders.insert(
            key(folder),
            Answer {
                trusted,
                grants: grants.clone(),
            },
        );
        let text = serde_json::to_string_pretty(&stored).map_err(io::Error::other)?;
        let dir = match self.path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        let mut temp = tempfile::Builder::new()
            .prefix(".trusted-folders.")
            .permissions(std::fs::Permissions::from_mode(0o600))
            .tempfile_in(dir)?;
        io::Write::write_all(temp.as_file_mut(), text.as_bytes())?;
        temp.as_file().sync_all()?;
        temp.persist(&self.path).map_err(|e| e.error)?;
        Ok(())
    }

    /// What the file holds; a file that is missing or cannot be read holds nothing (every
    /// folder is then asked about again: failing closed).
    fn read(&self) -> Stored {
        crate::regular::read(&self.path, MAX_BYTES)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }
}

/// A folder as the store knows it: its canonical path.
fn key(folder: &Path) -> PathBuf {
    std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_path_buf())
}

#[cfg(test)]
#[path = "trust_tests.rs"]
mod tests;
