//! Reading a session file back: its header, the messages of each turn (written whole at the
//! turn's end), and a turn cut short rebuilt from its events.

use std::io::{BufRead, BufReader, Read as _};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::UNKNOWN_RESULT;
use crate::provider::{Message, ToolCall};

/// A message as a session file holds it (the chat API's shape).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub(super) enum Stored {
    System {
        content: String,
    },
    User {
        content: String,
    },
    Assistant {
        content: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<StoredCall>,
    },
    Tool {
        tool_call_id: String,
        name: String,
        content: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct StoredCall {
    id: String,
    name: String,
    arguments: String,
}

impl From<&Message> for Stored {
    fn from(message: &Message) -> Self {
        match message {
            Message::System(content) => Self::System {
                content: content.clone(),
            },
            Message::User(content) => Self::User {
                content: content.clone(),
            },
            Message::Assistant {
                content,
                tool_calls,
            } => Self::Assistant {
                content: content.clone(),
                tool_calls: tool_calls
                    .iter()
                    .map(|c| StoredCall {
                        id: c.id.clone(),
                        name: c.name.clone(),
                        arguments: c.arguments.clone(),
                    })
                    .collect(),
            },
            Message::Tool {
                tool_call_id,
                name,
                content,
            } => Self::Tool {
                tool_call_id: tool_call_id.clone(),
                name: name.clone(),
                content: content.clone(),
            },
        }
    }
}

impl From<Stored> for Message {
    fn from(stored: Stored) -> Self {
        match stored {
            Stored::System { content } => Self::System(content),
            Stored::User { content } => Self::User(content),
            Stored::Assistant {
                content,
                tool_calls,
            } => Self::Assistant {
                content,
                tool_calls: tool_calls
                    .into_iter()
                    .map(|c| ToolCall {
                        id: c.id,
                        name: c.name,
                        arguments: c.arguments,
                    })
                    .collect(),
            },
            Stored::Tool {
                tool_call_id,
                name,
                content,
            } => Self::Tool {
                tool_call_id,
                name,
                content,
            },
        }
    }
}

#[derive(Debug, Deserialize)]
pub(super) struct Header {
    pub(super) cwd: PathBuf,
    #[serde(default)]
    pub(super) created_ms: u64,
}

/// The header of the session file at `path`, reading its first line only.
pub(super) fn header_of(path: &Path) -> Option<Header> {
    let mut line = String::new();
    // Regular files only, opened without blocking (crate::regular); one line of at most 64 KiB.
    BufReader::new(crate::regular::open(path).ok()?)
        .take(64 * 1024)
        .read_line(&mut line)
        .ok()?;
    let value: Value = serde_json::from_str(&line).ok()?;
    (value.get("type")? == "session")
        .then(|| serde_json::from_value(value).ok())
        .flatten()
}

/// What a session file says.
#[derive(Debug, Default)]
pub(super) struct Read {
    pub(super) header: Option<Header>,
    pub(super) messages: Vec<Message>,
    /// The user's messages, in order.
    pub(super) users: Vec<String>,
    pub(super) warnings: Vec<String>,
    /// The last turn has no end in the file.
    pub(super) interrupted: bool,
}

/// The events of a turn whose end is not in the file, in order.
#[derive(Debug, Default)]
struct Pending {
    events: Vec<Value>,
    messages: Vec<Message>,
}

/// Reads a session file's bytes; a last line cut short is skipped, any other line that is
/// not JSON is a warning.
pub(super) fn read_lines(text: &[u8]) -> Read {
    let mut read = Read::default();
    let mut turn: Option<Pending> = None;
    let complete = text.ends_with(b"\n");
    let lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
    let count = lines.len();
    for (n, line) in lines.into_iter().enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let value: Value = match serde_json::from_slice(line) {
            Ok(value) => value,
            // The last line, cut short by a crash: expected, and skipped.
            Err(_) if n + 1 == count && !complete => continue,
            Err(e) => {
                read.warnings.push(format!("line {}: {e}; skipped", n + 1));
                continue;
            }
        };
        let kind = value
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        match kind {
            "session" if n == 0 => {
                read.header = serde_json::from_value(value).ok();
            }
            "user" => {
                if let Some(pending) = turn.take() {
                    read.messages.extend(rebuild(pending.events));
                }
                let text = value["text"].as_str().unwrap_or_default().to_string();
                read.users.push(text.clone());
                read.messages.push(Message::User(text));
                turn = Some(Pending::default());
            }
            "message" => {
                if let (Some(pending), Ok(stored)) = (
                    turn.as_mut(),
                    serde_json::from_value::<Stored>(value["message"].clone()),
                ) {
                    pending.messages.push(stored.into());
                }
            }
            "turn_end" => {
                if let Some(pending) = turn.take() {
                    read.messages.extend(pending.messages);
                }
            }
            _ => {
                if let Some(pending) = turn.as_mut() {
                    pending.events.push(value);
                }
            }
        }
    }
    if let Some(pending) = turn {
        read.messages.extend(rebuild(pending.events));
        read.interrupted = true;
    }
    let (messages, repairs) = repair(std::mem::take(&mut read.messages));
    read.messages = messages;
    if let Some(repairs) = repairs.described() {
        read.warnings.push(format!(
            "the conversation was repaired before it is sent again: {repairs}"
        ));
    }
    read
}

