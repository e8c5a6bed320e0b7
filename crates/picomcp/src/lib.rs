//! picomcp: a small, strict library for writing MCP servers.
//!
//! A tool is an async function from a typed input to a value. picomcp derives the input's JSON
//! Schema (2020-12 dialect), validates every call against it *before* the handler runs — a
//! failure is a tool error naming each field, which the model can read and fix — converts the
//! return value into an MCP result, and serves the lot over stdio or Streamable HTTP.
//!
//! ```
//! use picomcp::{Ctx, Server, ToolConfig, ToolError};
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//!
//! #[derive(Deserialize, JsonSchema)]
//! #[serde(deny_unknown_fields)]
//! struct Add {
//!     /// First term.
//!     a: i64,
//!     /// Second term.
//!     #[serde(default)]
//!     b: i64,
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut server = Server::new("calc", "0.1.0");
//! server.tool(
//!     "add",
//!     ToolConfig::new().description("Add two integers.").read_only_hint(true),
//!     |input: Add, _ctx: Ctx| async move { Ok::<_, ToolError>(input.a + input.b) },
//! )?;
//! // An invalid or duplicate name fails here, at start-up:
//! assert!(server.tool("add", ToolConfig::new(), |_: Add, _: Ctx| async { Ok::<_, ToolError>(()) }).is_err());
//! assert!(server.tool("no spaces", ToolConfig::new(), |_: Add, _: Ctx| async { Ok::<_, ToolError>(()) }).is_err());
//! // Then: `server.serve_stdio().await?` or
//! // `picomcp::http::serve(server, "127.0.0.1:8000", picomcp::http::HttpConfig::default()).await?`.
//! # Ok(())
//! # }
//! ```
//!
//! Both protocol eras are served on one endpoint, with the same handlers: the legacy one
//! (2025-11-25 and earlier: `initialize`, sessions) and the modern one (2026-07-28: every
//! request carries its version and the client's capabilities in `_meta`, `server/discover`, no
//! session); see `era`, and `mrtr` for the modern way of asking the client for input.
//!
//! Modules: `jsonrpc` (wire types), `schema` (generation and zod-worded validation), `tool`,
//! `resource`, `prompt`, `context` ([`Ctx`]), `server` (the builder), `dispatch` (the
//! transport-agnostic message handler) and [`transport`] (`stdio`, `http`).

mod content;
mod context;
mod dispatch;
mod era;
pub mod jsonrpc;
mod mrtr;
mod prompt;
mod resource;
mod result;
mod schema;
mod server;
mod session;
mod tool;
pub mod transport;

pub use content::{
    Base64, Content, ResourceContents, ResourceLink, audio, embedded, image, resource_link, text,
};
pub use context::{Ctx, ElicitResult};
pub use dispatch::{LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS};
pub use era::{
    META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL, META_PROTOCOL_VERSION,
    META_SERVER_INFO, MODERN_PROTOCOL_VERSIONS, decode_header_value, encode_header_value,
    param_header_text,
};
pub use jsonrpc::{ProtocolError, RequestId, code};
pub use mrtr::InputRequired;
pub use prompt::{
    CompleteArgument, CompleteRequest, Completion, GetPromptResult, IntoPromptResult, PromptConfig,
    PromptMessage, Role,
};
pub use resource::{IntoResourceContents, ResourceConfig, ResourceRequest};
pub use result::{CallToolResult, IntoToolResult, Json, ToolError};
pub use schema::schema_for;
pub use server::{Server, ServerHandle};
pub use session::LogLevel;
pub use tool::{RegisterError, ToolAnnotations, ToolConfig, ToolName};
pub use transport::{http, stdio};

/// Re-exported so a tool's input type can derive `JsonSchema` with the same version.
pub use schemars;

/// The input of a tool or prompt without arguments: `{"type": "object", "properties": {}}`.
#[derive(Debug, Clone, Copy, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct NoArgs {}
