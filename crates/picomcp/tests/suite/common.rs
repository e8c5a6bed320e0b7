//! The server under test and the expected validation messages, shared by both transports.

use std::time::Duration;

use picomcp::{Ctx, Server, ToolConfig, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct SearchInput {
    /// owner/name
    repo: String,
    query: String,
    #[serde(default = "ten")]
    #[schemars(range(max = 50))]
    limit: u32,
    #[serde(default)]
    state: State,
}

#[derive(Deserialize, JsonSchema, Default)]
#[serde(rename_all = "lowercase")]
pub enum State {
    #[default]
    Open,
    Closed,
}

fn ten() -> u32 {
    10
}

#[derive(Deserialize, JsonSchema)]
pub struct SlowInput {
    seconds: f64,
}

pub fn server() -> Server {
    let mut s = Server::new("test", "1.0.0");
    s.tool(
        "search_issues",
        ToolConfig::new().description("Search issues."),
        |i: SearchInput, _: Ctx| async move {
            Ok::<_, ToolError>(format!("{} {} {}", i.repo, i.query, i.limit))
        },
    )
    .unwrap();
    s.tool(
        "slow",
        ToolConfig::new().description("Waits."),
        |i: SlowInput, ctx: Ctx| async move {
            ctx.progress(0.0, Some(1.0), None);
            tokio::time::sleep(Duration::from_secs_f64(i.seconds)).await;
            Ok::<_, ToolError>("done")
        },
    )
    .unwrap();
    s.tool(
        "ask",
        ToolConfig::new().description("Asks the user for a name."),
        |_: picomcp::NoArgs, ctx: Ctx| async move {
            let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
            let answer = ctx.elicit("Your name?", schema).await?;
            Ok::<_, ToolError>(format!("{} {}", answer.action, json!(answer.content)))
        },
    )
    .unwrap();
    s.resource(
        "test://doc",
        picomcp::ResourceConfig::new("doc").mime_type("text/plain"),
        |r: picomcp::ResourceRequest, _: Ctx| async move {
            Ok(picomcp::ResourceContents::text(
                r.uri,
                "text/plain",
                "hello",
            ))
        },
    )
    .unwrap();
    s
}

pub fn initialize(id: i64, version: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
}

pub fn call(id: i64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}})
}

const PREFIX: &str = "Invalid arguments for tool \"search_issues\":\n";

/// (arguments, expected tool-error text) for each kind of validation failure.
pub fn validation_cases() -> Vec<(Value, String)> {
    let cases = [
        (
            json!({"repo": 1, "query": "q"}),
            "repo: Invalid input: expected string, received number",
        ),
        (
            json!({"repo": "a/b", "query": "q", "limit": 51}),
            "limit: Too big: expected number to be <=50",
        ),
        (json!({"repo": "a/b"}), "query: Required"),
        (
            json!({"repo": "a/b", "query": "q", "unknown_field": true}),
            "unknown_field: Unrecognized key",
        ),
        (
            json!({"repo": "a/b", "query": "q", "state": "merged"}),
            r#"state: Invalid option: expected one of "open"|"closed""#,
        ),
    ];
    cases
        .into_iter()
        .map(|(args, line)| (args, format!("{PREFIX}{line}")))
        .collect()
}

/// Asserts that `response` is a tool error with exactly `text`.
pub fn assert_tool_error(response: &Value, text: &str) {
    assert_eq!(response["result"]["isError"], true, "{response}");
    assert_eq!(response["result"]["content"][0]["text"], text, "{response}");
}
