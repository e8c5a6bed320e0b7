//! mm's MCP client (`mm_core::mcp`) against a server written with the official TypeScript SDK
//! 2.x (`interop/reference/ts2-server.mjs`, run by Node 22 from `MM_NODE`, as
//! `scripts/test.sh` sets it), over stdio and Streamable HTTP: the era the client discovers,
//! structured results, and an elicitation round (`input_required` in the modern era, the SDK's
//! server->client `elicitation/create` in the legacy one).

#![allow(
    clippy::expect_used,
    reason = "a test fails by panicking; the helpers are part of the tests"
)]
#![allow(
    clippy::disallowed_methods,
    reason = "the test starts its peer, the TypeScript server, itself"
)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mm_core::SandboxMode;
use mm_core::mcp::{
    CallError, Client, ClientOptions, ElicitHandler, Era, McpProtocol, StdioCommand, connect_http,
    connect_stdio,
};
use mm_test_support::HttpPeer;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const TIMEOUT: Duration = Duration::from_secs(20);

fn node() -> Option<PathBuf> {
    let node = std::env::var_os("MM_NODE").map(PathBuf::from);
    if node.is_none() {
        eprintln!("skipped: MM_NODE (Node 22) is not set; scripts/test.sh sets it");
    }
    node
}

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../interop/reference/ts2-server.mjs")
}

/// The server on Streamable HTTP on a free loopback port; killed when dropped.
fn http_server(node: &Path) -> HttpPeer {
    let mut command = Command::new(node);
    command.arg(script());
    HttpPeer::start(command, "ts2-server.mjs")
}

/// An elicitation handler that accepts as `who: "mm-core"` and keeps what it was asked.
fn accepting() -> (ElicitHandler, Arc<Mutex<Vec<Value>>>) {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    let handler: ElicitHandler = Arc::new(move |params: &Value| {
        seen.lock().expect("lock").push(params.clone());
        json!({"action": "accept", "content": {"who": "mm-core"}})
    });
    (handler, asked)
}

async fn start_stdio(node: &Path, options: ClientOptions) -> Client {
    let args = [script().display().to_string()];
    let cwd = std::env::temp_dir();
    let server = StdioCommand {
        program: node,
        args: &args,
        env: &[],
        cwd: &cwd,
        sandbox: SandboxMode::Off,
    };
    connect_stdio(server, None, options, TIMEOUT)
        .await
        .expect("connect over stdio")
}

async fn call(client: &Client, name: &str, arguments: Value) -> Result<Value, CallError> {
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object")
    };
    client
        .call_tool(name, &arguments, TIMEOUT, &CancellationToken::new(), None)
        .await
}

fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("")
        })
        .unwrap_or_default()
}

/// Era, tools, a structured result and an elicitation round on one connection.
async fn exercise(client: &Client, asked: &Mutex<Vec<Value>>, era: Era, version: &str) {
    let info = client.server();
    assert_eq!(info.era, era);
    assert_eq!(info.protocol_version, version);
    assert_eq!(info.name, "ts2-reference");
    assert!(info.capabilities.get("tools").is_some(), "{info:?}");

    let tools = client.list_tools(TIMEOUT).await.expect("tools/list");
    let mut names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["add", "confirm", "echo", "era"]);
    let add = tools.iter().find(|t| t["name"] == "add").expect("add");
    assert_eq!(add["outputSchema"]["properties"]["sum"]["type"], "integer");

    let served = call(client, "era", json!({})).await.expect("era");
    let expected = match era {
        Era::Modern => format!("era=modern version={version}"),
        Era::Legacy => "era=legacy version=none".to_string(),
    };
    assert_eq!(text(&served), expected);

    let sum = call(client, "add", json!({"a": 2, "b": 3}))
        .await
        .expect("add");
    assert_eq!(sum["structuredContent"], json!({"sum": 5}));
    assert_eq!(text(&sum), "2 + 3 = 5");
    assert_ne!(sum["isError"], json!(true));

    // The server gets the answer to its elicitation and finishes the call with it.
    let confirmed = call(client, "confirm", json!({"action": "deploy"}))
        .await
        .expect("confirm");
    assert_eq!(
        text(&confirmed),
        "confirmed deploy by mm-core",
        "{confirmed}"
    );
    let asked = asked.lock().expect("lock");
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["message"], "Confirm deploy?");
    assert_eq!(
        asked[0]["requestedSchema"]["properties"]["who"]["type"],
        "string"
    );
}

#[tokio::test]
async fn a_typescript_sdk_2_server_over_stdio_is_modern_and_its_elicitation_answered() {
    let Some(node) = node() else { return };
    let (handler, asked) = accepting();
    let options = ClientOptions {
        elicitation: Some(handler),
        ..ClientOptions::default()
    };
    let client = start_stdio(&node, options).await;
    exercise(&client, &asked, Era::Modern, "2026-07-28").await;
    client.close().await;
}

#[tokio::test]
async fn a_typescript_sdk_2_server_over_http_is_modern_and_its_elicitation_answered() {
    let Some(node) = node() else { return };
    let server = http_server(&node);
    let (handler, asked) = accepting();
    let options = ClientOptions {
        elicitation: Some(handler),
        ..ClientOptions::default()
    };
    let client = connect_http(&server.url, &[], options, TIMEOUT)
        .await
        .expect("connect over HTTP");
    exercise(&client, &asked, Era::Modern, "2026-07-28").await;
    client.close().await;
}

/// `protocol: legacy` against the same server: `initialize` at 2025-11-25, and the elicitation
/// comes as the SDK's own `elicitation/create` request (its legacy shim), answered the same.
#[tokio::test]
async fn a_typescript_sdk_2_server_pinned_legacy_over_stdio_speaks_2025_11_25() {
    let Some(node) = node() else { return };
    let (handler, asked) = accepting();
    let options = ClientOptions {
        elicitation: Some(handler),
        protocol: McpProtocol::Legacy,
    };
    let client = start_stdio(&node, options).await;
    exercise(&client, &asked, Era::Legacy, "2025-11-25").await;
    client.close().await;
}

/// A client that cannot elicit declares no `elicitation` capability: the modern server refuses
/// the call that needs it (`MissingRequiredClientCapability`, -32021) instead of asking.
#[tokio::test]
async fn without_an_elicitation_handler_a_modern_server_says_the_capability_is_missing() {
    let Some(node) = node() else { return };
    let client = start_stdio(&node, ClientOptions::default()).await;
    assert_eq!(client.server().era, Era::Modern);
    let refused = call(&client, "confirm", json!({"action": "deploy"})).await;
    match refused {
        Err(CallError::Protocol(error)) => assert_eq!(error.code, -32021, "{error:?}"),
        other => panic!("expected -32021, got {other:?}"),
    }
    // The connection is still usable.
    let echoed = call(&client, "echo", json!({"text": "still here"}))
        .await
        .expect("echo");
    assert_eq!(text(&echoed), "still here");
    client.close().await;
}
