use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::sync::mpsc;

use super::*;
use crate::result::ToolError;
use crate::server::Server;
use crate::tool::{RegisterError, ToolConfig};

#[derive(Deserialize, JsonSchema)]
struct Sku {
    sku: String,
}

#[derive(Serialize, JsonSchema)]
struct Price {
    sku: String,
    cents: i64,
}

#[derive(Deserialize, JsonSchema)]
struct Wait {
    ms: u64,
}

fn server() -> Server {
    let mut s = Server::new("t", "1");
    s.tool_with_output("good", ToolConfig::new(), |i: Sku, _| async move {
        Ok::<_, ToolError>(Price {
            sku: i.sku,
            cents: 5,
        })
    })
    .unwrap();
    // Declares an output schema it does not honour.
    s.tool_dynamic(
        "bad",
        ToolConfig::new().output_schema(json!({"type": "object", "required": ["cents"], "properties": {"cents": {"type": "integer"}}})),
        |_, _| async { Ok::<_, ToolError>(crate::result::Json(json!({"cents": "five"}))) },
    )
    .unwrap();
    s.tool_dynamic(
        "dyn",
        ToolConfig::new().input_schema(
            json!({"type": "object", "properties": {"n": {"type": "integer", "default": 3}}}),
        ),
        |args: Value, _| async move { Ok::<_, ToolError>(args) },
    )
    .unwrap();
    s.tool_dynamic(
        "raw",
        ToolConfig::new()
            .input_schema(json!({"type": "object", "properties": {"n": {"type": "integer"}}}))
            .skip_input_validation(),
        |args: Value, _| async move { Ok::<_, ToolError>(args) },
    )
    .unwrap();
    s.tool("wait", ToolConfig::new(), |i: Wait, _| async move {
        tokio::time::sleep(Duration::from_millis(i.ms)).await;
        Ok::<_, ToolError>("done")
    })
    .unwrap();
    s
}

/// A session of a server, as a transport holds them.
struct Conn {
    server: Arc<ServerInner>,
    session: Arc<Session>,
}

impl Conn {
    /// As the stdio transport does: the era of each request from its body.
    fn handle(&self, message: Incoming, out: &Outbound) -> Option<BoxFuture<Option<Answer>>> {
        let era = match &message {
            Incoming::Request { method, params, .. } => {
                crate::era::classify(method, params.as_ref(), None).unwrap_or(Era::Legacy)
            }
            _ => Era::Legacy,
        };
        self.session.handle(&self.server, message, era, out)
    }

    fn in_flight(&self) -> usize {
        self.session.in_flight()
    }
}

fn connect(server: Server) -> Conn {
    let server = server.into_inner();
    let session = server.new_session();
    Conn { server, session }
}

async fn call(session: &Conn, line: &str, out: &Outbound) -> Option<Value> {
    let fut = session.handle(Incoming::parse(line.as_bytes()).unwrap(), out)?;
    fut.await.map(|a| serde_json::from_str(&a.body).unwrap())
}

#[test]
fn registration_errors() {
    let mut s = server();
    let dup = s.tool("good", ToolConfig::new(), |_: Sku, _| async {
        Ok::<_, ToolError>(())
    });
    assert!(matches!(
        dup,
        Err(RegisterError::Duplicate { kind: "tool", .. })
    ));
    let bad = s.tool("bad name", ToolConfig::new(), |_: Sku, _| async {
        Ok::<_, ToolError>(())
    });
    assert!(matches!(bad, Err(RegisterError::InvalidName(_))));
    let not_object = s.tool_dynamic(
        "x",
        ToolConfig::new().input_schema(json!({"type": "string"})),
        |_, _| async { Ok::<_, ToolError>(()) },
    );
    assert!(matches!(
        not_object,
        Err(RegisterError::InvalidSchema { .. })
    ));
}

#[tokio::test]
async fn output_is_validated() {
    let session = connect(server());
    let (tx, _rx) = mpsc::unbounded_channel();
    let good = call(&session, r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"good","arguments":{"sku":"A"}}}"#, &tx).await.unwrap();
    assert_eq!(
        good["result"]["structuredContent"],
        json!({"sku": "A", "cents": 5})
    );
    // The JSON text copy holds the same object (key order depends on serde_json's features).
    let text = good["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(text).unwrap(),
        json!({"sku": "A", "cents": 5})
    );
    let bad = call(
        &session,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bad"}}"#,
        &tx,
    )
    .await
    .unwrap();
    assert_eq!(bad["result"]["isError"], true);
    assert_eq!(
        bad["result"]["content"][0]["text"],
        "Invalid output from tool \"bad\":\ncents: Invalid input: expected int, received string"
    );
    let list = call(
        &session,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
        &tx,
    )
    .await
    .unwrap();
    assert_eq!(list["result"]["tools"][0]["outputSchema"]["type"], "object");
}

