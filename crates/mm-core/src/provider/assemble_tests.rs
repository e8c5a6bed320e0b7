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

/// Takes in one whole (non-streamed) completion, finishes, and returns the reply.
fn run_whole(completion: serde_json::Value) -> ChatResponse {
    let mut on_delta = |_: StreamDelta| {};
    let mut assembler = Assembler::new(false);
    let completion: Completion = serde_json::from_value(completion).unwrap_or_default();
    assembler.push_whole(completion, &mut on_delta);
    assembler.finish(&tools(), &CallIds::default(), &mut on_delta)
}

/// A whole reply whose message has these tool calls.
fn whole_calls(calls: serde_json::Value) -> serde_json::Value {
    json!({"choices": [{"index": 0, "finish_reason": "tool_calls",
        "message": {"role": "assistant", "content": null, "tool_calls": calls}}]})
}

#[test]
fn whole_calls_sharing_an_id_and_an_index_stay_two_calls_with_distinct_ids() {
    let response = run_whole(whole_calls(json!([
        {"index": 0, "id": "same", "type": "function",
         "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}},
        {"index": 0, "id": "same", "type": "function",
         "function": {"name": "bash", "arguments": "{\"command\":\"pwd\"}"}},
    ])));
    assert_eq!(
        calls(&response),
        vec![
            ("same", "bash", r#"{"command":"ls"}"#),
            ("call_1", "bash", r#"{"command":"pwd"}"#)
        ]
    );
    assert!(response.warnings.is_empty(), "{:?}", response.warnings);
}

#[test]
fn whole_calls_are_never_merged_whatever_their_ids_and_indexes() {
    // Same id, different indexes: two calls, and the second id is made unique.
    let response = run_whole(whole_calls(json!([
        {"index": 0, "id": "x", "function": {"name": "bash", "arguments": "{}"}},
        {"index": 1, "id": "x", "function": {"name": "bash", "arguments": "{}"}},
    ])));
    assert_eq!(
        calls(&response),
        vec![("x", "bash", "{}"), ("call_1", "bash", "{}")]
    );
    // No ids, no indexes, and a second call without arguments (that a fragment would have
    // continued the first one with).
    let response = run_whole(whole_calls(json!([
        {"function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}},
        {"function": {"name": "bash"}},
    ])));
    assert_eq!(
        calls(&response),
        vec![
            ("call_1", "bash", r#"{"command":"ls"}"#),
            ("call_2", "bash", "{}")
        ]
    );
    // The same index, no ids, and arguments that are not JSON: still two calls as they came.
    let response = run_whole(whole_calls(json!([
        {"index": 0, "function": {"name": "bash", "arguments": "{\"command\":"}},
        {"index": 0, "function": {"name": "bash", "arguments": "\"ls\"}"}},
    ])));
    assert_eq!(
        calls(&response),
        vec![
            ("call_1", "bash", r#"{"command":"#),
            ("call_2", "bash", r#""ls"}"#)
        ]
    );
}

#[test]
fn a_generated_id_never_repeats_an_id_the_server_gave() {
    // The first call has no id and gets `call_1`, which the second brought itself.
    let response = run_whole(whole_calls(json!([
        {"function": {"name": "bash", "arguments": "{}"}},
        {"id": "call_1", "function": {"name": "bash", "arguments": "{}"}},
    ])));
    let ids: Vec<&str> = response.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids.len(), 2);
    assert_ne!(ids[0], ids[1], "{ids:?}");
}

#[test]
fn streamed_fragments_sharing_an_id_and_an_index_are_still_one_call() {
    let (response, _) = run(
        false,
        vec![
            json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "bash", "arguments": ""}}]}),
            json!({"tool_calls": [{"index": 0, "id": "a", "function": {"arguments": "{\"command\":"}}]}),
            json!({"tool_calls": [{"index": 0, "id": "a", "function": {"arguments": "\"ls\"}"}}]}),
        ],
    );
    assert_eq!(calls(&response), vec![("a", "bash", r#"{"command":"ls"}"#)]);
    // A fragment that repeats the name with each piece still continues the call while its
    // arguments are incomplete.
    let (response, _) = run(
        false,
        vec![
            json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "bash", "arguments": "{\"command\":"}}]}),
            json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "bash", "arguments": "\"ls\"}"}}]}),
        ],
    );
    assert_eq!(calls(&response), vec![("a", "bash", r#"{"command":"ls"}"#)]);
}

#[test]
fn streamed_whole_calls_sharing_an_id_and_an_index_are_two_calls() {
    // Each chunk holds a complete call: the second is not appended to the first.
    let (response, _) = run(
        false,
        vec![
            json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}}]}),
            json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "bash", "arguments": "{\"command\":\"pwd\"}"}}]}),
        ],
    );
    assert_eq!(
        calls(&response),
        vec![
            ("a", "bash", r#"{"command":"ls"}"#),
            ("call_1", "bash", r#"{"command":"pwd"}"#)
        ]
    );
}

#[test]
fn a_nameless_call_is_dropped_with_a_warning_naming_its_arguments() {
    let response = run_whole(whole_calls(json!([
        {"index": 0, "id": "a", "function": {"name": "", "arguments": "{\"command\":\n \"ls\"}"}},
        {"index": 1, "id": "b", "function": {"name": "bash", "arguments": "{}"}},
    ])));
    assert_eq!(calls(&response), vec![("b", "bash", "{}")]);
    assert_eq!(
        response.warnings,
        vec![
            r#"the model made a tool call without a name; it was dropped (arguments: {"command": "ls"})"#
                .to_string()
        ]
    );
    // Streamed, without arguments, and alone: one warning, not also "empty".
    let (response, _) = run(
        false,
        vec![json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "  "}}]})],
    );
    assert!(response.tool_calls.is_empty());
    assert_eq!(
        response.warnings,
        vec!["the model made a tool call without a name; it was dropped".to_string()]
    );
}

