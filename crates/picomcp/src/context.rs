//! `Ctx`, the second argument of every handler: cancellation, the request's `_meta`, progress,
//! logging to the client and requests to the client (sampling, elicitation).
//!
//! The same calls work in both protocol eras. In the legacy era (2025-11-25) `ctx.elicit(..)`
//! sends a request to the client and waits for its answer. In the modern era (2026-07-28) a
//! server sends no requests: the call ends the request with an `input_required` result, the
//! client sends the request again with the answer, and the handler, run again from the start,
//! finds it (see `mrtr`). A handler that passes the call's error on with `?` needs no change.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::era::{Era, Modern};
use crate::jsonrpc::{self, ProtocolError, RequestId, code};
use crate::mrtr::{InputRequired, Round, pending_error};
use crate::session::{LogLevel, Outbound, Session};

/// The handler's view of its request and of the client.
///
/// Cheap to clone; clones share the same request.
#[derive(Clone)]
pub struct Ctx {
    inner: Arc<Inner>,
}

struct Inner {
    session: Arc<Session>,
    out: Outbound,
    request_id: RequestId,
    meta: Option<Map<String, Value>>,
    cancel: CancellationToken,
    /// The modern era's per-request client facts; `None` in a legacy session.
    modern: Option<Modern>,
    /// Modern `tools/call`, `prompts/get` and `resources/read` only: answers and state.
    round: Option<Round>,
}

/// The answer to an elicitation request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitResult {
    /// `accept`, `decline` or `cancel`.
    pub action: String,
    /// The user's input, when accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Map<String, Value>>,
}

impl Ctx {
    pub(crate) fn new(
        session: Arc<Session>,
        out: Outbound,
        request_id: RequestId,
        meta: Option<Map<String, Value>>,
        cancel: CancellationToken,
        era: &Era,
        round: Option<Round>,
    ) -> Self {
        let modern = match era {
            Era::Modern(m) => Some(m.clone()),
            Era::Legacy => None,
        };
        Self {
            inner: Arc::new(Inner {
                session,
                out,
                request_id,
                meta,
                cancel,
                modern,
                round,
            }),
        }
    }

    pub(crate) fn round(&self) -> Option<&Round> {
        self.inner.round.as_ref()
    }

    /// Whether the request is served in the modern era (MCP 2026-07-28: per-request `_meta`,
    /// no session).
    pub fn is_modern(&self) -> bool {
        self.inner.modern.is_some()
    }

    /// Modern era: the client's answers to the input requests of earlier rounds, by key
    /// (`inputResponses`, plus those of rounds before the last, which picomcp carries in the
    /// request state). `None` in the legacy era and for methods that cannot ask for input.
    pub fn input_responses(&self) -> Option<&Map<String, Value>> {
        self.round().map(Round::responses)
    }

    /// Modern era: the client's answer to the input request under `key`, if it came.
    pub fn input_response(&self, key: &str) -> Option<&Value> {
        self.input_responses()?.get(key)
    }

    /// Modern era: the state the handler put in its last [`InputRequired`], given back
    /// unaltered (picomcp signs it and refuses a state the client changed).
    pub fn request_state(&self) -> Option<&str> {
        self.round()?.user_state()
    }

    /// Ends the request with `input_required` (MCP 2026-07-28): returns the error to end the
    /// handler with (`return Err(ctx.require_input(..).into())`); picomcp answers with the input
    /// requests whatever the handler returns. Only `tools/call`, `prompts/get` and
    /// `resources/read` may ask for input, and only in the modern era: elsewhere the returned
    /// error says so and is what the client gets.
    pub fn require_input(&self, request: InputRequired) -> ProtocolError {
        match self.round() {
            Some(round) => {
                round.ask(request);
                pending_error()
            }
            None if self.is_modern() => ProtocolError::new(
                code::INVALID_REQUEST,
                "this request cannot ask the client for input (only tools/call, prompts/get and resources/read can)",
            ),
            None => ProtocolError::new(
                code::INVALID_REQUEST,
                "input_required results exist only in MCP 2026-07-28; this client uses an older version",
            ),
        }
    }

