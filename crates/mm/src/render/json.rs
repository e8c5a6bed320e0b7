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

/// The result object: `{"result","stop_reason","turns","tool_calls","usage","duration_ms"}` (and
/// `message` when the turn stopped without an answer, `error` when it failed).
pub fn result_object(result: &TurnResult, duration_ms: u64) -> Value {
    let mut object = json!({
        "result": result.result,
        "stop_reason": result.stop_reason,
        "turns": result.turns,
        "tool_calls": result.tool_calls,
        "usage": result.usage,
        "duration_ms": duration_ms,
    });
    if let (Some(message), Some(map)) = (&result.message, object.as_object_mut()) {
        map.insert("message".into(), Value::String(message.clone()));
    }
    object
}
