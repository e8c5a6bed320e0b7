//! The client side of the official MCP conformance suite, on mm's MCP client
//! (`mm_core::mcp`): `mcp-conformance-client URL`, the scenario in `MCP_CONFORMANCE_SCENARIO`.
//!
//! Every scenario runs the same way, as mm does: initialize, list the tools, call each one
//! (`add_numbers` with `a=5, b=3`, the others without arguments), close. Elicitation requests
//! are accepted with the schema's defaults (SEP-1034). `scripts/mcp/conformance-client.sh`
//! runs the scenarios that need no OAuth.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use mm_core::mcp::{ClientOptions, accept_with_defaults, connect_http};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

const TIMEOUT: Duration = Duration::from_secs(20);

#[tokio::main]
async fn main() -> ExitCode {
    let Some(url) = std::env::args().nth(1) else {
        eprintln!("usage: mcp-conformance-client URL (scenario in MCP_CONFORMANCE_SCENARIO)");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    match run(&url).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp-conformance-client ({scenario}): {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(url: &str) -> Result<(), String> {
    let options = ClientOptions {
        elicitation: Some(Arc::new(accept_with_defaults)),
    };
    let client = connect_http(url, &[], options, TIMEOUT)
        .await
        .map_err(|e| format!("initialize: {e}"))?;
    let outcome = exercise(&client).await;
    client.close().await;
    outcome
}

async fn exercise(client: &mm_core::mcp::Client) -> Result<(), String> {
    let tools = client
        .list_tools(TIMEOUT)
        .await
        .map_err(|e| format!("tools/list: {e}"))?;
    let never = CancellationToken::new();
    for tool in &tools {
        let Some(name) = tool.get("name").and_then(Value::as_str) else {
            continue;
        };
        let arguments = match name {
            "add_numbers" => json!({"a": 5, "b": 3}),
            _ => json!({}),
        };
        let arguments: Map<String, Value> = arguments.as_object().cloned().unwrap_or_default();
        let result = client
            .call_tool(name, &arguments, TIMEOUT, &never, None)
            .await
            .map_err(|e| format!("tools/call {name}: {e}"))?;
        eprintln!("{name}: {result}");
    }
    Ok(())
}
