//! The client side of the official MCP conformance suite, on mm's MCP client
//! (`mm_core::mcp`): `mcp-conformance-client URL`, the scenario in `MCP_CONFORMANCE_SCENARIO`.
//!
//! Every scenario runs the same way, as mm does: learn the server's era (`server/discover`,
//! else `initialize`), list the tools, call each one, close. The calls are those of
//! `MCP_CONFORMANCE_CONTEXT`'s `toolCalls` when it has them; otherwise every listed tool,
//! `add_numbers` with `a=5, b=3`, the others without arguments. A modern server's resources
//! and prompts, when it declares them, are listed and each read or got. Elicitation requests
//! are accepted with the schema's defaults (SEP-1034). The JSON Schema scenarios serve a tool
//! to list and no tool to call: there the client lists only (as the suite's own client does). `scripts/mcp/conformance-client.sh`
//! runs the scenarios that need no OAuth, at 2025-11-25 and 2026-07-28.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use mm_core::mcp::{Client, ClientOptions, Era, accept_with_defaults, connect_http};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

const TIMEOUT: Duration = Duration::from_secs(20);

/// Scenarios whose server lists tools it does not serve (the preservation scenario serves only
/// its echo tool, called with the listed schema).
const LIST_ONLY: &[&str] = &[
    "json-schema-ref-no-deref",
    "json-schema-2020-12-preservation",
];

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
        ..ClientOptions::default()
    };
    let client = connect_http(url, &[], options, TIMEOUT)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    eprintln!(
        "era {:?}, version {}",
        client.server().era,
        client.server().protocol_version
    );
    let outcome = exercise(&client).await;
    client.close().await;
    outcome
}

/// The calls `MCP_CONFORMANCE_CONTEXT` asks for, if any: `(name, arguments)`.
fn context_calls() -> Option<Vec<(String, Map<String, Value>)>> {
    let context: Value =
        serde_json::from_str(&std::env::var("MCP_CONFORMANCE_CONTEXT").ok()?).ok()?;
    let calls = context.get("toolCalls")?.as_array()?;
    Some(
        calls
            .iter()
            .filter_map(|call| {
                let name = call.get("name")?.as_str()?.to_string();
                let arguments = call
                    .get("arguments")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                Some((name, arguments))
            })
            .collect(),
    )
}

async fn exercise(client: &Client) -> Result<(), String> {
    let tools = client
        .list_tools(TIMEOUT)
        .await
        .map_err(|e| format!("tools/list: {e}"))?;
    for warning in client.take_warnings() {
        eprintln!("warning: {warning}");
    }
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let never = CancellationToken::new();
    if LIST_ONLY.contains(&scenario.as_str()) {
        // The preservation scenario asks for the focal tool's inputSchema, as the client holds
        // it, back through its echo tool.
        let focal = tools
            .iter()
            .find(|t| t.get("name").and_then(Value::as_str) == Some("json_schema_2020_12_tool"));
        let echo = tools
            .iter()
            .any(|t| t.get("name").and_then(Value::as_str) == Some("json_schema_echo"));
        if let (Some(focal), true) = (focal, echo) {
            let schema = focal.get("inputSchema").cloned().unwrap_or(Value::Null);
            let mut arguments = serde_json::Map::new();
            arguments.insert("schema".into(), schema);
            let result = client
                .call_tool("json_schema_echo", &arguments, TIMEOUT, &never, None)
                .await
                .map_err(|e| format!("tools/call json_schema_echo: {e}"))?;
            eprintln!("json_schema_echo: {result}");
        }
        return Ok(());
    }
    let calls = context_calls().unwrap_or_else(|| {
        tools
            .iter()
            .filter_map(|tool| tool.get("name").and_then(Value::as_str))
            .map(|name| {
                let arguments = match name {
                    "add_numbers" => json!({"a": 5, "b": 3}),
                    _ => json!({}),
                };
                (
                    name.to_string(),
                    arguments.as_object().cloned().unwrap_or_default(),
                )
            })
            .collect()
    });
    for (name, arguments) in &calls {
        let result = client
            .call_tool(name, arguments, TIMEOUT, &never, None)
            .await
            .map_err(|e| format!("tools/call {name}: {e}"))?;
        eprintln!("{name}: {result}");
    }
    if client.server().era == Era::Modern {
        let capabilities = &client.server().capabilities;
        if capabilities.get("resources").is_some() {
            each(
                client,
                "resources/list",
                "resources",
                "uri",
                "resources/read",
            )
            .await?;
        }
        if capabilities.get("prompts").is_some() {
            each(client, "prompts/list", "prompts", "name", "prompts/get").await?;
        }
    }
    Ok(())
}

/// Lists (`list`, the entries under `key`) and asks `get` for each by its `field`.
async fn each(
    client: &Client,
    list: &str,
    key: &str,
    field: &str,
    get: &str,
) -> Result<(), String> {
    let never = CancellationToken::new();
    let listed = client
        .request(list, json!({}), TIMEOUT, &never, None)
        .await
        .map_err(|e| format!("{list}: {e}"))?;
    let entries = listed
        .get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for entry in entries {
        let Some(id) = entry.get(field).and_then(Value::as_str) else {
            continue;
        };
        let result = client
            .request(get, json!({ field: id }), TIMEOUT, &never, None)
            .await
            .map_err(|e| format!("{get} {id}: {e}"))?;
        eprintln!("{get} {id}: {result}");
    }
    Ok(())
}
