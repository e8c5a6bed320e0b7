//! The MCP client proper: JSON-RPC requests and their answers over a [`Transport`], the
//! server's own requests (ping, elicitation) and notifications (progress, tools changed).
//!
//! The wire types are picomcp's ([`picomcp::jsonrpc`]): one set for both sides.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use picomcp::jsonrpc::{
    Incoming, encode_error, encode_notification, encode_request, encode_result,
};
use picomcp::{ProtocolError, RequestId};
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::tools::{Progress, ProgressSink};

/// The protocol version mm asks for.
pub const PROTOCOL_VERSION: &str = "2025-11-25";

/// The versions mm speaks; a server answering another one is refused.
pub const SUPPORTED_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The most `tools/list` pages read from one server (a server whose cursor never ends).
const MAX_PAGES: usize = 100;

/// Where a transport delivers what the server sends.
pub(crate) type Inbox = mpsc::UnboundedSender<Incoming>;

/// The largest message read from a server, over either transport: a larger one is refused
/// rather than held in memory (a 200 MB `initialize` answer once took 409 MB).
pub(crate) const MAX_MESSAGE: usize = 16 << 20;

/// A message that could not be read as JSON-RPC but is, as far as can be seen without reading
/// its content, the answer to a request (an `id`, a `result` or an `error`, no `method`): that
/// request's error answer, saying why, so that the caller is told instead of waiting for an
/// answer that will never be read. serde_json skips the content it ignores without its nesting
/// limit, so a message nested too deep to read still gives its `id`.
pub(crate) fn unreadable_answer(bytes: &[u8], why: &str) -> Option<Incoming> {
    #[derive(serde::Deserialize)]
    struct Envelope {
        id: Option<RequestId>,
        method: Option<serde::de::IgnoredAny>,
        result: Option<serde::de::IgnoredAny>,
        error: Option<serde::de::IgnoredAny>,
    }
    let envelope: Envelope = serde_json::from_slice(bytes).ok()?;
    let answer =
        envelope.method.is_none() && (envelope.result.is_some() || envelope.error.is_some());
    let id = envelope.id.filter(|_| answer)?;
    Some(Incoming::Response {
        id,
        result: Err(ProtocolError::new(
            picomcp::code::PARSE_ERROR,
            format!("the server's answer cannot be read: {why}"),
        )),
    })
}

/// Moves encoded JSON-RPC messages to a server and delivers its messages to the inbox given
/// when the transport was made.
#[async_trait]
pub(crate) trait Transport: Send + Sync {
    /// Sends one message; `request` is its id when an answer is expected (it arrives on the
    /// inbox, or the transport delivers an error answer for that id when it cannot come).
    async fn send(&self, message: String, request: Option<&RequestId>) -> Result<(), String>;
    /// The server answered `initialize` with this version.
    fn initialized(&self, _protocol_version: &str) {}
    /// Ends the connection (HTTP: DELETE the session; stdio: close stdin, then kill).
    async fn close(&self);
    /// What the transport knows of why the server went away (stdio: its last stderr line).
    fn diagnostic(&self) -> Option<String> {
        None
    }
}

/// Answers a server's `elicitation/create`: its params in, the result out (`{"action": ...}`).
pub type ElicitHandler = Arc<dyn Fn(&Value) -> Value + Send + Sync>;

/// How the client presents itself.
#[derive(Clone, Default)]
pub struct ClientOptions {
    /// When set, the client declares the `elicitation` capability and answers with this.
    pub elicitation: Option<ElicitHandler>,
}

/// Why a request got no result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// The server answered with a JSON-RPC error.
    #[error("{} (code {})", .0.message, .0.code)]
    Protocol(ProtocolError),
    /// The message could not be sent or its answer not read.
    #[error("{0}")]
    Transport(String),
    /// The connection is gone.
    #[error("the connection is closed{}", .0.as_deref().map(|d| format!(": {d}")).unwrap_or_default())]
    Closed(Option<String>),
    #[error("no answer after {}s", .0.as_secs_f64())]
    TimedOut(Duration),
    #[error("cancelled")]
    Cancelled,
}

/// What the server said about itself in `initialize`.
#[derive(Debug, Clone, Default)]
pub struct ServerInfo {
    pub protocol_version: String,
    pub name: String,
    pub version: String,
    pub capabilities: Value,
    pub instructions: Option<String>,
}

type Pending = HashMap<RequestId, oneshot::Sender<Result<Value, ProtocolError>>>;

