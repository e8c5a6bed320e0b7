//! Constrained mode (SPEC §2b): no `tools` field; the server is asked for a reply matching a JSON
//! schema — `{"tool": NAME, "arguments": {…}}` for one of the tools, or `{"answer": "…"}` — which
//! llama.cpp, Ollama, vLLM and LM Studio enforce with a grammar. Models whose chat template knows
//! nothing of tools can then still make valid calls.
//!
//! The tools are described in the system prompt, one line each. The history is rewritten in the
//! same protocol: the model's earlier calls and answers become the JSON objects it produced, and
//! tool results become user messages. Consecutive messages of one role are merged, because some
//! templates (Gemma's, Mistral's) refuse roles that do not alternate.

use serde_json::{Map, Value, json};

use super::Message;
use super::response_format::{
    AnswerProperties, AnyOf, Branch, Const, JsonSchema, ResponseFormat, ToolProperties, TypeOnly,
};
use super::wire::WireMessage;
use crate::tools::ToolSpec;

/// What a constrained reply says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reply {
    /// `{"tool", "arguments"}`; the arguments as JSON text.
    Call { name: String, arguments: String },
    /// `{"answer"}`.
    Answer(String),
    /// Anything else (a server that ignored the schema): the text as it is.
    Other(String),
}

/// Reads a reply's text.
pub(crate) fn parse_reply(text: &str) -> Reply {
    let Ok(Value::Object(object)) = serde_json::from_str::<Value>(text.trim()) else {
        // Cut short (`max_tokens`, a full context): an answer keeps what was written of it.
        return match partial_answer(text) {
            Some(answer) => Reply::Answer(answer),
            None => Reply::Other(text.to_owned()),
        };
    };
    if let (Some(Value::String(name)), Some(arguments)) =
        (object.get("tool"), object.get("arguments"))
    {
        let arguments = match arguments {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        return Reply::Call {
            name: name.clone(),
            arguments,
        };
    }
    match object.get("answer") {
        Some(Value::String(answer)) => Reply::Answer(answer.clone()),
        _ => Reply::Other(text.to_owned()),
    }
}

/// The schema each tool's arguments must match: the strict one when given, else what the model
/// sees. Unknown keys are closed off (the validator refuses them anyway).
pub(crate) fn arguments_schema(tools: &[ToolSpec], strict: &[Value], index: usize) -> Value {
    let mut schema = strict
        .get(index)
        .cloned()
        .unwrap_or_else(|| tools[index].parameters.clone());
    if let Value::Object(object) = &mut schema {
        object.entry("type").or_insert_with(|| json!("object"));
        object.entry("properties").or_insert_with(|| json!({}));
        object
            .entry("additionalProperties")
            .or_insert(Value::Bool(false));
    }
    schema
}

/// `response_format` for the request. Typed rather than a `serde_json::Value` so that `tool`
/// comes before `arguments` whatever serde_json's map order: llama.cpp builds its grammar in the
/// schema's property order, and the model should choose the tool before writing its arguments.
/// Without `answer`, only the calls (the turn loop's repair step).
pub(crate) fn response_format(
    tools: &[ToolSpec],
    strict: &[Value],
    answer: bool,
) -> ResponseFormat {
    let mut any_of: Vec<Branch> = (0..tools.len())
        .map(|i| Branch::Tool {
            kind: "object",
            properties: ToolProperties {
                tool: Const {
                    value: tools[i].name.clone(),
                },
                arguments: arguments_schema(tools, strict, i),
            },
            required: ["tool", "arguments"],
            additional_properties: false,
        })
        .collect();
    if answer {
        any_of.push(Branch::Answer {
            kind: "object",
            properties: AnswerProperties {
                answer: TypeOnly { kind: "string" },
            },
            required: ["answer"],
            additional_properties: false,
        });
    }
    ResponseFormat {
        kind: "json_schema",
        json_schema: JsonSchema {
            name: "reply",
            strict: true,
            schema: AnyOf { any_of },
        },
    }
}

/// `{"tool":NAME,"arguments":ARGS}` as text, `tool` first (see [`response_format`]).
fn call_text(name: &str, arguments: &Value) -> String {
    format!(
        "{{\"tool\":{},\"arguments\":{arguments}}}",
        Value::String(name.to_owned())
    )
}

/// The system-prompt part that lists the tools and explains the reply format.
pub(crate) fn tools_prompt(tools: &[ToolSpec], strict: &[Value]) -> String {
    let mut prompt = String::from("\n\n# Tools\n\n");
    for i in 0..tools.len() {
        prompt.push_str(&tool_line(&tools[i], &arguments_schema(tools, strict, i)));
        prompt.push('\n');
    }
    prompt.push_str(
        // Measured on Gemma 3 270M: an example answer in quotes ("your answer") is copied
        // verbatim, and "when a tool result answers the question" gets answers drawn from the
        // result (see docs/provider.md).
        "\nTo call a tool, reply {\"tool\": \"NAME\", \"arguments\": {...}}; its result comes in \
         the next message. When a tool result answers the question, reply {\"answer\": \"...\"} \
         with what it says.",
    );
    prompt
}

/// `- name(param: type, opt?: type, mode: "a"|"b"): description`.
fn tool_line(tool: &ToolSpec, schema: &Value) -> String {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let has_required = schema.get("required").is_some();
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let params: Vec<String> = properties
        .iter()
        .map(|(name, property)| {
            let optional = if has_required && !required.contains(&name.as_str()) {
                "?"
            } else {
                ""
            };
            format!("{name}{optional}: {}", type_text(property))
        })
        .collect();
    let description = tool
        .description
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    format!("- {}({}): {}", tool.name, params.join(", "), description)
}

fn type_text(property: &Value) -> String {
    if let Some(values) = property.get("enum").and_then(Value::as_array) {
        return values
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join("|");
    }
    match property.get("type") {
        Some(Value::String(kind)) => kind.clone(),
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("|"),
        _ => "any".to_owned(),
    }
}

/// The conversation in the constrained protocol.
pub(crate) fn messages(
    history: &[Message],
    tools: &[ToolSpec],
    strict: &[Value],
) -> Vec<WireMessage> {
    let prompt = tools_prompt(tools, strict);
    let mut out: Vec<WireMessage> = Vec::new();
    let mut prompt_placed = false;
    for message in history {
        let (role, text) = match message {
            Message::System(text) if !prompt_placed => {
                prompt_placed = true;
                ("system", format!("{text}{prompt}"))
            }
            Message::System(text) => ("system", text.clone()),
            Message::User(text) => ("user", text.clone()),
            Message::Assistant {
                content,
                tool_calls,
            } if tool_calls.is_empty() => {
                let answer = content.clone().unwrap_or_default();
                ("assistant", json!({"answer": answer}).to_string())
            }
            Message::Assistant { tool_calls, .. } => {
                let calls: Vec<String> = tool_calls
                    .iter()
                    .map(|call| {
                        let arguments = serde_json::from_str::<Value>(&call.arguments)
                            .unwrap_or_else(|_| Value::String(call.arguments.clone()));
                        call_text(&call.name, &arguments)
                    })
                    .collect();
                ("assistant", calls.join("\n"))
            }
            Message::Tool { name, content, .. } => {
                ("user", format!("Result of {name}:\n{content}"))
            }
        };
        match out.last_mut() {
            Some(last) if last.role == role && role != "system" => {
                let joined = last.content.get_or_insert_with(String::new);
                joined.push_str("\n\n");
                joined.push_str(&text);
            }
            _ => out.push(WireMessage::text(role, text)),
        }
    }
    if !prompt_placed {
        out.insert(
            0,
            WireMessage::text("system", prompt.trim_start().to_owned()),
        );
    }
    out
}

/// Shows a streaming `{"answer": "…"}` as text while it comes: the decoded part of the answer
/// string so far. Anything else (a call, an answer key that is not first) shows nothing.
#[derive(Debug, Default)]
pub(crate) struct AnswerStream {
    shown: usize,
}

impl AnswerStream {
    /// The new part of the answer found in `raw` (the reply so far).
    pub fn advance(&mut self, raw: &str) -> String {
        let Some(decoded) = partial_answer(raw) else {
            return String::new();
        };
        let new = decoded.get(self.shown..).unwrap_or("").to_owned();
        self.shown = decoded.len();
        new
    }

    /// The part of the final answer not shown yet.
    pub fn finish<'f>(&mut self, raw: &str, final_text: &'f str) -> &'f str {
        let shown = partial_answer(raw).and_then(|d| d.get(..self.shown).map(str::to_owned));
        let shown = shown.unwrap_or_default();
        final_text.strip_prefix(shown.as_str()).unwrap_or("")
    }
}

