use serde_json::json;

use super::*;
use crate::language::Language;
use crate::provider::asks::ENGLISH;

fn completion(text: &str) -> Completion {
    match serde_json::from_str(text) {
        Ok(completion) => completion,
        Err(error) => panic!("{error}: {text}"),
    }
}

fn delta(completion: &Completion) -> &ChoiceMessage {
    completion.choices[0]
        .body()
        .unwrap_or_else(|| panic!("no delta in {completion:?}"))
}

#[test]
fn llama_cpp_chunks_with_reasoning_and_timings() {
    let first = completion(
        r#"{"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"created":1,"id":"chatcmpl-x","model":"qwen","system_fingerprint":"b6000","object":"chat.completion.chunk"}"#,
    );
    assert_eq!(delta(&first).content, None);
    let thinking = completion(
        r#"{"choices":[{"finish_reason":null,"index":0,"delta":{"reasoning_content":"Let me"}}],"object":"chat.completion.chunk"}"#,
    );
    assert_eq!(delta(&thinking).reasoning_text(), Some("Let me"));
    let last = completion(
        r#"{"choices":[{"finish_reason":"stop","index":0,"delta":{}}],"usage":{"completion_tokens":5,"prompt_tokens":10,"total_tokens":15},"timings":{"prompt_n":10,"prompt_ms":12.5,"predicted_n":5,"predicted_per_second":40.1}}"#,
    );
    assert_eq!(last.choices[0].finish_reason.as_deref(), Some("stop"));
    let usage: Usage = last.usage.map(Usage::from).unwrap_or_default();
    assert_eq!(
        (
            usage.prompt_tokens,
            usage.completion_tokens,
            usage.total_tokens
        ),
        (10, 5, 15)
    );
}

#[test]
fn openai_chunks_with_streamed_tool_calls() {
    let head = completion(
        r#"{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_abc","type":"function","function":{"name":"read_file","arguments":""}}],"refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}"#,
    );
    let call = &delta(&head).tool_calls[0];
    assert_eq!(
        (
            call.index,
            call.id.as_deref(),
            call.function.name.as_deref()
        ),
        (Some(0), Some("call_abc"), Some("read_file"))
    );
    assert_eq!(call.function.arguments_text().as_deref(), Some(""));
    let fragment = completion(
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]},"finish_reason":null}]}"#,
    );
    assert_eq!(
        delta(&fragment).tool_calls[0]
            .function
            .arguments_text()
            .as_deref(),
        Some("{\"pa")
    );
    let usage_only = completion(
        r#"{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}"#,
    );
    assert!(usage_only.choices.is_empty());
    assert_eq!(usage_only.usage.map(|u| u.total_tokens), Some(7));
}

#[test]
fn ollama_style_whole_calls_with_object_arguments_and_reasoning() {
    let chunk = completion(
        r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"qwen3","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"hmm","tool_calls":[{"id":"call_x","index":0,"type":"function","function":{"name":"bash","arguments":{"command":"ls"}}}]},"finish_reason":null}]}"#,
    );
    let message = delta(&chunk);
    assert_eq!(message.reasoning_text(), Some("hmm"));
    assert_eq!(
        message.tool_calls[0].function.arguments_text().as_deref(),
        Some(r#"{"command":"ls"}"#)
    );
}

#[test]
fn nulls_and_missing_fields_are_defaults() {
    let chunk = completion(
        r#"{"choices":[{"delta":{"content":"x","tool_calls":null,"reasoning_content":null},"finish_reason":null,"index":0}],"usage":null}"#,
    );
    assert!(delta(&chunk).tool_calls.is_empty());
    assert_eq!(delta(&chunk).reasoning_text(), None);
    assert!(completion("{}").choices.is_empty());
    assert!(completion(r#"{"choices":null}"#).choices.is_empty());
    let no_id = completion(
        r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"bash","arguments":"{}"}}]}}]}"#,
    );
    assert_eq!(delta(&no_id).tool_calls[0].id, None);
    assert_eq!(delta(&no_id).tool_calls[0].index, None);
}

