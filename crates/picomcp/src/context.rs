//! `Ctx`, the second argument of every handler: cancellation, the request's `_meta`, progress,
//! logging to the client and requests to the client (sampling, elicitation).

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::jsonrpc::{self, ProtocolError, RequestId, code};
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
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                session,
                out,
                request_id,
                meta,
                cancel,
            }),
        }
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
        self.inner.session.client().map(|c| c.protocol_version)
    }

    /// The capabilities the client declared in `initialize`.
    pub fn client_capabilities(&self) -> Option<Value> {
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
    /// (`info` until it calls `logging/setLevel`).
    pub fn log(&self, level: LogLevel, data: impl Serialize) -> bool {
        if level < self.inner.session.log_level() {
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

    /// Sends a request to the client and waits for its answer.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, ProtocolError> {
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
        let value = self.request("elicitation/create", params).await?;
        serde_json::from_value(value)
            .map_err(|e| ProtocolError::internal(format!("invalid elicitation result: {e}")))
    }

    /// Lists the client's roots (`roots/list`).
    pub async fn list_roots(&self) -> Result<Value, ProtocolError> {
        self.require_capability("roots")?;
        self.request("roots/list", json!({})).await
    }
}