#[test]
fn a_completion_without_choices_is_a_warning() {
    let response = run_whole(json!({"id": "x", "object": "chat.completion", "choices": []}));
    assert_eq!(response.content, "");
    assert!(response.tool_calls.is_empty());
    assert_eq!(
        response.warnings,
        vec!["the model server's reply had no choices: there is no answer".to_string()]
    );
    // `choices: null`, or a stream whose only chunk is usage.
    let response = run_whole(json!({"choices": null}));
    assert_eq!(response.warnings.len(), 1, "{:?}", response.warnings);
    assert!(response.warnings[0].contains("no choices"));
    let mut on_delta = |_: StreamDelta| {};
    let mut assembler = Assembler::new(false);
    let usage_only: Completion = serde_json::from_value(json!({"choices": [],
        "usage": {"prompt_tokens": 3, "completion_tokens": 0, "total_tokens": 3}}))
    .unwrap_or_default();
    assembler.push(usage_only, &mut on_delta);
    let response = assembler.finish(&tools(), &CallIds::default(), &mut on_delta);
    assert!(
        response.warnings[0].contains("no choices"),
        "{:?}",
        response.warnings
    );
}

#[test]
fn a_reply_with_only_reasoning_or_nothing_is_a_warning() {
    let (response, _) = run(
        false,
        vec![
            json!({"reasoning_content": "Let me think."}),
            json!({"content": ""}),
        ],
    );
    assert_eq!(
        response.warnings,
        vec![
            "the model's reply has only reasoning, no text and no tool call (finish_reason: none given)"
                .to_string()
        ]
    );
    // Inline `<think>` with nothing after it is only reasoning too.
    let (response, _) = run(false, vec![json!({"content": "<think>hmm</think>\n"})]);
    assert_eq!(response.warnings.len(), 1, "{:?}", response.warnings);
    assert!(response.warnings[0].contains("only reasoning"));

    let response = run_whole(json!({"choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": ""}}]}));
    assert_eq!(
        response.warnings,
        vec![
            "the model's reply is empty: no text and no tool call (finish_reason: stop)"
                .to_string()
        ]
    );
    // Whitespace is nothing.
    let (response, _) = run(false, vec![json!({"content": " \n "})]);
    assert_eq!(response.warnings.len(), 1, "{:?}", response.warnings);
    assert!(response.warnings[0].contains("empty"));
}

#[test]
fn a_normal_reply_gives_no_warning() {
    let (response, _) = run(
        false,
        vec![
            json!({"reasoning_content": "Easy."}),
            json!({"content": "Hello."}),
        ],
    );
    assert_eq!(response.content, "Hello.");
    assert!(response.warnings.is_empty(), "{:?}", response.warnings);
    let (response, _) = run(
        false,
        vec![
            json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "bash", "arguments": "{}"}}]}),
        ],
    );
    assert!(response.warnings.is_empty(), "{:?}", response.warnings);
    // A call written as text is a call, not an empty reply.
    let (response, _) = run(
        false,
        vec![json!({"content": "<tool_call>{\"name\":\"bash\",\"arguments\":{}}</tool_call>"})],
    );
    assert_eq!(response.tool_calls.len(), 1);
    assert!(response.warnings.is_empty(), "{:?}", response.warnings);
    let response = run_whole(json!({"choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": "Hi."}}]}));
    assert!(response.warnings.is_empty(), "{:?}", response.warnings);
}