#[test]
fn whole_reply_message() {
    let reply = completion(
        r#"{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hi","reasoning_content":"think"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2}}"#,
    );
    assert_eq!(
        reply.choices[0].body().and_then(|m| m.content.as_deref()),
        Some("Hi")
    );
    assert_eq!(
        reply.usage.map(Usage::from).map(|u| u.total_tokens),
        Some(3),
        "total computed when absent"
    );
}

#[test]
fn error_objects_are_kept() {
    let chunk = completion(r#"{"error":{"code":500,"message":"boom","type":"server_error"}}"#);
    assert_eq!(
        chunk.error.as_ref().and_then(|e| e.get("message")),
        Some(&json!("boom"))
    );
}

#[test]
fn props_of_llama_server() {
    let props: Props = serde_json::from_value(json!({
        "default_generation_settings": {"n_ctx": 4096, "params": {"top_k": 40}},
        "total_slots": 1,
        "chat_template_caps": {"supports_tool_calls": false, "supports_tools": false},
        "build_info": "b6000"
    }))
    .unwrap_or_default();
    assert_eq!(props.n_ctx(), Some(4096));
    assert_eq!(
        props.chat_template_caps.and_then(|c| c.supports_tool_calls),
        Some(false)
    );
    let bare: Props = serde_json::from_value(json!({"n_ctx": 2048})).unwrap_or_default();
    assert_eq!(bare.n_ctx(), Some(2048));
}

#[test]
fn request_serialisation() {
    let spec = ToolSpec {
        name: "bash".into(),
        description: "Run.".into(),
        parameters: json!({"type": "object", "properties": {}}),
    };
    let call = ToolCall {
        id: "call_1".into(),
        name: "bash".into(),
        arguments: "{\"command\":\"ls\"}".into(),
    };
    let history = [
        Message::System("sys".into()),
        Message::User("hi".into()),
        Message::Assistant {
            content: None,
            tool_calls: vec![call],
        },
        Message::Tool {
            tool_call_id: "call_1".into(),
            name: "bash".into(),
            content: "out".into(),
        },
        Message::Assistant {
            content: None,
            tool_calls: vec![],
        },
    ];
    let request = Request {
        model: "m",
        messages: history.iter().map(WireMessage::native).collect(),
        tools: vec![WireTool::from(&spec)],
        tool_choice: None,
        max_tokens: Some(100),
        max_completion_tokens: None,
        temperature: None,
        seed: None,
        stream: true,
        stream_options: Some(StreamOptions {
            include_usage: true,
        }),
        response_format: None,
        grammar: None,
    };
    let value = serde_json::to_value(&request).unwrap_or_default();
    assert_eq!(
        value,
        json!({
            "model": "m",
            "messages": [
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}}]},
                {"role": "tool", "content": "out", "tool_call_id": "call_1"},
                {"role": "assistant", "content": ""},
            ],
            "tools": [{"type": "function", "function": {"name": "bash", "description": "Run.", "parameters": {"type": "object", "properties": {}}}}],
            "max_tokens": 100,
            "stream": true,
            "stream_options": {"include_usage": true},
        })
    );
}

