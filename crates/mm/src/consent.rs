//! Asking the user for consent on the terminal.

use std::io::{BufRead, IsTerminal, Write};

use mm_core::ConsentAsker;

use crate::render::escape::line;

/// Asks on stderr and reads the answer from stdin, when both are a terminal.
pub struct TerminalAsker;

impl TerminalAsker {
    /// `None` when there is no terminal to ask on (piped stdin, CI, `-p -`).
    pub fn if_terminal() -> Option<Self> {
        (std::io::stdin().is_terminal() && std::io::stderr().is_terminal()).then_some(Self)
    }
}

impl ConsentAsker for TerminalAsker {
    fn ask(&self, tool: &str, summary: &str) -> Option<bool> {
        let mut err = std::io::stderr().lock();
        // Escaped: the dialog shows exactly what will run, whatever control characters the
        // model put in it.
        let _ = write!(
            err,
            "\nAllow {}: {}\n  [y]es / [n]o > ",
            line(tool),
            line(summary)
        );
        let _ = err.flush();
        let mut line = String::new();
        match std::io::stdin().lock().read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(matches!(
                line.trim().to_ascii_lowercase().as_str(),
                "y" | "yes"
            )),
        }
    }
}
