//! Streamable HTTP: one endpoint (`/mcp` by default) with POST, GET and DELETE.
//!
//! - POST carries one JSON-RPC message. Notifications and responses get `202 Accepted`. A request
//!   is answered with `application/json` when its handler sends nothing before its result, and
//!   switches to an SSE stream (`text/event-stream`) as soon as it sends a progress, log or
//!   server-to-client request first, when the client accepts SSE.
//! - GET opens the session's stream for messages not tied to a request (one at a time: `409`).
//! - DELETE ends the session.
//!
//! Both protocol eras share the endpoint (see `era`). A legacy client opens a session
//! (`Mcp-Session-Id`) with `initialize`; sessions expire after an idle timeout and are capped in
//! number; GET and DELETE are legacy operations. A modern (2026-07-28) request carries its
//! version and the client's capabilities in `_meta`, repeated in the `MCP-Protocol-Version`,
//! `Mcp-Method` and `Mcp-Name` headers (`400` + `-32020` when they disagree); it needs no
//! session and leaves nothing behind; closing its SSE response cancels it; an unknown method
//! is `404`, a missing client capability `400`. Host and Origin are checked (`403`) against loopback names unless configured
//! otherwise, which blocks DNS-rebinding attacks on local servers.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::serve::ListenerExt;
use futures::Stream;
use tokio::net::{TcpListener, ToSocketAddrs};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::dispatch::{Answer, SUPPORTED_PROTOCOL_VERSIONS};
use crate::era::{self, Era};
use crate::jsonrpc::{self, Incoming, ProtocolError, code};
use crate::server::{Server, ServerInner};
use crate::session::Session;

mod sessions;

pub use sessions::HttpConfig;
use sessions::{HttpState, SessionError};

const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";
const METHOD_HEADER: &str = "mcp-method";
const NAME_HEADER: &str = "mcp-name";

/// Serves `server` at `http://ADDR{config.path}` until Ctrl-C.
pub async fn serve(server: Server, addr: impl ToSocketAddrs, config: HttpConfig) -> io::Result<()> {
    let listener = TcpListener::bind(addr).await?;
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    serve_listener(server, listener, config, shutdown).await
}

/// Serves `server` on a bound listener until `shutdown` resolves; then stops accepting, cancels
/// requests in flight, closes the GET streams and waits for open responses to finish.
pub async fn serve_listener(
    server: Server,
    listener: TcpListener,
    config: HttpConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let state = HttpState::new(server, config);
    let app = router_for(Arc::clone(&state));
    // Small JSON-RPC answers must not wait for Nagle's algorithm.
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            shutdown.await;
            state.shut_down();
        })
        .await
}

/// The axum router for `server`, to mount in a larger application.
pub fn router(server: Server, config: HttpConfig) -> Router {
    router_for(HttpState::new(server, config))
}

fn router_for(state: Arc<HttpState>) -> Router {
    let path = state.config.path.clone();
    let limit = state.config.max_body_bytes;
    Router::new()
        .route(&path, any(endpoint))
        .layer(DefaultBodyLimit::max(limit))
        .layer(axum::middleware::map_response(announce_close_after_413))
        .with_state(state)
}