#[test]
fn usage_counts_near_the_limit_do_not_overflow() {
    let usage: WireUsage =
        serde_json::from_str(r#"{"prompt_tokens":18446744073709551615,"completion_tokens":1}"#)
            .unwrap_or_default();
    assert_eq!(Usage::from(usage).total_tokens, u64::MAX);
}

#[test]
fn a_native_answer_only_request_closes_tool_results_with_a_request_for_the_answer() {
    let call = ToolCall {
        id: "call_1".into(),
        name: "status".into(),
        arguments: r#"{"service":"billing"}"#.into(),
    };
    let history = vec![
        Message::System("sys".into()),
        Message::User("How is billing?".into()),
        Message::Assistant {
            content: None,
            tool_calls: vec![call],
        },
        Message::Tool {
            tool_call_id: "call_1".into(),
            name: "status".into(),
            content: "billing: running".into(),
        },
    ];
    let roles = |messages: &[WireMessage]| messages.iter().map(|m| m.role).collect::<Vec<_>>();
    let normal = native_messages(&history, None);
    assert_eq!(roles(&normal), ["system", "user", "assistant", "tool"]);
    let answer = native_messages(&history, Some(Language::English));
    assert_eq!(
        roles(&answer),
        ["system", "user", "assistant", "tool", "user"]
    );
    assert_eq!(answer[4].content.as_deref(), Some(ENGLISH.now));
    let french = native_messages(&history, Some(Language::French));
    assert!(
        french[4]
            .content
            .as_deref()
            .is_some_and(|c| c.starts_with("Maintenant, réponds"))
    );
    // After a user message (the model's reply to it was not an answer): asked again, in words.
    let again = native_messages(&history[..2], Some(Language::English));
    assert_eq!(roles(&again), ["system", "user", "user"]);
    assert_eq!(again[2].content.as_deref(), Some(ENGLISH.again));
}

#[test]
fn odd_usage_and_content_in_parts_do_not_make_a_reply_unreadable() {
    let usages = [
        (
            r#"{"prompt_tokens":-5,"completion_tokens":3,"total_tokens":-2}"#,
            (0, 3, 0),
        ),
        (
            r#"{"prompt_tokens":"12","completion_tokens":"7 ","total_tokens":"x"}"#,
            (12, 7, 0),
        ),
        (
            r#"{"prompt_tokens":12.9,"completion_tokens":1e3,"total_tokens":null}"#,
            (12, 1000, 0),
        ),
        (
            r#"{"prompt_tokens":true,"completion_tokens":[1],"total_tokens":{"a":1}}"#,
            (0, 0, 0),
        ),
        (r#"{"prompt_tokens":1e400}"#, (0, 0, 0)),
    ];
    for (usage, (p, c, t)) in usages {
        let text = format!(r#"{{"choices":[{{"message":{{"content":"ok"}}}}],"usage":{usage}}}"#);
        let reply = serde_json::from_str::<Completion>(&text);
        let Ok(reply) = reply else {
            // serde_json refuses 1e400 itself (out of range): that is the JSON reader's.
            assert!(usage.contains("1e400"), "{usage}: {:?}", reply.err());
            continue;
        };
        let got = reply.usage.unwrap_or_default();
        assert_eq!(
            (got.prompt_tokens, got.completion_tokens, got.total_tokens),
            (p, c, t),
            "{usage}"
        );
    }
    for usage in ["\"lots\"", "[1,2]", "7", "null"] {
        let text = format!(r#"{{"choices":[{{"message":{{"content":"ok"}}}}],"usage":{usage}}}"#);
        let reply = completion(&text);
        assert!(reply.usage.is_none(), "{usage}");
        assert_eq!(delta(&reply).content.as_deref(), Some("ok"));
    }
    let parts = completion(
        r#"{"choices":[{"message":{"role":"assistant","content":[{"type":"text","text":"Hello, "},{"type":"text","text":"world."},{"type":"image_url","image_url":{"url":"x"}}],"reasoning_content":[{"type":"text","text":"hm"}]},"finish_reason":"stop"}]}"#,
    );
    assert_eq!(delta(&parts).content.as_deref(), Some("Hello, world."));
    assert_eq!(delta(&parts).reasoning_text(), Some("hm"));
    let odd = completion(
        r#"{"choices":[{"delta":{"content":42,"tool_calls":[{"index":"0","id":7,"function":{"name":["read_file"],"arguments":"{}"}}]},"finish_reason":1}]}"#,
    );
    let body = delta(&odd);
    assert_eq!(body.content.as_deref(), Some("42"));
    assert_eq!(body.tool_calls[0].index, Some(0));
    assert_eq!(body.tool_calls[0].id.as_deref(), Some("7"));
    assert_eq!(
        body.tool_calls[0].function.name.as_deref(),
        Some("read_file")
    );
}

#[test]
fn corpus_no_odd_field_makes_a_reply_unreadable() {
    let odd_values = [
        "0",
        "-1",
        "-9223372036854775808",
        "18446744073709551615",
        "1.5",
        "-0.5",
        "1e3",
        "1e308",
        "\"12\"",
        "\" 7 \"",
        "\"-3\"",
        "\"1.9\"",
        "\"x\"",
        "\"\"",
        "true",
        "false",
        "null",
        "[]",
        "[1]",
        "{}",
        "{\"n\":1}",
    ];
    let mut corpus =
        mm_test_support::Corpus::new("odd reply fields (usage, content, ids, names, indexes)");
    for field in ["prompt_tokens", "completion_tokens", "total_tokens"] {
        for value in odd_values {
            let text = format!(
                r#"{{"choices":[{{"message":{{"content":"ok"}}}}],"usage":{{"{field}":{value}}}}}"#
            );
            let parsed = serde_json::from_str::<Completion>(&text);
            let held = parsed.as_ref().is_ok_and(|c| {
                c.choices[0].body().and_then(|b| b.content.as_deref()) == Some("ok")
            });
            corpus.check((field, value), held, || format!("{:?}", parsed.err()));
        }
    }
    for usage in odd_values {
        let text = format!(r#"{{"choices":[{{"message":{{"content":"ok"}}}}],"usage":{usage}}}"#);
        corpus.check(
            ("usage", usage),
            serde_json::from_str::<Completion>(&text).is_ok(),
            String::new,
        );
    }
    let contents = [
        (r#""plain""#, Some("plain")),
        (r#"null"#, None),
        (r#"[]"#, None),
        (
            r#"[{"type":"text","text":"a"},{"type":"text","text":"b"}]"#,
            Some("ab"),
        ),
        (r#"["a","b"]"#, Some("ab")),
        (r#"[{"type":"image_url","image_url":{"url":"x"}}]"#, None),
        (
            r#"[{"type":"text","text":"a"},{"type":"image_url"}]"#,
            Some("a"),
        ),
        (r#"{"type":"text","text":"one part"}"#, Some("one part")),
        (r#"[{"type":"text","text":["nested"]}]"#, Some("nested")),
        (r#"42"#, Some("42")),
        (r#"true"#, Some("true")),
        (r#"{"no":"text"}"#, None),
    ];
    for (content, want) in contents {
        for key in ["message", "delta"] {
            for field in ["content", "reasoning_content", "reasoning"] {
                let text = format!(r#"{{"choices":[{{"{key}":{{"{field}":{content}}}}}]}}"#);
                let parsed = serde_json::from_str::<Completion>(&text);
                let got = parsed.as_ref().ok().and_then(|c| {
                    let body = c.choices[0].body()?;
                    match field {
                        "content" => body.content.clone(),
                        _ => body.reasoning_text().map(str::to_string),
                    }
                });
                let want = want
                    .map(str::to_string)
                    .filter(|w| field == "content" || !w.is_empty());
                corpus.check((key, field, content), got == want, || format!("{got:?}"));
            }
        }
    }
    for value in odd_values {
        for field in ["\"index\"", "\"id\""] {
            let text = format!(
                r#"{{"choices":[{{"delta":{{"tool_calls":[{{{field}:{value},"function":{{"name":"x","arguments":"{{}}"}}}}]}}}}]}}"#
            );
            corpus.check(
                (field, value),
                serde_json::from_str::<Completion>(&text).is_ok(),
                String::new,
            );
        }
        let text = format!(
            r#"{{"choices":[{{"delta":{{"tool_calls":[{{"function":{{"name":{value}}}}}]}},"finish_reason":{value}}}]}}"#
        );
        corpus.check(
            ("name and finish_reason", value),
            serde_json::from_str::<Completion>(&text).is_ok(),
            String::new,
        );
    }
    corpus.finish();
}