struct Shared {
    pending: Mutex<Pending>,
    progress: Mutex<HashMap<String, ProgressSink>>,
    tools_changed: AtomicBool,
    closed: CancellationToken,
    options: ClientOptions,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A connection to one MCP server, initialized.
pub struct Client {
    transport: Arc<dyn Transport>,
    shared: Arc<Shared>,
    next_id: AtomicI64,
    server: ServerInfo,
    reader: tokio::task::JoinHandle<()>,
}

impl Drop for Client {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl Client {
    /// Starts reading `inbox` and runs the `initialize` handshake within `timeout`.
    pub(crate) async fn start(
        transport: Arc<dyn Transport>,
        inbox: mpsc::UnboundedReceiver<Incoming>,
        options: ClientOptions,
        timeout: Duration,
    ) -> Result<Client, CallError> {
        let shared = Arc::new(Shared {
            pending: Mutex::new(HashMap::new()),
            progress: Mutex::new(HashMap::new()),
            tools_changed: AtomicBool::new(false),
            closed: CancellationToken::new(),
            options,
        });
        let reader = tokio::spawn(read(inbox, shared.clone(), transport.clone()));
        let mut client = Client {
            transport,
            shared,
            next_id: AtomicI64::new(0),
            server: ServerInfo::default(),
            reader,
        };
        let mut capabilities = Map::new();
        if client.shared.options.elicitation.is_some() {
            capabilities.insert("elicitation".into(), json!({"form": {}}));
        }
        let params = json!({
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": capabilities,
            "clientInfo": {"name": "mm", "version": env!("CARGO_PKG_VERSION")},
        });
        let never = CancellationToken::new();
        let result = client
            .request("initialize", params, timeout, &never, None)
            .await?;
        let version = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if !SUPPORTED_VERSIONS.contains(&version.as_str()) {
            client.transport.close().await;
            return Err(CallError::Transport(format!(
                "the server speaks MCP version `{version}`; mm speaks {}",
                SUPPORTED_VERSIONS.join(", ")
            )));
        }
        let info = result.get("serverInfo");
        let text = |v: Option<&Value>, key: &str| {
            v.and_then(|v| v.get(key))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        client.server = ServerInfo {
            name: text(info, "name"),
            version: text(info, "version"),
            capabilities: result.get("capabilities").cloned().unwrap_or(json!({})),
            instructions: result
                .get("instructions")
                .and_then(Value::as_str)
                .map(str::to_string),
            protocol_version: version,
        };
        client
            .transport
            .initialized(&client.server.protocol_version);
        client
            .notify("notifications/initialized", None)
            .await
            .map_err(CallError::Transport)?;
        Ok(client)
    }

    pub fn server(&self) -> &ServerInfo {
        &self.server
    }

    /// Whether the server said its tools changed since the last [`list_tools`](Self::list_tools).
    pub fn tools_changed(&self) -> bool {
        self.shared.tools_changed.load(Ordering::Relaxed)
    }

    /// Whether the connection is gone (the server exited, the stream broke for good).
    pub fn is_closed(&self) -> bool {
        self.shared.closed.is_cancelled()
    }

    /// Every tool of the server (`tools/list`, all pages), as the server describes them.
    pub async fn list_tools(&self, timeout: Duration) -> Result<Vec<Value>, CallError> {
        self.shared.tools_changed.store(false, Ordering::Relaxed);
        let never = CancellationToken::new();
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let page = self
                .request("tools/list", params, timeout, &never, None)
                .await?;
            if let Some(list) = page.get("tools").and_then(Value::as_array) {
                tools.extend(list.iter().cloned());
            }
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) if !next.is_empty() && cursor.as_deref() != Some(next) => {
                    cursor = Some(next.to_string());
                }
                _ => return Ok(tools),
            }
        }
        Ok(tools)
    }

