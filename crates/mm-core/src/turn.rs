//! The turn loop: send the conversation, hand the tool calls of the reply to the call pipeline
//! ([`crate::pipeline`]), send the results back, until the model answers without a call,
//! `max_turns` replies have been asked for, the loop detector stops it, or the user cancels.
//! It knows nothing of validation, consent, hooks, truncation or echo.

use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::config::Limits;
use crate::events::{Event, EventSink, ToolCallRecord};
use crate::hooks::Hooks;
use crate::pipeline::{CallPipeline, CallState, Consent};
use crate::provider::{
    ChatRequest, Message, Provider, ProviderError, StreamDelta, ToolCall, Usage, starts_with_call,
};
use crate::tools::Registry;

/// Once the model has made the same call this many times in a row, its next reply is asked to be
/// an answer ([`ChatRequest::answer_only`]): its result is already in front of the model twice,
/// so a third run can only help a model that has lost track. Small models do (measured: Gemma 3
/// 270M in constrained mode and Qwen2.5-Coder-0.5B-Instruct in native mode both repeated their
/// first, correct call at every step); in constrained mode the grammar then allows only an
/// answer, in native mode the request closes with a user message asking for one (see
/// `docs/models.md`). The loop detector still stops a model that calls anyway.
const ANSWER_AFTER_REPEATS: u32 = 2;

/// Why a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model answered without a tool call.
    Done,
    /// `max_turns` replies were asked for and the model still called tools.
    MaxTurns,
    /// The loop detector stopped the turn.
    Loop,
    /// The user interrupted.
    Cancelled,
}

/// What a turn needs besides the provider, the tools and the conversation.
#[derive(Clone)]
pub struct TurnOptions {
    /// mm's working directory: where tools run.
    pub cwd: PathBuf,
    pub limits: Limits,
    /// Who decides whether a call may run (the pipeline's consent step).
    pub consent: Consent,
    /// `hooks:` of the agent file, run around every call.
    pub hooks: Hooks,
    pub events: EventSink,
    pub cancel: CancellationToken,
}

/// How a turn went.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnResult {
    /// The model's final answer (empty when stopped before one).
    pub result: String,
    pub stop_reason: StopReason,
    /// Replies asked of the model.
    pub turns: u32,
    pub tool_calls: Vec<ToolCallRecord>,
    pub usage: Usage,
    /// Why the turn stopped, for the user, when it did not end with an answer.
    pub message: Option<String>,
}

/// Runs one user turn over `messages` (which must already hold the system prompt and the user's
/// message) and appends every reply and tool result to it.
pub async fn run_turn(
    provider: &Provider,
    registry: &Registry,
    messages: &mut Vec<Message>,
    opts: &TurnOptions,
) -> Result<TurnResult, ProviderError> {
    let specs = registry.specs();
    let strict: Vec<Value> = registry
        .iter()
        .map(|t| t.params().strict_schema())
        .collect();
    let pipeline = CallPipeline::new(
        registry,
        opts.cwd.clone(),
        opts.limits,
        opts.consent.clone(),
        opts.events.clone(),
    )
    .with_hooks(opts.hooks.clone());
    let mut calls_state = CallState::default();
    // Set once the model repeats a call identically, so that its next reply is asked to be an
    // answer (see `ANSWER_AFTER_REPEATS`).
    let mut answer_only = false;
    let mut result = TurnResult {
        result: String::new(),
        stop_reason: StopReason::Done,
        turns: 0,
        tool_calls: Vec::new(),
        usage: Usage::default(),
        message: None,
    };

    while result.turns < opts.limits.max_turns {
        result.turns += 1;
        let request = ChatRequest {
            messages,
            tools: &specs,
            max_tokens: opts.limits.max_tokens,
            answer_only,
        };
        let events = opts.events.clone();
        let mut on_delta = move |delta: StreamDelta| {
            let event = match delta {
                StreamDelta::Text(text) => Event::TextDelta { text },
                StreamDelta::Reasoning(text) => Event::ReasoningDelta { text },
                StreamDelta::Retry {
                    attempt,
                    delay,
                    error,
                } => Event::Retry {
                    attempt,
                    delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                    error,
                },
            };
            events(&event);
        };
        let reply = match provider
            .chat_with_schemas(&request, &strict, &mut on_delta, &opts.cancel)
            .await
        {
            Ok(reply) => reply,
            Err(ProviderError::Cancelled) => return Ok(cancelled(result)),
            Err(e) => return Err(e),
        };
        if let Some(usage) = reply.usage {
            result.usage.prompt_tokens += usage.prompt_tokens;
            result.usage.completion_tokens += usage.completion_tokens;
            result.usage.total_tokens += usage.total_tokens;
        }
        for message in &reply.warnings {
            (opts.events)(&Event::Warning {
                message: message.clone(),
            });
        }
        if reply.finish_reason.as_deref() == Some("length") {
            (opts.events)(&Event::Warning {
                message: format!(
                    "the model's reply was cut at {} tokens (limits.max_tokens)",
                    opts.limits.max_tokens
                ),
            });
        }
        // A reply that starts with a call written as text but is not all calls (`starts_with_call`)
        // is not taken as the answer: it is dropped, and the model asked for an answer instead
        // (once: a second such reply is the answer).
        if reply.tool_calls.is_empty()
            && !answer_only
            && result.turns < opts.limits.max_turns
            && starts_with_call(&reply.content, &specs)
        {
            (opts.events)(&Event::Warning {
                message: "the model wrote a tool call mm cannot read; asking it for an answer"
                    .into(),
            });
            answer_only = true;
            continue;
        }
        if !reply.content.is_empty() {
            (opts.events)(&Event::AssistantMessage {
                text: reply.content.clone(),
                is_final: reply.tool_calls.is_empty(),
            });
        }
        if reply.tool_calls.is_empty() {
            messages.push(Message::Assistant {
                content: Some(reply.content.clone()),
                tool_calls: vec![],
            });
            result.result = reply.content;
            return Ok(result);
        }
        let content = (!reply.content.is_empty()).then(|| reply.content.clone());
        messages.push(Message::Assistant {
            content,
            tool_calls: reply.tool_calls.clone(),
        });

        let mut calls = reply.tool_calls.iter();
        while let Some(call) = calls.next() {
            let (outcome, record) = pipeline.handle(call, &mut calls_state, &opts.cancel).await;
            if outcome.repeats >= ANSWER_AFTER_REPEATS {
                answer_only = true;
            }
            result.tool_calls.extend(record);
            answer(messages, call, outcome.content);
            if let Some(why) = outcome.stopped {
                for rest in calls.by_ref() {
                    answer(messages, rest, "Not run: the turn was stopped.".into());
                }
                result.stop_reason = StopReason::Loop;
                result.message = Some(why);
                return Ok(result);
            }
            if outcome.cancelled || opts.cancel.is_cancelled() {
                for rest in calls.by_ref() {
                    answer(messages, rest, "Not run: the user interrupted.".into());
                }
                return Ok(cancelled(result));
            }
        }
    }
    result.stop_reason = StopReason::MaxTurns;
    result.message = Some(format!(
        "The turn was stopped after {} model replies (max_turns) while the model was still calling tools.",
        opts.limits.max_turns
    ));
    Ok(result)
}

fn cancelled(mut result: TurnResult) -> TurnResult {
    result.stop_reason = StopReason::Cancelled;
    result.message = Some("Interrupted.".into());
    result
}

fn answer(messages: &mut Vec<Message>, call: &ToolCall, content: String) {
    messages.push(Message::Tool {
        tool_call_id: call.id.clone(),
        name: call.name.clone(),
        content,
    });
}
