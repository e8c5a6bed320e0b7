//! The provider against the scripted server: streaming or not, tool calls in every shape,
//! retries, errors, timeouts, cancellation, and the choice of mode from `/props`.

use std::time::{Duration, Instant};

use mm_core::ToolCallMode;
use mm_core::provider::{
    ChatRequest, ChatResponse, Message, Provider, ProviderConfig, ProviderError, StreamDelta,
    ToolCall,
};
use mm_core::tools::ToolSpec;
use mm_test_support::{Reply, ScriptedServer};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn config(base_url: &str) -> ProviderConfig {
    let mut config = ProviderConfig::new(base_url, "test-model");
    config.mode = ToolCallMode::Native;
    config.timeout = Duration::from_secs(5);
    config.backoff = Duration::from_millis(10);
    config.retries = 3;
    config
}

fn tools() -> Vec<ToolSpec> {
    vec![ToolSpec {
        name: "read_file".into(),
        description: "Read a file.".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string", "description": "The path. Required."}}}),
    }]
}

fn conversation() -> Vec<Message> {
    vec![
        Message::System("You are a test.".into()),
        Message::User("hi".into()),
    ]
}

struct Outcome {
    result: Result<ChatResponse, ProviderError>,
    deltas: Vec<StreamDelta>,
}

impl Outcome {
    fn response(&self) -> &ChatResponse {
        match &self.result {
            Ok(response) => response,
            Err(error) => panic!("expected a reply, got: {error}"),
        }
    }

    fn error(&self) -> &ProviderError {
        match &self.result {
            Ok(response) => panic!("expected an error, got: {response:?}"),
            Err(error) => error,
        }
    }

    fn text(&self) -> String {
        self.deltas
            .iter()
            .filter_map(|d| {
                if let StreamDelta::Text(t) = d {
                    Some(t.as_str())
                } else {
                    None
                }
            })
            .collect()
    }

    fn reasoning(&self) -> String {
        let reasoning = self.deltas.iter().filter_map(|d| {
            if let StreamDelta::Reasoning(t) = d {
                Some(t.as_str())
            } else {
                None
            }
        });
        reasoning.collect()
    }

    fn retries(&self) -> usize {
        self.deltas
            .iter()
            .filter(|d| matches!(d, StreamDelta::Retry { .. }))
            .count()
    }
}

async fn chat_with(
    provider: &Provider,
    messages: &[Message],
    tools: &[ToolSpec],
    cancel: &CancellationToken,
) -> Outcome {
    let mut deltas = Vec::new();
    let request = ChatRequest::new(messages, tools, 256);
    let result = provider
        .chat(&request, &mut |d| deltas.push(d), cancel)
        .await;
    Outcome { result, deltas }
}

async fn chat(provider: &Provider) -> Outcome {
    chat_with(
        provider,
        &conversation(),
        &tools(),
        &CancellationToken::new(),
    )
    .await
}

fn provider_for(server: &ScriptedServer, adjust: impl FnOnce(&mut ProviderConfig)) -> Provider {
    let mut config = config(&server.base_url());
    adjust(&mut config);
    match Provider::new(config) {
        Ok(provider) => provider,
        Err(error) => panic!("provider: {error}"),
    }
}

#[tokio::test]
async fn streams_text_and_sends_a_complete_request() {
    let server = ScriptedServer::start(vec![Reply::text("Hello, world!").with_usage(12, 3)]);
    let outcome = chat(&provider_for(&server, |_| {})).await;
    let response = outcome.response();
    assert_eq!(response.content, "Hello, world!");
    assert_eq!(outcome.text(), "Hello, world!");
    assert!(
        outcome
            .deltas
            .iter()
            .filter(|d| matches!(d, StreamDelta::Text(_)))
            .count()
            > 1,
        "streamed in pieces"
    );
    assert_eq!(
        response
            .usage
            .map(|u| (u.prompt_tokens, u.completion_tokens, u.total_tokens)),
        Some((12, 3, 15))
    );
    assert_eq!(response.finish_reason.as_deref(), Some("stop"));
    let sent = &server.requests()[0];
    assert_eq!(sent["model"], "test-model");
    assert_eq!(sent["stream"], true);
    assert_eq!(sent["stream_options"], json!({"include_usage": true}));
    assert_eq!(sent["max_tokens"], 256);
    assert_eq!(
        sent["messages"],
        json!([{"role": "system", "content": "You are a test."}, {"role": "user", "content": "hi"}])
    );
    assert_eq!(sent["tools"][0]["type"], "function");
    assert_eq!(sent["tools"][0]["function"]["name"], "read_file");
    assert!(sent.get("response_format").is_none());
}

