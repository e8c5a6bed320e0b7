//! `--output-format json` and `stream-json`.

use std::io::Write;

use serde_json::{Value, json};

use mm_core::{Event, TurnResult};

/// One line of stream-json for an event.
pub fn event_line(event: &Event) {
    if let Ok(line) = serde_json::to_string(event) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
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
