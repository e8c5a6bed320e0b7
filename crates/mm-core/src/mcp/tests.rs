//! The client against a small scripted Streamable HTTP server: what it sends (session id,
//! protocol version, DELETE on close) and what it makes of pages, notifications and errors.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{CallError, ClientOptions, connect_http};

const TIMEOUT: Duration = Duration::from_secs(5);
const SESSION: &str = "s-123";

/// One request as the server saw it: method, JSON-RPC method, session and version headers.
#[derive(Debug, Clone, PartialEq)]
struct Seen {
    http: String,
    rpc: Option<String>,
    session: Option<String>,
    version: Option<String>,
}

#[derive(Clone, Default)]
struct Fake {
    seen: Arc<Mutex<Vec<Seen>>>,
    /// The answer to `tools/call`: how the server replies.
    call_status: Option<u16>,
}

fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

fn json_reply(id: &Value, result: Value) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
    (
        [
            ("content-type", "application/json"),
            ("mcp-session-id", SESSION),
        ],
        body,
    )
        .into_response()
}

async fn handle(fake: Fake, method: Method, headers: HeaderMap, body: Bytes) -> Response {
    let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let rpc = message["method"].as_str().map(str::to_string);
    fake.seen
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(Seen {
            http: method.to_string(),
            rpc: rpc.clone(),
            session: header(&headers, "mcp-session-id"),
            version: header(&headers, "mcp-protocol-version"),
        });
    if method == Method::GET {
        // The server's own stream: one notification that the tools changed, then it stays open.
        let event = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
        let body = format!("id: 1\ndata: {event}\n\n");
        let stream = futures::stream::iter([Ok::<_, std::io::Error>(Bytes::from(body))])
            .chain(futures::stream::pending());
        return (
            [("content-type", "text/event-stream")],
            axum::body::Body::from_stream(stream),
        )
            .into_response();
    }
    if method == Method::DELETE {
        return StatusCode::OK.into_response();
    }
    let id = &message["id"];
    match rpc.as_deref() {
        Some("initialize") => json_reply(
            id,
            json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {"listChanged": true}},
                   "serverInfo": {"name": "fake", "version": "1"}}),
        ),
        Some("tools/list") => {
            let page = match message["params"]["cursor"].as_str() {
                None => json!({"tools": [{"name": "a"}], "nextCursor": "2"}),
                Some("2") => json!({"tools": [{"name": "b"}], "nextCursor": "3"}),
                _ => json!({"tools": [{"name": "c"}]}),
            };
            json_reply(id, page)
        }
        Some("tools/call") => match fake.call_status {
            Some(code) => (
                StatusCode::from_u16(code).unwrap_or(StatusCode::IM_A_TEAPOT),
                "gone",
            )
                .into_response(),
            None => {
                // The answer on an SSE stream, after a progress notification.
                let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": message["params"]["_meta"]["progressToken"], "progress": 1, "total": 2}});
                let answer = json!({"jsonrpc": "2.0", "id": id,
                    "result": {"content": [{"type": "text", "text": "called"}]}});
                let body = format!("data: {progress}\n\ndata: {answer}\n\n");
                ([("content-type", "text/event-stream")], body).into_response()
            }
        },
        _ => StatusCode::ACCEPTED.into_response(),
    }
}

use futures::StreamExt as _;

