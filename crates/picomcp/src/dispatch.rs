//! The transport-agnostic dispatcher: one incoming message and its session in, encoded outgoing
//! messages out.
//!
//! A request yields a future that resolves to its encoded response, or to `None` when the
//! request was cancelled (MCP forbids answering a cancelled request). Messages the handler sends
//! while it runs (progress, logs, server-to-client requests) go to the `Outbound` passed in, so a
//! transport decides where they travel: stdout, or the request's own SSE stream.
//!
//! Both protocol eras go through here (see `era`): a legacy request uses its session's state
//! (version, capabilities, log level from `initialize` and `logging/setLevel`); a modern one
//! carries all of that in its `_meta`, and its session is only where it is registered as in
//! flight (the stdio connection's, or a throw-away one per HTTP request). The methods the two
//! eras share are answered by the same code; the modern answer then gets `resultType`, caching
//! hints and `serverInfo` in `_meta`.

use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::context::Ctx;
use crate::era::{Era, META_SERVER_INFO, MODERN_PROTOCOL_VERSIONS};
use crate::jsonrpc::{self, Incoming, ProtocolError, RequestId, code, params_object};
use crate::mrtr::Round;
use crate::prompt::CompleteRequest;
use crate::resource::ResourceRequest;
use crate::result::CallToolResult;
use crate::schema::{invalid_arguments, invalid_output};
use crate::server::ServerInner;
use crate::session::{ClientState, LogLevel, Outbound, Session};
use crate::tool::BoxFuture;

/// The protocol version picomcp prefers.
pub const LATEST_PROTOCOL_VERSION: &str = "2025-11-25";

/// Every legacy (`initialize`-based) protocol version picomcp speaks, newest first. The modern
/// ones are [`MODERN_PROTOCOL_VERSIONS`](crate::MODERN_PROTOCOL_VERSIONS).
pub const SUPPORTED_PROTOCOL_VERSIONS: &[&str] =
    &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// An encoded response, and the error code when it is an error (Streamable HTTP picks the
/// status of a modern error from it).
#[derive(Debug, PartialEq)]
pub(crate) struct Answer {
    pub(crate) body: String,
    pub(crate) error: Option<i64>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Reply {
    Json(Value),
    Tool(CallToolResult),
}

impl Session {
    /// Handles one message. Notifications and responses are handled at once; a request returns
    /// the future that answers it (already registered as in flight, so a cancellation read next
    /// is never missed).
    pub(crate) fn handle(
        self: &Arc<Self>,
        server: &Arc<ServerInner>,
        message: Incoming,
        era: Era,
        out: &Outbound,
    ) -> Option<BoxFuture<Option<Answer>>> {
        match message {
            Incoming::Request { id, method, params } => {
                let token = self.begin(&id);
                let session = Arc::clone(self);
                let server = Arc::clone(server);
                let out = out.clone();
                Some(Box::pin(async move {
                    let work = route(
                        &server,
                        &session,
                        &id,
                        &method,
                        params,
                        &era,
                        out,
                        token.clone(),
                    );
                    let result = tokio::select! {
                        biased;
                        () = token.cancelled() => None,
                        r = work => Some(r),
                    };
                    session.finish(&id);
                    if token.is_cancelled() {
                        return None;
                    }
                    let modern = matches!(era, Era::Modern(_));
                    result.map(|r| match r {
                        Ok(reply) => Answer {
                            body: jsonrpc::encode_result(&id, &reply),
                            error: None,
                        },
                        Err(mut e) => {
                            if modern && e.code == code::RESOURCE_NOT_FOUND {
                                // 2026-07-28 forbids -32002: an unknown resource is a bad param.
                                e.code = code::INVALID_PARAMS;
                            }
                            Answer {
                                body: jsonrpc::encode_error(Some(&id), &e),
                                error: Some(e.code),
                            }
                        }
                    })
                }))
            }
            Incoming::Notification { method, params } => {
                self.notification(&method, params);
                None
            }
            Incoming::Response { id, result } => {
                self.deliver(&id, result);
                None
            }
        }
    }

    fn notification(&self, method: &str, params: Option<Value>) {
        if method == "notifications/cancelled" {
            let id = params
                .as_ref()
                .and_then(|p| p.get("requestId"))
                .and_then(|v| serde_json::from_value::<RequestId>(v.clone()).ok());
            if let Some(id) = id {
                self.cancel(&id);
            }
        }
        // `notifications/initialized`, `roots/list_changed` and unknown notifications need no
        // action.
    }
}

fn take_meta(params: &mut Map<String, Value>) -> Option<Map<String, Value>> {
    match params.remove("_meta") {
        Some(Value::Object(m)) => Some(m),
        _ => None,
    }
}

fn required_str(params: &Map<String, Value>, key: &str) -> Result<String, ProtocolError> {
    params
        .get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| ProtocolError::invalid_params(format!("missing string parameter {key:?}")))
}

