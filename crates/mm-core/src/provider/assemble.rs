//! Builds one [`ChatResponse`] from a whole reply or from stream chunks, whatever the server's
//! habits: tool calls streamed by `index` (id and name first, argument fragments after) or whole
//! in one chunk, with or without ids; reasoning as `reasoning_content` or `reasoning`; usage in
//! the last chunk. Then the mode's reading of the text: a constrained reply's JSON, and tool calls
//! written as text.
//!
//! Only stream deltas are assembled: each call of a whole (non-streamed) reply is one call as it
//! came, whatever its id or index. What the reply lacked (choices, any text or call, a call's
//! name) becomes a [`ChatResponse::warnings`] sentence rather than a silent empty answer.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};

use super::constrained::{self, AnswerStream, Reply};
use super::errors::one_line;
use super::text_calls::{self, TextGate};
use super::think::{self, Routed, ThinkSplitter};
use super::wire::{ChoiceMessage, Completion, ToolCallDelta};
use super::{ChatResponse, StreamDelta, ToolCall, Usage};
use crate::tools::ToolSpec;

/// A tool call being received.
#[derive(Debug, Default)]
struct PartialCall {
    index: Option<u32>,
    id: Option<String>,
    name: String,
    arguments: String,
}

/// The reply so far.
#[derive(Debug, Default)]
pub(crate) struct Assembler {
    constrained: bool,
    content: String,
    calls: Vec<PartialCall>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
    gate: TextGate,
    answer: AnswerStream,
    think: ThinkSplitter,
    /// Some completion had at least one choice (a stream's usage chunk has none, normally).
    choices_seen: bool,
    /// Some reasoning came (a reply with only reasoning is empty for the user).
    reasoned: bool,
}

impl Assembler {
    pub fn new(constrained: bool) -> Self {
        Self {
            constrained,
            ..Self::default()
        }
    }

    /// True once a choice said why it stopped.
    pub fn finished(&self) -> bool {
        self.finish_reason.is_some()
    }

    /// True once the reply, in native mode and without API tool calls, starts with a complete call
    /// written as text: the rest of the reply cannot change what it is (see
    /// [`text_calls::starts_with_complete_call`]), so the stream can stop there.
    pub fn has_complete_text_call(&self) -> bool {
        !self.constrained
            && self.calls.is_empty()
            && text_calls::starts_with_complete_call(&self.content)
    }

    /// Takes in one stream chunk: its tool calls are fragments, assembled by index and id.
    pub fn push(&mut self, completion: Completion, on_delta: &mut (dyn FnMut(StreamDelta) + Send)) {
        self.take(completion, Calls::Fragments, on_delta);
    }

    /// Takes in a whole (non-streamed) reply: each of its tool calls is complete and stays one
    /// call, even when two share an id or an index.
    pub fn push_whole(
        &mut self,
        completion: Completion,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) {
        self.take(completion, Calls::Whole, on_delta);
    }

