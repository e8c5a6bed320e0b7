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

use super::era::{self, Era, McpProtocol, ParamHeader, ProbeOutcome, ResultKind, Verdict};
use crate::tools::{Progress, ProgressSink};

/// The legacy protocol version mm asks for in `initialize`.
pub const PROTOCOL_VERSION: &str = "2025-11-25";

/// The legacy versions mm speaks; a server answering another one is refused.
pub const SUPPORTED_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The most `tools/list` pages read from one server (a server whose cursor never ends).
const MAX_PAGES: usize = 100;

/// The most rounds of `input_required` answered for one request.
const MAX_INPUT_ROUNDS: usize = 8;

/// The longest wait for a stdio server's answer to `server/discover`: a legacy server may
/// ignore a request before `initialize`.
const STDIO_PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// The methods whose results may be `input_required` (MRTR).
const INPUT_METHODS: &[&str] = &["tools/call", "prompts/get", "resources/read"];

/// HTTP headers of one request (modern era; empty otherwise).
pub(crate) type Headers = [(String, String)];

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
    /// `headers` are a modern request's HTTP headers: with them the request is sent without
    /// a session, an HTTP error status is [`CallError::Status`] and a JSON-RPC error in the
    /// body of a 4xx is that request's answer.
    async fn send(
        &self,
        message: String,
        request: Option<&RequestId>,
        headers: &Headers,
    ) -> Result<(), CallError>;
    /// The server answered `initialize` with this version.
    fn initialized(&self, _protocol_version: &str) {}
    /// The request is over (answered, timed out, cancelled): stop reading its response
    /// stream, which over HTTP in the modern era is how a request is cancelled.
    fn forget(&self, _request: &RequestId) {}
    /// Whether this is HTTP (headers, cancellation by closing the stream), not stdio.
    fn http(&self) -> bool {
        false
    }
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
    /// When set, the client declares the `elicitation` capability and answers with this
    /// (a legacy server's `elicitation/create`, a modern server's `input_required`).
    pub elicitation: Option<ElicitHandler>,
    /// Which era to speak: `Auto` probes with `server/discover`.
    pub protocol: McpProtocol,
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
    /// A modern request got an HTTP error status with no JSON-RPC error in its body.
    #[error("{message}")]
    Status { status: u16, message: String },
    /// The connection is gone.
    #[error("the connection is closed{}", .0.as_deref().map(|d| format!(": {d}")).unwrap_or_default())]
    Closed(Option<String>),
    #[error("no answer after {}s", .0.as_secs_f64())]
    TimedOut(Duration),
    #[error("cancelled")]
    Cancelled,
}

/// What the server said about itself in `initialize` or `server/discover`.
#[derive(Debug, Clone, Default)]
pub struct ServerInfo {
    /// Which era the connection speaks.
    pub era: Era,
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
    /// Each tool's `x-mcp-header` arguments (modern HTTP), from the last `tools/list`.
    param_headers: Mutex<HashMap<String, Vec<ParamHeader>>>,
    /// What the user should be told (tools left out), taken by [`Client::take_warnings`].
    warnings: Mutex<Vec<String>>,
}

/// Why [`Client::start`] did not give a client.
pub(crate) enum StartError {
    Failed(CallError),
    /// A stdio server went away on `server/discover` (some legacy servers exit on an unknown
    /// request): start it again, legacy.
    ProbeEndedIt(CallError),
}

