//! docs/reference.md is the user's contract: what the code emits must be written there.

use super::*;
use crate::config::Limits;
use crate::tools::BUILTIN_NAMES;
use crate::turn::StopReason;

const REFERENCE: &str = include_str!("../../../docs/reference.md");

/// The reference's section whose heading starts with `## {number}.`.
fn section(number: &str) -> &'static str {
    let head = format!("\n## {number}. ");
    let start = REFERENCE
        .find(&head)
        .unwrap_or_else(|| panic!("no section {number}"));
    let rest = &REFERENCE[start + head.len()..];
    &rest[..rest.find("\n## ").unwrap_or(rest.len())]
}

/// One value of every event (the match fails to compile when a kind is added).
fn every_event() -> Vec<Event> {
    let events = vec![
        Event::TextDelta {
            text: String::new(),
        },
        Event::ReasoningDelta {
            text: String::new(),
        },
        Event::AssistantMessage {
            text: String::new(),
            is_final: true,
        },
        Event::Retry {
            attempt: 1,
            delay_ms: 0,
            error: String::new(),
        },
        Event::ToolCall {
            id: String::new(),
            name: String::new(),
            arguments: String::new(),
            sandbox: None,
        },
        Event::ToolOutput {
            id: String::new(),
            chunk: Vec::new(),
        },
        Event::ToolProgress {
            id: String::new(),
            progress: crate::tools::Progress {
                progress: 0.0,
                total: None,
                message: None,
            },
        },
        Event::ToolResult {
            id: String::new(),
            name: String::new(),
            ok: true,
            exit_code: None,
            duration_ms: 0,
            content: String::new(),
        },
        Event::Warning {
            message: String::new(),
        },
    ];
    for event in &events {
        match event {
            Event::TextDelta { .. }
            | Event::ReasoningDelta { .. }
            | Event::AssistantMessage { .. }
            | Event::Retry { .. }
            | Event::ToolCall { .. }
            | Event::ToolOutput { .. }
            | Event::ToolProgress { .. }
            | Event::ToolResult { .. }
            | Event::Warning { .. } => {}
        }
    }
    events
}

#[test]
fn every_stream_json_event_type_is_in_the_reference() {
    let commands = section("8");
    for event in every_event() {
        let value = serde_json::to_value(&event).unwrap();
        let kind = value["type"].as_str().unwrap();
        assert!(
            commands.contains(&format!("`{kind}`")),
            "reference §8 lacks the event `{kind}`"
        );
    }
}

#[test]
fn every_stop_reason_is_in_the_reference() {
    let commands = section("8");
    let reasons = [
        StopReason::Done,
        StopReason::MaxTurns,
        StopReason::Loop,
        StopReason::NoAnswer,
        StopReason::Cancelled,
        StopReason::Error,
    ];
    for reason in reasons {
        match reason {
            StopReason::Done
            | StopReason::MaxTurns
            | StopReason::Loop
            | StopReason::NoAnswer
            | StopReason::Cancelled
            | StopReason::Error => {}
        }
        let name = serde_json::to_value(reason).unwrap();
        let name = name.as_str().unwrap();
        assert!(
            commands.contains(&format!("`{name}`")),
            "reference §8 lacks `{name}`"
        );
    }
}

#[test]
fn the_reserved_names_and_the_default_limits_are_the_references() {
    let tools = section("2");
    for name in BUILTIN_NAMES {
        assert!(
            tools.contains(&format!("`{name}`")),
            "reference §2 lacks `{name}`"
        );
    }
    let limits = Limits::default();
    let agent = section("1");
    for (key, value) in [
        ("max_turns", limits.max_turns.to_string()),
        ("max_output", limits.max_output.to_string()),
        ("loop", limits.loop_threshold.to_string()),
        ("max_tokens", limits.max_tokens.to_string()),
    ] {
        assert!(
            agent.contains(&format!("`{key}` {value}")),
            "reference §1: `{key}` {value}"
        );
    }
    assert!(agent.contains(&format!("({} tokens)", crate::turn::ANSWER_MAX_TOKENS)));
}
