//! Per-connection (stdio) or per-`Mcp-Session-Id` (HTTP) state: negotiated version, client
//! capabilities, log level, requests in flight, server-to-client requests awaiting an answer,
//! resource subscriptions and the stream for messages not tied to a request.
//!
//! Kept small on purpose: an idle session is a few hundred bytes plus empty maps.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicI64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::jsonrpc::{ProtocolError, RequestId};

/// Where outgoing messages (already encoded) go.
pub(crate) type Outbound = mpsc::UnboundedSender<String>;

/// Locks a mutex, ignoring poisoning: every critical section here leaves the data consistent
/// (single inserts and removals), so a panic elsewhere cannot leave it half-updated.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Log levels of `logging/setLevel` and `notifications/message`, least severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum LogLevel {
    /// Detailed debugging information.
    Debug = 0,
    /// Normal operational messages.
    Info = 1,
    /// Normal but significant events.
    Notice = 2,
    /// Warning conditions.
    Warning = 3,
    /// Error conditions.
    Error = 4,
    /// Critical conditions.
    Critical = 5,
    /// Action must be taken immediately.
    Alert = 6,
    /// The system is unusable.
    Emergency = 7,
}

impl LogLevel {
    fn from_u8(v: u8) -> LogLevel {
        match v {
            0 => LogLevel::Debug,
            1 => LogLevel::Info,
            2 => LogLevel::Notice,
            3 => LogLevel::Warning,
            4 => LogLevel::Error,
            5 => LogLevel::Critical,
            6 => LogLevel::Alert,
            _ => LogLevel::Emergency,
        }
    }
}

/// What `initialize` told us about the client.
#[derive(Debug, Clone)]
pub(crate) struct ClientState {
    pub(crate) protocol_version: String,
    pub(crate) capabilities: Value,
}

pub(crate) struct Session {
    client: Mutex<Option<ClientState>>,
    log_level: AtomicU8,
    in_flight: Mutex<HashMap<RequestId, CancellationToken>>,
    pending: Mutex<HashMap<RequestId, oneshot::Sender<Result<Value, ProtocolError>>>>,
    next_id: AtomicI64,
    subscriptions: Mutex<HashSet<String>>,
    standalone: Mutex<Option<Outbound>>,
}

impl Session {
    /// A new session; [`ServerInner::new_session`](crate::server::ServerInner::new_session)
    /// also lists it for the server's notifications.
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self {
            client: Mutex::new(None),
            log_level: AtomicU8::new(LogLevel::Info as u8),
            in_flight: Mutex::new(HashMap::new()),
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicI64::new(1),
            subscriptions: Mutex::new(HashSet::new()),
            standalone: Mutex::new(None),
        })
    }

    pub(crate) fn set_client(&self, state: ClientState) {
        *lock(&self.client) = Some(state);
    }

    pub(crate) fn client(&self) -> Option<ClientState> {
        lock(&self.client).clone()
    }

    pub(crate) fn log_level(&self) -> LogLevel {
        LogLevel::from_u8(self.log_level.load(Ordering::Relaxed))
    }

    pub(crate) fn set_log_level(&self, level: LogLevel) {
        self.log_level.store(level as u8, Ordering::Relaxed);
    }

    /// Registers a request as in flight and returns its cancellation token. Called before the
    /// request's future is spawned, so a `notifications/cancelled` read right after the request
    /// always finds it.
    pub(crate) fn begin(&self, id: &RequestId) -> CancellationToken {
        let token = CancellationToken::new();
        lock(&self.in_flight).insert(id.clone(), token.clone());
        token
    }

    pub(crate) fn finish(&self, id: &RequestId) {
        lock(&self.in_flight).remove(id);
    }

    pub(crate) fn cancel(&self, id: &RequestId) {
        if let Some(token) = lock(&self.in_flight).remove(id) {
            token.cancel();
        }
    }

    /// Cancels every request in flight (the session is being closed).
    pub(crate) fn cancel_all(&self) {
        for (_, token) in lock(&self.in_flight).drain() {
            token.cancel();
        }
        self.close_input();
    }

    /// The client can no longer send (stdin reached its end): requests in flight run to their
    /// end, but server-to-client requests will never be answered, so they fail now, and the
    /// standalone stream is released.
    pub(crate) fn close_input(&self) {
        lock(&self.pending).clear();
        *lock(&self.standalone) = None;
    }

    pub(crate) fn in_flight(&self) -> usize {
        lock(&self.in_flight).len()
    }

    /// Allocates an id for a server-to-client request and the receiver of its answer.
    pub(crate) fn expect_response(
        &self,
    ) -> (RequestId, oneshot::Receiver<Result<Value, ProtocolError>>) {
        let id = RequestId::String(format!("s{}", self.next_id.fetch_add(1, Ordering::Relaxed)));
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id.clone(), tx);
        (id, rx)
    }

    pub(crate) fn forget_response(&self, id: &RequestId) {
        lock(&self.pending).remove(id);
    }

    /// Delivers a client's answer to a server-to-client request; unknown ids are ignored.
    pub(crate) fn deliver(&self, id: &RequestId, result: Result<Value, ProtocolError>) {
        if let Some(tx) = lock(&self.pending).remove(id) {
            let _ = tx.send(result);
        }
    }

    pub(crate) fn subscribe(&self, uri: String) {
        lock(&self.subscriptions).insert(uri);
    }

    pub(crate) fn unsubscribe(&self, uri: &str) {
        lock(&self.subscriptions).remove(uri);
    }

    pub(crate) fn is_subscribed(&self, uri: &str) -> bool {
        lock(&self.subscriptions).contains(uri)
    }

    /// Sets the stream for messages not tied to a request (stdout for stdio, the GET stream for
    /// HTTP).
    pub(crate) fn set_standalone(&self, out: Option<Outbound>) {
        *lock(&self.standalone) = out;
    }

    /// Whether a live standalone stream is attached.
    pub(crate) fn has_standalone(&self) -> bool {
        lock(&self.standalone)
            .as_ref()
            .is_some_and(|tx| !tx.is_closed())
    }

    /// Sends on the standalone stream; dropped when there is none.
    pub(crate) fn send_standalone(&self, message: String) -> bool {
        match lock(&self.standalone).as_ref() {
            Some(tx) => tx.send(message).is_ok(),
            None => false,
        }
    }
}