/// hyper closes the connection after a 413 because the rest of the body was never read; say so
/// (RFC 9112 §9.6), or keep-alive clients send their next request on a dead socket.
async fn announce_close_after_413(mut response: Response) -> Response {
    if response.status() == StatusCode::PAYLOAD_TOO_LARGE {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

async fn endpoint(
    State(state): State<Arc<HttpState>>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Err(reason) = state.config.check_host_and_origin(&headers) {
        tracing::debug!(%reason, "rejected MCP request");
        return error_response(StatusCode::FORBIDDEN, code::SERVER_ERROR, &reason);
    }
    state.sweep(false);
    match method {
        Method::POST => post(&state, &headers, &body).await,
        Method::GET => get(&state, &headers),
        Method::DELETE => delete(&state, &headers),
        _ => {
            let mut r = error_response(
                StatusCode::METHOD_NOT_ALLOWED,
                code::SERVER_ERROR,
                "Method not allowed",
            );
            r.headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
            r
        }
    }
}

fn error_response(status: StatusCode, code: i64, message: &str) -> Response {
    json_body(
        status,
        jsonrpc::encode_error(None, &ProtocolError::new(code, message)),
    )
}

fn json_body(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

fn header_str(headers: &HeaderMap, name: impl header::AsHeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Which response bodies the client accepts: (JSON, SSE). A missing Accept accepts both.
fn accepts(headers: &HeaderMap) -> (bool, bool) {
    let Some(accept) = header_str(headers, header::ACCEPT) else {
        return (true, true);
    };
    let mut json = false;
    let mut sse = false;
    for item in accept.split(',') {
        let media = item.split(';').next().unwrap_or("").trim();
        match media {
            "application/json" => json = true,
            "text/event-stream" => sse = true,
            "*/*" => {
                json = true;
                sse = true;
            }
            "application/*" => json = true,
            "text/*" => sse = true,
            _ => {}
        }
    }
    (json, sse)
}

fn session_error(e: SessionError) -> Response {
    match e {
        SessionError::Missing => error_response(
            StatusCode::BAD_REQUEST,
            code::SERVER_ERROR,
            "Bad Request: Mcp-Session-Id header is required",
        ),
        SessionError::Unknown => error_response(
            StatusCode::NOT_FOUND,
            code::SERVER_ERROR,
            "Session not found",
        ),
        SessionError::TooMany => error_response(
            StatusCode::SERVICE_UNAVAILABLE,
            code::SERVER_ERROR,
            "Too many sessions; try again later",
        ),
    }
}

fn with_session_header(mut response: Response, id: &str) -> Response {
    if let Ok(v) = HeaderValue::from_str(id) {
        response.headers_mut().insert(SESSION_HEADER, v);
    }
    response
}

async fn post(state: &Arc<HttpState>, headers: &HeaderMap, body: &Bytes) -> Response {
    let content_type = header_str(headers, header::CONTENT_TYPE).unwrap_or("");
    if !content_type.trim_start().starts_with("application/json") {
        return error_response(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            code::SERVER_ERROR,
            "Unsupported Media Type: Content-Type must be application/json",
        );
    }
    let (json_ok, sse_ok) = accepts(headers);
    if !json_ok && !sse_ok {
        return error_response(
            StatusCode::NOT_ACCEPTABLE,
            code::SERVER_ERROR,
            "Not Acceptable: Accept must include application/json or text/event-stream",
        );
    }
    let message = match Incoming::parse(body) {
        Ok(m) => m,
        Err(bad) => {
            return json_body(
                StatusCode::BAD_REQUEST,
                jsonrpc::encode_error(bad.id.as_ref(), &bad.error),
            );
        }
    };
    if let Incoming::Request { id, method, params } = &message {
        let mirrored = era::Headers {
            version: header_str(headers, VERSION_HEADER),
            method: header_str(headers, METHOD_HEADER),
            name: header_str(headers, NAME_HEADER),
        };
        match era::classify(method, params.as_ref(), Some(mirrored)) {
            Err(refusal) => {
                let status =
                    StatusCode::from_u16(refusal.status).unwrap_or(StatusCode::BAD_REQUEST);
                return json_body(status, jsonrpc::encode_error(Some(id), &refusal.error));
            }
            Ok(modern @ Era::Modern(_)) => {
                if method == "tools/call" {
                    let name = params
                        .as_ref()
                        .and_then(|p| p.get("name"))
                        .and_then(serde_json::Value::as_str);
                    if let Some(tool) = name.and_then(|n| state.server.tool(n)) {
                        let arguments = params.as_ref().and_then(|p| p.get("arguments"));
                        if let Err(refusal) =
                            era::check_param_headers(&tool.param_headers, arguments, |h| {
                                header_str(headers, h)
                            })
                        {
                            let status = StatusCode::from_u16(refusal.status)
                                .unwrap_or(StatusCode::BAD_REQUEST);
                            return json_body(
                                status,
                                jsonrpc::encode_error(Some(id), &refusal.error),
                            );
                        }
                    }
                }
                // No session: a throw-away one tracks the request while it runs.
                let session = Session::new();
                return answer(&state.server, &session, message, modern, sse_ok, !json_ok).await;
            }
            Ok(Era::Legacy) => {}
        }
    }
    if let Some(version) = header_str(headers, VERSION_HEADER) {
        if !SUPPORTED_PROTOCOL_VERSIONS.contains(&version) {
            let message = format!(
                "Bad Request: unsupported MCP-Protocol-Version {version:?} (supported: {})",
                SUPPORTED_PROTOCOL_VERSIONS.join(", ")
            );
            return error_response(StatusCode::BAD_REQUEST, code::SERVER_ERROR, &message);
        }
    }
    let is_initialize =
        matches!(&message, Incoming::Request { method, .. } if method == "initialize");
    let header_id = header_str(headers, SESSION_HEADER);
    let entry = if is_initialize && header_id.is_none() {
        match state.create_session() {
            Ok(entry) => entry,
            Err(e) => return session_error(e),
        }
    } else {
        match state.find_session(header_id) {
            Ok(entry) => entry,
            Err(e) => return session_error(e),
        }
    };
    let response = answer(
        &state.server,
        &entry.session,
        message,
        Era::Legacy,
        sse_ok,
        !json_ok,
    )
    .await;
    state.touch(&entry);
    with_session_header(response, &entry.id)
}

/// The response to a request as JSON. A modern error raised by the dispatcher has its own
/// status: `404` for an unknown method, `400` for a missing client capability; other errors
/// (an unknown tool, ...) are answers like any other (`200`).
fn json_answer(answer: Answer, modern: bool) -> Response {
    let status = match (modern, answer.error) {
        (true, Some(code::METHOD_NOT_FOUND)) => StatusCode::NOT_FOUND,
        (true, Some(code::MISSING_REQUIRED_CLIENT_CAPABILITY)) => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    };
    json_body(status, answer.body)
}

/// Answers one message: 202 for notifications and responses; JSON or SSE for requests.
async fn answer(
    server: &Arc<ServerInner>,
    session: &Arc<Session>,
    message: Incoming,
    era: Era,
    sse_ok: bool,
    sse_only: bool,
) -> Response {
    let modern = matches!(era, Era::Modern(_));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let Some(mut work) = session.handle(server, message, era, &tx) else {
        return StatusCode::ACCEPTED.into_response();
    };
    drop(tx);
    if !sse_ok {
        // JSON only: what the handler sends on the side goes to the GET stream, if any.
        let response = loop {
            tokio::select! {
                biased;
                r = &mut work => break r,
                Some(m) = rx.recv() => forward_or_fail(session, m),
            }
        };
        while let Ok(m) = rx.try_recv() {
            forward_or_fail(session, m);
        }
        return match response {
            Some(a) => json_answer(a, modern),
            None => StatusCode::ACCEPTED.into_response(),
        };
    }
    let first = tokio::select! {
        biased;
        r = &mut work => Ok(r),
        m = rx.recv() => Err(m),
    };
    let (stx, srx) = mpsc::unbounded_channel::<String>();
    match first {
        Ok(response) => {
            let mut side = Vec::new();
            while let Ok(m) = rx.try_recv() {
                side.push(m);
            }
            if side.is_empty() && !sse_only {
                return match response {
                    Some(a) => json_answer(a, modern),
                    None => StatusCode::ACCEPTED.into_response(),
                };
            }
            for m in side.into_iter().chain(response.map(|a| a.body)) {
                let _ = stx.send(m);
            }
        }
        Err(None) => {
            // The handler dropped its sender: only its result is left to come.
            if let Some(a) = work.await {
                if sse_only {
                    let _ = stx.send(a.body);
                } else {
                    return json_answer(a, modern);
                }
            }
        }
        Err(Some(m)) => {
            let _ = stx.send(m);
            // Keep handling after this function returns the streaming response. In the legacy
            // era a client that disconnects does not cancel the request (only
            // `notifications/cancelled` does); in the modern era closing the stream is the
            // cancellation.
            let session = Arc::clone(session);
            tokio::spawn(async move {
                loop {
                    tokio::select! {
                        biased;
                        Some(m) = rx.recv() => { let _ = stx.send(m); }
                        r = &mut work => {
                            while let Ok(m) = rx.try_recv() {
                                let _ = stx.send(m);
                            }
                            if let Some(a) = r {
                                let _ = stx.send(a.body);
                            }
                            break;
                        }
                        () = stx.closed(), if modern => {
                            session.cancel_all();
                            break;
                        }
                    }
                }
            });
        }
    }
    let mut response = sse_response(srx, None);
    if modern {
        response
            .headers_mut()
            .insert("x-accel-buffering", HeaderValue::from_static("no"));
    }
    response
}

/// Sends a side message to the session's GET stream. A server-to-client request that cannot
/// travel (no stream open) fails at once rather than leaving its handler waiting forever.
fn forward_or_fail(session: &Session, message: String) {
    if session.send_standalone(message.clone()) {
        return;
    }
    let Ok(Incoming::Request { id, .. }) = Incoming::parse(message.as_bytes()) else {
        return;
    };
    let error = ProtocolError::new(
        code::INTERNAL_ERROR,
        "cannot reach the client: it accepts no SSE on this request and has no GET stream open",
    );
    session.deliver(&id, Err(error));
}

fn sse_stream(
    rx: mpsc::UnboundedReceiver<String>,
    stop: Option<CancellationToken>,
) -> impl Stream<Item = Result<Event, Infallible>> + Send + 'static {
    futures::stream::unfold((rx, stop), |(mut rx, stop)| async move {
        let next = match &stop {
            Some(token) => tokio::select! {
                m = rx.recv() => m,
                () = token.cancelled() => None,
            },
            None => rx.recv().await,
        };
        next.map(|m| (Ok(Event::default().event("message").data(m)), (rx, stop)))
    })
}

fn sse_response(rx: mpsc::UnboundedReceiver<String>, stop: Option<CancellationToken>) -> Response {
    let keep_alive = stop.is_some();
    let sse = Sse::new(sse_stream(rx, stop));
    let mut response = if keep_alive {
        sse.keep_alive(KeepAlive::default()).into_response()
    } else {
        sse.into_response()
    };
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

fn get(state: &Arc<HttpState>, headers: &HeaderMap) -> Response {
    let (_, sse_ok) = accepts(headers);
    if !sse_ok || header_str(headers, header::ACCEPT).is_none() {
        return error_response(
            StatusCode::NOT_ACCEPTABLE,
            code::SERVER_ERROR,
            "Not Acceptable: Accept must include text/event-stream",
        );
    }
    let entry = match state.find_session(header_str(headers, SESSION_HEADER)) {
        Ok(entry) => entry,
        Err(e) => return session_error(e),
    };
    if entry.session.has_standalone() {
        return error_response(
            StatusCode::CONFLICT,
            code::SERVER_ERROR,
            "Conflict: this session already has a GET stream open",
        );
    }
    let (tx, rx) = mpsc::unbounded_channel();
    entry.session.set_standalone(Some(tx));
    with_session_header(sse_response(rx, Some(state.shutdown.clone())), &entry.id)
}

fn delete(state: &Arc<HttpState>, headers: &HeaderMap) -> Response {
    match state.remove_session(header_str(headers, SESSION_HEADER)) {
        Ok(()) => Response::new(Body::empty()),
        Err(e) => session_error(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn accept_header_parsing() {
        let mut h = HeaderMap::new();
        assert_eq!(accepts(&h), (true, true));
        h.insert(
            header::ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        assert_eq!(accepts(&h), (true, true));
        h.insert(
            header::ACCEPT,
            HeaderValue::from_static("text/event-stream"),
        );
        assert_eq!(accepts(&h), (false, true));
        h.insert(
            header::ACCEPT,
            HeaderValue::from_static("application/json;q=0.9"),
        );
        assert_eq!(accepts(&h), (true, false));
        h.insert(header::ACCEPT, HeaderValue::from_static("text/html"));
        assert_eq!(accepts(&h), (false, false));
    }

    #[test]
    fn idle_timeout_is_configurable() {
        let c = HttpConfig::default().session_idle_timeout(Duration::from_secs(5));
        assert_eq!(c.session_idle_timeout, Duration::from_secs(5));
    }
}