impl From<CallError> for StartError {
    fn from(error: CallError) -> Self {
        StartError::Failed(error)
    }
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
    /// Starts reading `inbox` and learns the server's era within `timeout`: `server/discover`
    /// (modern) unless pinned legacy, the `initialize` handshake (legacy) when the server does
    /// not answer it as a modern server does.
    pub(crate) async fn start(
        transport: Arc<dyn Transport>,
        inbox: mpsc::UnboundedReceiver<Incoming>,
        options: ClientOptions,
        timeout: Duration,
    ) -> Result<Client, StartError> {
        let protocol = options.protocol;
        let shared = Arc::new(Shared {
            pending: Mutex::new(HashMap::new()),
            progress: Mutex::new(HashMap::new()),
            tools_changed: AtomicBool::new(false),
            closed: CancellationToken::new(),
            options,
            param_headers: Mutex::new(HashMap::new()),
            warnings: Mutex::new(Vec::new()),
        });
        let reader = tokio::spawn(read(inbox, shared.clone(), transport.clone()));
        let mut client = Client {
            transport,
            shared,
            next_id: AtomicI64::new(0),
            server: ServerInfo::default(),
            reader,
        };
        if protocol == McpProtocol::Legacy {
            client.initialize(timeout).await?;
            return Ok(client);
        }
        let why = match client.discover(timeout).await? {
            None => return Ok(client),
            Some(why) => why,
        };
        if protocol == McpProtocol::Modern {
            return Err(StartError::Failed(CallError::Transport(format!(
                "the server does not speak MCP {} ({why}), and the agent file asks for `protocol: modern`",
                era::MODERN_VERSIONS.join(", ")
            ))));
        }
        if client.is_closed() {
            return Err(StartError::ProbeEndedIt(CallError::Closed(
                client.transport.diagnostic(),
            )));
        }
        match client.initialize(timeout).await {
            Err(error @ CallError::Closed(_)) if !client.transport.http() => {
                Err(StartError::ProbeEndedIt(error))
            }
            Err(error) => Err(StartError::Failed(error)),
            Ok(()) => Ok(client),
        }
    }

    /// Probes with `server/discover`. `None`: the server is modern and the client set up for
    /// it; `Some(why)`: it is not (legacy).
    async fn discover(&mut self, timeout: Duration) -> Result<Option<String>, CallError> {
        let on_stdio = !self.transport.http();
        let timeout = if on_stdio {
            timeout.min(STDIO_PROBE_TIMEOUT)
        } else {
            timeout
        };
        let never = CancellationToken::new();
        let elicits = self.shared.options.elicitation.is_some();
        let mut version = era::MODERN_VERSIONS[0].to_string();
        let mut retried = false;
        loop {
            let params = era::with_meta(json!({}), &version, elicits);
            let headers = era::headers(&version, "server/discover", &params, &[]);
            let answer = self
                .exchange("server/discover", params, &headers, timeout, &never, None)
                .await;
            let outcome = match &answer {
                Ok(result) => ProbeOutcome::Result(result),
                Err(CallError::Protocol(error)) => ProbeOutcome::Error(error),
                Err(CallError::Status { status, .. }) => ProbeOutcome::Status(*status),
                Err(CallError::TimedOut(_)) => ProbeOutcome::TimedOut,
                Err(CallError::Closed(_)) => ProbeOutcome::Closed,
                Err(other) => ProbeOutcome::Failed(other.to_string()),
            };
            match era::classify(outcome, &version, on_stdio) {
                Verdict::Modern {
                    version,
                    discovered,
                } => {
                    let (name, server_version) = era::server_info(&discovered);
                    self.server = ServerInfo {
                        era: Era::Modern,
                        protocol_version: version,
                        name,
                        version: server_version,
                        capabilities: discovered.get("capabilities").cloned().unwrap_or(json!({})),
                        instructions: discovered
                            .get("instructions")
                            .and_then(Value::as_str)
                            .map(str::to_string),
                    };
                    return Ok(None);
                }
                Verdict::Retry(next) if !retried => {
                    retried = true;
                    version = next;
                }
                Verdict::Retry(next) => {
                    return Err(CallError::Transport(format!(
                        "the server refuses MCP {next}, which it says it supports"
                    )));
                }
                Verdict::Legacy(why) => return Ok(Some(why)),
                Verdict::Error(why) => {
                    return Err(match answer {
                        Err(CallError::Protocol(error))
                            if error.code != era::UNSUPPORTED_PROTOCOL_VERSION =>
                        {
                            CallError::Protocol(error)
                        }
                        Err(CallError::Protocol(_)) | Ok(_) => CallError::Transport(why),
                        Err(error) => error,
                    });
                }
            }
        }
    }