#[tokio::test]
async fn no_response_after_cancel() {
    let session = connect(server());
    let (tx, _rx) = mpsc::unbounded_channel();
    let req = r#"{"jsonrpc":"2.0","id":"w","method":"tools/call","params":{"name":"wait","arguments":{"ms":10000}}}"#;
    let fut = session
        .handle(Incoming::parse(req.as_bytes()).unwrap(), &tx)
        .unwrap();
    let cancel =
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"w"}}"#;
    assert!(
        session
            .handle(Incoming::parse(cancel.as_bytes()).unwrap(), &tx)
            .is_none()
    );
    let answer = tokio::time::timeout(Duration::from_secs(2), fut)
        .await
        .unwrap();
    assert_eq!(answer, None);
    assert_eq!(session.in_flight(), 0);
}

#[tokio::test]
async fn unknown_method_and_tool_are_protocol_errors() {
    let session = connect(server());
    let (tx, _rx) = mpsc::unbounded_channel();
    let r = call(&session, r#"{"jsonrpc":"2.0","id":1,"method":"nope"}"#, &tx)
        .await
        .unwrap();
    assert_eq!(r["error"]["code"], -32601);
    let r = call(
        &session,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"zzz"}}"#,
        &tx,
    )
    .await
    .unwrap();
    assert_eq!(r["error"]["code"], -32602);
}

#[tokio::test]
async fn version_negotiation() {
    let session = connect(server());
    let (tx, _rx) = mpsc::unbounded_channel();
    for (asked, got) in [
        ("2025-06-18", "2025-06-18"),
        ("2024-11-05", "2024-11-05"),
        ("1999-01-01", LATEST_PROTOCOL_VERSION),
    ] {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"{asked}","capabilities":{{}},"clientInfo":{{"name":"c","version":"1"}}}}}}"#
        );
        let r = call(&session, &line, &tx).await.unwrap();
        assert_eq!(r["result"]["protocolVersion"], got);
    }
}

#[tokio::test]
async fn validation_can_be_skipped() {
    let session = connect(server());
    let (tx, _rx) = mpsc::unbounded_channel();
    let r = call(&session, r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"raw","arguments":{"n":"5"}}}"#, &tx).await.unwrap();
    assert_eq!(r["result"]["structuredContent"], json!({"n": "5"}));
}

#[tokio::test]
async fn dynamic_tools_get_schema_defaults() {
    let session = connect(server());
    let (tx, _rx) = mpsc::unbounded_channel();
    let r = call(
        &session,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"dyn","arguments":{}}}"#,
        &tx,
    )
    .await
    .unwrap();
    assert_eq!(r["result"]["structuredContent"], json!({"n": 3}));
    let r = call(&session, r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"dyn","arguments":{"n":7}}}"#, &tx).await.unwrap();
    assert_eq!(r["result"]["structuredContent"], json!({"n": 7}));
}

// ---- The modern era (2026-07-28): stateless requests carrying their version in `_meta`. ----

#[derive(Deserialize, JsonSchema)]
struct Empty {}

/// A tool written once for both eras: it asks the user's name with `ctx.elicit`.
fn greeter() -> Server {
    let mut s = server();
    s.tool(
        "greet",
        ToolConfig::new(),
        |_: Empty, ctx: crate::Ctx| async move {
            let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
            let answer = ctx.elicit("Your name?", schema).await?;
            let name = answer
                .content
                .and_then(|c| c.get("name").and_then(Value::as_str).map(str::to_string))
                .unwrap_or_default();
            Ok::<_, ToolError>(format!("Hello, {name}!"))
        },
    )
    .unwrap();
    s
}

