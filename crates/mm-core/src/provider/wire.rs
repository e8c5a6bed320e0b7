//! The Chat Completions API on the wire: what is sent and what comes back.
//!
//! Requests are built from borrowed data and serialised once. Replies are read leniently: every
//! field has a default, `null` counts as absent, unknown fields (llama.cpp's `timings`, vLLM's
//! `prompt_logprobs`, …) are ignored, and a tool call's `arguments` may be a string (OpenAI) or an
//! object (some Ollama versions). One [`ChoiceMessage`] type serves both a whole reply's
//! `message` and a stream chunk's `delta`.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::asks::{self, Asks};
use super::response_format::ResponseFormat;
use super::{Message, ToolCall, Usage};
use crate::language::Language;
use crate::tools::ToolSpec;

/// The body of `POST /chat/completions`.
#[derive(Debug, Serialize)]
pub(crate) struct Request<'a> {
    pub model: &'a str,
    pub messages: Vec<WireMessage>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<WireTool<'a>>,
    /// `"none"` in an answer step: the tools stay in the prompt, none may be called.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<&'static str>,
    /// Sent unless the server asked for `max_completion_tokens` instead (OpenAI's reasoning
    /// models refuse `max_tokens`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_completion_tokens: Option<u32>,
    /// Only when asked for (`--temperature`): the first request's size is a budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    pub stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_format: Option<ResponseFormat>,
    /// llama-server's GBNF grammar (never together with `response_format`: llama-server would
    /// then apply neither).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grammar: Option<String>,
}

#[derive(Debug, Serialize)]
pub(crate) struct StreamOptions {
    pub include_usage: bool,
}

/// One message as the API wants it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct WireMessage {
    pub role: &'static str,
    /// `null` only for an assistant message that carries tool calls.
    pub content: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<WireToolCall>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl WireMessage {
    pub fn text(role: &'static str, content: impl Into<String>) -> Self {
        Self {
            role,
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    /// The native form of a conversation message.
    pub fn native(message: &Message) -> Self {
        match message {
            Message::System(text) => Self::text("system", text.clone()),
            Message::User(text) => Self::text("user", text.clone()),
            Message::Assistant {
                content,
                tool_calls,
            } => Self {
                role: "assistant",
                content: match (content, tool_calls.is_empty()) {
                    (Some(text), _) => Some(text.clone()),
                    (None, true) => Some(String::new()),
                    (None, false) => None,
                },
                tool_calls: tool_calls.iter().map(WireToolCall::from).collect(),
                tool_call_id: None,
            },
            Message::Tool {
                tool_call_id,
                content,
                ..
            } => Self {
                role: "tool",
                content: Some(content.clone()),
                tool_calls: Vec::new(),
                tool_call_id: Some(tool_call_id.clone()),
            },
        }
    }
}

/// The grammar of an answer-only reply on llama-server: words, not a call. No `{` anywhere, and
/// no `[`, `<`, backtick or blank at the start: the forms a call written as text takes
/// (measured: Qwen2.5-Coder-0.5B, asked for an answer with the tools in the prompt and
/// `tool_choice: "none"`, wrote its call again in a code fence).
pub(crate) const ANSWER_GRAMMAR: &str = r"root ::= [^{\[<`\x00-\x20] [^{\x00]*";

/// The conversation in native form; an answer-only request ends with mm's request for the
/// answer in `language` ([`Asks::now`]) when the conversation ends with tool results, with
/// [`Asks::again`] when it ends with the user's own message (not after one of mm's own requests
/// for an answer, [`asks::all`], which says it itself); `None`: not an answer-only request.
pub(crate) fn native_messages(
    history: &[Message],
    answer_in: Option<Language>,
) -> Vec<WireMessage> {
    let mut messages: Vec<WireMessage> = history.iter().map(WireMessage::native).collect();
    if let Some(language) = answer_in {
        let asks = Asks::of(language);
        match history.last() {
            Some(Message::Tool { .. }) => messages.push(WireMessage::text("user", asks.now)),
            Some(Message::User(text)) if !asks::all().any(|r| text.ends_with(r)) => {
                messages.push(WireMessage::text("user", asks.again));
            }
            _ => {}
        }
    }
    messages
}

/// A tool call in an assistant message of the history.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct WireToolCall {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: WireFunctionCall,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct WireFunctionCall {
    pub name: String,
    pub arguments: String,
}

impl From<&ToolCall> for WireToolCall {
    fn from(call: &ToolCall) -> Self {
        Self {
            id: call.id.clone(),
            kind: "function",
            function: WireFunctionCall {
                name: call.name.clone(),
                arguments: call.arguments.clone(),
            },
        }
    }
}

/// `{"type":"function","function":{name,description,parameters}}`.
#[derive(Debug, Serialize)]
pub(crate) struct WireTool<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: &'a ToolSpec,
}

impl<'a> From<&'a ToolSpec> for WireTool<'a> {
    fn from(spec: &'a ToolSpec) -> Self {
        Self {
            kind: "function",
            function: spec,
        }
    }
}

/// A whole reply (non-streaming) or one stream chunk: both are a list of choices plus usage.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Completion {
    #[serde(deserialize_with = "nullable")]
    pub choices: Vec<Choice>,
    /// Read leniently: token counts are only reported, so odd ones (negative, strings,
    /// fractions, a `usage` that is not an object) never cost the reply.
    #[serde(deserialize_with = "lenient_usage")]
    pub usage: Option<WireUsage>,
    /// Some servers report a failure inside a 200 stream: `data: {"error":{...}}`.
    pub error: Option<Value>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Choice {
    /// Non-streaming replies.
    pub message: Option<ChoiceMessage>,
    /// Stream chunks.
    pub delta: Option<ChoiceMessage>,
    #[serde(deserialize_with = "lenient_text")]
    pub finish_reason: Option<String>,
}

