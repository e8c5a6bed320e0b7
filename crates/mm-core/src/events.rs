//! What the turn loop reports as it goes; the binary renders these (human, json, stream-json).

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

/// One step of a turn, as it happens.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// A piece of the model's reply text, as it streams.
    TextDelta { text: String },
    /// A piece of the model's reasoning (`reasoning_content`), as it streams.
    ReasoningDelta { text: String },
    /// The model's complete message of this step; `final` when it is the turn's answer (no
    /// tool call came with it).
    AssistantMessage {
        text: String,
        #[serde(rename = "final")]
        is_final: bool,
    },
    /// A request to the server failed and is retried.
    Retry {
        attempt: u32,
        delay_ms: u64,
        error: String,
    },
    /// A tool call is about to be handled (validated, asked for, run).
    ToolCall {
        id: String,
        name: String,
        arguments: String,
        /// The sandbox the call runs in (`workspace`, `best-effort`), when it runs in one.
        #[serde(skip_serializing_if = "Option::is_none")]
        sandbox: Option<String>,
    },
    /// A piece of a running tool's output.
    ToolOutput {
        id: String,
        #[serde(serialize_with = "lossy")]
        chunk: Vec<u8>,
    },
    /// How far a running call has got (MCP progress); for the user, not the model.
    ToolProgress {
        id: String,
        #[serde(flatten)]
        progress: crate::tools::Progress,
    },
    /// A tool call's result, as sent to the model.
    ToolResult {
        id: String,
        name: String,
        ok: bool,
        exit_code: Option<i32>,
        duration_ms: u64,
        content: String,
    },
    /// Something the user should know that does not stop the turn.
    Warning { message: String },
}

fn lossy<S: serde::Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&String::from_utf8_lossy(bytes))
}

/// Receives events.
pub type EventSink = Arc<dyn Fn(&Event) + Send + Sync>;

/// A tool call in the final report (`--output-format json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCallRecord {
    pub name: String,
    /// The arguments: the parsed JSON when they were JSON, else the raw text.
    pub arguments: Value,
    pub ok: bool,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
}

#[cfg(test)]
#[path = "events_tests.rs"]
mod tests;
