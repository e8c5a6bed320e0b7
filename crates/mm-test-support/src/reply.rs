//! What the scripted server answers, one [`Reply`] per chat request.

use std::time::Duration;

/// One scripted answer. Build with the constructors, adjust with the `with_*` methods.
#[derive(Debug, Clone)]
pub struct Reply {
    pub(crate) kind: Kind,
    /// Tool calls in one chunk each instead of streamed argument fragments.
    pub(crate) whole: bool,
    /// Tool calls without ids (the client must make its own).
    pub(crate) without_ids: bool,
    pub(crate) reasoning: Option<String>,
    pub(crate) usage: Option<(u64, u64)>,
    pub(crate) headers: Vec<(String, String)>,
    /// The `finish_reason` sent instead of `stop` / `tool_calls`.
    pub(crate) finish_reason: Option<String>,
}

#[derive(Debug, Clone)]
pub(crate) enum Kind {
    Text(String),
    /// `(name, raw arguments)`.
    ToolCalls(Vec<(String, String)>),
    Status(u16, String),
    Garbage,
    Broken,
    Slow(Duration, Box<Reply>),
    Hang,
    /// 200, then an SSE comment every so often, never a `data:` line nor an end.
    CommentsForever(Duration),
    /// A raw SSE body, sent as it is whatever the request asked.
    RawSse(String),
    /// A raw 200 JSON body, sent as it is whatever the request asked.
    RawJson(String),
}

impl Reply {
    fn of(kind: Kind) -> Self {
        Self {
            kind,
            whole: false,
            without_ids: false,
            reasoning: None,
            usage: None,
            headers: Vec::new(),
            finish_reason: None,
        }
    }

    /// An answer in text.
    pub fn text(text: impl Into<String>) -> Self {
        Self::of(Kind::Text(text.into()))
    }

    /// One tool call; `arguments` is sent exactly as given (it need not be valid JSON).
    pub fn tool_call(name: impl Into<String>, arguments: impl Into<String>) -> Self {
        Self::of(Kind::ToolCalls(vec![(name.into(), arguments.into())]))
    }

    /// Several tool calls in one reply.
    pub fn tool_calls<N: Into<String>, A: Into<String>>(calls: Vec<(N, A)>) -> Self {
        Self::of(Kind::ToolCalls(
            calls
                .into_iter()
                .map(|(n, a)| (n.into(), a.into()))
                .collect(),
        ))
    }

    /// An error status with this body (sent as it is).
    pub fn status(code: u16, body: impl Into<String>) -> Self {
        Self::of(Kind::Status(code, body.into()))
    }

    /// 200, then data lines that are not JSON.
    pub fn garbage_stream() -> Self {
        Self::of(Kind::Garbage)
    }

    /// 200, a few chunks, then the connection drops without `[DONE]`.
    pub fn broken_stream() -> Self {
        Self::of(Kind::Broken)
    }

    /// Waits `delay`, then answers `reply`.
    pub fn slow(delay: Duration, reply: Reply) -> Self {
        Self::of(Kind::Slow(delay, Box::new(reply)))
    }

    /// Never answers (the connection stays open until the client gives up).
    pub fn hang() -> Self {
        Self::of(Kind::Hang)
    }

    /// 200 and SSE headers, then `: keep-alive` every `interval`, forever: the stream is never
    /// silent, and never says anything.
    pub fn comments_forever(interval: Duration) -> Self {
        Self::of(Kind::CommentsForever(interval))
    }

    /// A raw SSE body (`data: …\n\n` lines), for server quirks the builders do not cover.
    pub fn raw_sse(body: impl Into<String>) -> Self {
        Self::of(Kind::RawSse(body.into()))
    }

    /// A raw JSON body with status 200.
    pub fn raw_json(body: impl Into<String>) -> Self {
        Self::of(Kind::RawJson(body.into()))
    }

    /// Tool calls whole in one chunk each, as some servers stream them.
    pub fn whole(mut self) -> Self {
        self.whole = true;
        self
    }

    /// Tool calls without `id`.
    pub fn without_ids(mut self) -> Self {
        self.without_ids = true;
        self
    }

    /// Reasoning sent before the reply (`reasoning_content`, as llama.cpp does).
    pub fn with_reasoning(mut self, reasoning: impl Into<String>) -> Self {
        self.reasoning = Some(reasoning.into());
        self
    }

    /// Token counts reported in `usage`.
    pub fn with_usage(mut self, prompt_tokens: u64, completion_tokens: u64) -> Self {
        self.usage = Some((prompt_tokens, completion_tokens));
        self
    }

    /// Ends with this `finish_reason` (`length`: the reply was cut at `max_tokens`).
    pub fn with_finish_reason(mut self, reason: impl Into<String>) -> Self {
        self.finish_reason = Some(reason.into());
        self
    }

    /// An extra response header (e.g. `Retry-After` on a 429).
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
}
