//! An MCP server for mm's MCP tests (picomcp): every call it receives, and every cancellation,
//! is appended as one JSON line to the file named by `MCP_RECORD_LOG`.
//!
//! `mcp_recorder` (stdio) or `mcp_recorder --http 127.0.0.1:PORT` (Streamable HTTP at `/mcp`).
//! Tools: `record {text, count, tags?, mode?}`, `wait {seconds}` (progress every 100 ms,
//! cancellable), `picture` (an image block), `status` and `grep` (names a declared tool or a built-in
//! holds).

use std::io::Write;
use std::time::Duration;

use picomcp::http::HttpConfig;
use picomcp::{Ctx, NoArgs, Server, ToolConfig, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RecordInput {
    /// The text to record.
    text: String,
    /// How many times.
    count: i64,
    /// Labels for the record.
    #[serde(default)]
    tags: Vec<String>,
    /// How to record.
    #[serde(default)]
    mode: Mode,
}

#[derive(Deserialize, Serialize, JsonSchema, Default)]
#[serde(rename_all = "lowercase")]
enum Mode {
    #[default]
    Append,
    Replace,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WaitInput {
    /// Seconds to wait.
    seconds: f64,
}

fn log(entry: Value) {
    let Some(path) = std::env::var_os("MCP_RECORD_LOG") else {
        return;
    };
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = writeln!(file, "{entry}");
    }
}

const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut server = Server::new("recorder", "0.0.0");
    server.tool(
        "record",
        ToolConfig::new().description("Record a text some number of times."),
        |input: RecordInput, _ctx: Ctx| async move {
            log(json!({"tool": "record", "arguments": serde_json::to_value(&input).unwrap_or_default()}));
            Ok::<_, ToolError>(format!("recorded {} x{}", input.text, input.count))
        },
    )?;
    server.tool(
        "wait",
        ToolConfig::new().description("Wait some seconds, reporting progress."),
        |input: WaitInput, ctx: Ctx| async move {
            log(json!({"tool": "wait", "arguments": {"seconds": input.seconds}}));
            // The handler is dropped on cancellation: the watcher outlives it to say so.
            let token = ctx.cancellation().clone();
            tokio::spawn(async move {
                token.cancelled().await;
                log(json!({"cancelled": "wait"}));
            });
            let ticks = (input.seconds * 10.0).ceil() as u32;
            for i in 0..ticks {
                ctx.progress(f64::from(i), Some(f64::from(ticks)), Some("waiting"));
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Ok::<_, ToolError>(format!("waited {}s", input.seconds))
        },
    )?;
    server.tool(
        "picture",
        ToolConfig::new().description("A tiny picture."),
        |_: NoArgs, _ctx: Ctx| async move {
            Ok::<_, ToolError>(vec![
                picomcp::text("a 1x1 PNG:"),
                picomcp::image(picomcp::Base64(PNG_1X1.into()), "image/png"),
            ])
        },
    )?;
    server.tool(
        "status",
        ToolConfig::new().description("The recorder's own status."),
        |_: NoArgs, _ctx: Ctx| async move { Ok::<_, ToolError>("recorder status: fine") },
    )?;
    server.tool(
        "grep",
        ToolConfig::new().description("A name a built-in holds."),
        |_: NoArgs, _ctx: Ctx| async move { Ok::<_, ToolError>("recorder grep") },
    )?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => server.serve_stdio().await?,
        [flag, addr] if flag == "--http" => {
            picomcp::http::serve(server, addr.as_str(), HttpConfig::default()).await?;
        }
        _ => return Err("usage: mcp_recorder [--http ADDR]".into()),
    }
    Ok(())
}