#[allow(clippy::too_many_arguments)]
async fn route(
    server: &ServerInner,
    session: &Arc<Session>,
    id: &RequestId,
    method: &str,
    params: Option<Value>,
    era: &Era,
    out: Outbound,
    token: tokio_util::sync::CancellationToken,
) -> Result<Reply, ProtocolError> {
    let mut params = params_object(params)?;
    let Era::Modern(modern) = era else {
        let ctx = |meta| {
            Ctx::new(
                Arc::clone(session),
                out.clone(),
                id.clone(),
                meta,
                token.clone(),
                era,
                None,
            )
        };
        return match method {
            "ping" => Ok(Reply::Json(json!({}))),
            "initialize" => Ok(Reply::Json(initialize(server, session, &params))),
            "resources/subscribe" => {
                session.subscribe(required_str(&params, "uri")?);
                Ok(Reply::Json(json!({})))
            }
            "resources/unsubscribe" => {
                session.unsubscribe(&required_str(&params, "uri")?);
                Ok(Reply::Json(json!({})))
            }
            "logging/setLevel" => {
                let level: LogLevel = params
                    .get("level")
                    .cloned()
                    .and_then(|v| serde_json::from_value(v).ok())
                    .ok_or_else(|| ProtocolError::invalid_params("unknown or missing log level"))?;
                session.set_log_level(level);
                Ok(Reply::Json(json!({})))
            }
            "tools/call" => {
                let meta = take_meta(&mut params);
                let mut result = call_tool(server, params, ctx(meta)).await?;
                // 2025-11-25 and earlier allow only an object here; the JSON text stays.
                if result
                    .structured_content
                    .as_ref()
                    .is_some_and(|v| !v.is_object())
                {
                    result.structured_content = None;
                }
                Ok(Reply::Tool(result))
            }
            _ => shared(server, method, params, ctx).await,
        };
    };
    // Modern: answers and state of earlier rounds (tools/call, prompts/get, resources/read).
    let round = Round::take(&server.state_key, method, &mut params)?;
    let ctx = Ctx::new(
        Arc::clone(session),
        out.clone(),
        id.clone(),
        take_meta(&mut params),
        token.clone(),
        era,
        round,
    );
    let reply = match method {
        "server/discover" => {
            let mut result = Map::new();
            result.insert("supportedVersions".into(), json!(MODERN_PROTOCOL_VERSIONS));
            result.insert("capabilities".into(), server.modern_capabilities());
            if let Some(i) = &server.instructions {
                result.insert("instructions".into(), Value::String(i.clone()));
            }
            Ok(Reply::Json(Value::Object(result)))
        }
        "tools/call" => call_tool(server, params, ctx.clone())
            .await
            .map(Reply::Tool),
        // Gone in 2026-07-28: answered as unknown methods.
        "ping"
        | "initialize"
        | "resources/subscribe"
        | "resources/unsubscribe"
        | "logging/setLevel" => Err(ProtocolError::method_not_found(method)),
        _ => {
            let c = ctx.clone();
            shared(server, method, params, move |_| c.clone()).await
        }
    };
    if let Some(round) = ctx.round() {
        if let Some(asked) = round.finish(&server.state_key, |c| modern.has_capability(c)) {
            return asked.map(Reply::Json);
        }
    }
    let reply = reply?;
    Ok(Reply::Json(complete_modern(server, method, reply)?))
}

/// Methods that cache: their results carry `ttlMs` and `cacheScope` (MCP 2026-07-28).
const CACHEABLE: &[&str] = &[
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];

/// A modern result: `resultType: "complete"`, caching hints where the method caches (stale at
/// once and private: picomcp cannot know how long a handler's answer holds, nor for whom), and
/// the server's identity in `_meta`.
fn complete_modern(
    server: &ServerInner,
    method: &str,
    reply: Reply,
) -> Result<Value, ProtocolError> {
    let value = serde_json::to_value(reply).map_err(|e| ProtocolError::internal(e.to_string()))?;
    let Value::Object(mut result) = value else {
        return Err(ProtocolError::internal("a result must be an object"));
    };
    result.insert("resultType".into(), json!("complete"));
    if CACHEABLE.contains(&method) {
        result.insert("ttlMs".into(), json!(0));
        result.insert("cacheScope".into(), json!("private"));
    }
    let meta = result
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        meta.insert(META_SERVER_INFO.into(), server.info());
    }
    Ok(Value::Object(result))
}

