//! What a problem in a file the user wrote looks like (a leaf: the agent file, skills and the
//! config all report through it).

use std::fmt;

/// An agent-file error: `FILE:LINE: KEY: MESSAGE` (`LINE` left out when 0, `KEY` when empty).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct AgentFileError {
    pub file: String,
    /// 1-based line in the agent file; 0 when the problem is not on a line (file unreadable).
    pub line: usize,
    /// The key path, like `tools.release.command[0]` (empty for file-level errors).
    pub key: String,
    pub message: String,
}

impl fmt::Display for AgentFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
        }
        f.write_str(": ")?;
        if !self.key.is_empty() {
            write!(f, "{}: ", self.key)?;
        }
        f.write_str(&self.message)
    }
}
