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
