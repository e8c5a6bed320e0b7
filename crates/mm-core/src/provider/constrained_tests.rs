use serde_json::json;

use super::*;
use crate::provider::ToolCall;

fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "release".into(),
            description: "Publish a release.\nGive each parameter as its own field.".into(),
            parameters: json!({"type": "object", "properties": {
                "version": {"type": "string", "description": "The version. Required."},
                "channel": {"type": "string", "description": "Required. One of: stable, beta."},
            }}),
        },
        ToolSpec {
            name: "ping".into(),
            description: "Ping.".into(),
            parameters: json!({"type": "object", "properties": {}}),
        },
    ]
}

fn strict() -> Vec<Value> {
    vec![
        // Keys in alphabetical order: the prompt lists them in the schema's order, which is the
        // declared order only when serde_json preserves it.
        json!({"type": "object", "properties": {
            "channel": {"type": "string", "enum": ["stable", "beta"]},
            "dry_run": {"type": "boolean"},
            "version": {"type": "string"},
        }, "required": ["version", "channel"]}),
        json!({"type": "object", "properties": {}}),
    ]
}

#[test]
fn response_format_snapshot() {
    let format =
        serde_json::to_value(response_format(&tools(), &strict(), true)).unwrap_or_default();
    assert_eq!(
        format,
        json!({
            "type": "json_schema",
            "json_schema": {"name": "reply", "strict": true, "schema": {"anyOf": [
                {
                    "type": "object",
                    "properties": {
                        "tool": {"const": "release"},
                        "arguments": {"type": "object", "properties": {
                            "version": {"type": "string"},
                            "channel": {"type": "string", "enum": ["stable", "beta"]},
                            "dry_run": {"type": "boolean"},
                        }, "required": ["version", "channel"], "additionalProperties": false},
                    },
                    "required": ["tool", "arguments"],
                    "additionalProperties": false,
                },
                {
                    "type": "object",
                    "properties": {
                        "tool": {"const": "ping"},
                        "arguments": {"type": "object", "properties": {}, "additionalProperties": false},
                    },
                    "required": ["tool", "arguments"],
                    "additionalProperties": false,
                },
                {
                    "type": "object",
                    "properties": {"answer": {"type": "string"}},
                    "required": ["answer"],
                    "additionalProperties": false,
                },
            ]}},
        })
    );
}

#[test]
fn tool_comes_before_arguments_in_the_schema_text() {
    let text =
        serde_json::to_string(&response_format(&tools(), &strict(), true)).unwrap_or_default();
    let tool = text.find("\"tool\":{\"const\"").unwrap_or(usize::MAX);
    let arguments = text.find("\"arguments\":{").unwrap_or(0);
    assert!(tool < arguments, "{text}");
}

#[test]
fn without_strict_schemas_the_visible_ones_are_used() {
    let format = serde_json::to_value(response_format(&tools(), &[], true)).unwrap_or_default();
    let arguments = &format["json_schema"]["schema"]["anyOf"][0]["properties"]["arguments"];
    assert_eq!(
        arguments["properties"]["version"]["description"],
        "The version. Required."
    );
    assert_eq!(arguments["additionalProperties"], false);
}

