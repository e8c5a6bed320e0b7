//! The benchmark server: one tool, `echo {text}` → the text.
//!
//! `cargo run -p picomcp --example echo` (stdio) or `... -- --http 127.0.0.1:8002`.

mod common;

use picomcp::{Ctx, Server, ToolConfig, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct EchoInput {
    /// The text to send back.
    text: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut server = Server::new("echo", env!("CARGO_PKG_VERSION"));
    server.tool(
        "echo",
        ToolConfig::new()
            .description("Echo the text back.")
            .read_only_hint(true),
        |input: EchoInput, _ctx: Ctx| async move { Ok::<_, ToolError>(input.text) },
    )?;
    common::run(server).await
}
