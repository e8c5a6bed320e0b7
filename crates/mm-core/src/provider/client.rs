//! The HTTP side: one `POST {base_url}/chat/completions` per attempt, retries with backoff,
//! timeouts and the reply deadline, cancellation, and the reading of errors into one clear line.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;
use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;

use super::assemble::{Assembler, CallIds};
use super::errors::{error_text, one_line, overflow_detail, root_cause};
use super::props::{self, ServerInfo};
use super::wire::{self, Completion, WireTool};
use super::{
    ChatRequest, ChatResponse, Message, ProviderConfig, ProviderError, StreamDelta, constrained,
    gbnf,
};
use crate::config::ToolCallMode;
use crate::sse::{SseEvent, SseParser};
use crate::tools::ToolSpec;

/// Longest wait for a TCP connection (or `config.timeout` when shorter).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest whole reply (a non-streamed one, or a non-SSE body to a streaming request), and
/// largest event of a stream.
const MAX_WHOLE_REPLY: usize = 16 << 20;
/// Largest reply stream: the deltas of a reply are assembled in memory.
const MAX_STREAM: usize = 64 << 20;
/// Longest delay between two attempts, whatever `Retry-After` or the backoff say.
const MAX_RETRY_DELAY: Duration = Duration::from_secs(60);

/// A connection to one OpenAI-compatible server.
pub struct Provider {
    config: ProviderConfig,
    http: reqwest::Client,
    /// What `GET /props` told, read once when the mode needs it (see [`props::needed`]).
    server: OnceCell<ServerInfo>,
    ids: CallIds,
    /// The server refused `max_tokens` and asked for `max_completion_tokens`.
    completion_tokens_field: AtomicBool,
    /// The `finish_reason` of the last complete reply.
    last_finish: Mutex<Option<String>>,
}

/// Why an attempt failed, and whether another may succeed.
enum Failure {
    Retry {
        error: ProviderError,
        after: Option<Duration>,
    },
    Fatal(ProviderError),
    /// The request must change and be sent again at once (not counted as a retry).
    Resend,
}

impl Failure {
    fn retry(error: ProviderError) -> Self {
        Failure::Retry { error, after: None }
    }
}

impl Provider {
    /// A provider for `config.base_url`. Sends nothing yet. For an `https` URL this reads the
    /// system's CA certificates (and fails when there are none); any other URL never speaks TLS
    /// and reads none.
    pub fn new(config: ProviderConfig) -> Result<Self, ProviderError> {
        let mut builder =
            reqwest::Client::builder().connect_timeout(CONNECT_TIMEOUT.min(config.timeout));
        if !is_https(&config.base_url) {
            // An empty root store instead of the platform verifier, which loads every CA
            // certificate of the system when the client is built (half of mm's start-up) and
            // refuses to build on a machine that has none, though plain http needs no TLS.
            builder = builder.tls_certs_only([]);
        }
        let http = builder.build().map_err(|e| ProviderError::Connect {
            url: config.base_url.clone(),
            // Building the client reads the system's CA certificates for https, and only then.
            detail: if is_https(&config.base_url) {
                format!(
                    "{}; https needs the system's CA certificates (install ca-certificates, or \
                     point SSL_CERT_FILE at a bundle)",
                    root_cause(&e)
                )
            } else {
                root_cause(&e)
            },
        })?;
        Ok(Self {
            config,
            http,
            server: OnceCell::new(),
            ids: CallIds::default(),
            completion_tokens_field: AtomicBool::new(false),
            last_finish: Mutex::new(None),
        })
    }

    pub fn config(&self) -> &ProviderConfig {
        &self.config
    }

