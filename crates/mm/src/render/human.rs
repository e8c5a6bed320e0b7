//! The echo people read on stderr: each call, its output as it runs, and how it ended.

use std::collections::HashSet;
use std::io::Write;
use std::sync::Mutex;

use mm_core::Event;

/// Writes events to stderr for a person. `show_text` also prints the model's text as it streams
/// (interactive mode); print mode keeps stdout for the final answer only.
pub struct Human {
    show_text: bool,
    /// Calls whose output was echoed (the others show their result text instead).
    echoed: Mutex<HashSet<String>>,
}

impl Human {
    pub fn new(show_text: bool) -> Self {
        Self {
            show_text,
            echoed: Mutex::new(HashSet::new()),
        }
    }

    pub fn event(&self, event: &Event) {
        let mut err = std::io::stderr().lock();
        let _ = match event {
            Event::TextDelta { text } if self.show_text => write!(err, "{text}"),
            // Print mode: the narration that comes with tool calls; the answer itself goes to stdout.
            Event::AssistantMessage { text, is_final } if !self.show_text => {
                if *is_final {
                    Ok(())
                } else {
                    writeln!(err, "{}", text.trim_end())
                }
            }
            Event::AssistantMessage { .. } => writeln!(err),
            Event::Retry {
                attempt,
                delay_ms,
                error,
            } => {
                writeln!(
                    err,
                    "mm: {error} (retry {attempt} in {:.1}s)",
                    *delay_ms as f64 / 1000.0
                )
            }
            Event::ToolCall {
                name, arguments, ..
            } => writeln!(err, "● {name} {arguments}"),
            Event::ToolOutput { id, chunk } => {
                if let Ok(mut echoed) = self.echoed.lock() {
                    echoed.insert(id.clone());
                }
                err.write_all(chunk)
            }
            Event::ToolResult {
                id,
                ok,
                exit_code,
                duration_ms,
                content,
                ..
            } => {
                let echoed = self.echoed.lock().map(|e| e.contains(id)).unwrap_or(false);
                if !echoed && !content.is_empty() {
                    let _ = writeln!(err, "{}", indent(content));
                }
                let how = match (ok, exit_code) {
                    (true, _) => "ok".to_string(),
                    (false, Some(code)) => format!("exit code {code}"),
                    (false, None) => "not ok".to_string(),
                };
                writeln!(err, "└ {how} ({duration_ms} ms)")
            }
            Event::Warning { message } => writeln!(err, "mm: warning: {message}"),
            _ => Ok(()),
        };
    }
}

fn indent(text: &str) -> String {
    text.trim_end()
        .lines()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