    /// A high-level call's answer in the modern era: the client's answer if this round has it,
    /// else the request ends with `input_required` asking for it.
    fn ask_once(&self, kind: &str, method: &str, params: Value) -> Result<Value, ProtocolError> {
        let Some(round) = self.round() else {
            return Err(self.require_input(InputRequired::new()));
        };
        let key = round.next_key(kind);
        if let Some(answer) = round.responses().get(&key) {
            return Ok(answer.clone());
        }
        Err(self.require_input(InputRequired::new().request(key, method, params)))
    }

    /// The JSON-RPC id of the request being handled.
    pub fn request_id(&self) -> &RequestId {
        &self.inner.request_id
    }

    /// The token fired by `notifications/cancelled` for this request. When it fires, picomcp
    /// drops the handler's future and sends no response; pass the token to work you spawn.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.inner.cancel
    }

    /// Whether the client cancelled this request.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }

    /// Resolves when the client cancels this request.
    pub async fn cancelled(&self) {
        self.inner.cancel.cancelled().await;
    }

    /// The `_meta` object the client sent with the request, if any (progress token, tracing).
    pub fn meta(&self) -> Option<&Map<String, Value>> {
        self.inner.meta.as_ref()
    }

    /// The request's progress token, if the client asked for progress.
    pub fn progress_token(&self) -> Option<&Value> {
        self.meta()?.get("progressToken")
    }

    /// The protocol version negotiated with the client.
    pub fn protocol_version(&self) -> Option<String> {
        if let Some(m) = &self.inner.modern {
            return Some(m.version.clone());
        }
        self.inner.session.client().map(|c| c.protocol_version)
    }

    /// The capabilities the client declared: in `initialize` (legacy era) or in this
    /// request's `_meta` (modern era).
    pub fn client_capabilities(&self) -> Option<Value> {
        if let Some(m) = &self.inner.modern {
            return Some(m.capabilities.clone());
        }
        self.inner.session.client().map(|c| c.capabilities)
    }

    /// Sends `notifications/progress` when the request carries a progress token; returns
    /// whether one was sent.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        let Some(token) = self.progress_token() else {
            return false;
        };
        let mut params = Map::new();
        params.insert("progressToken".into(), token.clone());
        params.insert("progress".into(), json!(progress));
        if let Some(t) = total {
            params.insert("total".into(), json!(t));
        }
        if let Some(m) = message {
            params.insert("message".into(), Value::String(m.to_string()));
        }
        self.notify("notifications/progress", &params)
    }

    /// Sends a log message to the client if `level` is at or above the level it asked for
    /// (legacy era: `info` until it calls `logging/setLevel`; modern era: the request's
    /// `io.modelcontextprotocol/logLevel`, and nothing at all without one).
    pub fn log(&self, level: LogLevel, data: impl Serialize) -> bool {
        let threshold = match &self.inner.modern {
            Some(m) => match m.log_level {
                Some(l) => l,
                None => return false,
            },
            None => self.inner.session.log_level(),
        };
        if level < threshold {
            return false;
        }
        let params = json!({ "level": level, "data": data });
        self.notify("notifications/message", &params)
    }

    /// [`Ctx::log`] at `debug`.
    pub fn debug(&self, data: impl Serialize) -> bool {
        self.log(LogLevel::Debug, data)
    }

    /// [`Ctx::log`] at `info`.
    pub fn info(&self, data: impl Serialize) -> bool {
        self.log(LogLevel::Info, data)
    }

    /// [`Ctx::log`] at `warning`.
    pub fn warning(&self, data: impl Serialize) -> bool {
        self.log(LogLevel::Warning, data)
    }

    /// [`Ctx::log`] at `error`.
    pub fn error(&self, data: impl Serialize) -> bool {
        self.log(LogLevel::Error, data)
    }

    /// Sends any notification, related to this request (over HTTP it travels on this request's
    /// SSE stream).
    pub fn notify(&self, method: &str, params: &impl Serialize) -> bool {
        self.inner
            .out
            .send(jsonrpc::encode_notification(method, params))
            .is_ok()
    }

    /// Sends a request to the client and waits for its answer (legacy era only: in the modern
    /// era a server sends no requests; use [`InputRequired`] or `elicit`/`create_message`/
    /// `list_roots`, which work in both).
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, ProtocolError> {
        if self.is_modern() {
            return Err(ProtocolError::new(
                code::INVALID_REQUEST,
                format!(
                    "cannot send {method} to the client: MCP 2026-07-28 has no server-to-client requests"
                ),
            ));
        }
        let session = &self.inner.session;
        let (id, rx) = session.expect_response();
        // Removes the pending entry if this future is dropped (the request was cancelled).
        struct Forget<'a>(&'a Session, &'a RequestId);
        impl Drop for Forget<'_> {
            fn drop(&mut self) {
                self.0.forget_response(self.1);
            }
        }
        let _forget = Forget(session, &id);
        let message = jsonrpc::encode_request(&id, method, Some(&params));
        if self.inner.out.send(message).is_err() {
            return Err(ProtocolError::internal(
                "the connection to the client is closed",
            ));
        }
        match rx.await {
            Ok(result) => result,
            Err(_) => Err(ProtocolError::internal("the client did not answer")),
        }
    }

    fn require_capability(&self, name: &str) -> Result<(), ProtocolError> {
        if let Some(m) = &self.inner.modern {
            if m.has_capability(name) {
                return Ok(());
            }
            return Err(ProtocolError::new(
                code::MISSING_REQUIRED_CLIENT_CAPABILITY,
                format!("Missing required client capability: this request needs {name}"),
            )
            .with_data(json!({ "requiredCapabilities": { name: {} } })));
        }
        let has = self
            .client_capabilities()
            .is_some_and(|c| c.get(name).is_some_and(|v| !v.is_null()));
        if has {
            Ok(())
        } else {
            Err(ProtocolError::new(
                code::INVALID_REQUEST,
                format!("the client does not support {name}"),
            ))
        }
    }

    /// Asks the client's model for a completion (`sampling/createMessage`); `params` are the
    /// request's params (`messages`, `maxTokens`, ...). Fails if the client did not declare the
    /// `sampling` capability.
    pub async fn create_message(&self, params: Value) -> Result<Value, ProtocolError> {
        self.require_capability("sampling")?;
        if self.is_modern() {
            return self.ask_once("sampling", "sampling/createMessage", params);
        }
        self.request("sampling/createMessage", params).await
    }

    /// Asks the user for input (`elicitation/create`) with a flat object schema. Fails if the
    /// client did not declare the `elicitation` capability.
    pub async fn elicit(
        &self,
        message: &str,
        requested_schema: Value,
    ) -> Result<ElicitResult, ProtocolError> {
        self.require_capability("elicitation")?;
        let params = json!({ "message": message, "requestedSchema": requested_schema });
        let value = if self.is_modern() {
            self.ask_once("elicitation", "elicitation/create", params)?
        } else {
            self.request("elicitation/create", params).await?
        };
        serde_json::from_value(value)
            .map_err(|e| ProtocolError::internal(format!("invalid elicitation result: {e}")))
    }

    /// Lists the client's roots (`roots/list`).
    pub async fn list_roots(&self) -> Result<Value, ProtocolError> {
        self.require_capability("roots")?;
        if self.is_modern() {
            return self.ask_once("roots", "roots/list", json!({}));
        }
        self.request("roots/list", json!({})).await
    }
}
