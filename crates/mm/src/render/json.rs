//! `--output-format json` and `stream-json`.

use std::collections::HashMap;
use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use mm_core::{Event, TurnResult};

/// `stream-json`: one line on stdout per event. A closed stdout (`mm … | head -1`) cancels the
/// turn (its tools are killed) and mm exits [`crate::exit::PIPE`]; a tool's output keeps its
/// characters whole across reads (the bytes of an unfinished one wait for the next chunk).
pub struct StreamJson {
    cancel: CancellationToken,
    closed: AtomicBool,
    /// Per call id: the first bytes of a character the next chunk completes.
    held: Mutex<HashMap<String, Vec<u8>>>,
}

impl StreamJson {
    pub fn new(cancel: CancellationToken) -> Self {
        Self {
            cancel,
            closed: AtomicBool::new(false),
            held: Mutex::new(HashMap::new()),
        }
    }

    /// Whether stdout was closed by its reader.
    pub fn closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// The reader of stdout is gone: nobody will read the rest of this turn.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.cancel.cancel();
    }

    pub fn event(&self, event: &Event) {
        if self.closed() {
            return;
        }
        let mut held = self
            .held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let line = match event {
            Event::ToolOutput { id, chunk } => {
                let bytes = held.entry(id.clone()).or_default();
                bytes.extend_from_slice(chunk);
                let whole = bytes.len() - unfinished_tail(bytes);
                if whole == 0 {
                    return;
                }
                let text: Vec<u8> = bytes.drain(..whole).collect();
                output_line(id, &text)
            }
            Event::ToolResult { id, .. } => {
                // What is still held will never be finished: written as it is (lossy).
                if let Some(rest) = held.remove(id).filter(|rest| !rest.is_empty()) {
                    self.write(&output_line(id, &rest));
                }
                serde_json::to_string(event).unwrap_or_default()
            }
            _ => serde_json::to_string(event).unwrap_or_default(),
        };
        drop(held);
        self.write(&line);
    }

    fn write(&self, line: &str) {
        if line.is_empty() {
            return;
        }
        let mut out = std::io::stdout().lock();
        let written = writeln!(out, "{line}").and_then(|()| out.flush());
        if let Err(e) = written
            && e.kind() == std::io::ErrorKind::BrokenPipe
        {
            self.close();
        }
    }
}

fn output_line(id: &str, bytes: &[u8]) -> String {
    json!({"type": "tool_output", "id": id, "chunk": String::from_utf8_lossy(bytes)}).to_string()
}

/// How many bytes at the end of `bytes` begin a UTF-8 character that is not complete yet.
fn unfinished_tail(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(3) {
        let byte = bytes[bytes.len() - back];
        if byte & 0xC0 == 0x80 {
            continue; // a continuation byte: its lead is further back
        }
        let needs = match byte {
            0xF8.. => 1, // no character starts so: not held
            0xF0.. => 4,
            0xE0.. => 3,
            0xC0.. => 2,
            _ => 1,
        };
        return if needs > back { back } else { 0 };
    }
    0
}

/// Calls `closed` when the reader of stdout goes away (the read end of a stdout pipe was
/// closed), from a thread of its own that waits in `poll(2)` for nothing but that; it never
/// calls it when stdout is a file or cannot be watched.
pub fn watch_stdout(closed: impl FnOnce() + Send + 'static) {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use std::os::fd::AsFd;
    std::thread::spawn(move || {
        let out = std::io::stdout();
        let mut fds = [PollFd::new(out.as_fd(), PollFlags::empty())];
        loop {
            match poll(&mut fds, PollTimeout::NONE) {
                Ok(_) => {
                    let gone = PollFlags::POLLERR | PollFlags::POLLHUP;
                    if fds[0].revents().is_some_and(|r| r.intersects(gone)) {
                        closed();
                        return;
                    }
                }
                Err(nix::errno::Errno::EINTR) => {}
                Err(_) => return,
            }
        }
    });
}

/// The result object: `{"result","stop_reason","turns","tool_calls","usage","duration_ms",
/// "truncated"}` (`truncated`: the answer was cut at `max_tokens`), `session_id` (for
/// `--resume`) when the session is saved, and `message` when the turn stopped without an
/// answer.
pub fn result_object(
    result: &TurnResult,
    duration_ms: u64,
    session_id: &str,
    truncated: bool,
) -> Value {
    let mut object = json!({
        "result": result.result,
        "stop_reason": result.stop_reason,
        "turns": result.turns,
        "tool_calls": result.tool_calls,
        "usage": result.usage,
        "duration_ms": duration_ms,
        "truncated": truncated,
    });
    if let Some(map) = object.as_object_mut() {
        if !session_id.is_empty() {
            map.insert("session_id".into(), Value::String(session_id.into()));
        }
        if let Some(message) = &result.message {
            map.insert("message".into(), Value::String(message.clone()));
        }
        if let Some(junk) = result.junk {
            map.insert("junk".into(), Value::String(junk.as_str().into()));
        }
    }
    object
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_character_split_across_reads_waits_for_its_end() {
        let text = "é€😀a";
        let bytes = text.as_bytes();
        for cut in 0..=bytes.len() {
            let (a, b) = bytes.split_at(cut);
            let mut held = a.to_vec();
            let keep = unfinished_tail(&held);
            let first: Vec<u8> = held.drain(..held.len() - keep).collect();
            held.extend_from_slice(b);
            assert_eq!(unfinished_tail(&held), 0, "cut {cut}");
            let whole = [
                String::from_utf8(first).expect("whole characters"),
                String::from_utf8(held).expect("whole"),
            ]
            .concat();
            assert_eq!(whole, text, "cut {cut}");
        }
    }

    #[test]
    fn invalid_bytes_are_not_held() {
        assert_eq!(unfinished_tail(b"ab\xff"), 0);
        assert_eq!(unfinished_tail(&[b'a', 0x80, 0x80, 0x80]), 0);
        assert_eq!(unfinished_tail(&[0xE2, 0x82]), 2);
        assert_eq!(unfinished_tail(&[0xF0]), 1);
    }
}