    /// The `finish_reason` of the last reply [`chat`](Self::chat) returned: `length` when it
    /// was cut at `max_tokens` (so a caller knows whether a turn's final answer is whole).
    /// `None` before the first reply, or when the server gave none.
    pub fn last_finish_reason(&self) -> Option<String> {
        self.last_finish
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The context size in tokens: [`ProviderConfig::context_size`] when set, else llama-server's
    /// `/props` once read (in `auto` and `constrained` modes only, at the first
    /// [`chat`](Self::chat) with tools or at [`probe`](Self::probe)); `None` in native mode.
    pub fn context_size(&self) -> Option<u64> {
        self.config
            .context_size
            .or_else(|| self.server.get().and_then(|info| info.n_ctx))
    }

    /// Reads the server's `/props` now rather than at the first [`chat`](Self::chat), so that
    /// [`context_size`](Self::context_size) and [`tool_call_mode`](Self::tool_call_mode) are known
    /// up front — when the mode uses `/props` at all: in native mode this sends nothing. Does
    /// nothing once read; a server without `/props` is not an error.
    pub async fn probe(&self, cancel: &CancellationToken) -> Result<(), ProviderError> {
        if self.config.mode == ToolCallMode::Native {
            return Ok(());
        }
        cancellable(cancel, self.server_info()).await.map(|_| ())
    }

    /// The mode in use: the configured one, or for `auto` what `/props` decided (still `Auto`
    /// before the first [`chat`](Self::chat)).
    pub fn tool_call_mode(&self) -> ToolCallMode {
        match (self.config.mode, self.server.get()) {
            (ToolCallMode::Auto, Some(info)) => Self::auto_mode(info),
            (mode, _) => mode,
        }
    }

    fn auto_mode(info: &ServerInfo) -> ToolCallMode {
        match info.template_tools {
            Some(false) => ToolCallMode::Constrained,
            _ => ToolCallMode::Native,
        }
    }

    /// What the model is shown of `tools`, exactly as a first request sends it (`mm tools`): in
    /// native mode the request's `tools`; in constrained mode an object with the part of the
    /// system prompt that lists them and what the reply must match (`response_format`, or on
    /// llama-server the `grammar`). In `auto` mode the server's `/props` decides, as for a
    /// request (native when it does not answer).
    pub async fn tools_as_sent(&self, tools: &[ToolSpec], strict: &[Value]) -> Value {
        let messages = [Message::System(String::new())];
        let request = ChatRequest::new(&messages, tools, 1);
        let (info, constrained) = self.mode_for(&request).await;
        let body = serde_json::to_value(self.body(&request, strict, constrained, &info))
            .unwrap_or_default();
        if !constrained {
            return body
                .get("tools")
                .cloned()
                .unwrap_or_else(|| Value::Array(Vec::new()));
        }
        let prompt = body["messages"][0]["content"].as_str().unwrap_or_default();
        let mut shown = serde_json::Map::new();
        shown.insert("tool_calls".into(), "constrained".into());
        shown.insert("tools_in_system_prompt".into(), prompt.trim_start().into());
        for key in ["response_format", "grammar"] {
            if let Some(value) = body.get(key).filter(|v| !v.is_null()) {
                shown.insert(key.into(), value.clone());
            }
        }
        Value::Object(shown)
    }

    /// Sends the conversation and returns the complete reply; `on_delta` sees it stream in.
    /// Same as [`chat_with_schemas`](Self::chat_with_schemas) without strict schemas.
    pub async fn chat(
        &self,
        request: &ChatRequest<'_>,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
        cancel: &CancellationToken,
    ) -> Result<ChatResponse, ProviderError> {
        self.chat_with_schemas(request, &[], on_delta, cancel).await
    }

    /// Sends the conversation and returns the complete reply; `on_delta` sees it stream in.
    ///
    /// `strict` holds, per tool and in the order of `request.tools`, the schema its arguments must
    /// match in constrained mode, *with* `required` and `enum` (which [`ToolSpec::parameters`]
    /// leaves out for the model's eyes); empty means the tools' own `parameters`. Native mode
    /// ignores it.
    ///
    /// All text meant for the user arrives through `on_delta`, streamed or not (a non-streaming
    /// reply comes as one delta); text that might be a tool call is held back until the reply is
    /// complete and shown only if it was not one. [`ChatResponse::content`] is the final text with
    /// recognised calls removed. Failed attempts are reported as [`StreamDelta::Retry`].
    ///
    /// [`ToolSpec::parameters`]: crate::tools::ToolSpec::parameters
    pub async fn chat_with_schemas(
        &self,
        request: &ChatRequest<'_>,
        strict: &[Value],
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
        cancel: &CancellationToken,
    ) -> Result<ChatResponse, ProviderError> {
        let mut retries_done = 0;
        let mut resent = false;
        loop {
            let failure = match cancellable(cancel, self.attempt(request, strict, on_delta)).await?
            {
                Ok(response) => {
                    *self
                        .last_finish
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner) = response.finish_reason.clone();
                    return Ok(response);
                }
                Err(failure) => failure,
            };
            let (error, after) = match failure {
                Failure::Fatal(error) => return Err(error),
                Failure::Retry { error, after } => (error, after),
                Failure::Resend if !resent => {
                    resent = true;
                    continue;
                }
                Failure::Resend => {
                    let error = ProviderError::BadReply(
                        "the server refused both max_tokens and max_completion_tokens".into(),
                    );
                    return Err(error);
                }
            };
            if retries_done >= self.config.retries {
                return Err(error);
            }
            let backoff = self
                .config
                .backoff
                .saturating_mul(1 << retries_done.min(16));
            let delay = after.unwrap_or(backoff).min(MAX_RETRY_DELAY);
            retries_done += 1;
            tracing::debug!(attempt = retries_done, ?delay, %error, "retrying the model request");
            on_delta(StreamDelta::Retry {
                attempt: retries_done,
                delay,
                error: error.to_string(),
            });
            cancellable(cancel, tokio::time::sleep(delay)).await?;
        }
    }