#[test]
fn tools_prompt_lists_each_tool_on_one_line() {
    let prompt = tools_prompt(&tools(), &strict());
    let lines: Vec<&str> = prompt.lines().filter(|l| l.starts_with("- ")).collect();
    assert_eq!(
        lines,
        vec![
            r#"- release(channel: "stable"|"beta", dry_run?: boolean, version: string): Publish a release. Give each parameter as its own field."#,
            "- ping(): Ping.",
        ]
    );
    assert!(prompt.contains(r#"{"tool": "NAME", "arguments": {...}}"#));
    assert!(prompt.contains(r#"{"answer": "#));
}

#[test]
fn history_is_rewritten_in_the_protocol() {
    let call = |id: &str, args: &str| ToolCall {
        id: id.into(),
        name: "ping".into(),
        arguments: args.into(),
    };
    let history = vec![
        Message::System("You help.".into()),
        Message::User("ping twice".into()),
        Message::Assistant {
            content: Some("ignored".into()),
            tool_calls: vec![call("a", "{}"), call("b", "not json")],
        },
        Message::Tool {
            tool_call_id: "a".into(),
            name: "ping".into(),
            content: "pong".into(),
        },
        Message::Tool {
            tool_call_id: "b".into(),
            name: "ping".into(),
            content: "pong 2".into(),
        },
        Message::Assistant {
            content: Some("Done.".into()),
            tool_calls: vec![],
        },
        Message::User("thanks".into()),
    ];
    let out = messages(&history, &tools(), &[]);
    let roles: Vec<&str> = out.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "user", "assistant", "user"]
    );
    let content = |i: usize| out[i].content.clone().unwrap_or_default();
    assert!(content(0).starts_with("You help.\n\n# Tools\n\n- release("));
    assert_eq!(
        content(2),
        "{\"tool\":\"ping\",\"arguments\":{}}\n{\"tool\":\"ping\",\"arguments\":\"not json\"}"
    );
    assert_eq!(
        content(3),
        "Result of ping:\npong\n\nResult of ping:\npong 2"
    );
    assert_eq!(content(4), r#"{"answer":"Done."}"#);
    assert!(
        out.iter()
            .all(|m| m.tool_calls.is_empty() && m.tool_call_id.is_none())
    );
}

#[test]
fn a_conversation_without_system_message_gets_one() {
    let out = messages(&[Message::User("hi".into())], &tools(), &[]);
    assert_eq!(out[0].role, "system");
    assert!(
        out[0]
            .content
            .as_deref()
            .unwrap_or_default()
            .starts_with("# Tools")
    );
    assert_eq!(out[1].role, "user");
}

#[test]
fn replies_are_read() {
    assert_eq!(
        parse_reply(r#"{"tool": "release", "arguments": {"version": "1.0", "channel": "beta"}}"#)
            .normalized(),
        Reply::Call {
            name: "release".into(),
            arguments: r#"{"version":"1.0","channel":"beta"}"#.into()
        }
        .normalized()
    );
    assert_eq!(
        parse_reply(" {\"answer\": \"Hi!\"}\n"),
        Reply::Answer("Hi!".into())
    );
    assert_eq!(
        parse_reply("plain words"),
        Reply::Other("plain words".into())
    );
    assert_eq!(
        parse_reply(r#"{"answer": 3}"#),
        Reply::Other(r#"{"answer": 3}"#.into())
    );
    assert_eq!(
        parse_reply(r#"{"tool": "x"}"#),
        Reply::Other(r#"{"tool": "x"}"#.into())
    );
}

impl Reply {
    /// Arguments as parsed JSON text, so key order does not matter in comparisons.
    fn normalized(self) -> Self {
        match self {
            Reply::Call { name, arguments } => {
                let value: Value = serde_json::from_str(&arguments).unwrap_or(Value::Null);
                Reply::Call {
                    name,
                    arguments: value.to_string(),
                }
            }
            other => other,
        }
    }
}

#[test]
fn the_answer_streams_as_text() {
    let raw = r#"{"answer": "Line one\nsaid \"hi\" \u00e9!"}"#;
    let mut stream = AnswerStream::default();
    let mut shown = String::new();
    for end in 1..=raw.len() {
        if raw.is_char_boundary(end) {
            shown.push_str(&stream.advance(&raw[..end]));
        }
    }
    let final_text = match parse_reply(raw) {
        Reply::Answer(answer) => answer,
        other => panic!("{other:?}"),
    };
    shown.push_str(stream.finish(raw, &final_text));
    assert_eq!(shown, "Line one\nsaid \"hi\" é!");
    assert_eq!(shown, final_text);
}

#[test]
fn a_call_does_not_stream() {
    let mut stream = AnswerStream::default();
    assert_eq!(stream.advance(r#"{"tool": "ping", "arguments": {}}"#), "");
}