/// What [`repair`] changed.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Repairs {
    /// Tool results that answer no call of the assistant message before them: dropped.
    orphans: usize,
    /// Calls left without a result: answered with [`UNKNOWN_RESULT`].
    unanswered: usize,
}

impl Repairs {
    fn described(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.orphans > 0 {
            parts.push(format!(
                "{} tool result(s) without their call dropped",
                self.orphans
            ));
        }
        if self.unanswered > 0 {
            parts.push(format!(
                "{} call(s) without a result answered as unknown",
                self.unanswered
            ));
        }
        (!parts.is_empty()).then(|| parts.join(", "))
    }
}

/// Makes a conversation one that every chat API accepts: each assistant message's calls are
/// followed at once by exactly one result each, and no result stands anywhere else. A file
/// edited by hand, cut in an unexpected place or written by a future mm may hold a result
/// whose call is not right before it, a result given twice, or a call without a result;
/// strict servers refuse such a conversation (HTTP 400) on every later turn. A result out of
/// place is dropped; a missing one is [`UNKNOWN_RESULT`], put right after the call's others.
pub(super) fn repair(messages: Vec<Message>) -> (Vec<Message>, Repairs) {
    let mut out = Vec::with_capacity(messages.len());
    let mut repairs = Repairs::default();
    // The calls of the last assistant message still waiting for their result.
    let mut open: Vec<ToolCall> = Vec::new();
    let close = |open: &mut Vec<ToolCall>, out: &mut Vec<Message>, repairs: &mut Repairs| {
        for call in open.drain(..) {
            repairs.unanswered += 1;
            out.push(Message::Tool {
                tool_call_id: call.id,
                name: call.name,
                content: UNKNOWN_RESULT.to_string(),
            });
        }
    };
    for message in messages {
        match message {
            Message::Tool {
                ref tool_call_id, ..
            } => match open.iter().position(|c| c.id == *tool_call_id) {
                Some(at) => {
                    open.remove(at);
                    out.push(message);
                }
                None => repairs.orphans += 1,
            },
            Message::Assistant { ref tool_calls, .. } => {
                close(&mut open, &mut out, &mut repairs);
                open = tool_calls.clone();
                out.push(message);
            }
            other => {
                close(&mut open, &mut out, &mut repairs);
                out.push(other);
            }
        }
    }
    close(&mut open, &mut out, &mut repairs);
    (out, repairs)
}

/// The messages of a turn cut short, from its events: each reply's text and calls, each
/// call's result, and [`UNKNOWN_RESULT`] for a call whose result was never written. Calls
/// not separated by the model's text are kept as one reply (the events do not say where one
/// reply ends when it has no text); the model reads the same calls and results either way.
fn rebuild(events: Vec<Value>) -> Vec<Message> {
    #[derive(Default)]
    struct Reply {
        content: Option<String>,
        calls: Vec<ToolCall>,
        results: Vec<(String, String)>,
    }
    fn flush(reply: Option<Reply>, out: &mut Vec<Message>) {
        let Some(reply) = reply else { return };
        if reply.content.is_none() && reply.calls.is_empty() {
            return;
        }
        out.push(Message::Assistant {
            content: reply.content,
            tool_calls: reply.calls.clone(),
        });
        for call in reply.calls {
            let content = reply
                .results
                .iter()
                .find(|(id, _)| *id == call.id)
                .map_or_else(|| UNKNOWN_RESULT.to_string(), |(_, c)| c.clone());
            out.push(Message::Tool {
                tool_call_id: call.id,
                name: call.name,
                content,
            });
        }
    }
    let text = |v: &Value, key: &str| v[key].as_str().unwrap_or_default().to_string();
    let mut out = Vec::new();
    let mut open: Option<Reply> = None;
    for event in events {
        match event["type"].as_str().unwrap_or_default() {
            "assistant_message" => {
                flush(open.take(), &mut out);
                let content = Some(text(&event, "text"));
                if event["final"].as_bool() == Some(true) {
                    out.push(Message::Assistant {
                        content,
                        tool_calls: Vec::new(),
                    });
                } else {
                    open = Some(Reply {
                        content,
                        ..Reply::default()
                    });
                }
            }
            "tool_call" => open.get_or_insert_default().calls.push(ToolCall {
                id: text(&event, "id"),
                name: text(&event, "name"),
                arguments: text(&event, "arguments"),
            }),
            "tool_result" => open
                .get_or_insert_default()
                .results
                .push((text(&event, "id"), text(&event, "content"))),
            _ => {}
        }
    }
    flush(open, &mut out);
    out
}
