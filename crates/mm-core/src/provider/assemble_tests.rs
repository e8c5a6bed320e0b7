use serde_json::json;

use super::*;

fn tools() -> Vec<ToolSpec> {
    vec![ToolSpec {
        name: "bash".into(),
        description: "Run.".into(),
        parameters: json!({"type": "object", "properties": {"command": {"type": "string"}}}),
    }]
}

fn chunk(delta: serde_json::Value) -> Completion {
    serde_json::from_value(json!({"choices": [{"index": 0, "delta": delta}]})).unwrap_or_default()
}

/// Feeds the deltas, finishes, and returns the reply and the text shown.
fn run(constrained: bool, deltas: Vec<serde_json::Value>) -> (ChatResponse, String) {
    let mut shown = String::new();
    let mut on_delta = |delta: StreamDelta| {
        if let StreamDelta::Text(text) = delta {
            shown.push_str(&text);
        }
    };
    let mut assembler = Assembler::new(constrained);
    for delta in deltas {
        assembler.push(chunk(delta), &mut on_delta);
    }
    let response = assembler.finish(&tools(), &CallIds::default(), &mut on_delta);
    (response, shown)
}

fn calls(response: &ChatResponse) -> Vec<(&str, &str, &str)> {
    response
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
        .collect()
}

#[test]
fn fragments_by_index_interleaved() {
    let (response, _) = run(
        false,
        vec![
            json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "bash", "arguments": ""}}]}),
            json!({"tool_calls": [{"index": 1, "id": "b", "function": {"name": "bash", "arguments": "{\"command\":"}}]}),
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"command\":\"ls\"}"}}]}),
            json!({"tool_calls": [{"index": 1, "function": {"arguments": "\"pwd\"}"}}]}),
        ],
    );
    assert_eq!(
        calls(&response),
        vec![
            ("a", "bash", r#"{"command":"ls"}"#),
            ("b", "bash", r#"{"command":"pwd"}"#)
        ]
    );
}

#[test]
fn fragments_without_index_continue_the_last_call() {
    let (response, _) = run(
        false,
        vec![
            json!({"tool_calls": [{"function": {"name": "bash", "arguments": "{\"comm"}}]}),
            json!({"tool_calls": [{"function": {"arguments": "and\":\"ls\"}"}}]}),
            json!({"tool_calls": [{"function": {"name": "bash", "arguments": "{}"}}]}),
        ],
    );
    assert_eq!(
        calls(&response),
        vec![
            ("call_1", "bash", r#"{"command":"ls"}"#),
            ("call_2", "bash", "{}")
        ]
    );
}

#[test]
fn same_index_with_a_new_id_is_a_new_call() {
    let (response, _) = run(
        false,
        vec![
            json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "bash", "arguments": "{}"}}]}),
            json!({"tool_calls": [{"index": 0, "id": "b", "function": {"name": "bash", "arguments": "{}"}}]}),
        ],
    );
    assert_eq!(
        calls(&response),
        vec![("a", "bash", "{}"), ("b", "bash", "{}")]
    );
}

#[test]
fn the_id_repeated_in_every_chunk_is_one_call() {
    let (response, _) = run(
        false,
        vec![
            json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "bash", "arguments": "{\"command\""}}]}),
            json!({"tool_calls": [{"index": 0, "id": "a", "function": {"arguments": ":\"ls\"}"}}]}),
        ],
    );
    assert_eq!(calls(&response), vec![("a", "bash", r#"{"command":"ls"}"#)]);
}

#[test]
fn empty_arguments_are_an_empty_object() {
    let (response, _) = run(
        false,
        vec![json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "bash"}}]})],
    );
    assert_eq!(calls(&response), vec![("a", "bash", "{}")]);
}

#[test]
fn constrained_call_and_answer() {
    let (response, shown) = run(
        true,
        vec![
            json!({"content": "{\"tool\":\"bash\","}),
            json!({"content": "\"arguments\":{\"command\":\"ls\"}}"}),
        ],
    );
    assert_eq!(
        calls(&response),
        vec![("call_1", "bash", r#"{"command":"ls"}"#)]
    );
    assert_eq!(shown, "");
    assert_eq!(response.finish_reason.as_deref(), Some("tool_calls"));

    let (response, shown) = run(
        true,
        vec![
            json!({"content": "{\"answer\": \"Hel"}),
            json!({"content": "lo\"}"}),
        ],
    );
    assert_eq!(response.content, "Hello");
    assert_eq!(shown, "Hello");
    assert!(response.tool_calls.is_empty());
}

#[test]
fn constrained_reply_that_ignored_the_schema_is_text() {
    let (response, shown) = run(true, vec![json!({"content": "Just words."})]);
    assert_eq!(response.content, "Just words.");
    assert_eq!(shown, "Just words.");
}

#[test]
fn native_text_streams_and_text_calls_are_hidden() {
    let (response, shown) = run(
        false,
        vec![
            json!({"content": "Sure. "}),
            json!({"content": "[TOOL_CALLS]bash[ARGS]{\"command\":\"ls\"}"}),
        ],
    );
    assert_eq!(shown, "Sure. ");
    assert_eq!(response.content, "Sure.");
    assert_eq!(
        calls(&response),
        vec![("call_1", "bash", r#"{"command":"ls"}"#)]
    );
}

#[test]
fn inline_think_blocks_are_reasoning() {
    let mut reasoning = String::new();
    let mut shown = String::new();
    let mut on_delta = |delta: StreamDelta| match delta {
        StreamDelta::Text(text) => shown.push_str(&text),
        StreamDelta::Reasoning(text) => reasoning.push_str(&text),
        _ => {}
    };
    let mut assembler = Assembler::new(false);
    for piece in ["<think>", "Which tool", "?</th", "ink>\n", "Answer."] {
        assembler.push(chunk(json!({"content": piece})), &mut on_delta);
    }
    let response = assembler.finish(&tools(), &CallIds::default(), &mut on_delta);
    assert_eq!(response.content, "Answer.");
    assert_eq!(shown, "Answer.");
    assert_eq!(reasoning, "Which tool?");
}

#[test]
fn a_call_after_thinking_is_found() {
    let (response, shown) = run(
        false,
        vec![
            json!({"content": "<think>use bash</think><tool_call>{\"name\":\"bash\",\"arguments\":{}}</tool_call>"}),
        ],
    );
    assert_eq!(calls(&response), vec![("call_1", "bash", "{}")]);
    assert_eq!(shown, "");
}
