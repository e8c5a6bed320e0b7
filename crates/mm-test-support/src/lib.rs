//! Test support for mm: a scripted OpenAI-compatible model server.
//!
//! [`ScriptedServer`] answers `POST /v1/chat/completions` with the [`Reply`]s of its script, in
//! order, one per request — as SSE when the request says `"stream": true`, else as one JSON body
//! — and records every request body. It runs on its own thread and Tokio runtime, so plain
//! `#[test]` functions (which drive the real `mm` binary as a child process) can use it, and it
//! stops when dropped. It also serves `GET /v1/models` and llama-server's `GET /props` (and
//! counts the latter: [`ScriptedServer::props_count`]).
//!
//! When a request asks for constrained output (`response_format` or llama-server's `grammar`),
//! replies are rendered the way a grammar-constrained server would produce them: a tool call as the text
//! `{"tool":NAME,"arguments":{…}}`, a text as `{"answer":"…"}`.
//!
//! ```
//! use mm_test_support::{Reply, ScriptedServer};
//!
//! let server = ScriptedServer::start(vec![
//!     Reply::tool_call("read_file", r#"{"path":"a.txt"}"#),
//!     Reply::text("It says hello."),
//! ]);
//! assert!(server.base_url().starts_with("http://127.0.0.1:"));
//! assert_eq!(server.request_count(), 0);
//! ```

mod corpus;
mod http_peer;
mod render;
mod reply;

pub mod llama;

pub use corpus::Corpus;
pub use http_peer::{HttpPeer, free_port};

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use tokio::sync::oneshot;

pub use reply::Reply;

/// A running scripted server; stops when dropped.
pub struct ScriptedServer {
    port: u16,
    shared: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

/// How to start a [`ScriptedServer`].
#[derive(Debug, Clone)]
pub struct ServerBuilder {
    script: Vec<Reply>,
    props: Option<PropsInfo>,
}

#[derive(Debug, Clone, Copy)]
struct PropsInfo {
    supports_tool_calls: Option<bool>,
    n_ctx: u64,
}

/// State shared between the server thread and the test.
struct Shared {
    script: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<Value>>,
    /// The `Authorization` header of each request.
    authorizations: Mutex<Vec<Option<String>>>,
    /// Ids of the tool calls sent, with the number of the reply that sent them.
    sent_calls: Mutex<Vec<(usize, String)>>,
    count: AtomicUsize,
    /// `GET /props` requests received.
    props_count: AtomicUsize,
    props: Option<PropsInfo>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl ServerBuilder {
    /// The replies, served in order.
    pub fn script(mut self, script: Vec<Reply>) -> Self {
        self.script = script;
        self
    }

    /// What `/props` says in `chat_template_caps.supports_tool_calls` (`None`: the field is
    /// left out). Default `Some(true)`.
    pub fn supports_tool_calls(mut self, supports: Option<bool>) -> Self {
        if let Some(props) = &mut self.props {
            props.supports_tool_calls = supports;
        }
        self
    }

    /// `default_generation_settings.n_ctx` in `/props`. Default 8192.
    pub fn n_ctx(mut self, n_ctx: u64) -> Self {
        if let Some(props) = &mut self.props {
            props.n_ctx = n_ctx;
        }
        self
    }

    /// No `/props` endpoint (404), like OpenAI, vLLM or Ollama.
    pub fn without_props(mut self) -> Self {
        self.props = None;
        self
    }

    /// Binds `127.0.0.1:0` and starts serving on a thread of its own.
    #[expect(
        clippy::expect_used,
        reason = "a test server that cannot start fails the test"
    )]
    pub fn start(self) -> ScriptedServer {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener
            .set_nonblocking(true)
            .expect("non-blocking listener");
        let port = listener.local_addr().expect("local address").port();
        let shared = Arc::new(Shared {
            script: Mutex::new(self.script.into()),
            requests: Mutex::new(Vec::new()),
            authorizations: Mutex::new(Vec::new()),
            sent_calls: Mutex::new(Vec::new()),
            count: AtomicUsize::new(0),
            props_count: AtomicUsize::new(0),
            props: self.props,
        });
        let (stop, stopped) = oneshot::channel::<()>();
        let app = Router::new()
            .route("/v1/chat/completions", post(chat))
            .route("/chat/completions", post(chat))
            .route("/v1/models", get(models))
            .route("/models", get(models))
            .route("/props", get(props))
            .with_state(Arc::clone(&shared));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("tokio runtime");
        let thread = std::thread::Builder::new()
            .name(format!("scripted-server-{port}"))
            .spawn(move || {
                runtime.block_on(async move {
                    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                        return;
                    };
                    tokio::select! {
                        _ = axum::serve(listener, app) => {}
                        _ = stopped => {}
                    }
                });
                // Hanging and slow replies are still running: drop them with the runtime.
                runtime.shutdown_background();
            })
            .expect("spawn the server thread");
        ScriptedServer {
            port,
            shared,
            stop: Some(stop),
            thread: Some(thread),
        }
    }
}

