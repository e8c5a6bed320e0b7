//! Raw JSON-RPC over Streamable HTTP, against `picomcp::http::serve_listener` on a free port.

use std::time::Duration;

use picomcp::http::HttpConfig;
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::{Value, json};
use tokio::net::TcpListener;

use super::common::{self, assert_tool_error, call, initialize};

const ACCEPT_BOTH: &str = "application/json, text/event-stream";

struct Http {
    url: String,
    client: reqwest::Client,
    session: Option<String>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl Http {
    async fn start(config: HttpConfig) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(picomcp::http::serve_listener(
            common::server(),
            listener,
            config,
            async move {
                let _ = stopped.await;
            },
        ));
        let client = reqwest::Client::builder().no_proxy().build().unwrap();
        Self {
            url,
            client,
            session: None,
            _stop: stop,
        }
    }

    fn post(&self, body: &Value) -> reqwest::RequestBuilder {
        self.post_at(body, "2025-11-25")
    }

    /// A POST with the session header and this `MCP-Protocol-Version`.
    fn post_at(&self, body: &Value, version: &str) -> reqwest::RequestBuilder {
        let mut r = self
            .client
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", ACCEPT_BOTH)
            .body(body.to_string());
        if let Some(s) = &self.session {
            r = r
                .header("mcp-session-id", s)
                .header("mcp-protocol-version", version);
        }
        r
    }

    async fn initialized(config: HttpConfig) -> Self {
        let mut h = Self::start(config).await;
        let r = h.post(&initialize(0, "2025-11-25")).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::OK);
        let id = r.headers()["mcp-session-id"].to_str().unwrap().to_string();
        assert!(
            id.bytes().all(|b| (0x21..=0x7e).contains(&b)),
            "visible ASCII session id"
        );
        h.session = Some(id);
        let r = h
            .post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::ACCEPTED, "notifications get 202");
        assert!(r.text().await.unwrap().is_empty());
        h
    }

    async fn json(&self, body: &Value) -> Value {
        let r = self.post(body).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(r.headers()["content-type"], "application/json");
        r.json().await.unwrap()
    }
}

#[tokio::test]
async fn validation_messages_name_each_field() {
    let h = Http::initialized(HttpConfig::default()).await;
    for (i, (args, want)) in common::validation_cases().into_iter().enumerate() {
        let r = h.json(&call(i as i64 + 1, "search_issues", args)).await;
        assert_tool_error(&r, &want);
    }
}

#[tokio::test]
async fn host_and_origin_are_checked() {
    let h = Http::initialized(HttpConfig::default()).await;
    let r = h
        .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .header("origin", "http://evil.example.com");
    assert_eq!(r.send().await.unwrap().status(), StatusCode::FORBIDDEN);
    let r = h
        .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .header("host", "evil.example.com");
    assert_eq!(r.send().await.unwrap().status(), StatusCode::FORBIDDEN);
    let r = h
        .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .header("origin", "http://localhost:5173");
    assert_eq!(r.send().await.unwrap().status(), StatusCode::OK);
}

#[tokio::test]
async fn session_id_flow() {
    let mut h = Http::initialized(HttpConfig::default()).await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    assert_eq!(h.json(&ping).await["result"], json!({}));
    let session = h.session.take().unwrap();
    assert_eq!(
        h.post(&ping).send().await.unwrap().status(),
        StatusCode::BAD_REQUEST,
        "no session id"
    );
    h.session = Some("not-a-session".into());
    assert_eq!(
        h.post(&ping).send().await.unwrap().status(),
        StatusCode::NOT_FOUND,
        "unknown session id"
    );
    h.session = Some(session.clone());
    let del = h
        .client
        .delete(&h.url)
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert!(del.status().is_success());
    assert_eq!(
        h.post(&ping).send().await.unwrap().status(),
        StatusCode::NOT_FOUND,
        "terminated session"
    );
}