#[tokio::test]
async fn reads_a_whole_reply_when_not_streaming() {
    let server = ScriptedServer::start(vec![
        Reply::text("Plain.")
            .with_reasoning("Thinking.")
            .with_usage(5, 1),
    ]);
    let outcome = chat(&provider_for(&server, |c| c.stream = false)).await;
    assert_eq!(outcome.response().content, "Plain.");
    assert_eq!(outcome.text(), "Plain.");
    assert_eq!(outcome.reasoning(), "Thinking.");
    assert_eq!(outcome.response().usage.map(|u| u.total_tokens), Some(6));
    let sent = &server.requests()[0];
    assert_eq!(sent["stream"], false);
    assert!(sent.get("stream_options").is_none());
}

#[tokio::test]
async fn streams_reasoning_apart_from_text() {
    let server = ScriptedServer::start(vec![
        Reply::text("Answer.").with_reasoning("Let me think about it."),
    ]);
    let outcome = chat(&provider_for(&server, |_| {})).await;
    assert_eq!(outcome.reasoning(), "Let me think about it.");
    assert_eq!(outcome.response().content, "Answer.");
}

#[tokio::test]
async fn assembles_streamed_tool_call_fragments() {
    for stream in [true, false] {
        let server = ScriptedServer::start(vec![Reply::tool_calls(vec![
            ("read_file", r#"{"path":"src/main.rs"}"#),
            ("read_file", r#"{"path":"Cargo.toml"}"#),
        ])]);
        let outcome = chat(&provider_for(&server, |c| c.stream = stream)).await;
        let response = outcome.response();
        assert_eq!(
            response.tool_calls,
            vec![
                ToolCall {
                    id: "call_1_1".into(),
                    name: "read_file".into(),
                    arguments: r#"{"path":"src/main.rs"}"#.into()
                },
                ToolCall {
                    id: "call_1_2".into(),
                    name: "read_file".into(),
                    arguments: r#"{"path":"Cargo.toml"}"#.into()
                },
            ],
            "stream: {stream}"
        );
        assert_eq!(response.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(response.content, "");
    }
}

#[tokio::test]
async fn accepts_whole_tool_calls_without_ids() {
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(vec![
            ("read_file", r#"{"path":"a"}"#),
            ("read_file", r#"{"path":"b"}"#),
        ])
        .whole()
        .without_ids(),
    ]);
    let outcome = chat(&provider_for(&server, |_| {})).await;
    let calls = &outcome.response().tool_calls;
    assert_eq!(calls.len(), 2);
    assert_eq!(
        (calls[0].arguments.as_str(), calls[1].arguments.as_str()),
        (r#"{"path":"a"}"#, r#"{"path":"b"}"#)
    );
    assert!(calls.iter().all(|c| c.id.starts_with("call_")), "{calls:?}");
    assert_ne!(calls[0].id, calls[1].id);
}

#[tokio::test]
async fn keeps_raw_arguments_that_are_not_json() {
    let server = ScriptedServer::start(vec![Reply::tool_call("read_file", "path=src/main.rs")]);
    let outcome = chat(&provider_for(&server, |_| {})).await;
    assert_eq!(
        outcome.response().tool_calls[0].arguments,
        "path=src/main.rs"
    );
}

#[tokio::test]
async fn recognises_a_tool_call_written_as_text_and_does_not_show_it() {
    let text = "Let me read it.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n</tool_call>";
    let server = ScriptedServer::start(vec![Reply::text(text)]);
    let outcome = chat(&provider_for(&server, |_| {})).await;
    let response = outcome.response();
    assert_eq!(response.content, "Let me read it.");
    assert_eq!(response.tool_calls.len(), 1);
    assert_eq!(response.tool_calls[0].name, "read_file");
    assert_eq!(response.tool_calls[0].arguments, r#"{"path":"a.txt"}"#);
    assert_eq!(outcome.text().trim(), "Let me read it.");
    assert_eq!(response.finish_reason.as_deref(), Some("tool_calls"));
}

#[tokio::test]
async fn a_text_call_to_an_unknown_tool_is_a_call_the_pipeline_answers() {
    // A reply that is nothing but a call (SPEC §2b): never shown as the answer, even when the
    // name is no tool — the call pipeline answers it, naming the tools.
    let text = "{\"name\": \"weather\", \"parameters\": {\"city\": \"Paris\"}}";
    let server = ScriptedServer::start(vec![Reply::text(text)]);
    let outcome = chat(&provider_for(&server, |_| {})).await;
    assert_eq!(outcome.response().content, "");
    assert_eq!(outcome.response().tool_calls.len(), 1);
    assert_eq!(outcome.response().tool_calls[0].name, "weather");
    assert!(outcome.response().calls_as_text);
    assert_eq!(outcome.text(), "", "held back, never shown");
}

#[tokio::test]
async fn a_text_call_to_an_unknown_tool_inside_prose_stays_text() {
    let text = "Try {\"name\": \"weather\", \"parameters\": {\"city\": \"Paris\"}}";
    let server = ScriptedServer::start(vec![Reply::text(text)]);
    let outcome = chat(&provider_for(&server, |_| {})).await;
    assert_eq!(outcome.response().content, text);
    assert!(outcome.response().tool_calls.is_empty());
    assert_eq!(outcome.text(), text);
}

#[tokio::test]
async fn retries_a_500_then_succeeds() {
    let server = ScriptedServer::start(vec![Reply::status(500, "boom"), Reply::text("ok")]);
    let outcome = chat(&provider_for(&server, |_| {})).await;
    assert_eq!(outcome.response().content, "ok");
    assert_eq!(server.request_count(), 2);
    match &outcome.deltas[0] {
        StreamDelta::Retry {
            attempt,
            delay,
            error,
        } => {
            assert_eq!((*attempt, *delay), (1, Duration::from_millis(10)));
            assert!(error.contains("500") && error.contains("boom"), "{error}");
        }
        other => panic!("expected a retry first, got {other:?}"),
    }
}

#[tokio::test]
async fn retries_a_429_honouring_retry_after() {
    let server = ScriptedServer::start(vec![
        Reply::status(429, r#"{"error":{"message":"slow down"}}"#).with_header("retry-after", "0"),
        Reply::text("ok"),
    ]);
    let outcome = chat(&provider_for(&server, |c| {
        c.backoff = Duration::from_secs(30)
    }))
    .await;
    assert_eq!(outcome.response().content, "ok");
    assert!(
        matches!(outcome.deltas[0], StreamDelta::Retry { delay, .. } if delay == Duration::ZERO)
    );
}

#[tokio::test]
async fn a_500_forever_is_a_status_error_after_the_retries() {
    let server = ScriptedServer::start(
        (0..10)
            .map(|_| Reply::status(503, "overloaded\n  try later"))
            .collect(),
    );
    let started = Instant::now();
    let outcome = chat(&provider_for(&server, |_| {})).await;
    let error = outcome.error();
    assert!(
        matches!(error, ProviderError::Status { status: 503, .. }),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "the model server answered 503: overloaded try later"
    );
    assert_eq!(server.request_count(), 4, "the first attempt and 3 retries");
    assert_eq!(outcome.retries(), 3);
    let delays: Vec<Duration> = outcome
        .deltas
        .iter()
        .filter_map(|d| {
            if let StreamDelta::Retry { delay, .. } = d {
                Some(*delay)
            } else {
                None
            }
        })
        .collect();
    assert_eq!(delays, [10, 20, 40].map(Duration::from_millis));
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn a_400_is_not_retried() {
    let server = ScriptedServer::start(vec![Reply::status(
        400,
        r#"{"error":{"message":"bad request: tools not supported"}}"#,
    )]);
    let outcome = chat(&provider_for(&server, |_| {})).await;
    assert_eq!(
        outcome.error().to_string(),
        "the model server answered 400: bad request: tools not supported"
    );
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn a_context_overflow_says_how_big_and_how_to_fix_it() {
    let body = json!({"error": {"code": 400, "message": "request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": 9000, "n_ctx": 8192}});
    let server = ScriptedServer::start(vec![Reply::status(400, body.to_string())]);
    let outcome = chat(&provider_for(&server, |_| {})).await;
    let error = outcome.error();
    assert!(
        matches!(error, ProviderError::ContextOverflow { .. }),
        "{error:?}"
    );
    let line = error.to_string();
    assert!(
        line.contains("9000 tokens") && line.contains("8192 tokens") && line.contains("-c"),
        "{line}"
    );
    assert!(!line.contains('\n'));
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn an_error_inside_a_stream_is_reported() {
    let chunk = json!({"error": {"message": "the request exceeds the available context size", "type": "exceed_context_size_error"}});
    let server = ScriptedServer::start(vec![Reply::raw_sse(format!("data: {chunk}\n\n"))]);
    let outcome = chat(&provider_for(&server, |_| {})).await;
    assert!(
        matches!(outcome.error(), ProviderError::ContextOverflow { .. }),
        "{:?}",
        outcome.error()
    );
}

#[tokio::test]
async fn a_server_that_is_down_is_a_connect_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(9);
    let url = format!("http://127.0.0.1:{port}/v1");
    let provider = match Provider::new(config(&url)) {
        Ok(provider) => provider,
        Err(error) => panic!("{error}"),
    };
    let outcome = chat(&provider).await;
    let error = outcome.error();
    assert!(matches!(error, ProviderError::Connect { .. }), "{error:?}");
    let line = error.to_string();
    assert!(
        line.starts_with(&format!("cannot reach the model server at {url}: ")),
        "{line}"
    );
    assert!(line.to_lowercase().contains("refused"), "{line}");
    assert_eq!(outcome.retries(), 3);
}

#[tokio::test]
async fn garbage_is_retried_then_a_bad_reply() {
    for stream in [true, false] {
        let server = ScriptedServer::start(vec![Reply::garbage_stream(), Reply::garbage_stream()]);
        let outcome = chat(&provider_for(&server, |c| {
            c.retries = 1;
            c.stream = stream;
        }))
        .await;
        let error = outcome.error();
        assert!(matches!(error, ProviderError::BadReply(_)), "{error:?}");
        assert!(
            error
                .to_string()
                .starts_with("the model server sent a reply mm cannot read: not JSON"),
            "{error}"
        );
        assert_eq!(server.request_count(), 2);
    }
}

#[tokio::test]
async fn a_broken_stream_is_retried() {
    for stream in [true, false] {
        let server = ScriptedServer::start(vec![Reply::broken_stream(), Reply::text("whole")]);
        let outcome = chat(&provider_for(&server, |c| c.stream = stream)).await;
        assert_eq!(outcome.response().content, "whole", "stream: {stream}");
        assert_eq!(outcome.retries(), 1);
        assert_eq!(server.request_count(), 2);
    }
}

#[tokio::test]
async fn a_stream_broken_every_time_is_a_bad_reply() {
    let server = ScriptedServer::start(vec![Reply::broken_stream(), Reply::broken_stream()]);
    let outcome = chat(&provider_for(&server, |c| c.retries = 1)).await;
    assert!(
        matches!(outcome.error(), ProviderError::BadReply(_)),
        "{:?}",
        outcome.error()
    );
}

#[tokio::test]
async fn a_silent_server_times_out() {
    for stream in [true, false] {
        let server = ScriptedServer::start(vec![Reply::hang()]);
        let started = Instant::now();
        let outcome = chat(&provider_for(&server, |c| {
            c.timeout = Duration::from_millis(300);
            c.stream = stream;
        }))
        .await;
        assert!(
            matches!(outcome.error(), ProviderError::Timeout(d) if *d == Duration::from_millis(300)),
            "{:?}",
            outcome.error()
        );
        assert!(started.elapsed() < Duration::from_secs(3));
        assert_eq!(server.request_count(), 1, "a timeout is not retried");
    }
}

#[tokio::test]
async fn a_slow_reply_within_the_timeout_is_fine() {
    let server = ScriptedServer::start(vec![Reply::slow(
        Duration::from_millis(200),
        Reply::text("late"),
    )]);
    let outcome = chat(&provider_for(&server, |c| {
        c.timeout = Duration::from_secs(2)
    }))
    .await;
    assert_eq!(outcome.response().content, "late");
}

#[tokio::test]
async fn cancellation_stops_at_once() {
    let server = ScriptedServer::start(vec![Reply::hang()]);
    let provider = provider_for(&server, |c| c.timeout = Duration::from_secs(30));
    let cancel = CancellationToken::new();
    let canceller = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        canceller.cancel();
    });
    let started = Instant::now();
    let outcome = chat_with(&provider, &conversation(), &tools(), &cancel).await;
    assert!(
        matches!(outcome.error(), ProviderError::Cancelled),
        "{:?}",
        outcome.error()
    );
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn cancellation_stops_the_backoff_too() {
    let server = ScriptedServer::start(vec![Reply::status(500, "x"), Reply::text("never")]);
    let provider = provider_for(&server, |c| c.backoff = Duration::from_secs(30));
    let cancel = CancellationToken::new();
    let canceller = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        canceller.cancel();
    });
    let outcome = chat_with(&provider, &conversation(), &tools(), &cancel).await;
    assert!(matches!(outcome.error(), ProviderError::Cancelled));
    assert_eq!(server.request_count(), 1);
}

fn auto(config: &mut ProviderConfig) {
    config.mode = ToolCallMode::Auto;
}

#[tokio::test]
async fn auto_mode_goes_constrained_when_the_template_cannot_do_tools() {
    let server = ScriptedServer::builder()
        .supports_tool_calls(Some(false))
        .n_ctx(2048)
        .script(vec![
            Reply::tool_call("read_file", r#"{"path":"a.txt"}"#),
            Reply::text("It says hi."),
        ])
        .start();
    let provider = provider_for(&server, auto);
    assert_eq!(provider.tool_call_mode(), ToolCallMode::Auto);
    let first = chat(&provider).await;
    assert_eq!(provider.tool_call_mode(), ToolCallMode::Constrained);
    assert_eq!(provider.context_size(), Some(2048));
    let call = first.response().tool_calls[0].clone();
    assert_eq!(
        (call.name.as_str(), call.arguments.as_str()),
        ("read_file", r#"{"path":"a.txt"}"#)
    );
    assert_eq!(first.text(), "", "no raw JSON shown");

    let sent = &server.requests()[0];
    assert!(sent.get("tools").is_none());
    // llama-server: the compact grammar rather than the schema.
    assert!(sent.get("response_format").is_none());
    let grammar = sent["grammar"].as_str().unwrap_or_default();
    assert!(
        grammar.starts_with(r#"root ::= "{" (call0 | answer) "}""#),
        "{grammar}"
    );
    let system = sent["messages"][0]["content"].as_str().unwrap_or_default();
    assert!(
        system.starts_with("You are a test.")
            && system.contains("- read_file(path: string): Read a file."),
        "{system}"
    );

    let mut history = conversation();
    history.push(Message::Assistant {
        content: None,
        tool_calls: vec![call.clone()],
    });
    history.push(Message::Tool {
        tool_call_id: call.id.clone(),
        name: call.name.clone(),
        content: "hi".into(),
    });
    let second = chat_with(&provider, &history, &tools(), &CancellationToken::new()).await;
    assert_eq!(second.response().content, "It says hi.");
    assert_eq!(second.text(), "It says hi.", "the answer is shown as text");
    let messages = server.requests()[1]["messages"].clone();
    assert_eq!(
        messages[2],
        json!({"role": "assistant", "content": r#"{"tool":"read_file","arguments":{"path":"a.txt"}}"#})
    );
    assert_eq!(
        messages[3],
        json!({"role": "user", "content": "Result of read_file:\nhi"})
    );
}

#[tokio::test]
async fn auto_mode_stays_native_when_the_template_can_do_tools_or_props_are_missing() {
    for builder in [
        ScriptedServer::builder(),
        ScriptedServer::builder().without_props(),
        ScriptedServer::builder().supports_tool_calls(None),
    ] {
        let server = builder.script(vec![Reply::text("ok")]).start();
        let provider = provider_for(&server, auto);
        let outcome = chat(&provider).await;
        assert_eq!(outcome.response().content, "ok");
        assert_eq!(provider.tool_call_mode(), ToolCallMode::Native);
        let sent = &server.requests()[0];
        assert_eq!(sent["tools"][0]["function"]["name"], "read_file");
        assert!(sent.get("response_format").is_none());
    }
}

#[tokio::test]
async fn constrained_mode_uses_the_strict_schemas() {
    let server = ScriptedServer::builder()
        .without_props()
        .script(vec![Reply::text("fine")])
        .start();
    let provider = provider_for(&server, |c| c.mode = ToolCallMode::Constrained);
    let strict = vec![
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    ];
    let messages = conversation();
    let tools = tools();
    let request = ChatRequest::new(&messages, &tools, 64);
    let reply = provider
        .chat_with_schemas(&request, &strict, &mut |_| {}, &CancellationToken::new())
        .await;
    assert_eq!(reply.map(|r| r.content).ok().as_deref(), Some("fine"));
    let sent = &server.requests()[0];
    let arguments =
        &sent["response_format"]["json_schema"]["schema"]["anyOf"][0]["properties"]["arguments"];
    assert_eq!(arguments["required"], json!(["path"]));
    assert_eq!(arguments["additionalProperties"], false);
}

#[tokio::test]
async fn constrained_mode_without_tools_is_a_plain_request() {
    let server = ScriptedServer::start(vec![Reply::text("plain")]);
    let provider = provider_for(&server, |c| c.mode = ToolCallMode::Constrained);
    let outcome = chat_with(&provider, &conversation(), &[], &CancellationToken::new()).await;
    assert_eq!(outcome.response().content, "plain");
    assert_eq!(outcome.text(), "plain");
    assert!(server.requests()[0].get("response_format").is_none());
}

#[tokio::test]
async fn the_scripted_server_checks_every_call_was_answered() {
    let server = ScriptedServer::start(vec![
        Reply::tool_call("read_file", r#"{"path":"a"}"#),
        Reply::text("done"),
    ]);
    let provider = provider_for(&server, |_| {});
    let first = chat(&provider).await;
    let call = first.response().tool_calls[0].clone();
    let mut history = conversation();
    history.push(Message::Assistant {
        content: None,
        tool_calls: vec![call.clone()],
    });
    history.push(Message::Tool {
        tool_call_id: call.id,
        name: call.name,
        content: "x".into(),
    });
    let second = chat_with(&provider, &history, &tools(), &CancellationToken::new()).await;
    assert_eq!(second.response().content, "done");
    server.assert_every_tool_call_answered();
    let sent: Value = server.requests()[1]["messages"][2].clone();
    assert_eq!(
        sent["tool_calls"][0]["function"]["arguments"],
        r#"{"path":"a"}"#
    );
    assert_eq!(sent["content"], Value::Null);
}

#[tokio::test]
async fn an_exhausted_script_answers_500() {
    let server = ScriptedServer::start(vec![]);
    let outcome = chat(&provider_for(&server, |c| c.retries = 0)).await;
    assert!(
        outcome.error().to_string().contains("script exhausted"),
        "{}",
        outcome.error()
    );
}

#[tokio::test]
async fn the_api_key_is_sent_as_a_bearer_token() {
    let server = ScriptedServer::start(vec![Reply::text("a"), Reply::text("b")]);
    let outcome = chat(&provider_for(&server, |c| {
        c.api_key = Some("sk-test".into())
    }))
    .await;
    assert_eq!(outcome.response().content, "a");
    let outcome = chat(&provider_for(&server, |_| {})).await;
    assert_eq!(outcome.response().content, "b");
    assert_eq!(
        server.authorizations(),
        vec![Some("Bearer sk-test".to_owned()), None]
    );
}

#[tokio::test]
async fn inline_thinking_is_reasoning_not_text() {
    let server = ScriptedServer::start(vec![Reply::text(
        "<think>\nThe user says hi.\n</think>\n\nHello!",
    )]);
    let outcome = chat(&provider_for(&server, |_| {})).await;
    assert_eq!(outcome.response().content, "Hello!");
    assert_eq!(outcome.text(), "Hello!");
    assert_eq!(outcome.reasoning(), "The user says hi.\n");
}

#[tokio::test]
async fn max_completion_tokens_when_the_server_asks_for_it() {
    let refusal = json!({"error": {"message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", "type": "invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter"}});
    let server = ScriptedServer::start(vec![
        Reply::status(400, refusal.to_string()),
        Reply::text("ok"),
        Reply::text("again"),
    ]);
    let provider = provider_for(&server, |_| {});
    let outcome = chat(&provider).await;
    assert_eq!(outcome.response().content, "ok");
    assert_eq!(outcome.retries(), 0, "not a retry");
    assert_eq!(chat(&provider).await.response().content, "again");
    let requests = server.requests();
    assert_eq!(requests[0]["max_tokens"], 256);
    for request in &requests[1..] {
        assert!(request.get("max_tokens").is_none());
        assert_eq!(request["max_completion_tokens"], 256);
    }
}

#[tokio::test]
async fn probe_reads_props_before_the_first_chat() {
    let server = ScriptedServer::builder()
        .supports_tool_calls(Some(false))
        .n_ctx(4096)
        .start();
    let provider = provider_for(&server, auto);
    assert_eq!(provider.context_size(), None);
    let probed = provider.probe(&CancellationToken::new()).await;
    assert!(probed.is_ok());
    assert_eq!(provider.context_size(), Some(4096));
    assert_eq!(provider.tool_call_mode(), ToolCallMode::Constrained);
    assert_eq!(server.request_count(), 0);
    let configured = provider_for(&server, |c| c.context_size = Some(16384));
    assert_eq!(
        configured.context_size(),
        Some(16384),
        "the configured size wins"
    );
}

#[tokio::test]
async fn a_whole_json_reply_to_a_streaming_request_is_read() {
    let body = json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "whole"}, "finish_reason": "stop"}]});
    let server = ScriptedServer::start(vec![Reply::raw_json(body.to_string())]);
    let outcome = chat(&provider_for(&server, |_| {})).await;
    assert_eq!(outcome.response().content, "whole");
    assert_eq!(outcome.text(), "whole");
}

#[tokio::test]
async fn constrained_mode_on_llama_server_falls_back_to_the_schema_for_complex_tools() {
    let server = ScriptedServer::start(vec![Reply::tool_call("tag", r#"{"names":["a","b"]}"#)]);
    let provider = provider_for(&server, |c| c.mode = ToolCallMode::Constrained);
    let tools = vec![ToolSpec {
        name: "tag".into(),
        description: "Tag things.".into(),
        parameters: json!({"type": "object", "properties": {"names": {"type": "array", "items": {"type": "string"}}}}),
    }];
    let outcome = chat_with(
        &provider,
        &conversation(),
        &tools,
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(
        outcome.response().tool_calls[0].arguments,
        r#"{"names":["a","b"]}"#
    );
    let sent = &server.requests()[0];
    assert!(sent.get("grammar").is_none());
    assert_eq!(sent["response_format"]["type"], "json_schema");
}

#[tokio::test]
async fn temperature_and_seed_are_sent_only_when_set() {
    let server = ScriptedServer::start(vec![Reply::text("a"), Reply::text("b")]);
    let _ = chat(&provider_for(&server, |_| {})).await.response();
    let sampled = provider_for(&server, |c| {
        c.temperature = Some(0.7);
        c.seed = Some(42);
    });
    let _ = chat(&sampled).await.response();
    let requests = server.requests();
    let (plain, sampled) = (&requests[0], &requests[1]);
    assert!(plain.get("temperature").is_none(), "{plain}");
    assert!(plain.get("seed").is_none(), "{plain}");
    assert_eq!(sampled["temperature"], json!(0.7));
    assert_eq!(sampled["seed"], json!(42));
    // Nothing else changes: unset, the body is byte for byte what it was (its size is a budget).
    let mut without = sampled.clone();
    if let Some(map) = without.as_object_mut() {
        map.remove("temperature");
        map.remove("seed");
    }
    assert_eq!(&without, plain);
}

#[tokio::test]
async fn the_last_finish_reason_says_when_a_reply_was_cut() {
    let server = ScriptedServer::start(vec![
        Reply::text("The billing service is").with_finish_reason("length"),
        Reply::text("Whole."),
    ]);
    let provider = provider_for(&server, |_| {});
    assert_eq!(provider.last_finish_reason(), None);
    let _ = chat(&provider).await.response();
    assert_eq!(provider.last_finish_reason().as_deref(), Some("length"));
    let _ = chat(&provider).await.response();
    assert_eq!(provider.last_finish_reason().as_deref(), Some("stop"));
}

#[tokio::test]
async fn a_reply_larger_than_mm_reads_is_refused_not_buffered() {
    // 20 MiB of content in one whole reply (a 100 MB one peaked at 624 MB).
    let body =
        json!({"choices": [{"message": {"role": "assistant", "content": "x".repeat(20 << 20)}}]});
    let server = ScriptedServer::start(vec![Reply::raw_json(body.to_string())]);
    let outcome = chat(&provider_for(&server, |c| c.stream = false)).await;
    let error = outcome.error().to_string();
    assert!(
        error.contains("the reply is larger than mm reads (16 MiB"),
        "{error}"
    );
    assert_eq!(server.request_count(), 1, "not retried");

    // Streamed: one event past 16 MiB is refused the same way.
    let event = json!({"choices": [{"delta": {"content": "y".repeat(17 << 20)}}]});
    let server = ScriptedServer::start(vec![Reply::raw_sse(format!("data: {event}\n\n"))]);
    let outcome = chat(&provider_for(&server, |_| {})).await;
    let error = outcome.error().to_string();
    assert!(
        error.contains("an event of the reply stream is larger than mm reads"),
        "{error}"
    );
}

#[tokio::test]
async fn a_reply_with_odd_usage_and_content_in_parts_is_read() {
    let body = r#"{"choices":[{"message":{"role":"assistant","content":[{"type":"text","text":"Hello, "},{"type":"text","text":"world."}]},"finish_reason":"stop"}],"usage":{"prompt_tokens":-1,"completion_tokens":"3","total_tokens":2.5}}"#;
    for stream in [false, true] {
        let server = ScriptedServer::start(vec![Reply::raw_json(body)]);
        let outcome = chat(&provider_for(&server, |c| c.stream = stream)).await;
        assert_eq!(
            outcome.response().content,
            "Hello, world.",
            "stream {stream}"
        );
        let usage = outcome.response().usage.unwrap_or_default();
        assert_eq!(
            (usage.prompt_tokens, usage.completion_tokens),
            (0, 3),
            "stream {stream}"
        );
    }
}

#[tokio::test]
async fn corpus_replies_past_the_limits_are_refused_not_buffered() {
    let mut corpus = mm_test_support::Corpus::new("model replies past the size limits");
    let content = |n: usize| "x".repeat(n);
    let cases: Vec<(&str, Reply, bool)> = vec![
        (
            "whole reply 17 MiB",
            Reply::raw_json(json!({"choices": [{"message": {"content": content(17 << 20)}}]}).to_string()),
            false,
        ),
        (
            "whole reply 17 MiB of tool arguments",
            Reply::raw_json(json!({"choices": [{"message": {"tool_calls": [{"id": "c", "function": {"name": "read_file", "arguments": content(17 << 20)}}]}}]}).to_string()),
            false,
        ),
        (
            "one event 17 MiB",
            Reply::raw_sse(format!("data: {}\n\n", json!({"choices": [{"delta": {"content": content(17 << 20)}}]}))),
            true,
        ),
        (
            "one line of 17 MiB without an event end",
            Reply::raw_sse(format!("data: {}", content(17 << 20))),
            true,
        ),
        (
            "a stream of 70 MiB in small events",
            Reply::raw_sse(
                format!("data: {}\n\n", json!({"choices": [{"delta": {"content": content(60_000)}}]}))
                    .repeat(1200),
            ),
            true,
        ),
        (
            "an event of 17 MiB of comments",
            Reply::raw_sse(format!(":{}\n\ndata: [DONE]\n\n", content(17 << 20))),
            true,
        ),
    ];
    for (what, reply, stream) in cases {
        let server = ScriptedServer::start(vec![reply]);
        let outcome = chat(&provider_for(&server, |c| {
            c.stream = stream;
            c.retries = 0;
        }))
        .await;
        let held = match &outcome.result {
            Err(e) => {
                e.to_string().contains("larger than mm reads")
                    || e.to_string().contains("the stream ended before")
            }
            // Comments carry nothing: a stream of them and [DONE] is an empty reply.
            Ok(r) => what.contains("comments") && r.content.is_empty(),
        };
        corpus.check(what, held, || match &outcome.result {
            Ok(r) => format!("accepted {} bytes", r.content.len()),
            Err(e) => e.to_string(),
        });
    }
    corpus.finish();
}