async fn start(fake: Fake) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("bind: {e}"));
    let addr = listener
        .local_addr()
        .unwrap_or_else(|e| panic!("addr: {e}"));
    let app = Router::new()
        .route(
            "/mcp",
            any(move |method, headers, body| handle(fake.clone(), method, headers, body)),
        )
        .route(
            "/moved",
            any(|| async {
                (StatusCode::TEMPORARY_REDIRECT, [("location", "/mcp")], "").into_response()
            }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/mcp")
}

fn seen(fake: &Fake) -> Vec<Seen> {
    fake.seen.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

#[tokio::test]
async fn pages_sessions_versions_notifications_progress_and_delete() {
    let fake = Fake::default();
    let url = start(fake.clone()).await;
    let headers = [("X-Team".to_string(), "ops".to_string())];
    let client = connect_http(&url, &headers, ClientOptions::default(), TIMEOUT)
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    assert_eq!(client.server().name, "fake");

    let tools = client
        .list_tools(TIMEOUT)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["a", "b", "c"], "every page is read");

    // The GET stream said the tools changed.
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    while !client.tools_changed() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no list_changed seen"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    let progress = Arc::new(Mutex::new(Vec::new()));
    let sink = progress.clone();
    let result = client
        .call_tool(
            "a",
            &serde_json::Map::new(),
            TIMEOUT,
            &CancellationToken::new(),
            Some(Arc::new(move |p| {
                sink.lock().unwrap_or_else(|e| e.into_inner()).push(p)
            })),
        )
        .await
        .unwrap_or_else(|e| panic!("call: {e}"));
    assert_eq!(result["content"][0]["text"], "called");
    let progress = progress.lock().unwrap_or_else(|e| e.into_inner()).clone();
    assert_eq!(progress.len(), 1);
    assert_eq!((progress[0].progress, progress[0].total), (1.0, Some(2.0)));

    client.close().await;
    let seen = seen(&fake);
    // First the modern probe, which this legacy server does not answer (202): legacy.
    let probe = &seen[0];
    assert_eq!(
        (
            probe.rpc.as_deref(),
            probe.session.as_deref(),
            probe.version.as_deref()
        ),
        (Some("server/discover"), None, Some("2026-07-28")),
    );
    assert_eq!(client.server().era, super::Era::Legacy);
    let seen = &seen[1..];
    let init = &seen[0];
    assert_eq!(
        (
            init.rpc.as_deref(),
            init.session.as_deref(),
            init.version.as_deref()
        ),
        (Some("initialize"), None, None),
        "initialize carries neither"
    );
    for later in &seen[1..] {
        assert_eq!(later.session.as_deref(), Some(SESSION), "{later:?}");
        assert_eq!(later.version.as_deref(), Some("2025-11-25"), "{later:?}");
    }
    assert!(seen.iter().any(|s| s.http == "GET"), "{seen:?}");
    assert_eq!(
        seen.last().map(|s| s.http.as_str()),
        Some("DELETE"),
        "{seen:?}"
    );
}

#[tokio::test]
async fn an_http_error_is_a_transport_error_naming_the_status() {
    let fake = Fake {
        call_status: Some(500),
        ..Fake::default()
    };
    let url = start(fake).await;
    let client = connect_http(&url, &[], ClientOptions::default(), TIMEOUT)
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    let error = client
        .call_tool(
            "a",
            &serde_json::Map::new(),
            TIMEOUT,
            &CancellationToken::new(),
            None,
        )
        .await
        .expect_err("an error");
    assert_eq!(
        error,
        CallError::Transport("HTTP 500 Internal Server Error: gone".into())
    );
}

#[tokio::test]
async fn a_server_that_does_not_answer_is_a_timeout_and_one_that_is_down_an_error() {
    // A listener that never answers.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("bind: {e}"));
    let url = format!(
        "http://{}/mcp",
        silent.local_addr().unwrap_or_else(|e| panic!("{e}"))
    );
    let outcome = connect_http(
        &url,
        &[],
        ClientOptions::default(),
        Duration::from_millis(200),
    )
    .await;
    assert!(
        matches!(outcome, Err(CallError::TimedOut(_))),
        "{:?}",
        outcome.err()
    );
    drop(silent);
    let outcome = connect_http(&url, &[], ClientOptions::default(), TIMEOUT).await;
    match outcome {
        Err(CallError::Transport(text)) => assert!(text.starts_with("cannot reach"), "{text}"),
        other => panic!("{:?}", other.err()),
    }
}

/// A server that answers every request with a 307 to `to`, and records the headers it got.
async fn redirector(to: String) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("bind: {e}"));
    let addr = listener
        .local_addr()
        .unwrap_or_else(|e| panic!("addr: {e}"));
    let app = Router::new().route(
        "/old",
        any(move || {
            let to = to.clone();
            async move {
                (
                    StatusCode::TEMPORARY_REDIRECT,
                    [("location", to.as_str())],
                    "",
                )
                    .into_response()
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/old")
}

/// The `X-Api-Key` values a server received.
async fn key_recorder() -> (String, Arc<Mutex<Vec<Option<String>>>>) {
    let keys = Arc::new(Mutex::new(Vec::new()));
    let seen = keys.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("bind: {e}"));
    let addr = listener
        .local_addr()
        .unwrap_or_else(|e| panic!("addr: {e}"));
    let app = Router::new().route(
        "/mcp",
        any(move |headers: HeaderMap| {
            let seen = seen.clone();
            async move {
                seen.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(header(&headers, "x-api-key"));
                StatusCode::NOT_FOUND.into_response()
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/mcp"), keys)
}

#[tokio::test]
async fn headers_never_follow_a_redirect_to_another_origin() {
    let (elsewhere, keys) = key_recorder().await;
    let url = redirector(elsewhere.clone()).await;
    let headers = [("X-Api-Key".to_string(), "secret".to_string())];
    let outcome = connect_http(&url, &headers, ClientOptions::default(), TIMEOUT).await;
    match outcome {
        Err(CallError::Transport(text)) => assert!(
            text.contains(&format!(
                "the server redirected to {elsewhere}, another origin"
            )),
            "{text}"
        ),
        other => panic!("{:?}", other.err()),
    }
    let keys = keys.lock().unwrap_or_else(|e| e.into_inner()).clone();
    assert!(keys.is_empty(), "the other origin got {keys:?}");

    // Within the origin a redirect is followed, headers and all.
    let fake = Fake::default();
    let target = start(fake.clone()).await;
    let moved = target.replace("/mcp", "/moved");
    let client = connect_http(&moved, &headers, ClientOptions::default(), TIMEOUT)
        .await
        .unwrap_or_else(|e| panic!("a same-origin redirect: {e}"));
    assert_eq!(client.server().name, "fake");
    client.close().await;
}

/// Starts a stdio server from a shell script, within `timeout`; how it ended and how long it
/// took.
async fn stdio_server(script: &str, timeout: Duration) -> (Result<(), String>, Duration) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("server.sh");
    std::fs::write(&path, script).unwrap_or_else(|e| panic!("{e}"));
    let started = std::time::Instant::now();
    let args = [path.to_string_lossy().into_owned()];
    let server = super::StdioCommand {
        program: std::path::Path::new("/bin/sh"),
        args: &args,
        env: &[],
        cwd: dir.path(),
        sandbox: crate::SandboxMode::Off,
    };
    let outcome = super::connect_stdio(server, None, ClientOptions::default(), timeout).await;
    let outcome = match outcome {
        Ok(client) => {
            client.close().await;
            Ok(())
        }
        Err(e) => Err(e.to_string()),
    };
    (outcome, started.elapsed())
}

#[tokio::test]
async fn a_stdio_answer_too_large_is_said_so_not_waited_for() {
    let script = r#"read line
printf '{"jsonrpc":"2.0","id":0,"result":{"x":"'
head -c 17825792 /dev/zero | tr '\0' x
printf '"}}\n'
sleep 30
"#;
    let (outcome, took) = stdio_server(script, Duration::from_secs(20)).await;
    let error = outcome.expect_err("refused");
    assert!(
        error.contains("the server sent a message larger than 16 MiB, more than mm reads"),
        "{error}"
    );
    assert!(took < Duration::from_secs(15), "{took:?}");
}

#[tokio::test]
async fn an_answer_nested_too_deep_is_said_so_not_waited_for() {
    let script = r#"read line
deep=$(printf '[%.0s' $(seq 1 300)); end=$(printf ']%.0s' $(seq 1 300))
printf '{"jsonrpc":"2.0","id":0,"result":{"x":%s%s}}\n' "$deep" "$end"
sleep 30
"#;
    let (outcome, took) = stdio_server(script, Duration::from_secs(20)).await;
    let error = outcome.expect_err("refused");
    assert!(
        error.contains("the server's answer cannot be read") && error.contains("recursion limit"),
        "{error}"
    );
    assert!(took < Duration::from_secs(15), "{took:?}");
}

#[tokio::test]
async fn an_http_answer_too_large_is_refused() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("bind: {e}"));
    let addr = listener
        .local_addr()
        .unwrap_or_else(|e| panic!("addr: {e}"));
    let app = Router::new().route(
        "/mcp",
        any(|| async {
            let big = json!({"jsonrpc": "2.0", "id": 0, "result": {"x": "y".repeat(17 << 20)}});
            ([("content-type", "application/json")], big.to_string()).into_response()
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    let url = format!("http://{addr}/mcp");
    // Building 17 MiB of JSON on a loaded machine, in a debug build, takes a while.
    let error = connect_http(&url, &[], ClientOptions::default(), Duration::from_secs(60))
        .await
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        error.contains("the answer is larger than 16 MiB, more than mm reads"),
        "{error}"
    );
}

#[tokio::test]
async fn corpus_answers_too_large_or_too_deep_are_said_so_at_once() {
    let mut corpus =
        mm_test_support::Corpus::new("MCP answers too large or too deep (stdio and HTTP)");
    let big = |bytes: usize| {
        format!(
            "read line\nprintf '{{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{{\"x\":\"'\nhead -c {bytes} /dev/zero | tr '\\0' x\nprintf '\"}}}}\\n'\nsleep 30\n"
        )
    };
    let deep = |open: &str, close: &str, depth: usize, member: &str| {
        format!(
            "read line\ndeep=$(printf '{open}%.0s' $(seq 1 {depth})); end=$(printf '{close}%.0s' $(seq 1 {depth}))\nprintf '{{\"jsonrpc\":\"2.0\",\"id\":0,\"{member}\":{{\"x\":%s1%s}}}}\\n' \"$deep\" \"$end\"\nsleep 30\n"
        )
    };
    let mut scripts = vec![
        ("16 MiB + 1 in one line".to_string(), big(16 << 20)),
        ("17 MiB".into(), big(17 << 20)),
        ("24 MiB".into(), big(24 << 20)),
        (
            "17 MiB and no newline, then exit".into(),
            "read line\nhead -c 17825792 /dev/zero | tr '\\0' x\n".into(),
        ),
    ];
    for depth in [129, 200, 1000, 20_000] {
        scripts.push((
            format!("arrays {depth} deep"),
            deep("[", "]", depth, "result"),
        ));
    }
    scripts.push((
        "objects 300 deep".into(),
        deep("{\"a\":", "}", 300, "result"),
    ));
    scripts.push(("an error 300 deep".into(), deep("[", "]", 300, "error")));
    for (what, script) in scripts {
        let (outcome, took) = stdio_server(&script, Duration::from_secs(20)).await;
        let error = outcome.err().unwrap_or_default();
        let said = error.contains("more than mm reads")
            || error.contains("cannot be read")
            || error.contains("the connection is closed");
        corpus.check(
            ("stdio", &what),
            said && took < Duration::from_secs(15),
            || format!("after {took:?}: {error}"),
        );
    }
    // HTTP: a JSON body, an SSE event, too large; a JSON body and an SSE event too deep.
    let deep_json = |depth: usize| {
        format!(
            r#"{{"jsonrpc":"2.0","id":0,"result":{{"x":{}1{}}}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        )
    };
    let answers: Vec<(&str, &'static str, String)> = vec![
        ("json 17 MiB", "application/json", json!({"jsonrpc": "2.0", "id": 0, "result": {"x": "y".repeat(17 << 20)}}).to_string()),
        ("sse 17 MiB", "text/event-stream", format!("data: {}\n\n", json!({"jsonrpc": "2.0", "id": 0, "result": {"x": "y".repeat(17 << 20)}}))),
        ("sse 17 MiB over many data lines", "text/event-stream", format!("{}\n", "data: yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\n".repeat(180_000))),
        ("json 300 deep", "application/json", deep_json(300)),
        ("sse 300 deep", "text/event-stream", format!("data: {}\n\n", deep_json(300))),
        ("sse 5000 deep", "text/event-stream", format!("data: {}\n\n", deep_json(5000))),
    ];
    for (what, kind, body) in answers {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("bind: {e}"));
        let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
        let app = Router::new().route(
            "/mcp",
            any(move || {
                let body = body.clone();
                async move { ([("content-type", kind)], body).into_response() }
            }),
        );
        tokio::spawn(async move { axum::serve(listener, app).await });
        let started = std::time::Instant::now();
        let outcome = connect_http(
            &format!("http://{addr}/mcp"),
            &[],
            ClientOptions::default(),
            Duration::from_secs(20),
        )
        .await;
        let error = outcome.err().map(|e| e.to_string()).unwrap_or_default();
        let said = error.contains("more than mm reads") || error.contains("cannot be read");
        let took = started.elapsed();
        corpus.check(
            ("http", what),
            said && took < Duration::from_secs(15),
            || format!("after {took:?}: {error}"),
        );
    }
    corpus.finish();
}

#[tokio::test]
async fn corpus_headers_never_leave_the_servers_origin() {
    let mut corpus = mm_test_support::Corpus::new("MCP redirects (headers kept to the origin)");
    let (elsewhere, keys) = key_recorder().await;
    let port = elsewhere
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp")
        .to_string();
    let targets = [
        elsewhere.clone(),
        format!("http://localhost:{port}/mcp"),
        format!("https://127.0.0.1:{port}/mcp"),
        format!("http://127.0.0.2:{port}/mcp"),
        format!("//127.0.0.1:{port}/mcp"),
        format!("http://user:pw@127.0.0.1:{port}/mcp"),
    ];
    for status in [301u16, 302, 303, 307, 308] {
        for to in &targets {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .unwrap_or_else(|e| panic!("bind: {e}"));
            let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
            let to = to.clone();
            let location = to.clone();
            let app = Router::new().route(
                "/old",
                any(move || {
                    let location = location.clone();
                    async move {
                        (
                            StatusCode::from_u16(status).unwrap_or(StatusCode::FOUND),
                            [("location", location)],
                            "",
                        )
                            .into_response()
                    }
                }),
            );
            tokio::spawn(async move { axum::serve(listener, app).await });
            let headers = [("X-Api-Key".to_string(), "secret".to_string())];
            let before = keys.lock().unwrap_or_else(|e| e.into_inner()).len();
            let outcome = connect_http(
                &format!("http://{addr}/old"),
                &headers,
                ClientOptions::default(),
                TIMEOUT,
            )
            .await;
            let after = keys.lock().unwrap_or_else(|e| e.into_inner()).len();
            corpus.check((status, &to), outcome.is_err() && after == before, || {
                format!(
                    "{:?}, {} request(s) reached the other origin",
                    outcome.err(),
                    after - before
                )
            });
        }
    }
    corpus.finish();
}
