//! Benchmark peer: trivial `echo` tool served by rmcp (official Rust MCP SDK).
//!
//!   rmcp-echo                       # stdio
//!   rmcp-echo --http 127.0.0.1:PORT # Streamable HTTP at /mcp, stateful sessions
//!   rmcp-echo --http ADDR --stateless-json  # stateless, JSON responses
use std::sync::Arc;

use axum::serve::ListenerExt;

use rmcp::{
    ServerHandler, ServiceExt,
    handler::server::{router::tool::ToolRouter, wrapper::Parameters},
    tool, tool_handler, tool_router,
    transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    },
};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// Text to echo back.
    text: String,
}

#[derive(Clone)]
struct Echo {
    #[allow(dead_code)] // read through the #[tool_handler] expansion
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Echo {
    fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
        }
    }

    #[tool(description = "Echo the text back")]
    async fn echo(&self, Parameters(args): Parameters<EchoArgs>) -> String {
        args.text
    }
}

#[tool_handler]
impl ServerHandler for Echo {}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        None => {
            let service = Echo::new().serve(rmcp::transport::stdio()).await?;
            service.waiting().await?;
        }
        Some("--http") => {
            let addr = args.get(1).ok_or("--http needs ADDR")?.clone();
            let mut config = StreamableHttpServerConfig::default();
            config.sse_keep_alive = None;
            if args.iter().any(|a| a == "--stateless-json") {
                config.legacy_session_mode = false;
                config.json_response = true;
            }
            let service = StreamableHttpService::new(
                || Ok(Echo::new()),
                Arc::new(LocalSessionManager::default()),
                config,
            );
            let router = axum::Router::new().nest_service("/mcp", service);
            // TCP_NODELAY: without it, small SSE writes meet delayed ACKs (~40 ms).
            let listener = tokio::net::TcpListener::bind(&addr).await?.tap_io(|tcp| {
                let _ = tcp.set_nodelay(true);
            });
            axum::serve(listener, router).await?;
        }
        Some(other) => return Err(format!("unknown argument {other}").into()),
    }
    Ok(())
}