/// A modern request line: `params` plus the required `_meta`.
fn modern(id: u32, method: &str, mut params: Value, capabilities: Value) -> String {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

#[tokio::test]
async fn modern_discover_lists_version_and_capabilities() {
    let conn = connect(greeter());
    let (tx, _rx) = mpsc::unbounded_channel();
    let r = call(
        &conn,
        &modern(1, "server/discover", json!({}), json!({})),
        &tx,
    )
    .await
    .unwrap();
    let result = &r["result"];
    assert_eq!(result["supportedVersions"], json!(["2026-07-28"]));
    assert!(result["capabilities"]["tools"].is_object());
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["ttlMs"], 0);
    assert_eq!(result["cacheScope"], "private");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "t"
    );
    // A stateless request leaves no session behind and needs no initialize.
    let r = call(&conn, &modern(2, "tools/list", json!({}), json!({})), &tx)
        .await
        .unwrap();
    assert_eq!(r["result"]["resultType"], "complete");
    assert!(r["result"]["tools"].as_array().unwrap().len() >= 6);
}

#[tokio::test]
async fn modern_removed_methods_are_unknown() {
    let conn = connect(server());
    let (tx, _rx) = mpsc::unbounded_channel();
    for method in ["ping", "logging/setLevel", "resources/subscribe"] {
        let r = call(&conn, &modern(1, method, json!({}), json!({})), &tx)
            .await
            .unwrap();
        assert_eq!(r["error"]["code"], -32601, "{method}: {r}");
    }
}

#[tokio::test]
async fn modern_elicit_runs_in_rounds_with_signed_state() {
    let conn = connect(greeter());
    let (tx, mut rx) = mpsc::unbounded_channel();
    let caps = json!({"elicitation": {}});
    let first = call(
        &conn,
        &modern(
            1,
            "tools/call",
            json!({"name": "greet", "arguments": {}}),
            caps.clone(),
        ),
        &tx,
    )
    .await
    .unwrap();
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    let (key, ask) = result["inputRequests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    assert_eq!(ask["method"], "elicitation/create");
    assert_eq!(ask["params"]["message"], "Your name?");
    let state = result["requestState"].as_str().unwrap().to_string();
    // No server-to-client request was sent on the side.
    assert!(rx.try_recv().is_err());

    let answer = json!({"action": "accept", "content": {"name": "Ada"}});
    let second = call(
        &conn,
        &modern(
            2,
            "tools/call",
            json!({"name": "greet", "arguments": {}, "requestState": state,
                   "inputResponses": {key.clone(): answer}}),
            caps.clone(),
        ),
        &tx,
    )
    .await
    .unwrap();
    assert_eq!(second["result"]["resultType"], "complete", "{second}");
    assert_eq!(second["result"]["content"][0]["text"], "Hello, Ada!");

    // A state the client altered is refused before the tool runs.
    // (A character in the middle: the last one of base64 may carry only padding bits.)
    let mut chars: Vec<char> = state.chars().collect();
    let mid = chars.len() / 2;
    chars[mid] = if chars[mid] == 'A' { 'B' } else { 'A' };
    let tampered: String = chars.into_iter().collect();
    let refused = call(
        &conn,
        &modern(
            3,
            "tools/call",
            json!({"name": "greet", "arguments": {}, "requestState": tampered,
                   "inputResponses": {key.clone(): {"action": "accept", "content": {"name": "Eve"}}}}),
            caps,
        ),
        &tx,
    )
    .await
    .unwrap();
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
}

#[tokio::test]
async fn modern_missing_capability_is_32021_with_the_capability_named() {
    let conn = connect(greeter());
    let (tx, _rx) = mpsc::unbounded_channel();
    let r = call(
        &conn,
        &modern(
            1,
            "tools/call",
            json!({"name": "greet", "arguments": {}}),
            json!({}),
        ),
        &tx,
    )
    .await
    .unwrap();
    assert_eq!(r["error"]["code"], -32021, "{r}");
    let data = r["error"]["data"].to_string();
    assert!(data.contains("elicitation"), "{data}");
}

#[tokio::test]
async fn one_session_serves_both_eras() {
    // The same typed tool answers a legacy session and a modern request.
    let conn = connect(server());
    let (tx, _rx) = mpsc::unbounded_channel();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
    let r = call(&conn, init, &tx).await.unwrap();
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
    let legacy = call(&conn, r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"good","arguments":{"sku":"A"}}}"#, &tx).await.unwrap();
    assert!(legacy["result"].get("resultType").is_none(), "{legacy}");
    let modern_call = call(
        &conn,
        &modern(
            3,
            "tools/call",
            json!({"name": "good", "arguments": {"sku": "A"}}),
            json!({}),
        ),
        &tx,
    )
    .await
    .unwrap();
    assert_eq!(modern_call["result"]["resultType"], "complete");
    assert_eq!(
        modern_call["result"]["structuredContent"],
        legacy["result"]["structuredContent"]
    );
}