    /// The legacy handshake: `initialize`, then `notifications/initialized`.
    async fn initialize(&mut self, timeout: Duration) -> Result<(), CallError> {
        let capabilities = era::client_capabilities(self.shared.options.elicitation.is_some());
        let params = json!({
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": capabilities,
            "clientInfo": era::client_info(),
        });
        let never = CancellationToken::new();
        let result = self
            .exchange("initialize", params, &[], timeout, &never, None)
            .await?;
        let version = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if !SUPPORTED_VERSIONS.contains(&version.as_str()) {
            self.transport.close().await;
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
        self.server = ServerInfo {
            era: Era::Legacy,
            name: text(info, "name"),
            version: text(info, "version"),
            capabilities: result.get("capabilities").cloned().unwrap_or(json!({})),
            instructions: result
                .get("instructions")
                .and_then(Value::as_str)
                .map(str::to_string),
            protocol_version: version,
        };
        self.transport.initialized(&self.server.protocol_version);
        self.notify("notifications/initialized", None)
            .await
            .map_err(CallError::Transport)?;
        Ok(())
    }

    /// Warnings gathered since the last call (modern HTTP: tools left out for their
    /// `x-mcp-header`s).
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.shared.warnings))
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
    /// Over modern HTTP a tool whose `x-mcp-header`s break the spec's rules is left out, with
    /// a warning (see [`take_warnings`](Self::take_warnings)); a modern server that declares
    /// no `tools` capability has none.
    pub async fn list_tools(&self, timeout: Duration) -> Result<Vec<Value>, CallError> {
        self.shared.tools_changed.store(false, Ordering::Relaxed);
        let modern = self.server.era == Era::Modern;
        if modern && self.server.capabilities.get("tools").is_none() {
            return Ok(Vec::new());
        }
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
                _ => break,
            }
        }
        if modern && self.transport.http() {
            tools = self.checked_headers(tools);
        }
        Ok(tools)
    }

    /// Keeps the tools whose `x-mcp-header`s are valid, remembering them for `tools/call`.
    fn checked_headers(&self, tools: Vec<Value>) -> Vec<Value> {
        let mut headers = HashMap::new();
        let mut warnings = Vec::new();
        let kept = tools
            .into_iter()
            .filter(|tool| {
                let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
                let schema = tool.get("inputSchema").unwrap_or(&Value::Null);
                match era::param_headers(schema) {
                    Ok(found) => {
                        if !found.is_empty() {
                            headers.insert(name.to_string(), found);
                        }
                        true
                    }
                    Err(why) => {
                        warnings.push(format!("tool {} left out: {why}", name.escape_debug()));
                        false
                    }
                }
            })
            .collect();
        *lock(&self.shared.param_headers) = headers;
        lock(&self.shared.warnings).extend(warnings);
        kept
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
    /// told: with `notifications/cancelled`, or over modern HTTP by closing the response.
    ///
    /// In the modern era `params` get the `_meta` of the protocol (version, client info and
    /// capabilities) and over HTTP the request its headers; an `input_required` result is
    /// answered (elicitation through [`ClientOptions::elicitation`]) and the request sent
    /// again with the answers, up to a few rounds; a result whose `resultType` is unknown is
    /// an error.
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
        cancel: &CancellationToken,
        progress: Option<ProgressSink>,
    ) -> Result<Value, CallError> {
        if self.server.era == Era::Legacy {
            return self
                .exchange(method, params, &[], timeout, cancel, progress)
                .await;
        }
        let version = self.server.protocol_version.as_str();
        let params = era::with_meta(params, version, self.shared.options.elicitation.is_some());
        let param_headers = match (method, params.get("name").and_then(Value::as_str)) {
            ("tools/call", Some(name)) if self.transport.http() => lock(&self.shared.param_headers)
                .get(name)
                .cloned()
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        let headers = if self.transport.http() {
            era::headers(version, method, &params, &param_headers)
        } else {
            Vec::new()
        };
        let mut current = params.clone();
        for round in 0.. {
            let result = self
                .exchange(method, current, &headers, timeout, cancel, progress.clone())
                .await?;
            match era::result_kind(&result).map_err(CallError::Transport)? {
                ResultKind::Complete => return Ok(result),
                ResultKind::InputRequired if !INPUT_METHODS.contains(&method) => {
                    return Err(CallError::Transport(format!(
                        "the server asks for input on {method}, where the protocol allows none"
                    )));
                }
                ResultKind::InputRequired if round + 1 >= MAX_INPUT_ROUNDS => {
                    return Err(CallError::Transport(format!(
                        "the server still asks for input after {MAX_INPUT_ROUNDS} rounds"
                    )));
                }
                ResultKind::InputRequired => {}
            }
            current = params.clone();
            let Some(object) = current.as_object_mut() else {
                break;
            };
            if let Some(requests) = result.get("inputRequests") {
                object.insert("inputResponses".into(), self.fulfil(requests)?);
            }
            if let Some(state) = result.get("requestState") {
                object.insert("requestState".into(), state.clone());
            }
        }
        Err(CallError::Transport("no result".into()))
    }

    /// Answers the input requests of an `input_required` result, key by key: elicitation
    /// through the handler; anything else (sampling, roots), or elicitation without a handler,
    /// is an error, as mm declared no such capability.
    fn fulfil(&self, requests: &Value) -> Result<Value, CallError> {
        let Some(requests) = requests.as_object() else {
            return Err(CallError::Transport(
                "the server's inputRequests is not an object".into(),
            ));
        };
        let mut responses = Map::new();
        for (key, request) in requests {
            let method = request
                .get("method")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let answer = match (method, &self.shared.options.elicitation) {
                ("elicitation/create", Some(handler)) => {
                    handler(request.get("params").unwrap_or(&Value::Null))
                }
                _ => {
                    return Err(CallError::Transport(format!(
                        "the server needs `{}` answered to go on (input `{}`), which mm cannot do here",
                        method.escape_debug(),
                        key.escape_debug()
                    )));
                }
            };
            responses.insert(key.clone(), answer);
        }
        Ok(Value::Object(responses))
    }

    /// One JSON-RPC request and its answer, under a new id. On timeout or cancellation the
    /// request is forgotten by the transport and, unless that cancels it (modern HTTP), the
    /// server told with `notifications/cancelled`.
    async fn exchange(
        &self,
        method: &str,
        mut params: Value,
        headers: &Headers,
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
                let meta = object.entry("_meta").or_insert_with(|| json!({}));
                if let Some(meta) = meta.as_object_mut() {
                    meta.insert("progressToken".into(), Value::from(n));
                }
            }
            lock(&self.shared.progress).insert(token.clone(), sink);
        }
        let (tx, rx) = oneshot::channel();
        lock(&self.shared.pending).insert(id.clone(), tx);
        let message = encode_request(&id, method, Some(&params));
        let exchange = async {
            self.transport.send(message, Some(&id), headers).await?;
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
        self.transport.forget(&id);
        // Over HTTP a modern request (one with headers) is cancelled by closing its response,
        // just done; the probe's timeout cancels nothing a legacy server knows of.
        let told = !headers.is_empty() || method == "server/discover";
        match &outcome {
            Err(CallError::TimedOut(_)) if !told => self.cancelled(&id, "timed out").await,
            Err(CallError::Cancelled) if !told => {
                self.cancelled(&id, "cancelled by the user").await
            }
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
        self.transport
            .send(message, None, &[])
            .await
            .map_err(|e| e.to_string())
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
                    let _ = transport.send(answer, None, &[]).await;
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