/// The decoded prefix of the answer string in `{"answer": "…`, up to the last complete character.
fn partial_answer(raw: &str) -> Option<String> {
    let rest = raw.trim_start().strip_prefix('{')?.trim_start();
    let rest = rest
        .strip_prefix("\"answer\"")?
        .trim_start()
        .strip_prefix(':')?
        .trim_start();
    let mut chars = rest.strip_prefix('"')?.chars();
    let mut out = String::new();
    while let Some(c) = chars.next() {
        match c {
            '"' => break,
            '\\' => {
                let escaped = match chars.next() {
                    None => break,
                    Some('n') => '\n',
                    Some('t') => '\t',
                    Some('r') => '\r',
                    Some('b') => '\u{8}',
                    Some('f') => '\u{c}',
                    Some('u') => {
                        let hex: String = chars.by_ref().take(4).collect();
                        if hex.len() < 4 {
                            break;
                        }
                        // Surrogate pairs arrive as two escapes; a lone half is skipped here and
                        // the final text (decoded by serde) is shown at the end instead.
                        match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                            Some(c) => c,
                            None => break,
                        }
                    }
                    Some(other) => other,
                };
                out.push(escaped);
            }
            c => out.push(c),
        }
    }
    Some(out)
}

#[cfg(test)]
#[path = "constrained_tests.rs"]
mod tests;