    /// Calls a tool; the result object as the server sent it.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
        timeout: Duration,
        cancel: &CancellationToken,
        progress: Option<ProgressSink>,
    ) -> Result<Value, CallError> {
        let params = json!({"name": name, "arguments": arguments});
        self.request("tools/call", params, timeout, cancel, progress)
            .await
    }

    /// Sends a request and waits for its answer. On timeout or cancellation the server is
    /// told with `notifications/cancelled`.
    pub async fn request(
        &self,
        method: &str,
        mut params: Value,
        timeout: Duration,
        cancel: &CancellationToken,
        progress: Option<ProgressSink>,
    ) -> Result<Value, CallError> {
        if self.is_closed() {
            return Err(CallError::Closed(self.transport.diagnostic()));
        }
        let n = self.next_id.fetch_add(1, Ordering::Relaxed);
        let id = RequestId::Number(n);
        let token = Value::from(n).to_string();
        if let Some(sink) = progress {
            if let Some(object) = params.as_object_mut() {
                object.insert("_meta".into(), json!({"progressToken": n}));
            }
            lock(&self.shared.progress).insert(token.clone(), sink);
        }
        let (tx, rx) = oneshot::channel();
        lock(&self.shared.pending).insert(id.clone(), tx);
        let message = encode_request(&id, method, Some(&params));
        let exchange = async {
            self.transport
                .send(message, Some(&id))
                .await
                .map_err(CallError::Transport)?;
            tokio::select! {
                answer = rx => match answer {
                    Ok(Ok(result)) => Ok(result),
                    Ok(Err(error)) => Err(CallError::Protocol(error)),
                    Err(_) => Err(CallError::Closed(self.transport.diagnostic())),
                },
                () = self.shared.closed.cancelled() => {
                    Err(CallError::Closed(self.transport.diagnostic()))
                }
            }
        };
        let outcome = tokio::select! {
            outcome = exchange => outcome,
            () = tokio::time::sleep(timeout) => Err(CallError::TimedOut(timeout)),
            () = cancel.cancelled() => Err(CallError::Cancelled),
        };
        lock(&self.shared.pending).remove(&id);
        lock(&self.shared.progress).remove(&token);
        match &outcome {
            Err(CallError::TimedOut(_)) => self.cancelled(&id, "timed out").await,
            Err(CallError::Cancelled) => self.cancelled(&id, "cancelled by the user").await,
            _ => {}
        }
        outcome
    }

    async fn cancelled(&self, id: &RequestId, reason: &str) {
        let params = json!({"requestId": id, "reason": reason});
        // Best effort, and never long: the user is waiting.
        let _ = tokio::time::timeout(
            Duration::from_secs(2),
            self.notify("notifications/cancelled", Some(params)),
        )
        .await;
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), String> {
        let message = match &params {
            Some(p) => encode_notification(method, p),
            None => encode_notification(method, &json!({})),
        };
        self.transport.send(message, None).await
    }

    /// Ends the connection.
    pub async fn close(&self) {
        self.shared.closed.cancel();
        self.transport.close().await;
    }
}

/// Routes what the server sends: answers to their requests, the server's requests answered,
/// notifications applied. Ends (closing the client) when the transport drops the inbox.
async fn read(
    mut inbox: mpsc::UnboundedReceiver<Incoming>,
    shared: Arc<Shared>,
    transport: Arc<dyn Transport>,
) {
    while let Some(message) = inbox.recv().await {
        match message {
            Incoming::Response { id, result } => {
                if let Some(tx) = lock(&shared.pending).remove(&id) {
                    let _ = tx.send(result);
                }
            }
            Incoming::Request { id, method, params } => {
                let answer = match answer(&shared, &method, params.as_ref()) {
                    Ok(result) => encode_result(&id, &result),
                    Err(error) => encode_error(Some(&id), &error),
                };
                // Not awaited here: over HTTP the answer is a POST of its own.
                let transport = transport.clone();
                tokio::spawn(async move {
                    let _ = transport.send(answer, None).await;
                });
            }
            Incoming::Notification { method, params } => notified(&shared, &method, params),
        }
    }
    shared.closed.cancel();
}

fn answer(shared: &Shared, method: &str, params: Option<&Value>) -> Result<Value, ProtocolError> {
    match method {
        "ping" => Ok(json!({})),
        "elicitation/create" => match &shared.options.elicitation {
            Some(handler) => Ok(handler(params.unwrap_or(&Value::Null))),
            None => Err(ProtocolError::method_not_found(method)),
        },
        _ => Err(ProtocolError::method_not_found(method)),
    }
}

fn notified(shared: &Shared, method: &str, params: Option<Value>) {
    match method {
        "notifications/tools/list_changed" => {
            shared.tools_changed.store(true, Ordering::Relaxed);
        }
        "notifications/progress" => {
            let Some(params) = params else { return };
            let Some(token) = params.get("progressToken") else {
                return;
            };
            let sink = lock(&shared.progress).get(&token.to_string()).cloned();
            if let (Some(sink), Some(progress)) =
                (sink, params.get("progress").and_then(Value::as_f64))
            {
                sink(Progress {
                    progress,
                    total: params.get("total").and_then(Value::as_f64),
                    message: params
                        .get("message")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                });
            }
        }
        _ => {}
    }
}

/// An elicitation answer that accepts with the defaults of the requested schema (SEP-1034):
/// each property with a `default` gets it. What a client without a user to ask can say.
pub fn accept_with_defaults(params: &Value) -> Value {
    let mut content = Map::new();
    if let Some(properties) = params
        .pointer("/requestedSchema/properties")
        .and_then(Value::as_object)
    {
        for (name, property) in properties {
            if let Some(default) = property.get("default") {
                content.insert(name.clone(), default.clone());
            }
        }
    }
    json!({"action": "accept", "content": content})
}
