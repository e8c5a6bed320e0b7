//! The echo people read on stderr: each call, its output as it runs, and how it ended.
//!
//! Everything drawn here came from the model, a tool or a server, so all of it goes through
//! [`escape`]: a control sequence is shown, never obeyed.

use std::collections::HashMap;
use std::io::Write;
use std::sync::Mutex;

use mm_core::Event;

use super::escape::{self, block, line};

/// Writes print mode's events to stderr for a person; stdout keeps the final answer only.
/// (Interactive mode draws with `live`.)
pub struct Human {
    /// Calls whose output was echoed (the others show their result text instead), each with
    /// the escaper that holds a character split between chunks.
    echoed: Mutex<HashMap<String, escape::Stream>>,
    /// When each call's progress was last shown.
    progressed: Mutex<HashMap<String, std::time::Instant>>,
}

/// The least time between two progress lines of one call.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// `… 3/10 waiting` (a server's message is escaped like everything else drawn).
pub fn progress_line(progress: &mm_core::tools::Progress) -> String {
    let amount = match progress.total {
        Some(total) => format!("{}/{}", progress.progress, total),
        None => format!("{}", progress.progress),
    };
    match &progress.message {
        Some(message) => format!("… {amount} {}", line(message)),
        None => format!("… {amount}"),
    }
}

impl Human {
    pub fn new() -> Self {
        Self {
            echoed: Mutex::new(HashMap::new()),
            progressed: Mutex::new(HashMap::new()),
        }
    }

    pub fn event(&self, event: &Event) {
        let mut err = std::io::stderr().lock();
        let _ = match event {
            // The narration that comes with tool calls; the answer itself goes to stdout.
            Event::AssistantMessage { text, is_final } => {
                if *is_final {
                    Ok(())
                } else {
                    writeln!(err, "{}", block(text.trim_end()))
                }
            }
            Event::Retry {
                attempt,
                delay_ms,
                error,
            } => {
                writeln!(
                    err,
                    "mm: {} (retry {attempt} in {:.1}s)",
                    line(error),
                    *delay_ms as f64 / 1000.0
                )
            }
            Event::ToolCall {
                name,
                arguments,
                sandbox,
                ..
            } => writeln!(
                err,
                "● {} {}{}",
                line(name),
                line(arguments),
                sandbox
                    .as_deref()
                    .map(|mode| format!("  [sandboxed: {}]", line(mode)))
                    .unwrap_or_default()
            ),
            Event::ToolOutput { id, chunk } => {
                let shown = match self.echoed.lock() {
                    Ok(mut echoed) => echoed.entry(id.clone()).or_default().push(chunk),
                    Err(_) => String::from_utf8_lossy(chunk).into_owned(),
                };
                err.write_all(shown.as_bytes())
            }
            Event::ToolResult {
                id,
                ok,
                exit_code,
                duration_ms,
                content,
                ..
            } => {
                let held = self
                    .echoed
                    .lock()
                    .ok()
                    .and_then(|mut e| e.remove(id))
                    .map(|mut stream| stream.finish());
                match held {
                    Some(rest) => {
                        let _ = err.write_all(rest.as_bytes());
                    }
                    None if !content.is_empty() => {
                        let _ = writeln!(err, "{}", indent(&block(content)));
                    }
                    None => {}
                }
                let how = match (ok, exit_code) {
                    (true, _) => "ok".to_string(),
                    (false, Some(code)) => format!("exit code {code}"),
                    (false, None) => "not ok".to_string(),
                };
                writeln!(err, "└ {how} ({duration_ms} ms)")
            }
            Event::ToolProgress { id, progress } => {
                // At most one line a second per call: a chatty server does not flood stderr.
                let now = std::time::Instant::now();
                let due = match self.progressed.lock() {
                    Ok(mut last) => match last.get(id) {
                        Some(at) if now.duration_since(*at) < PROGRESS_EVERY => false,
                        _ => {
                            last.insert(id.clone(), now);
                            true
                        }
                    },
                    Err(_) => false,
                };
                if due {
                    writeln!(err, "  {}", progress_line(progress))
                } else {
                    Ok(())
                }
            }
            Event::Warning { message } => writeln!(err, "mm: warning: {}", line(message)),
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
