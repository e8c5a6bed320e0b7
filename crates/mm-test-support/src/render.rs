//! Turns a [`Reply`] into an HTTP response shaped like the request asked: SSE chunks or one JSON
//! body, native tool calls or constrained JSON text.

use axum::body::{Body, Bytes};
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::{Value, json};

use crate::reply::{Kind, Reply};

/// The response, and the ids of the tool calls it carries.
pub(crate) struct Rendered {
    pub response: Response,
    pub call_ids: Vec<String>,
}

/// The assistant message of a reply, before it is cut into chunks.
struct Message {
    content: Option<String>,
    reasoning: Option<String>,
    /// `(id, name, arguments)`.
    calls: Vec<(Option<String>, String, String)>,
}

pub(crate) async fn render(mut reply: Reply, request: &Value, number: usize) -> Rendered {
    while let Kind::Slow(delay, inner) = reply.kind {
        tokio::time::sleep(delay).await;
        reply = *inner;
    }
    let stream = request["stream"] == true;
    // A JSON schema, or llama-server's grammar of constrained mode: either way the reply is the
    // constrained JSON. The grammar of a native answer step (it forbids `{`) asks for words.
    let json_grammar = request["grammar"]
        .as_str()
        .is_some_and(|g| !g.starts_with("root ::= [^{"));
    let constrained = json_grammar || request.get("response_format").is_some_and(|f| !f.is_null());
    let headers = std::mem::take(&mut reply.headers);
    let mut call_ids = Vec::new();
    let mut response = match &reply.kind {
        Kind::Hang => {
            std::future::pending::<()>().await;
            StatusCode::GATEWAY_TIMEOUT.into_response()
        }
        Kind::Status(code, body) => {
            let status = StatusCode::from_u16(*code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let kind = if serde_json::from_str::<Value>(body).is_ok() {
                "application/json"
            } else {
                "text/plain"
            };
            (status, [(header::CONTENT_TYPE, kind)], body.clone()).into_response()
        }
        Kind::RawSse(body) => sse(vec![Ok(Bytes::from(body.clone()))]),
        Kind::CommentsForever(interval) => {
            let interval = *interval;
            sse_stream(futures::stream::unfold((), move |()| async move {
                tokio::time::sleep(interval).await;
                Some((Ok(Bytes::from_static(b": keep-alive\n\n")), ()))
            }))
        }
        Kind::RawJson(body) => json_response(body.clone()),
        Kind::Garbage if stream => sse([
            "data: this is not JSON\n\n",
            "data: {\"choices\": [\n\n",
            "data: [DONE]\n\n",
        ]
        .into_iter()
        .map(|s| Ok(Bytes::from(s)))
        .collect()),
        Kind::Garbage => json_response("<html>this is not JSON</html>".to_owned()),
        Kind::Broken => {
            let parts: Vec<Result<Bytes, std::io::Error>> = if stream {
                vec![
                    event(&chunk(
                        number,
                        json!({"role": "assistant", "content": null}),
                        None,
                    )),
                    event(&chunk(number, json!({"content": "partial "}), None)),
                    event(&chunk(number, json!({"content": "reply"}), None)),
                ]
            } else {
                vec![Ok(Bytes::from(
                    "{\"choices\":[{\"message\":{\"content\":\"partial",
                ))]
            };
            // Let the client see the headers and chunks first, then drop the connection.
            let drop = futures::stream::once(async {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionReset,
                    "dropped",
                ))
            });
            sse_stream(futures::stream::iter(parts).chain(drop))
        }
        Kind::Text(_) | Kind::ToolCalls(_) => {
            let message = message(&reply, constrained, number);
            call_ids = message
                .calls
                .iter()
                .filter_map(|(id, _, _)| id.clone())
                .collect();
            if stream {
                let include_usage = request["stream_options"]["include_usage"] == true;
                sse(chunks(&reply, &message, number, include_usage))
            } else {
                json_response(whole(&reply, &message, number).to_string())
            }
        }
        Kind::Slow(..) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    };
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) = (HeaderName::try_from(name), HeaderValue::try_from(value)) {
            response.headers_mut().insert(name, value);
        }
    }
    Rendered { response, call_ids }
}

fn message(reply: &Reply, constrained: bool, number: usize) -> Message {
    let reasoning = reply.reasoning.clone();
    match (&reply.kind, constrained) {
        (Kind::Text(text), false) => Message {
            content: Some(text.clone()),
            reasoning,
            calls: Vec::new(),
        },
        (Kind::Text(text), true) => Message {
            content: Some(json!({"answer": text}).to_string()),
            reasoning,
            calls: Vec::new(),
        },
        (Kind::ToolCalls(calls), true) => {
            // A grammar allows one object: the first call.
            let (name, arguments) = calls.first().cloned().unwrap_or_default();
            let arguments =
                serde_json::from_str::<Value>(&arguments).unwrap_or(Value::String(arguments));
            // `tool` first, as a grammar built from mm's schema produces it.
            let content = format!(
                "{{\"tool\":{},\"arguments\":{arguments}}}",
                Value::String(name)
            );
            Message {
                content: Some(content),
                reasoning,
                calls: Vec::new(),
            }
        }
        (Kind::ToolCalls(calls), false) => {
            let calls = calls
                .iter()
                .enumerate()
                .map(|(i, (name, arguments))| {
                    let id = (!reply.without_ids).then(|| format!("call_{}_{}", number + 1, i + 1));
                    (id, name.clone(), arguments.clone())
                })
                .collect();
            Message {
                content: None,
                reasoning,
                calls,
            }
        }
        _ => Message {
            content: None,
            reasoning,
            calls: Vec::new(),
        },
    }
}