    /// What is known of the server (read when the mode needs it), and whether `request` is sent
    /// in constrained mode.
    async fn mode_for(&self, request: &ChatRequest<'_>) -> (ServerInfo, bool) {
        let info = if props::needed(self.config.mode, request) {
            self.server_info().await
        } else {
            ServerInfo::default()
        };
        let mode = match self.config.mode {
            ToolCallMode::Auto => Self::auto_mode(&info),
            mode => mode,
        };
        let constrained = mode == ToolCallMode::Constrained && !request.tools.is_empty();
        (info, constrained)
    }

    /// One request and its reply, within [`ProviderConfig::reply_deadline`].
    async fn attempt(
        &self,
        request: &ChatRequest<'_>,
        strict: &[Value],
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<ChatResponse, Failure> {
        let (info, constrained) = self.mode_for(request).await;
        // The idle timeout alone never fires on a stream of `: keep-alive` comments.
        let deadline = self.config.reply_deadline;
        tokio::time::timeout(
            deadline,
            self.exchange(request, strict, constrained, &info, on_delta),
        )
        .await
        .map_err(|_| Failure::Fatal(ProviderError::Deadline(deadline)))?
    }

    /// Sends the request and reads the whole reply.
    async fn exchange(
        &self,
        request: &ChatRequest<'_>,
        strict: &[Value],
        constrained: bool,
        info: &ServerInfo,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<ChatResponse, Failure> {
        let body = self.body(request, strict, constrained, info);
        // A native repair step under a grammar of calls replies as constrained mode does.
        let constrained = constrained || body.grammar.is_some() && request.call_only;
        let mut builder = self.http.post(self.url("chat/completions")).json(&body);
        if let Some(key) = self.config.api_key.as_deref().filter(|k| !k.is_empty()) {
            builder = builder.bearer_auth(key);
        }
        let timeout = self.config.timeout;
        let mut assembler = Assembler::new(constrained);
        if self.config.stream {
            let response = tokio::time::timeout(timeout, builder.send())
                .await
                .map_err(|_| Failure::Fatal(ProviderError::Timeout(timeout)))?
                .map_err(|e| self.send_failure(&e))?;
            let response = self.check_status(response, info).await?;
            self.read_stream(response, &mut assembler, on_delta).await?;
        } else {
            let text = tokio::time::timeout(timeout, async {
                let response = builder.send().await.map_err(|e| self.send_failure(&e))?;
                let response = self.check_status(response, info).await?;
                let body = crate::body::read(response, MAX_WHOLE_REPLY)
                    .await
                    .map_err(|e| Failure::retry(broken(&e)))?;
                if body.cut {
                    return Err(Failure::Fatal(too_large("the reply")));
                }
                Ok(String::from_utf8_lossy(&body.bytes).into_owned())
            })
            .await
            .map_err(|_| Failure::Fatal(ProviderError::Timeout(timeout)))??;
            self.take_whole(&text, &mut assembler, on_delta)?;
        }
        Ok(assembler.finish(request.tools, &self.ids, on_delta))
    }

    fn body<'a>(
        &'a self,
        request: &ChatRequest<'a>,
        strict: &[Value],
        constrained: bool,
        info: &ServerInfo,
    ) -> wire::Request<'a> {
        let (messages, tools) = if constrained {
            let messages = constrained::messages(request.messages, request.tools, strict);
            (messages, Vec::new())
        } else {
            let messages = wire::native_messages(
                request.messages,
                request.answer_only.then_some(request.language),
            );
            // An answer step keeps the tools in the prompt (the server's cached prefix) and
            // allows none of them.
            (messages, request.tools.iter().map(WireTool::from).collect())
        };
        let native_answer = !constrained && request.answer_only;
        // The tools the reply may call: none when it must be an answer.
        let callable: &[ToolSpec] = if request.answer_only {
            &[]
        } else {
            request.tools
        };
        let schemas = || -> Vec<Value> {
            (0..callable.len())
                .map(|i| constrained::arguments_schema(callable, strict, i))
                .collect()
        };
        // On llama-server a compact grammar replaces the schema (see `gbnf`), when it can; a
        // repair step in native mode gets the constrained grammar of its calls (no answer).
        let grammar = ((constrained || request.call_only) && info.llama_server)
            .then(|| gbnf::grammar(callable, &schemas(), !request.call_only))
            .flatten();
        let grammar = grammar.or_else(|| {
            (native_answer && info.llama_server).then(|| wire::ANSWER_GRAMMAR.to_owned())
        });
        let response_format = (constrained && grammar.is_none())
            .then(|| constrained::response_format(callable, strict, !request.call_only));
        // llama-server takes a grammar beside the tools only with `tool_choice: "none"` (the
        // tools stay in the prompt, the grammar decides the reply).
        let native_grammar = !constrained && grammar.is_some();
        let tool_choice =
            ((native_answer || native_grammar) && !request.tools.is_empty()).then_some("none");
        let completion_tokens = self.completion_tokens_field.load(Ordering::Relaxed);
        wire::Request {
            model: &self.config.model,
            messages,
            tools,
            tool_choice,
            max_tokens: (!completion_tokens).then_some(request.max_tokens),
            max_completion_tokens: completion_tokens.then_some(request.max_tokens),
            temperature: self.config.temperature,
            seed: self.config.seed,
            stream: self.config.stream,
            stream_options: self.config.stream.then_some(wire::StreamOptions {
                include_usage: true,
            }),
            response_format,
            grammar,
        }
    }

