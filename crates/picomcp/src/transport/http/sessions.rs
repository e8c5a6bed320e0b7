//! HTTP configuration, Host/Origin validation and the session table (idle expiry, cap).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, header};
use tokio_util::sync::CancellationToken;

use crate::server::{Server, ServerInner};
use crate::session::Session;

const LOOPBACK: [&str; 4] = ["localhost", "127.0.0.1", "[::1]", "::1"];

/// Settings of the Streamable HTTP transport. The defaults suit a local server: loopback Host
/// and Origin only, 4 MiB bodies, sessions idle for 10 minutes expire, at most 1,000 sessions.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    pub(crate) path: String,
    pub(crate) allowed_hosts: Option<Vec<String>>,
    pub(crate) allowed_origins: Option<Vec<String>>,
    pub(crate) max_body_bytes: usize,
    pub(crate) session_idle_timeout: Duration,
    pub(crate) max_sessions: usize,
}

impl Default for HttpConfig {
    fn default() -> Self {
        let loopback: Vec<String> = LOOPBACK.iter().map(|s| (*s).to_string()).collect();
        Self {
            path: "/mcp".into(),
            allowed_hosts: Some(loopback.clone()),
            allowed_origins: Some(loopback),
            max_body_bytes: 4 * 1024 * 1024,
            session_idle_timeout: Duration::from_secs(600),
            max_sessions: 1000,
        }
    }
}

impl HttpConfig {
    /// The endpoint path (default `/mcp`).
    #[must_use]
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Host names (without port) accepted in the `Host` header, replacing the loopback default.
    #[must_use]
    pub fn allowed_hosts<I: IntoIterator<Item = S>, S: Into<String>>(mut self, hosts: I) -> Self {
        self.allowed_hosts = Some(
            hosts
                .into_iter()
                .map(|h| h.into().to_ascii_lowercase())
                .collect(),
        );
        self
    }

    /// Accepts any `Host` (for servers behind a proxy that checks it).
    #[must_use]
    pub fn allow_any_host(mut self) -> Self {
        self.allowed_hosts = None;
        self
    }

    /// Origins (`https://app.example.com`) or host names accepted in the `Origin` header,
    /// replacing the loopback default. Requests without `Origin` (non-browser clients) pass.
    #[must_use]
    pub fn allowed_origins<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        origins: I,
    ) -> Self {
        self.allowed_origins = Some(
            origins
                .into_iter()
                .map(|h| h.into().to_ascii_lowercase())
                .collect(),
        );
        self
    }

    /// Accepts any `Origin`.
    #[must_use]
    pub fn allow_any_origin(mut self) -> Self {
        self.allowed_origins = None;
        self
    }

    /// The largest accepted request body (default 4 MiB); larger ones get `413`.
    #[must_use]
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// How long a session may stay without requests before it is dropped (default 10 minutes).
    /// A session with a request in flight or an open GET stream is never idle.
    #[must_use]
    pub fn session_idle_timeout(mut self, timeout: Duration) -> Self {
        self.session_idle_timeout = timeout;
        self
    }

    /// The most sessions kept at once (default 1,000); `initialize` past it gets `503`.
    #[must_use]
    pub fn max_sessions(mut self, max: usize) -> Self {
        self.max_sessions = max;
        self
    }

    pub(crate) fn check_host_and_origin(&self, headers: &HeaderMap) -> Result<(), String> {
        if let Some(allowed) = &self.allowed_hosts {
            let host = headers
                .get(header::HOST)
                .and_then(|v| v.to_str().ok())
                .ok_or("Forbidden: missing Host header")?;
            let name = host_of(host).to_ascii_lowercase();
            if !allowed.contains(&name) {
                return Err(format!("Forbidden: Host {host:?} is not allowed"));
            }
        }
        if let (Some(allowed), Some(origin)) = (&self.allowed_origins, headers.get(header::ORIGIN))
        {
            let origin = origin
                .to_str()
                .map_err(|_| "Forbidden: invalid Origin header")?;
            let lower = origin.to_ascii_lowercase();
            let authority = lower
                .split_once("://")
                .map(|(_, rest)| rest.split('/').next().unwrap_or(""))
                .ok_or_else(|| format!("Forbidden: Origin {origin:?} is not allowed"))?;
            let name = host_of(authority);
            if !allowed.iter().any(|a| *a == name || *a == lower) {
                return Err(format!("Forbidden: Origin {origin:?} is not allowed"));
            }
        }
        Ok(())
    }
}

/// The host part of `host[:port]` or `[v6][:port]`.
fn host_of(authority: &str) -> &str {
    if authority.starts_with('[') {
        return authority
            .find(']')
            .map_or(authority, |end| &authority[..=end]);
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => authority,
    }
}

#[derive(Debug)]
pub(crate) enum SessionError {
    Missing,
    Unknown,
    TooMany,
}

pub(crate) struct HttpSession {
    pub(crate) id: String,
    pub(crate) session: Arc<Session>,
    last_seen_ms: AtomicU64,
}

pub(crate) struct HttpState {
    pub(crate) server: Arc<ServerInner>,
    pub(crate) config: HttpConfig,
    sessions: RwLock<HashMap<String, Arc<HttpSession>>>,
    started: Instant,
    last_sweep_ms: AtomicU64,
    pub(crate) shutdown: CancellationToken,
}

