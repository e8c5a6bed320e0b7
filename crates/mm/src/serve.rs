//! `mm serve`: the agent file's declared tools as an MCP server (SPEC §8), over stdio (default)
//! or Streamable HTTP (`--http 127.0.0.1:PORT`), through picomcp.
//!
//! Every call goes through mm-core's call pipeline, as in a turn, minus consent (the MCP client
//! asks its own user): the same lenient validation and coercion (an invalid call is a tool error
//! whose text says what was wrong), argv substitution, timeouts, truncation and hooks. The
//! client sees each tool's strict schema (`required`, `enum`); picomcp's own schema check is
//! off so that mm's validator is the only one.

use std::net::SocketAddr;
use std::sync::Arc;

use mm_core::provider::ToolCall;
use mm_core::{CallPipeline, CallState, Consent, Event, EventSink, Hooks, Registry};
use picomcp::{Server, ToolConfig, ToolError};

use crate::Failure;
use crate::render;
use crate::setup::Env;

/// Serves until the client goes away (stdio: stdin ends) or a signal ends mm.
pub async fn run(env: Env, http: Option<SocketAddr>) -> Result<u8, Failure> {
    if env.config.tools.is_empty() {
        return Err(Failure::usage(format!(
            "{}: no declared tools to serve (`tools:` in the agent file)",
            env.source
        )));
    }
    let server = server(&env)?;
    let served = match http {
        None => server.serve_stdio().await,
        Some(addr) => {
            if !addr.ip().is_loopback() {
                eprintln!(
                    "mm: warning: serving on {addr}, not loopback: only loopback Origin and Host \
                     headers are accepted"
                );
            }
            eprintln!("mm: serving MCP at http://{addr}/mcp");
            picomcp::http::serve(server, addr, picomcp::http::HttpConfig::default()).await
        }
    };
    served.map_err(|e| Failure::runtime(format!("mm serve: {e}")))?;
    Ok(crate::exit::OK)
}

fn server(env: &Env) -> Result<Server, Failure> {
    let name = env.config.name.clone().unwrap_or_else(|| "mm".into());
    let mut server = Server::new(name, env!("CARGO_PKG_VERSION"));
    let registry = Arc::new(Registry::declared(&env.config));
    // Warnings (a failing postToolCall hook) go to stderr; stdout may be the protocol.
    let events: EventSink = Arc::new(|event| {
        if let Event::Warning { message } = event {
            render::warn(message);
        }
    });
    let hooks = Hooks::new(env.config.hooks.clone());
    for tool in &env.config.tools {
        let config = ToolConfig::new()
            .description(tool.description.clone())
            .input_schema(tool.params.mcp_schema())
            .skip_input_validation();
        let registry = registry.clone();
        let events = events.clone();
        let hooks = hooks.clone();
        let cwd = env.cwd.clone();
        let limits = env.config.limits;
        let name = tool.name.clone();
        server
            .tool_dynamic(tool.name.clone(), config, move |args, ctx| {
                let registry = registry.clone();
                let events = events.clone();
                let hooks = hooks.clone();
                let cwd = cwd.clone();
                let name = name.clone();
                async move {
                    let pipeline =
                        CallPipeline::new(&registry, cwd, limits, Consent::Granted, events)
                            .with_hooks(hooks);
                    let call = ToolCall {
                        id: ctx.request_id().to_string(),
                        name,
                        arguments: args.to_string(),
                    };
                    let mut state = CallState::default();
                    let (result, _) = pipeline.handle(&call, &mut state, ctx.cancellation()).await;
                    if result.ok {
                        Ok(result.content)
                    } else {
                        Err(ToolError::new(result.content))
                    }
                }
            })
            .map_err(|e| Failure::usage(format!("mm serve: tool {}: {e}", tool.name)))?;
    }
    Ok(server)
}