#[tokio::test]
async fn protocol_version_negotiation() {
    let h = Http::start(HttpConfig::default()).await;
    let r: Value = h
        .post(&initialize(0, "2025-06-18"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r["result"]["protocolVersion"], "2025-06-18");
    let r: Value = h
        .post(&initialize(0, "2099-01-01"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        r["result"]["protocolVersion"],
        picomcp::LATEST_PROTOCOL_VERSION
    );

    let h = Http::initialized(HttpConfig::default()).await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let legacy = h.post_at(&ping, "2025-03-26").send().await.unwrap();
    assert_eq!(
        legacy.status(),
        StatusCode::OK,
        "older supported versions are accepted"
    );
    let bad = h.post_at(&ping, "1999-01-01").send().await.unwrap();
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn progress_switches_the_answer_to_sse() {
    let h = Http::initialized(HttpConfig::default()).await;
    let mut body = call(7, "slow", json!({"seconds": 0.05}));
    body["params"]["_meta"] = json!({"progressToken": "tok"});
    let r = h.post(&body).send().await.unwrap();
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let text = r.text().await.unwrap();
    let events: Vec<Value> = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    assert_eq!(events.len(), 2, "{text}");
    assert_eq!(events[0]["method"], "notifications/progress");
    assert_eq!(events[0]["params"]["progressToken"], "tok");
    assert_eq!(events[1]["id"], 7);
    assert_eq!(events[1]["result"]["content"][0]["text"], "done");
}

#[tokio::test]
async fn limits_and_methods() {
    let h = Http::initialized(HttpConfig::default().max_body_bytes(1024)).await;
    let big = call(
        1,
        "search_issues",
        json!({"repo": "x".repeat(4096), "query": "q"}),
    );
    let too_large = h.post(&big).send().await.unwrap();
    assert_eq!(too_large.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(too_large.headers()["connection"], "close");
    let put = h.client.put(&h.url).send().await.unwrap();
    assert_eq!(put.status(), StatusCode::METHOD_NOT_ALLOWED);
    let wrong_type = h
        .client
        .post(&h.url)
        .header("content-type", "text/plain")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong_type.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let batch = h
        .post(&json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]))
        .send()
        .await
        .unwrap();
    assert_eq!(batch.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn get_opens_one_stream_per_session() {
    let h = Http::initialized(HttpConfig::default()).await;
    let session = h.session.clone().unwrap();
    let mut headers = HeaderMap::new();
    headers.insert("accept", HeaderValue::from_static("text/event-stream"));
    headers.insert("mcp-session-id", HeaderValue::from_str(&session).unwrap());
    let first = h
        .client
        .get(&h.url)
        .headers(headers.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(first.status(), StatusCode::OK);
    assert_eq!(first.headers()["content-type"], "text/event-stream");
    let second = tokio::time::timeout(
        Duration::from_secs(5),
        h.client.get(&h.url).headers(headers).send(),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(second.status(), StatusCode::CONFLICT);
    let no_session = h
        .client
        .get(&h.url)
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(no_session.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn server_to_client_requests_travel_on_the_post_stream() {
    let mut h = Http::start(HttpConfig::default()).await;
    let mut init = initialize(0, "2025-11-25");
    init["params"]["capabilities"] = json!({"elicitation": {}});
    let r = h.post(&init).send().await.unwrap();
    h.session = Some(r.headers()["mcp-session-id"].to_str().unwrap().to_string());

    let mut stream = h.post(&call(1, "ask", json!({}))).send().await.unwrap();
    assert_eq!(stream.headers()["content-type"], "text/event-stream");
    let mut buf = String::new();
    let mut events = Vec::new();
    let next_event = async |stream: &mut reqwest::Response, buf: &mut String| -> Value {
        loop {
            if let Some(end) = buf.find("\n\n") {
                let event: String = buf.drain(..end + 2).collect();
                if let Some(data) = event.lines().find_map(|l| l.strip_prefix("data: ")) {
                    return serde_json::from_str(data).unwrap();
                }
                continue;
            }
            let chunk = tokio::time::timeout(Duration::from_secs(5), stream.chunk())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            buf.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    };
    let request = next_event(&mut stream, &mut buf).await;
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "Your name?");
    let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "accept", "content": {"name": "Ada"}}});
    let r = h.post(&answer).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    events.push(next_event(&mut stream, &mut buf).await);
    assert_eq!(events[0]["id"], 1);
    assert_eq!(
        events[0]["result"]["content"][0]["text"],
        r#"accept {"name":"Ada"}"#
    );

    // A client that accepts only JSON and has no GET stream cannot be asked: the call fails fast.
    let r = h
        .client
        .post(&h.url)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .header("mcp-session-id", h.session.as_deref().unwrap())
        .body(call(2, "ask", json!({})).to_string());
    let r = tokio::time::timeout(Duration::from_secs(5), r.send())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.headers()["content-type"], "application/json");
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32603, "{body}");
}

/// A modern (2026-07-28) POST: no session, the version in `_meta` and in the headers.
fn modern_post(
    h: &Http,
    id: u32,
    method: &str,
    name: Option<&str>,
    mut params: Value,
) -> reqwest::RequestBuilder {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let mut r = h
        .client
        .post(&h.url)
        .header("content-type", "application/json")
        .header("accept", ACCEPT_BOTH)
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .body(body.to_string());
    if let Some(name) = name {
        r = r.header("mcp-name", name);
    }
    r
}

#[tokio::test]
async fn modern_requests_are_stateless_and_header_checked() {
    let h = Http::start(HttpConfig::default()).await;
    // No initialize, no session: discover, then a call.
    let r = modern_post(&h, 1, "server/discover", None, json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert!(r.headers().get("mcp-session-id").is_none());
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["result"]["supportedVersions"], json!(["2026-07-28"]));
    let args = json!({"name": "search_issues", "arguments": {"repo": "a/b", "query": "x"}});
    let r = modern_post(&h, 2, "tools/call", Some("search_issues"), args.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert!(r.headers().get("mcp-session-id").is_none());
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["result"]["resultType"], "complete");
    assert_eq!(v["result"]["content"][0]["text"], "a/b x 10");

    // Mcp-Name that does not match the body: 400, -32020.
    let r = modern_post(&h, 3, "tools/call", Some("slow"), args.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["error"]["code"], -32020);
    assert_eq!(v["id"], 3);
    // Mcp-Name missing on a tools/call: the same.
    let r = modern_post(&h, 4, "tools/call", None, args.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);

    // An unsupported modern version: 400, -32022, the supported ones named.
    let body = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2099-01-01",
        "io.modelcontextprotocol/clientCapabilities": {}}}});
    let r = h
        .client
        .post(&h.url)
        .header("content-type", "application/json")
        .header("accept", ACCEPT_BOTH)
        .header("mcp-protocol-version", "2099-01-01")
        .header("mcp-method", "tools/list")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["error"]["code"], -32022, "{v}");
    assert_eq!(
        v["error"]["data"]["supported"],
        json!(["2026-07-28"]),
        "{v}"
    );

    // A method the modern era removed: 404 with -32601.
    let r = modern_post(&h, 6, "ping", None, json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["error"]["code"], -32601);

    // A legacy client on the same endpoint still gets its session.
    let r = h.post(&initialize(7, "2025-11-25")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert!(r.headers().get("mcp-session-id").is_some());
}