impl HttpState {
    pub(crate) fn new(server: Server, config: HttpConfig) -> Arc<Self> {
        Arc::new(Self {
            server: server.into_inner(),
            config,
            sessions: RwLock::new(HashMap::new()),
            started: Instant::now(),
            last_sweep_ms: AtomicU64::new(0),
            shutdown: CancellationToken::new(),
        })
    }

    fn read(&self) -> RwLockReadGuard<'_, HashMap<String, Arc<HttpSession>>> {
        self.sessions
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, HashMap<String, Arc<HttpSession>>> {
        self.sessions
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    pub(crate) fn touch(&self, entry: &HttpSession) {
        entry.last_seen_ms.store(self.now_ms(), Ordering::Relaxed);
    }

    pub(crate) fn create_session(&self) -> Result<Arc<HttpSession>, SessionError> {
        if self.read().len() >= self.config.max_sessions {
            self.sweep(true);
            if self.read().len() >= self.config.max_sessions {
                return Err(SessionError::TooMany);
            }
        }
        let entry = Arc::new(HttpSession {
            id: uuid::Uuid::new_v4().simple().to_string(),
            session: self.server.new_session(),
            last_seen_ms: AtomicU64::new(self.now_ms()),
        });
        self.write().insert(entry.id.clone(), Arc::clone(&entry));
        Ok(entry)
    }

    pub(crate) fn find_session(&self, id: Option<&str>) -> Result<Arc<HttpSession>, SessionError> {
        let id = id.ok_or(SessionError::Missing)?;
        let entry = self.read().get(id).cloned().ok_or(SessionError::Unknown)?;
        self.touch(&entry);
        Ok(entry)
    }

    pub(crate) fn remove_session(&self, id: Option<&str>) -> Result<(), SessionError> {
        let id = id.ok_or(SessionError::Missing)?;
        let entry = self.write().remove(id).ok_or(SessionError::Unknown)?;
        entry.session.cancel_all();
        Ok(())
    }

    /// Drops sessions idle past the timeout. Runs on the request path at most every quarter
    /// timeout (or when `force`d by the cap), so no background task is needed.
    pub(crate) fn sweep(&self, force: bool) {
        let now = self.now_ms();
        let timeout =
            u64::try_from(self.config.session_idle_timeout.as_millis()).unwrap_or(u64::MAX);
        let last = self.last_sweep_ms.load(Ordering::Relaxed);
        if !force && now.saturating_sub(last) < (timeout / 4).max(1) {
            return;
        }
        if self
            .last_sweep_ms
            .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
            && !force
        {
            return;
        }
        self.write().retain(|_, e| {
            let idle = now.saturating_sub(e.last_seen_ms.load(Ordering::Relaxed)) >= timeout
                && e.session.in_flight() == 0
                && !e.session.has_standalone();
            if idle {
                e.session.cancel_all();
            }
            !idle
        });
    }

    /// Server shutdown: cancel requests in flight and end the GET streams.
    pub(crate) fn shut_down(&self) {
        self.shutdown.cancel();
        for entry in self.read().values() {
            entry.session.cancel_all();
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.read().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(host: &str, origin: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_str(host).unwrap());
        if let Some(o) = origin {
            h.insert(header::ORIGIN, HeaderValue::from_str(o).unwrap());
        }
        h
    }

    #[test]
    fn loopback_defaults() {
        let c = HttpConfig::default();
        assert!(
            c.check_host_and_origin(&headers("127.0.0.1:8001", None))
                .is_ok()
        );
        assert!(
            c.check_host_and_origin(&headers("localhost", Some("http://localhost:3000")))
                .is_ok()
        );
        assert!(
            c.check_host_and_origin(&headers("[::1]:80", Some("http://[::1]:80")))
                .is_ok()
        );
        assert!(
            c.check_host_and_origin(&headers("evil.example.com", None))
                .is_err()
        );
        assert!(
            c.check_host_and_origin(&headers("127.0.0.1", Some("http://evil.example.com")))
                .is_err()
        );
        assert!(
            c.check_host_and_origin(&headers("127.0.0.1", Some("null")))
                .is_err()
        );
        let c = HttpConfig::default()
            .allowed_hosts(["mcp.example.com"])
            .allowed_origins(["https://app.example.com"]);
        assert!(
            c.check_host_and_origin(&headers("mcp.example.com", Some("https://app.example.com")))
                .is_ok()
        );
        assert!(
            c.check_host_and_origin(&headers("mcp.example.com", Some("http://app.example.com")))
                .is_err()
        );
    }

    #[test]
    fn sessions_expire_and_are_capped() {
        let config = HttpConfig::default()
            .max_sessions(2)
            .session_idle_timeout(Duration::ZERO);
        let state = HttpState::new(Server::new("t", "1"), config);
        let a = state.create_session().unwrap();
        assert!(state.find_session(Some(&a.id)).is_ok());
        state.sweep(true);
        assert_eq!(state.len(), 0);
        let config = HttpConfig::default().max_sessions(1);
        let state = HttpState::new(Server::new("t", "1"), config);
        state.create_session().unwrap();
        assert!(matches!(state.create_session(), Err(SessionError::TooMany)));
    }
}
