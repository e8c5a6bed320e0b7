//! The model provider: OpenAI-compatible Chat Completions over HTTP (llama.cpp, Ollama, vLLM,
//! LM Studio, OpenAI), streaming or not, native or constrained tool calls.
//!
//! The turn loop sees one shape whatever the server and the mode: a [`ChatRequest`] in, a
//! [`ChatResponse`] out (text and [`ToolCall`]s with their raw argument strings), and
//! [`StreamDelta`]s while it streams.

pub(crate) mod asks;
mod assemble;
mod client;
mod constrained;
mod errors;
#[cfg(test)]
mod fuzz_tests;
mod gbnf;
mod props;
mod response_format;
mod text_calls;
mod think;
mod wire;

use std::time::Duration;

use crate::config::ToolCallMode;
use crate::language::Language;
use crate::tools::ToolSpec;

pub use asks::Asks;
pub use client::Provider;

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    System(String),
    User(String),
    Assistant {
        content: Option<String>,
        tool_calls: Vec<ToolCall>,
    },
    Tool {
        tool_call_id: String,
        name: String,
        content: String,
    },
}

/// A tool call as the model made it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments exactly as the model sent them (normally a JSON object's text).
    pub arguments: String,
}

/// Token counts reported by the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
}

/// What is sent: the whole conversation and the tools.
#[derive(Debug, Clone)]
pub struct ChatRequest<'a> {
    pub messages: &'a [Message],
    pub tools: &'a [ToolSpec],
    pub max_tokens: u32,
    /// The reply must be an answer (the turn loop's answer step). The prompt stays as it is, so
    /// the server's prompt cache still holds it: in constrained mode the tools stay described
    /// but the schema or grammar offers only `{"answer"}`; in native mode the tools are still
    /// sent with `tool_choice: "none"`, the conversation gets a closing user message asking for
    /// the answer (not kept in the conversation), and on llama-server a grammar keeps call
    /// syntax (`{`, and `[`, `<` or a code fence at the start) out of the reply.
    pub answer_only: bool,
    /// The language of mm's own request for the answer ([`Asks`]), in an answer-only request.
    pub language: Language,
    /// The reply must be a call to one of `tools`, its arguments held to the tool's schema (the
    /// turn loop's repair step, after a round whose calls were all invalid). The prompt stays as
    /// it is. In constrained mode the schema or grammar offers no `{"answer"}`; in native mode on
    /// llama-server a grammar of the same calls is added (the reply is then read as a
    /// constrained one); elsewhere the request is sent as usual.
    pub call_only: bool,
}

impl<'a> ChatRequest<'a> {
    pub fn new(messages: &'a [Message], tools: &'a [ToolSpec], max_tokens: u32) -> Self {
        Self {
            messages,
            tools,
            max_tokens,
            answer_only: false,
            language: Language::English,
            call_only: false,
        }
    }
}

/// The model's reply, once complete.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChatResponse {
    /// The text of the reply (without any tool call written as text that was recognised).
    pub content: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Option<Usage>,
    pub finish_reason: Option<String>,
    /// The calls were written as text (recognised in the reply's content, or constrained mode's
    /// JSON), not made through the API's tool calls.
    pub calls_as_text: bool,
    /// What was odd about the reply, one sentence each, for the user: an empty reply, a reply
    /// with no choices, a tool call without a name (dropped). Empty for a normal reply.
    pub warnings: Vec<String>,
}

/// Pieces of the reply as they stream in, for display.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum StreamDelta {
    Text(String),
    Reasoning(String),
    /// A failed attempt that will be retried.
    Retry {
        attempt: u32,
        delay: Duration,
        error: String,
    },
}

pub use crate::config::DEFAULT_REPLY_DEADLINE;

/// How to reach the server.
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    /// e.g. `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    pub mode: ToolCallMode,
    pub stream: bool,
    /// Per request; a stream that stays silent this long is an error too (an idle timeout:
    /// every chunk, even an SSE comment, restarts it).
    pub timeout: Duration,
    /// The longest one reply may take, from sending the request to its last byte, however
    /// busy the stream looks: a server that sends `: keep-alive` comments forever is stopped
    /// here. Default 10 minutes.
    pub reply_deadline: Duration,
    /// Attempts after the first on connection errors, 429 and 5xx.
    pub retries: u32,
    /// The first backoff delay (doubled each retry).
    pub backoff: Duration,
    /// The context size in tokens when the user knows it better than the server says (Ollama
    /// reports none); `None`: what llama-server's `/props` says.
    pub context_size: Option<u64>,
    /// Sent as `temperature` in every request when set; `None`: the server's default.
    pub temperature: Option<f64>,
    /// Sent as `seed` in every request when set (llama.cpp, vLLM, Ollama and OpenAI read it);
    /// with a temperature above 0, the same seed gives the same reply.
    pub seed: Option<u64>,
}

impl ProviderConfig {
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            mode: ToolCallMode::Auto,
            stream: true,
            timeout: Duration::from_secs(300),
            reply_deadline: DEFAULT_REPLY_DEADLINE,
            retries: 3,
            backoff: Duration::from_millis(500),
            context_size: None,
            temperature: None,
            seed: None,
        }
    }
}

/// A provider failure, after retries. Its `Display` is the one line the user reads.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    #[error("cannot reach the model server at {url}: {detail}")]
    Connect { url: String, detail: String },
    #[error("the model server answered {status}: {body}")]
    Status { status: u16, body: String },
    #[error("the prompt does not fit the model's context ({detail})")]
    ContextOverflow { detail: String },
    #[error("the model server sent a reply mm cannot read: {0}")]
    BadReply(String),
    #[error("the model server did not answer within {0:?}")]
    Timeout(Duration),
    /// [`ProviderConfig::reply_deadline`] passed while the reply was still coming.
    #[error("the model server's reply did not end within {0:?} (the reply deadline)")]
    Deadline(Duration),
    #[error("cancelled")]
    Cancelled,
}