impl Choice {
    /// The message or delta, whichever came (a few servers send `message` in chunks).
    pub fn body(&self) -> Option<&ChoiceMessage> {
        self.delta.as_ref().or(self.message.as_ref())
    }
}

/// An assistant message, whole or a fragment of one.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ChoiceMessage {
    /// A string, or a list of parts (`[{"type":"text","text":…}]`, as the API allows in
    /// requests and a few servers send back): the parts' texts joined.
    #[serde(deserialize_with = "lenient_text")]
    pub content: Option<String>,
    /// llama.cpp, DeepSeek, older vLLM.
    #[serde(deserialize_with = "lenient_text")]
    pub reasoning_content: Option<String>,
    /// Newer vLLM, Ollama's `/v1`, OpenRouter.
    #[serde(deserialize_with = "lenient_text")]
    pub reasoning: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub tool_calls: Vec<ToolCallDelta>,
}

impl ChoiceMessage {
    pub fn reasoning_text(&self) -> Option<&str> {
        self.reasoning_content
            .as_deref()
            .or(self.reasoning.as_deref())
            .filter(|s| !s.is_empty())
    }
}

/// A tool call, whole or a fragment of one.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ToolCallDelta {
    #[serde(deserialize_with = "lenient_index")]
    pub index: Option<u32>,
    #[serde(deserialize_with = "lenient_text")]
    pub id: Option<String>,
    pub function: FunctionDelta,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct FunctionDelta {
    #[serde(deserialize_with = "lenient_text")]
    pub name: Option<String>,
    /// A string (a fragment of JSON text) or, from a few servers, the arguments object itself.
    pub arguments: Option<Value>,
}

impl FunctionDelta {
    /// The arguments as text: a string as it is, anything else as its JSON.
    pub fn arguments_text(&self) -> Option<String> {
        match &self.arguments {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) => Some(text.clone()),
            Some(other) => Some(other.to_string()),
        }
    }
}

#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(default)]
pub(crate) struct WireUsage {
    #[serde(deserialize_with = "lenient_count")]
    pub prompt_tokens: u64,
    #[serde(deserialize_with = "lenient_count")]
    pub completion_tokens: u64,
    #[serde(deserialize_with = "lenient_count")]
    pub total_tokens: u64,
}

impl From<WireUsage> for Usage {
    fn from(usage: WireUsage) -> Self {
        let total = if usage.total_tokens == 0 {
            usage.prompt_tokens.saturating_add(usage.completion_tokens)
        } else {
            usage.total_tokens
        };
        Usage {
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
            total_tokens: total,
        }
    }
}

/// `GET /props` of llama-server; only what mm uses.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Props {
    pub default_generation_settings: Option<GenerationSettings>,
    pub chat_template_caps: Option<TemplateCaps>,
    /// Some builds also report it at the top level.
    pub n_ctx: Option<u64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct GenerationSettings {
    pub n_ctx: Option<u64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct TemplateCaps {
    pub supports_tool_calls: Option<bool>,
}

impl Props {
    pub fn n_ctx(&self) -> Option<u64> {
        self.default_generation_settings
            .as_ref()
            .and_then(|s| s.n_ctx)
            .or(self.n_ctx)
    }
}

/// Reads `null` as the type's default (serde's `default` alone only covers a missing field).
fn nullable<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// Text however a server words it: a string; a list of parts, their texts joined (`{"text"}`
/// objects or strings); a part alone; a number or boolean as its JSON. `null` and anything
/// else is absent. A field that is only read for its text never makes a reply unreadable.
fn lenient_text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    Ok(text_of(&Value::deserialize(deserializer)?))
}

fn text_of(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => {
            let texts: Vec<String> = parts.iter().filter_map(text_of).collect();
            (!texts.is_empty()).then(|| texts.concat())
        }
        Value::Object(part) => part.get("text").and_then(text_of),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null => None,
    }
}

/// A count: a non-negative integer, a fraction (rounded down) or a string holding one; a
/// negative number, or anything else, is 0.
fn lenient_count<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    Ok(count_of(&Value::deserialize(deserializer)?).unwrap_or(0))
}

fn count_of(value: &Value) -> Option<u64> {
    let number = match value {
        Value::Number(n) if n.is_u64() => return n.as_u64(),
        Value::Number(n) => n.as_f64()?,
        Value::String(text) => text.trim().parse::<f64>().ok()?,
        _ => return None,
    };
    (number.is_finite() && number >= 0.0).then(|| number.floor() as u64)
}

/// A tool call's `index`: a count as [`lenient_count`] reads one, absent when it is none.
fn lenient_index<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u32>, D::Error> {
    let value = Value::deserialize(deserializer)?;
    Ok(count_of(&value).and_then(|n| u32::try_from(n).ok()))
}

/// `usage` when it is an object (each count read leniently), else absent.
fn lenient_usage<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<WireUsage>, D::Error> {
    let value = Value::deserialize(deserializer)?;
    Ok(value.as_object().map(|usage| {
        let count = |key: &str| usage.get(key).and_then(count_of).unwrap_or(0);
        WireUsage {
            prompt_tokens: count("prompt_tokens"),
            completion_tokens: count("completion_tokens"),
            total_tokens: count("total_tokens"),
        }
    }))
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
