//! Streamable HTTP (MCP 2025-11-25): each message is a POST; the answer comes back as JSON or
//! as an SSE stream. The session id and protocol version are sent on every later request; a
//! stream that ends before its answer is resumed with a GET carrying `Last-Event-ID`, after the
//! `retry` delay the server asked for; a GET stream listens for the server's own messages; the
//! session is DELETEd on close.
//!
//! A modern (2026-07-28) request comes with its own headers ([`Transport::send`]): it is sent
//! without a session, its response stream is not resumed, and it is cancelled by dropping that
//! stream ([`Transport::forget`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use picomcp::jsonrpc::Incoming;
use picomcp::{ProtocolError, RequestId, code};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use tokio_util::sync::CancellationToken;

use super::client::{CallError, Headers, Inbox, MAX_MESSAGE, Transport, unreadable_answer};
use crate::sse::{SseEvent, SseParser};

/// The wait before resuming a stream when the server gave no `retry`.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// Resumptions of one stream in a row that brought nothing before giving up.
const MAX_RESUMES: u32 = 5;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The most redirects followed for one request (all within the server's origin).
const MAX_REDIRECTS: usize = 5;
const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";

pub(crate) struct HttpTransport {
    inner: Arc<Inner>,
}

struct Inner {
    url: String,
    http: reqwest::Client,
    headers: HeaderMap,
    session: Mutex<Option<HeaderValue>>,
    version: Mutex<Option<HeaderValue>>,
    inbox: Inbox,
    stop: CancellationToken,
    /// The response streams of modern requests, until they are forgotten.
    streams: Mutex<HashMap<RequestId, tokio::task::JoinHandle<()>>>,
}

impl HttpTransport {
    /// A transport for `url` with extra `headers` (sent as written). Sends nothing yet.
    pub(crate) fn new(
        url: &str,
        headers: &[(String, String)],
        inbox: Inbox,
    ) -> Result<Self, String> {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| format!("header `{name}` is not a valid header name"))?;
            let value = HeaderValue::from_str(value)
                .map_err(|_| format!("the value of header `{name}` is not valid in HTTP"))?;
            map.insert(name, value);
        }
        let mut builder = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .redirect(same_origin_only(url));
        if !url
            .trim_start()
            .to_ascii_lowercase()
            .starts_with("https://")
        {
            // As the provider: plain http reads no CA certificates.
            builder = builder.tls_certs_only([]);
        }
        let http = builder.build().map_err(|e| e.to_string())?;
        Ok(Self {
            inner: Arc::new(Inner {
                url: url.to_string(),
                http,
                headers: map,
                session: Mutex::new(None),
                version: Mutex::new(None),
                inbox,
                stop: CancellationToken::new(),
                streams: Mutex::new(HashMap::new()),
            }),
        })
    }
}