/// The methods both eras answer alike.
async fn shared(
    server: &ServerInner,
    method: &str,
    mut params: Map<String, Value>,
    ctx: impl Fn(Option<Map<String, Value>>) -> Ctx,
) -> Result<Reply, ProtocolError> {
    let reply = match method {
        "tools/list" => {
            let tools: Vec<&Value> = server.tools.iter().map(|t| &t.descriptor).collect();
            json!({ "tools": tools })
        }
        "resources/list" => {
            let list: Vec<&Value> = server.resources.iter().map(|r| &r.descriptor).collect();
            json!({ "resources": list })
        }
        "resources/templates/list" => {
            let list: Vec<&Value> = server.templates.iter().map(|r| &r.descriptor).collect();
            json!({ "resourceTemplates": list })
        }
        "resources/read" => {
            let meta = take_meta(&mut params);
            let uri = required_str(&params, "uri")?;
            read_resource(server, uri, ctx(meta)).await?
        }
        "prompts/list" => {
            let list: Vec<&Value> = server.prompts.iter().map(|p| &p.descriptor).collect();
            json!({ "prompts": list })
        }
        "prompts/get" => {
            let meta = take_meta(&mut params);
            let name = required_str(&params, "name")?;
            let prompt = server
                .prompt(&name)
                .ok_or_else(|| ProtocolError::invalid_params(format!("Unknown prompt: {name}")))?;
            let args = match params.remove("arguments") {
                None | Some(Value::Null) => Value::Object(Map::new()),
                Some(v) => v,
            };
            let result = prompt.get(args, ctx(meta)).await?;
            serde_json::to_value(result).map_err(|e| ProtocolError::internal(e.to_string()))?
        }
        "completion/complete" => {
            let Some(handler) = &server.completion else {
                return Err(ProtocolError::method_not_found(method));
            };
            let meta = take_meta(&mut params);
            let request: CompleteRequest = serde_json::from_value(Value::Object(params))
                .map_err(|e| ProtocolError::invalid_params(format!("Invalid params: {e}")))?;
            let completion = handler(request, ctx(meta)).await?;
            json!({ "completion": completion })
        }
        other => return Err(ProtocolError::method_not_found(other)),
    };
    Ok(Reply::Json(reply))
}

fn initialize(server: &ServerInner, session: &Session, params: &Map<String, Value>) -> Value {
    let requested = params
        .get("protocolVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let version = SUPPORTED_PROTOCOL_VERSIONS
        .iter()
        .find(|v| **v == requested)
        .copied()
        .unwrap_or(LATEST_PROTOCOL_VERSION);
    let capabilities = params
        .get("capabilities")
        .cloned()
        .unwrap_or_else(|| json!({}));
    session.set_client(ClientState {
        protocol_version: version.to_string(),
        capabilities,
    });
    let mut result = Map::new();
    result.insert("protocolVersion".into(), Value::String(version.to_string()));
    result.insert("capabilities".into(), server.capabilities());
    result.insert("serverInfo".into(), server.info());
    if let Some(i) = &server.instructions {
        result.insert("instructions".into(), Value::String(i.clone()));
    }
    Value::Object(result)
}

async fn call_tool(
    server: &ServerInner,
    mut params: Map<String, Value>,
    ctx: Ctx,
) -> Result<CallToolResult, ProtocolError> {
    let name = required_str(&params, "name")?;
    let tool = server
        .tool(&name)
        .ok_or_else(|| ProtocolError::invalid_params(format!("Unknown tool: {name}")))?;
    let mut args = match params.remove("arguments") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(v) => v,
    };
    if let Some(Err(lines)) = tool.input.as_ref().map(|schema| schema.validate(&args)) {
        return Ok(CallToolResult::error(invalid_arguments(&name, &lines)));
    }
    // After validation: an error must only name what the caller sent.
    tool.apply_defaults(&mut args);
    let result = match (tool.handler)(args, ctx).await {
        Ok(result) => result,
        Err(e) => return e.into_outcome(),
    };
    if let (Some(schema), false) = (&tool.output, result.is_error) {
        let Some(value) = &result.structured_content else {
            let message = format!(
                "Tool \"{name}\" declares an output schema but returned no structured content"
            );
            return Ok(CallToolResult::error(message));
        };
        if let Err(lines) = schema.validate(value) {
            return Ok(CallToolResult::error(invalid_output(&name, &lines)));
        }
    }
    Ok(result)
}

async fn read_resource(
    server: &ServerInner,
    uri: String,
    ctx: Ctx,
) -> Result<Value, ProtocolError> {
    let (handler, params) = if let Some(entry) = server.resource(&uri) {
        (&entry.handler, Default::default())
    } else {
        server
            .templates
            .iter()
            .find_map(|t| t.template.matches(&uri).map(|vars| (&t.handler, vars)))
            .ok_or_else(|| {
                ProtocolError::new(
                    code::RESOURCE_NOT_FOUND,
                    format!("Resource not found: {uri}"),
                )
                .with_data(json!({ "uri": uri }))
            })?
    };
    let contents = handler(ResourceRequest { uri, params }, ctx).await?;
    Ok(json!({ "contents": contents }))
}

#[cfg(test)]
#[path = "dispatch_tests.rs"]
mod tests;