    /// Reads an SSE body into the assembler until `[DONE]`.
    async fn read_stream(
        &self,
        response: reqwest::Response,
        assembler: &mut Assembler,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<(), Failure> {
        let timeout = self.config.timeout;
        let mut bytes = response.bytes_stream();
        let mut parser = SseParser::with_limit(MAX_WHOLE_REPLY);
        // A server decides how long it streams: past this, the reply is refused.
        let mut received = 0usize;
        // The body as received while no event came: a server that ignored `stream: true` sent
        // one JSON reply instead.
        let mut unparsed: Option<Vec<u8>> = Some(Vec::new());
        loop {
            let next = tokio::time::timeout(timeout, bytes.next())
                .await
                .map_err(|_| Failure::Fatal(ProviderError::Timeout(timeout)))?;
            let ended = next.is_none();
            let events = match next {
                Some(Ok(chunk)) => {
                    received += chunk.len();
                    if received > MAX_STREAM {
                        return Err(Failure::Fatal(too_large("the reply stream")));
                    }
                    if let Some(raw) = &mut unparsed {
                        raw.extend_from_slice(&chunk);
                    }
                    parser.push(&chunk)
                }
                Some(Err(e)) => return Err(Failure::retry(broken(&e))),
                None => parser.finish().into_iter().collect(),
            };
            if !events.is_empty()
                || unparsed
                    .as_ref()
                    .is_some_and(|raw| raw.len() > MAX_WHOLE_REPLY)
            {
                unparsed = None;
            }
            for event in events {
                if self.take_event(event, assembler, on_delta)? {
                    return Ok(());
                }
            }
            // A reply that starts with a call written as text is that call: stop reading (the
            // server stops generating when the connection closes) rather than wait for the
            // calls a small model invents after it, up to max_tokens.
            if assembler.has_complete_text_call() {
                return Ok(());
            }
            if ended {
                if let Some(raw) = unparsed.filter(|raw| !raw.is_empty()) {
                    return self.take_whole(&String::from_utf8_lossy(&raw), assembler, on_delta);
                }
                // Servers end with `[DONE]`; a stream that stops without it, and without saying
                // why the reply ended, was cut.
                return if assembler.finished() {
                    Ok(())
                } else {
                    Err(Failure::retry(ProviderError::BadReply(
                        "the stream ended before the reply was complete".into(),
                    )))
                };
            }
        }
    }

    /// A whole JSON reply: its tool calls are complete, not fragments.
    fn take_whole(
        &self,
        text: &str,
        assembler: &mut Assembler,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<(), Failure> {
        let completion: Completion = serde_json::from_str(text).map_err(|_| {
            Failure::retry(ProviderError::BadReply(format!(
                "not JSON: {}",
                one_line(text)
            )))
        })?;
        if let Some(error) = &completion.error {
            let info = self.server.get().copied().unwrap_or_default();
            return Err(self.reported_failure(error, &info));
        }
        assembler.push_whole(completion, on_delta);
        Ok(())
    }

    /// Handles one event; true at `[DONE]`.
    fn take_event(
        &self,
        event: SseEvent,
        assembler: &mut Assembler,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<bool, Failure> {
        if event.oversized {
            return Err(Failure::Fatal(too_large("an event of the reply stream")));
        }
        let data = event.data.trim();
        if data == "[DONE]" {
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        // One event is one JSON value; a server that forgets the blank line between events
        // glues several `data:` lines into one event, so each line is tried on its own too.
        let completions: Vec<Completion> = match serde_json::from_str(data) {
            Ok(completion) => vec![completion],
            Err(_) => {
                let mut parsed = Vec::new();
                for line in data.lines().map(str::trim).filter(|l| !l.is_empty()) {
                    if line == "[DONE]" {
                        break;
                    }
                    let completion = serde_json::from_str(line).map_err(|_| {
                        Failure::retry(ProviderError::BadReply(format!(
                            "not JSON: {}",
                            one_line(data)
                        )))
                    })?;
                    parsed.push(completion);
                }
                parsed
            }
        };
        for completion in completions {
            if let Some(error) = &completion.error {
                let info = self.server.get().copied().unwrap_or_default();
                return Err(self.reported_failure(error, &info));
            }
            assembler.push(completion, on_delta);
        }
        Ok(data.lines().any(|l| l.trim() == "[DONE]"))
    }

    /// Turns a non-2xx answer into a failure; passes a 2xx one through.
    async fn check_status(
        &self,
        response: reqwest::Response,
        info: &ServerInfo,
    ) -> Result<reqwest::Response, Failure> {
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(|s| Duration::from_secs_f64(s.min(MAX_RETRY_DELAY.as_secs_f64())));
        // An error body is read for its message: its first 64 KiB say it.
        let body = tokio::time::timeout(self.config.timeout, crate::body::read(response, 64 << 10))
            .await
            .ok()
            .and_then(Result::ok)
            .map(|body| String::from_utf8_lossy(&body.bytes).into_owned())
            .unwrap_or_default();
        let parsed: Option<Value> = serde_json::from_str(&body).ok();
        if let Some(detail) = overflow_detail(parsed.as_ref(), &body, info.n_ctx) {
            return Err(Failure::Fatal(ProviderError::ContextOverflow { detail }));
        }
        if status == reqwest::StatusCode::BAD_REQUEST
            && body.contains("max_completion_tokens")
            && !self.completion_tokens_field.swap(true, Ordering::Relaxed)
        {
            tracing::debug!("the server wants max_completion_tokens; sending again");
            return Err(Failure::Resend);
        }
        let error = ProviderError::Status {
            status: status.as_u16(),
            body: error_text(parsed.as_ref(), &body),
        };
        let code = status.as_u16();
        if code == 429 || code == 408 || status.is_server_error() {
            Err(Failure::Retry { error, after })
        } else {
            Err(Failure::Fatal(error))
        }
    }

    /// An `{"error": …}` object inside a 200 reply or stream.
    fn reported_failure(&self, error: &Value, info: &ServerInfo) -> Failure {
        let wrapped = serde_json::json!({ "error": error });
        let raw = error.to_string();
        if let Some(detail) = overflow_detail(Some(&wrapped), &raw, info.n_ctx) {
            return Failure::Fatal(ProviderError::ContextOverflow { detail });
        }
        let text = error_text(Some(&wrapped), &raw);
        Failure::retry(ProviderError::BadReply(format!(
            "the server reported an error: {text}"
        )))
    }

    fn send_failure(&self, error: &reqwest::Error) -> Failure {
        // A connect timeout is a connection failure (retried), not a silent server.
        if error.is_timeout() && !error.is_connect() {
            return Failure::Fatal(ProviderError::Timeout(self.config.timeout));
        }
        Failure::retry(ProviderError::Connect {
            url: self.config.base_url.clone(),
            detail: root_cause(error),
        })
    }

    fn url(&self, path: &str) -> String {
        format!("{}/{path}", self.config.base_url.trim_end_matches('/'))
    }

    /// Reads `/props` once. A server without it (or that says nothing useful) leaves the info
    /// empty for good; one that cannot be reached is asked again next time.
    async fn server_info(&self) -> ServerInfo {
        let read = self
            .server
            .get_or_try_init(|| props::read(&self.http, &self.config))
            .await;
        read.copied().unwrap_or_default()
    }
}

/// Runs `future` unless `cancel` fires first.
async fn cancellable<T>(
    cancel: &CancellationToken,
    future: impl Future<Output = T>,
) -> Result<T, ProviderError> {
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(ProviderError::Cancelled),
        value = future => Ok(value),
    }
}

/// A reply past one of the limits above: refused, not retried (it would come back as large).
fn too_large(what: &str) -> ProviderError {
    ProviderError::BadReply(format!(
        "{what} is larger than mm reads ({} for a whole reply or one event, {} for a stream); \
         lower limits.max_tokens or check the server",
        crate::regular::size(MAX_WHOLE_REPLY as u64),
        crate::regular::size(MAX_STREAM as u64)
    ))
}

fn broken(error: &reqwest::Error) -> ProviderError {
    ProviderError::BadReply(format!(
        "the connection broke during the reply: {}",
        root_cause(error)
    ))
}

/// Whether `url` needs TLS (its scheme is `https`, in any case).
fn is_https(url: &str) -> bool {
    url.trim_start()
        .get(..8)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("https://"))
}