impl Drop for HttpTransport {
    /// A connection given up without [`Transport::close`] (a start-up timeout) stops its
    /// streams too.
    fn drop(&mut self) {
        self.inner.stop.cancel();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[async_trait]
impl Transport for HttpTransport {
    async fn send(
        &self,
        message: String,
        request: Option<&RequestId>,
        headers: &Headers,
    ) -> Result<(), CallError> {
        let inner = &self.inner;
        let modern = !headers.is_empty();
        let mut post = if modern {
            inner.http.post(&inner.url).headers(inner.headers.clone())
        } else {
            inner.with_session(inner.http.post(&inner.url))
        };
        for (name, value) in headers {
            let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                CallError::Transport(format!("`{name}` is not a valid header name"))
            })?;
            let value = HeaderValue::from_str(value).map_err(|_| {
                CallError::Transport(format!("the value of header `{name}` is not valid in HTTP"))
            })?;
            post = post.header(name, value);
        }
        let response = post
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .body(message)
            .send()
            .await
            .map_err(|e| {
                CallError::Transport(format!("cannot reach {}: {}", inner.url, root_cause(&e)))
            })?;
        if !modern {
            inner.keep_session(&response);
        }
        let status = response.status();
        if !status.is_success() {
            let body = crate::body::read(response, 64 << 10)
                .await
                .map(|b| b.bytes)
                .unwrap_or_default();
            let text = String::from_utf8_lossy(&body);
            let text = text.trim();
            let detail = if text.is_empty() {
                String::new()
            } else {
                format!(": {}", text.chars().take(200).collect::<String>())
            };
            if !modern {
                return Err(CallError::Transport(
                    if status == reqwest::StatusCode::NOT_FOUND && inner.has_session() {
                        format!("the server ended the session (HTTP 404){detail}")
                    } else {
                        format!("HTTP {status}{detail}")
                    },
                ));
            }
            // A modern server says why in a JSON-RPC error (400 with -32022, 404 with -32601…).
            let code = status.as_u16();
            if let (Some(id), true) = (
                request,
                (400..500).contains(&code) && code != 401 && code != 403,
            ) {
                if let Some(error) = rpc_error(&body) {
                    let _ = inner.inbox.send(Incoming::Response {
                        id: id.clone(),
                        result: Err(error),
                    });
                    return Ok(());
                }
            }
            return Err(CallError::Status {
                status: code,
                message: format!("HTTP {status}{detail}"),
            });
        }
        let Some(id) = request else {
            return Ok(());
        };
        if status == reqwest::StatusCode::ACCEPTED {
            if modern {
                // No answer is no modern server (the probe falls back to legacy).
                return Err(CallError::Status {
                    status: status.as_u16(),
                    message: "the server accepted the request but sent no answer (HTTP 202)".into(),
                });
            }
            return Err(CallError::Transport(
                "the server accepted the request but sent no answer (HTTP 202)".into(),
            ));
        }
        if is_event_stream(&response) {
            let task = tokio::spawn(
                inner
                    .clone()
                    .read_stream(response, Some(id.clone()), !modern),
            );
            if modern {
                lock(&inner.streams).insert(id.clone(), task);
            }
            return Ok(());
        }
        let body = crate::body::read(response, MAX_MESSAGE)
            .await
            .map_err(|e| {
                CallError::Transport(format!("the answer broke off: {}", root_cause(&e)))
            })?;
        if body.cut {
            return Err(CallError::Transport(format!(
                "the answer is larger than {}, more than mm reads",
                crate::regular::size(MAX_MESSAGE as u64)
            )));
        }
        match Incoming::parse(&body.bytes) {
            Ok(message) => {
                let _ = inner.inbox.send(message);
                Ok(())
            }
            Err(bad) if modern => {
                // The request's answer, an error: what the probe reads as "not modern".
                let error = ProtocolError::new(
                    code::PARSE_ERROR,
                    format!("the answer cannot be read: {}", bad.error.message),
                );
                let _ = inner.inbox.send(Incoming::Response {
                    id: id.clone(),
                    result: Err(error),
                });
                Ok(())
            }
            Err(bad) => Err(CallError::Transport(format!(
                "the answer cannot be read: {}",
                bad.error.message
            ))),
        }
    }

    fn forget(&self, request: &RequestId) {
        if let Some(task) = lock(&self.inner.streams).remove(request) {
            task.abort();
        }
    }

    fn http(&self) -> bool {
        true
    }

    fn initialized(&self, protocol_version: &str) {
        if let Ok(value) = HeaderValue::from_str(protocol_version) {
            *lock(&self.inner.version) = Some(value);
        }
        tokio::spawn(self.inner.clone().listen());
    }

    async fn close(&self) {
        self.inner.stop.cancel();
        let Some(session) = lock(&self.inner.session).clone() else {
            return;
        };
        let delete = self
            .inner
            .with_version(self.inner.http.delete(&self.inner.url))
            .headers(self.inner.headers.clone())
            .header(SESSION_HEADER, session)
            .send();
        let _ = tokio::time::timeout(Duration::from_secs(2), delete).await;
    }
}

impl Inner {
    fn has_session(&self) -> bool {
        lock(&self.session).is_some()
    }

    /// The configured headers, the session id and the protocol version, when known.
    fn with_session(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        let mut request = self.with_version(request).headers(self.headers.clone());
        if let Some(session) = lock(&self.session).clone() {
            request = request.header(SESSION_HEADER, session);
        }
        request
    }

    fn with_version(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match lock(&self.version).clone() {
            Some(version) => request.header(VERSION_HEADER, version),
            None => request,
        }
    }

    fn keep_session(&self, response: &reqwest::Response) {
        if let Some(session) = response.headers().get(SESSION_HEADER) {
            *lock(&self.session) = Some(session.clone());
        }
    }

    /// A GET for an event stream, resuming after `last_id` when given.
    async fn get_stream(&self, last_id: Option<&str>) -> Option<reqwest::Response> {
        let mut request = self
            .with_session(self.http.get(&self.url))
            .header(ACCEPT, "text/event-stream");
        if let Some(id) = last_id.and_then(|id| HeaderValue::from_str(id).ok()) {
            request = request.header("last-event-id", id);
        }
        let response = tokio::select! {
            response = request.send() => response.ok()?,
            () = self.stop.cancelled() => return None,
        };
        (response.status().is_success() && is_event_stream(&response)).then_some(response)
    }

    /// The server's own stream (GET): notifications such as `tools/list_changed`, and requests.
    /// A server without one answers 405 and this ends.
    async fn listen(self: Arc<Self>) {
        if let Some(response) = self.get_stream(None).await {
            self.read_stream(response, None, true).await;
        }
    }