impl ScriptedServer {
    /// Starts a server with the default `/props` (tool calls supported, `n_ctx` 8192).
    pub fn start(script: Vec<Reply>) -> Self {
        Self::builder().script(script).start()
    }

    pub fn builder() -> ServerBuilder {
        ServerBuilder {
            script: Vec::new(),
            props: Some(PropsInfo {
                supports_tool_calls: Some(true),
                n_ctx: 8192,
            }),
        }
    }

    /// `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// The bodies of the chat requests received so far, in order (a body that was not JSON is
    /// recorded as a JSON string).
    pub fn requests(&self) -> Vec<Value> {
        lock(&self.shared.requests).clone()
    }

    /// The `Authorization` header of each chat request, in order.
    pub fn authorizations(&self) -> Vec<Option<String>> {
        lock(&self.shared.authorizations).clone()
    }

    /// How many chat requests were received.
    pub fn request_count(&self) -> usize {
        self.shared.count.load(Ordering::SeqCst)
    }

    /// How many `GET /props` requests were received (answered or not).
    pub fn props_count(&self) -> usize {
        self.shared.props_count.load(Ordering::SeqCst)
    }

    /// How many replies of the script were not served.
    pub fn replies_left(&self) -> usize {
        lock(&self.shared.script).len()
    }

    /// Panics unless every tool call sent in a (native) reply got a `tool` message with its id in
    /// a later request.
    pub fn assert_every_tool_call_answered(&self) {
        let requests = self.requests();
        let unanswered: Vec<String> = lock(&self.shared.sent_calls)
            .iter()
            .filter(|(reply, id)| {
                !requests
                    .iter()
                    .skip(reply + 1)
                    .any(|request| answers(request, id))
            })
            .map(|(_, id)| id.clone())
            .collect();
        assert!(
            unanswered.is_empty(),
            "tool calls without an answer: {unanswered:?}; requests: {requests:#?}"
        );
    }
}

/// Whether `request` holds a `tool` message for the call `id`.
fn answers(request: &Value, id: &str) -> bool {
    request["messages"].as_array().is_some_and(|messages| {
        messages
            .iter()
            .any(|m| m["role"] == "tool" && m["tool_call_id"] == id)
    })
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn chat(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let request: Value = serde_json::from_slice(&body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()));
    let number = {
        // Count and record together, so that request N is answered by reply N.
        let mut requests = lock(&shared.requests);
        requests.push(request.clone());
        lock(&shared.authorizations).push(authorization);
        shared.count.fetch_add(1, Ordering::SeqCst)
    };
    let Some(reply) = lock(&shared.script).pop_front() else {
        let message = format!(
            "script exhausted: request {} has no reply left in the script",
            number + 1
        );
        let body = json!({"error": {"message": message, "type": "server_error", "code": 500}});
        return (
            StatusCode::INTERNAL_SERVER_ERROR,
            [(header::CONTENT_TYPE, "application/json")],
            body.to_string(),
        )
            .into_response();
    };
    let rendered = render::render(reply, &request, number).await;
    lock(&shared.sent_calls).extend(rendered.call_ids.into_iter().map(|id| (number, id)));
    rendered.response
}

async fn models() -> Response {
    let body = json!({"object": "list", "data": [{"id": "scripted", "object": "model", "owned_by": "mm-test-support"}]});
    (
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

async fn props(State(shared): State<Arc<Shared>>) -> Response {
    shared.props_count.fetch_add(1, Ordering::SeqCst);
    let Some(props) = shared.props else {
        return (StatusCode::NOT_FOUND, Body::from("Not Found")).into_response();
    };
    let mut caps = json!({"supports_tools": true, "supports_system_role": true});
    if let Some(supports) = props.supports_tool_calls {
        caps["supports_tool_calls"] = json!(supports);
    }
    let body = json!({
        "default_generation_settings": {"n_ctx": props.n_ctx, "params": {"temperature": 0.8}},
        "total_slots": 1,
        "model_path": "scripted.gguf",
        "chat_template_caps": caps,
        "build_info": "mm-test-support",
    });
    (
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}