    fn take(
        &mut self,
        completion: Completion,
        calls: Calls,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) {
        if let Some(usage) = completion.usage {
            self.usage = Some(usage.into());
        }
        self.choices_seen |= !completion.choices.is_empty();
        // mm asks for one choice; a server that sends more is read as if they were one.
        for choice in completion.choices {
            if let Some(message) = choice.body() {
                self.push_message(message, calls, on_delta);
            }
            if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
                self.finish_reason = Some(reason);
            }
        }
    }

    fn push_message(
        &mut self,
        message: &ChoiceMessage,
        calls: Calls,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) {
        if let Some(reasoning) = message.reasoning_text() {
            self.reasoned = true;
            on_delta(StreamDelta::Reasoning(reasoning.to_owned()));
        }
        if let Some(text) = message.content.as_deref().filter(|t| !t.is_empty()) {
            let routed = self.think.push(text);
            self.push_routed(routed, on_delta);
        }
        for delta in &message.tool_calls {
            match calls {
                Calls::Fragments => self.push_call(delta),
                Calls::Whole => self.calls.push(PartialCall {
                    index: delta.index,
                    id: delta.id.clone().filter(|id| !id.is_empty()),
                    name: delta.function.name.clone().unwrap_or_default(),
                    arguments: delta.function.arguments_text().unwrap_or_default(),
                }),
            }
        }
    }

    fn push_routed(&mut self, routed: Routed, on_delta: &mut (dyn FnMut(StreamDelta) + Send)) {
        if !routed.reasoning.is_empty() {
            self.reasoned = true;
            on_delta(StreamDelta::Reasoning(routed.reasoning));
        }
        if routed.text.is_empty() {
            return;
        }
        self.content.push_str(&routed.text);
        let visible = if self.constrained {
            self.answer.advance(&self.content)
        } else {
            self.gate.advance(&self.content).to_owned()
        };
        if !visible.is_empty() {
            on_delta(StreamDelta::Text(visible));
        }
    }

    fn push_call(&mut self, delta: &ToolCallDelta) {
        let id = delta.id.as_deref().filter(|id| !id.is_empty());
        let slot = match delta.index {
            Some(index) => self.calls.iter().rposition(|c| c.index == Some(index)),
            None => match id {
                Some(id) => self.calls.iter().rposition(|c| c.id.as_deref() == Some(id)),
                // A fragment without index or id continues the last call, unless it names a tool.
                None if delta
                    .function
                    .name
                    .as_deref()
                    .is_some_and(|n| !n.is_empty()) =>
                {
                    None
                }
                None => self.calls.len().checked_sub(1),
            },
        };
        // Some servers number every whole call 0: a different id is a different call.
        let slot = slot.filter(|&i| match (&self.calls[i].id, id) {
            (Some(known), Some(id)) => known == id,
            _ => true,
        });
        // A whole call in one chunk after another whole call with the same index or id: the
        // first one is complete (its arguments are a JSON value) and this one names a tool and
        // brings arguments of its own, so appending could only make invalid JSON.
        let slot = slot.filter(|&i| !starts_another_call(&self.calls[i], delta));
        let call = match slot {
            Some(i) => &mut self.calls[i],
            None => {
                self.calls.push(PartialCall {
                    index: delta.index,
                    ..PartialCall::default()
                });
                let last = self.calls.len() - 1;
                &mut self.calls[last]
            }
        };
        if call.id.is_none() {
            call.id = id.map(str::to_owned);
        }
        if let Some(name) = delta.function.name.as_deref() {
            if call.name.is_empty() {
                call.name = name.to_owned();
            }
        }
        if let Some(arguments) = delta.function.arguments_text() {
            call.arguments.push_str(&arguments);
        }
    }

    /// The complete reply. Shows (through `on_delta`) whatever text was held back while it came.
    pub fn finish(
        mut self,
        tools: &[ToolSpec],
        ids: &CallIds,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> ChatResponse {
        let routed = self.think.finish();
        self.push_routed(routed, on_delta);
        let mut warnings = Vec::new();
        let mut tool_calls = Vec::new();
        let mut seen_ids = HashSet::new();
        for call in std::mem::take(&mut self.calls) {
            if call.name.trim().is_empty() {
                warnings.push(nameless_warning(&call.arguments));
                continue;
            }
            // Ids answer calls in the history: two calls may not share one.
            let mut id = call.id.unwrap_or_else(|| ids.next());
            while seen_ids.contains(&id) {
                id = ids.next();
            }
            seen_ids.insert(id.clone());
            tool_calls.push(ToolCall {
                id,
                name: call.name,
                arguments: if call.arguments.trim().is_empty() {
                    "{}".to_owned()
                } else {
                    call.arguments
                },
            });
        }
        let mut content = think::strip_unopened(&self.content).to_owned();
        let mut from_text = false;
        if self.constrained && tool_calls.is_empty() {
            match constrained::parse_reply(&self.content) {
                Reply::Call { name, arguments } => {
                    tool_calls.push(ToolCall {
                        id: ids.next(),
                        name,
                        arguments,
                    });
                    content = String::new();
                    from_text = true;
                }
                Reply::Answer(answer) => content = answer,
                Reply::Other(text) => content = text,
            }
        }
        if tool_calls.is_empty() {
            let (text, calls) = text_calls::extract(&content, tools);
            from_text = !calls.is_empty();
            content = text;
            tool_calls = calls
                .into_iter()
                .map(|call| ToolCall {
                    id: ids.next(),
                    name: call.name,
                    arguments: call.arguments,
                })
                .collect();
        }
        let rest = if self.constrained {
            self.answer.finish(&self.content, &content)
        } else {
            self.gate.finish(&self.content, &content)
        };
        if !rest.is_empty() {
            on_delta(StreamDelta::Text(rest.to_owned()));
        }
        let mut finish_reason = self.finish_reason;
        if from_text && finish_reason.as_deref().is_none_or(|r| r == "stop") {
            finish_reason = Some("tool_calls".to_owned());
        }
        let reason = finish_reason.as_deref().unwrap_or("none given");
        if !self.choices_seen {
            warnings.push("the model server's reply had no choices: there is no answer".to_owned());
        } else if warnings.is_empty() && tool_calls.is_empty() && content.trim().is_empty() {
            warnings.push(if self.reasoned {
                format!(
                    "the model's reply has only reasoning, no text and no tool call \
                     (finish_reason: {reason})"
                )
            } else {
                format!(
                    "the model's reply is empty: no text and no tool call (finish_reason: {reason})"
                )
            });
        }
        ChatResponse {
            content,
            tool_calls,
            usage: self.usage,
            finish_reason,
            calls_as_text: from_text,
            warnings,
        }
    }
}

/// How a completion's tool calls arrive.
#[derive(Debug, Clone, Copy)]
enum Calls {
    /// Stream deltas: pieces of calls, to assemble.
    Fragments,
    /// A whole reply's calls, each complete.
    Whole,
}

/// Whether `delta`, matched to `call` by index or id, is rather a new whole call: `call` is
/// complete and `delta` names a tool and carries arguments.
fn starts_another_call(call: &PartialCall, delta: &ToolCallDelta) -> bool {
    let names = delta
        .function
        .name
        .as_deref()
        .is_some_and(|n| !n.is_empty());
    let brings_arguments = delta
        .function
        .arguments_text()
        .is_some_and(|a| !a.trim().is_empty());
    names
        && brings_arguments
        && !call.name.is_empty()
        && serde_json::from_str::<serde_json::Value>(&call.arguments).is_ok()
}

fn nameless_warning(arguments: &str) -> String {
    let arguments = one_line(arguments);
    if arguments.is_empty() {
        "the model made a tool call without a name; it was dropped".to_owned()
    } else {
        format!(
            "the model made a tool call without a name; it was dropped (arguments: {arguments})"
        )
    }
}

/// Ids for calls that came without one: `call_1`, `call_2`, … unique within a provider.
#[derive(Debug, Default)]
pub(crate) struct CallIds(AtomicU64);

impl CallIds {
    pub fn next(&self) -> String {
        format!("call_{}", self.0.fetch_add(1, Ordering::Relaxed) + 1)
    }
}

#[cfg(test)]
#[path = "assemble_tests.rs"]
mod tests;