    /// Delivers a stream's messages. For a request's stream, ends at its answer; when the
    /// stream ends first it is resumed (GET with `Last-Event-ID`) after the `retry` delay, and
    /// when it cannot be, the request is answered with an error. The listening stream is
    /// resumed the same way for as long as the server allows.
    async fn read_stream(
        self: Arc<Self>,
        response: reqwest::Response,
        answer_to: Option<RequestId>,
        resume: bool,
    ) {
        let mut parser = SseParser::with_limit(MAX_MESSAGE);
        let mut response = Some(response);
        let mut fruitless = 0;
        while let Some(current) = response.take() {
            let mut stream = current.bytes_stream();
            let mut delivered = false;
            loop {
                let chunk = tokio::select! {
                    chunk = stream.next() => chunk,
                    () = self.stop.cancelled() => return,
                };
                let Some(Ok(bytes)) = chunk else { break };
                for event in parser.push(&bytes) {
                    delivered = true;
                    if self.deliver(&event, answer_to.as_ref()) {
                        return;
                    }
                }
            }
            if let Some(event) = parser.finish() {
                delivered = true;
                if self.deliver(&event, answer_to.as_ref()) {
                    return;
                }
            }
            fruitless = if delivered { 0 } else { fruitless + 1 };
            let last_id = parser.last_event_id().map(str::to_string);
            if !resume || fruitless >= MAX_RESUMES || (answer_to.is_some() && last_id.is_none()) {
                break;
            }
            tokio::select! {
                () = tokio::time::sleep(parser.retry().unwrap_or(DEFAULT_RETRY)) => {}
                () = self.stop.cancelled() => return,
            }
            response = self.get_stream(last_id.as_deref()).await;
        }
        if let Some(id) = answer_to {
            let error = ProtocolError::new(
                code::SERVER_ERROR,
                "the server's event stream ended before its answer and could not be resumed",
            );
            let _ = self.inbox.send(Incoming::Response {
                id,
                result: Err(error),
            });
        }
    }

    /// Hands one event's data to the client; true when it was the answer to `answer_to`.
    /// Empty data (a priming event) and data that is not JSON-RPC are skipped, except an answer
    /// that cannot be read, which answers its request with why. An event over
    /// [`MAX_MESSAGE`] on a request's own stream answers that request so.
    fn deliver(&self, event: &SseEvent, answer_to: Option<&RequestId>) -> bool {
        if event.oversized {
            let Some(id) = answer_to else { return false };
            let error = ProtocolError::new(
                code::SERVER_ERROR,
                format!(
                    "the server's answer is larger than {}, more than mm reads",
                    crate::regular::size(MAX_MESSAGE as u64)
                ),
            );
            let _ = self.inbox.send(Incoming::Response {
                id: id.clone(),
                result: Err(error),
            });
            return true;
        }
        let data = event.data.as_str();
        if data.trim().is_empty() {
            return false;
        }
        let message = match Incoming::parse(data.as_bytes()) {
            Ok(message) => message,
            Err(bad) => match unreadable_answer(data.as_bytes(), &bad.error.message) {
                Some(answer) => answer,
                None => return false,
            },
        };
        let done = matches!((&message, answer_to), (Incoming::Response { id, .. }, Some(want)) if id == want);
        let _ = self.inbox.send(message);
        done
    }
}

/// The JSON-RPC error in an HTTP error's body, if it holds one.
fn rpc_error(body: &[u8]) -> Option<ProtocolError> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    serde_json::from_value(value.get("error")?.clone()).ok()
}

/// Redirects mm follows for an MCP server: at most [`MAX_REDIRECTS`], and only within the
/// server's origin (scheme, host and port). The configured `headers` go with every request, and
/// reqwest strips only the standard credentials (`Authorization`, `Cookie`, …) on a redirect to
/// another host: an `X-Api-Key` would follow a 307 to another port. A redirect elsewhere is an
/// error naming where it pointed.
fn same_origin_only(url: &str) -> reqwest::redirect::Policy {
    let origin = reqwest::Url::parse(url.trim()).ok().map(|u| u.origin());
    reqwest::redirect::Policy::custom(move |attempt| {
        if attempt.previous().len() > MAX_REDIRECTS {
            return attempt.error(format!("more than {MAX_REDIRECTS} redirects"));
        }
        if origin.as_ref() == Some(&attempt.url().origin()) {
            return attempt.follow();
        }
        let to = attempt.url().to_string();
        attempt.error(format!(
            "the server redirected to {to}, another origin; mm sends the server's headers to its own origin only"
        ))
    })
}

fn is_event_stream(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim_start()
                .to_ascii_lowercase()
                .starts_with("text/event-stream")
        })
}

fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause: &dyn std::error::Error = error;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}