fn finish_reason<'a>(reply: &'a Reply, message: &Message) -> &'a str {
    match &reply.finish_reason {
        Some(reason) => reason,
        None if message.calls.is_empty() => "stop",
        None => "tool_calls",
    }
}

fn usage(reply: &Reply) -> Value {
    match reply.usage {
        Some((prompt, completion)) => json!({
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }),
        None => Value::Null,
    }
}

fn chunk(number: usize, delta: Value, finish: Option<&str>) -> Value {
    json!({
        "id": format!("chatcmpl-{}", number + 1),
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "scripted",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    })
}

fn event(value: &Value) -> Result<Bytes, std::io::Error> {
    Ok(Bytes::from(format!("data: {value}\n\n")))
}

/// Cuts `text` into about `parts` pieces on character boundaries.
fn pieces(text: &str, parts: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let size = chars.len().div_ceil(parts.max(1)).max(1);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

fn chunks(
    reply: &Reply,
    message: &Message,
    number: usize,
    include_usage: bool,
) -> Vec<Result<Bytes, std::io::Error>> {
    let mut out = vec![event(&chunk(
        number,
        json!({"role": "assistant", "content": null}),
        None,
    ))];
    if let Some(reasoning) = &message.reasoning {
        for piece in pieces(reasoning, 2) {
            out.push(event(&chunk(
                number,
                json!({"reasoning_content": piece}),
                None,
            )));
        }
    }
    if let Some(content) = &message.content {
        for piece in pieces(content, 3) {
            out.push(event(&chunk(number, json!({"content": piece}), None)));
        }
    }
    if reply.whole {
        let calls: Vec<Value> = message
            .calls
            .iter()
            .enumerate()
            .map(|(i, call)| tool_call(i, call))
            .collect();
        out.push(event(&chunk(number, json!({"tool_calls": calls}), None)));
    } else {
        for (i, (id, name, arguments)) in message.calls.iter().enumerate() {
            let mut head = json!({"index": i, "type": "function", "function": {"name": name, "arguments": ""}});
            if let Some(id) = id {
                head["id"] = json!(id);
            }
            out.push(event(&chunk(number, json!({"tool_calls": [head]}), None)));
            for piece in pieces(arguments, 4) {
                let fragment = json!({"index": i, "function": {"arguments": piece}});
                out.push(event(&chunk(
                    number,
                    json!({"tool_calls": [fragment]}),
                    None,
                )));
            }
        }
    }
    // llama.cpp adds `timings` to the last chunk: clients must ignore what they do not know.
    let mut last = chunk(number, json!({}), Some(finish_reason(reply, message)));
    last["timings"] = json!({"prompt_n": 10, "predicted_n": 5, "predicted_per_second": 42.0});
    out.push(event(&last));
    if include_usage && reply.usage.is_some() {
        let mut usage_chunk = chunk(number, json!({}), None);
        usage_chunk["choices"] = json!([]);
        usage_chunk["usage"] = usage(reply);
        out.push(event(&usage_chunk));
    }
    out.push(Ok(Bytes::from("data: [DONE]\n\n")));
    out
}

fn tool_call(index: usize, (id, name, arguments): &(Option<String>, String, String)) -> Value {
    let mut call = json!({"index": index, "type": "function", "function": {"name": name, "arguments": arguments}});
    if let Some(id) = id {
        call["id"] = json!(id);
    }
    call
}

fn whole(reply: &Reply, message: &Message, number: usize) -> Value {
    let mut body = json!({"role": "assistant", "content": message.content});
    if let Some(reasoning) = &message.reasoning {
        body["reasoning_content"] = json!(reasoning);
    }
    if !message.calls.is_empty() {
        let calls: Vec<Value> = message
            .calls
            .iter()
            .enumerate()
            .map(|(i, call)| tool_call(i, call))
            .collect();
        body["tool_calls"] = json!(calls);
    }
    json!({
        "id": format!("chatcmpl-{}", number + 1),
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "scripted",
        "choices": [{"index": 0, "message": body, "finish_reason": finish_reason(reply, message)}],
        "usage": usage(reply),
    })
}

fn sse(parts: Vec<Result<Bytes, std::io::Error>>) -> Response {
    sse_stream(futures::stream::iter(parts))
}

fn sse_stream(
    parts: impl futures::Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static,
) -> Response {
    let body = Body::from_stream(parts);
    let mut response = (StatusCode::OK, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

fn json_response(body: String) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}
