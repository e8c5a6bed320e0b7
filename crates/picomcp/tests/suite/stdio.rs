//! Raw JSON-RPC lines through `picomcp::stdio::serve` over an in-memory pipe.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use tokio::task::JoinHandle;

use super::common::{self, assert_tool_error, call, initialize};

struct Client {
    tx: DuplexStream,
    rx: Lines<BufReader<DuplexStream>>,
    server: JoinHandle<std::io::Result<()>>,
}

impl Client {
    fn start() -> Self {
        Self::start_with(common::server())
    }

    fn start_with(server: picomcp::Server) -> Self {
        let (client_w, server_r) = tokio::io::duplex(1 << 16);
        let (server_w, client_r) = tokio::io::duplex(1 << 16);
        let server = tokio::spawn(picomcp::stdio::serve(server, server_r, server_w));
        Self {
            tx: client_w,
            rx: BufReader::new(client_r).lines(),
            server,
        }
    }

    async fn send(&mut self, message: &Value) {
        self.send_raw(&message.to_string()).await;
    }

    async fn send_raw(&mut self, line: &str) {
        self.tx.write_all(line.as_bytes()).await.unwrap();
        self.tx.write_all(b"\n").await.unwrap();
    }

    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(5), self.rx.next_line())
            .await
            .expect("no message within 5 s")
            .unwrap()
            .expect("server closed stdout");
        serde_json::from_str(&line).unwrap()
    }

    async fn request(&mut self, message: Value) -> Value {
        self.send(&message).await;
        loop {
            let m = self.recv().await;
            if m.get("id") == message.get("id") {
                return m;
            }
        }
    }
}

#[tokio::test]
async fn validation_messages_name_each_field() {
    let mut c = Client::start();
    c.request(initialize(0, "2025-11-25")).await;
    for (i, (args, want)) in common::validation_cases().into_iter().enumerate() {
        let r = c.request(call(i as i64 + 1, "search_issues", args)).await;
        assert_tool_error(&r, &want);
    }
    let ok = c
        .request(call(
            99,
            "search_issues",
            json!({"repo": "a/b", "query": "q"}),
        ))
        .await;
    assert_eq!(
        ok["result"]["content"][0]["text"], "a/b q 10",
        "defaults applied"
    );
}

#[tokio::test]
async fn no_response_for_a_cancelled_request() {
    let mut c = Client::start();
    c.request(initialize(0, "2025-11-25")).await;
    c.send(&call(1, "slow", json!({"seconds": 0.3}))).await;
    c.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
    )
    .await;
    let pong = c
        .request(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await;
    assert_eq!(pong["result"], json!({}));
    // Well past the tool's own duration: nothing may arrive for id 1.
    let late = tokio::time::timeout(Duration::from_millis(700), c.rx.next_line()).await;
    if let Ok(Ok(Some(line))) = late {
        let m: Value = serde_json::from_str(&line).unwrap();
        assert_ne!(m["id"], 1, "answered a cancelled request: {m}");
    }
}

#[tokio::test]
async fn malformed_lines_get_json_rpc_errors() {
    let mut c = Client::start();
    c.send_raw("{not json").await;
    let r = c.recv().await;
    assert_eq!(r["error"]["code"], -32700);
    assert_eq!(r["id"], Value::Null);
    let r = c
        .request(json!({"jsonrpc": "2.0", "id": 5, "method": "no/such"}))
        .await;
    assert_eq!(r["error"]["code"], -32601);
}

#[tokio::test]
async fn protocol_version_negotiation() {
    let mut c = Client::start();
    let r = c.request(initialize(1, "2025-03-26")).await;
    assert_eq!(r["result"]["protocolVersion"], "2025-03-26");
    let r = c.request(initialize(2, "2099-01-01")).await;
    assert_eq!(
        r["result"]["protocolVersion"],
        picomcp::LATEST_PROTOCOL_VERSION
    );
    assert_eq!(r["result"]["serverInfo"]["name"], "test");
}

#[tokio::test]
async fn requests_in_flight_are_answered_after_stdin_ends() {
    let mut c = Client::start();
    c.send(&call(1, "slow", json!({"seconds": 0.1}))).await;
    drop(c.tx);
    let mut got = Vec::new();
    while let Ok(Ok(Some(line))) =
        tokio::time::timeout(Duration::from_secs(5), c.rx.next_line()).await
    {
        got.push(serde_json::from_str::<Value>(&line).unwrap());
    }
    assert!(
        got.iter()
            .any(|m| m["id"] == 1 && m["result"]["content"][0]["text"] == "done"),
        "{got:?}"
    );
    c.server.await.unwrap().unwrap();
}

#[tokio::test]
async fn resources_read_and_subscriptions_notify() {
    let server = common::server();
    let handle = server.handle();
    let mut c = Client::start_with(server);
    c.request(initialize(0, "2025-11-25")).await;
    let r = c
        .request(json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "test://doc"}}))
        .await;
    assert_eq!(r["result"]["contents"][0]["text"], "hello");
    let r = c
        .request(json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "test://nope"}}))
        .await;
    assert_eq!(r["error"]["code"], -32002);
    assert_eq!(
        handle.resource_updated("test://doc"),
        0,
        "nobody subscribed yet"
    );
    c.request(json!({"jsonrpc": "2.0", "id": 3, "method": "resources/subscribe", "params": {"uri": "test://doc"}}))
        .await;
    assert_eq!(handle.resource_updated("test://doc"), 1);
    let n = c.recv().await;
    assert_eq!(n["method"], "notifications/resources/updated");
    assert_eq!(n["params"]["uri"], "test://doc");
}

#[tokio::test]
async fn modern_requests_need_no_initialize_and_ask_in_rounds() {
    let mut c = Client::start();
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    });
    let r = c
        .request(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "search_issues", "arguments": {"repo": "a/b", "query": "q"}, "_meta": meta}}))
        .await;
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    assert_eq!(r["result"]["content"][0]["text"], "a/b q 10");
    // The `ask` tool's ctx.elicit becomes an input_required result, not a request on the pipe.
    let r = c
        .request(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "ask", "arguments": {}, "_meta": meta}}))
        .await;
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    let (key, _) = r["result"]["inputRequests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    let r = c
        .request(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "ask", "arguments": {}, "_meta": meta,
                "requestState": r["result"]["requestState"],
                "inputResponses": {key.clone(): {"action": "accept", "content": {"name": "Ada"}}}}}))
        .await;
    assert_eq!(
        r["result"]["content"][0]["text"], r#"accept {"name":"Ada"}"#,
        "{r}"
    );
    // And a legacy initialize on the same pipe still works.
    let r = c.request(initialize(4, "2025-11-25")).await;
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
}
