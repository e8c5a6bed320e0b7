//! Structures written where an answer should be: tool calls and tool lists (rules 2 and 3 of
//! [`judge`](super::judge)).

use std::ops::Range;

use serde_json::{Map, Value};

use crate::text::{bare_call, closed_json, python_literals};

/// Markers of a call written as text, in the forms chat templates use (lower-cased).
const CALL_MARKERS: &[&str] = &[
    "<tool_call>",
    "</tool_call>",
    "<function=",
    "[tool_calls]",
    "<|python_tag|>",
    "<function_call>",
    "<functioncall>",
    "<|tool_call",
    "<tool_use>",
    // The tool's side of the exchange written too, in Qwen's and Hermes' tags (real reply:
    // Qwen2.5-Coder-1.5B, asked the year of Camus's Nobel prize, answered with a made-up
    // `<tool_response> Error: No book with ISBN … </tool_response>`).
    "<tool_response>",
    "</tool_response>",
];

/// JSON values looked for in one answer, at most (each attempt reads from a `{` or `[`).
const MAX_JSON_ATTEMPTS: usize = 256;

/// Keys that hold a call's tool name, and its arguments.
const CALL_NAME: &[&str] = &["name", "tool", "tool_name", "function"];
const CALL_ARGUMENTS: &[&str] = &["arguments", "parameters", "args", "input", "params"];

/// The JSON objects and arrays written in an answer, and whether the answer is nothing else
/// (apart from code fences and `<|python_tag|>`).
struct Written {
    values: Vec<Value>,
    nothing_else: bool,
}

impl Written {
    fn of(answer: &str) -> Self {
        if let Some(value) = Self::cut_short(answer) {
            return Self {
                values: vec![value],
                nothing_else: true,
            };
        }
        let mut values = Vec::new();
        let mut spans: Vec<Range<usize>> = Vec::new();
        let mut from = 0;
        let mut attempts = 0;
        while let Some(offset) = answer[from..].find(['{', '[']) {
            let at = from + offset;
            attempts += 1;
            if attempts > MAX_JSON_ATTEMPTS {
                break;
            }
            let mut stream = serde_json::Deserializer::from_str(&answer[at..]).into_iter::<Value>();
            match stream.next() {
                Some(Ok(value)) if value.is_object() || value.is_array() => {
                    let end = at + stream.byte_offset();
                    spans.push(at..end);
                    values.push(value);
                    from = end;
                }
                // `{` and `[` are one byte: the next character starts right after.
                _ => from = at + 1,
            }
        }
        let mut rest = String::new();
        let mut last = 0;
        for span in &spans {
            rest.push_str(&answer[last..span.start]);
            rest.push(' ');
            last = span.end;
        }
        rest.push_str(&answer[last..]);
        let rest = rest
            .replace("<|python_tag|>", " ")
            .replace("```json", " ")
            .replace("```JSON", " ");
        let nothing_else = !values.is_empty() && !rest.chars().any(char::is_alphanumeric);
        Self {
            values,
            nothing_else,
        }
    }

    /// A reply that is nothing but one JSON value short of its last closing brackets (fenced or
    /// not): that value, closed.
    fn cut_short(answer: &str) -> Option<Value> {
        let body = answer.trim();
        let body = body
            .strip_prefix("<|python_tag|>")
            .unwrap_or(body)
            .trim_start();
        let body = match body.strip_prefix("```") {
            Some(fenced) => fenced.split_once('\n')?.1,
            None => body,
        };
        let body = body.trim_end();
        let body = body.strip_suffix("```").unwrap_or(body);
        let closed = closed_json(body)?;
        serde_json::from_str::<Value>(&closed)
            .ok()
            .filter(|v| v.is_object() || v.is_array())
    }
}

fn known(names: &[&str], name: &str) -> bool {
    !name.is_empty() && names.contains(&name)
}

/// Rule 2: `<tools>`, a tool definition of a known tool or as the whole reply, or a reply that
/// is nothing but a JSON schema nobody asked for.
pub(super) fn tool_list(answer: &str, names: &[&str], prompts: &[&str]) -> bool {
    let lower = answer.to_lowercase();
    if lower.contains("<tools>") || lower.contains("</tools>") {
        return true;
    }
    let written = Written::of(answer);
    let defined = written
        .values
        .iter()
        .filter_map(definition_names)
        .any(|d| written.nothing_else || d.iter().any(|n| known(names, n)));
    if defined {
        return true;
    }
    let asked_for_schema = prompts.iter().any(|p| {
        let p = p.to_lowercase();
        ["schema", "schéma", "esquema"]
            .iter()
            .any(|w| p.contains(w))
    });
    written.nothing_else
        && !asked_for_schema
        && written.values.len() == 1
        && written.values.first().is_some_and(schema_document)
}

/// Rule 3: a call marker, a `<NAME>` tag, a JSON call to a known tool (or as the whole reply),
/// or a line that is nothing but `NAME(…)` or `NAME: {…}`.
pub(super) fn call_as_text(answer: &str, names: &[&str], parameters: &[&str]) -> bool {
    let lower = answer.to_lowercase();
    if CALL_MARKERS.iter().any(|m| lower.contains(m)) {
        return true;
    }
    let names: Vec<&str> = names.iter().copied().filter(|n| !n.is_empty()).collect();
    if names
        .iter()
        .any(|n| answer.contains(&format!("<{n}>")) || answer.contains(&format!("<{n} ")))
    {
        return true;
    }
    let called = |text: &str| {
        let written = Written::of(text);
        written.values.iter().any(|value| {
            call_names(value).is_some_and(|called| {
                written.nothing_else
                    || called.iter().any(|n| known(&names, n))
                    || takes_parameters(value, parameters)
            })
        })
    };
    called(answer)
        // `{'name': 'status', 'arguments': {…}}`: a Python dict for the JSON.
        || python_literals(answer).is_some_and(|json| called(&json))
        || answer.lines().any(|line| call_line(line, &names))
}

/// `NAME(…)`, `NAME: {…}` or `NAME {…}` as a whole line (backticks and a final `;` aside).
fn call_line(line: &str, names: &[&str]) -> bool {
    let line = line.trim().trim_matches('`').trim().trim_end_matches(';');
    let line = bare_call(line);
    names.iter().any(|name| {
        let Some(rest) = line.strip_prefix(name) else {
            return false;
        };
        if rest.starts_with('(') && rest.ends_with(')') {
            return true;
        }
        let rest = rest.trim_start();
        let rest = rest.strip_prefix(':').unwrap_or(rest).trim_start();
        rest.starts_with('{') && serde_json::from_str::<Value>(rest).is_ok_and(|v| v.is_object())
    })
}

/// A call whose arguments are all parameters of the agent's tools, under a name that is none of
/// them: `{"name": "chickpea_curry_2", "arguments": {"recipe": "chickpea_curry", "servings":
/// 2}}` after "Here's the recipe:" (Qwen2.5-Coder-0.5B, `get_recipe`'s parameters).
fn takes_parameters(value: &Value, parameters: &[&str]) -> bool {
    let Value::Object(map) = value else {
        return false;
    };
    let Some(Value::Object(arguments)) = CALL_ARGUMENTS.iter().find_map(|k| map.get(*k)) else {
        return false;
    };
    !arguments.is_empty()
        && arguments
            .keys()
            .all(|key| parameters.contains(&key.as_str()))
}

/// The tools a call (or a list of calls) names; `None` when `value` is not one.
fn call_names(value: &Value) -> Option<Vec<String>> {
    match value {
        Value::Array(items) if !items.is_empty() => items
            .iter()
            .map(call_names)
            .collect::<Option<Vec<_>>>()
            .map(|names| names.concat()),
        Value::Object(map) => {
            if let Some(calls) = map.get("tool_calls") {
                return call_names(calls);
            }
            // OpenAI's `{"type":"function","function":{"name":…,"arguments":…}}`.
            if let Some(Value::Object(function)) = map.get("function") {
                let name = function.get("name")?.as_str()?;
                return function
                    .contains_key("arguments")
                    .then(|| vec![name.to_owned()]);
            }
            let name = CALL_NAME
                .iter()
                .find_map(|k| map.get(*k).and_then(Value::as_str))?;
            let arguments = CALL_ARGUMENTS.iter().find_map(|k| map.get(*k))?;
            // `parameters` holding a schema is a definition, not a call.
            (!schema_like(arguments)).then(|| vec![name.to_owned()])
        }
        _ => None,
    }
}

/// The tools a definition (or a list of them, or `{"tools": […]}`) names; `None` when
/// `value` is not one.
fn definition_names(value: &Value) -> Option<Vec<String>> {
    match value {
        Value::Array(items) if !items.is_empty() => items
            .iter()
            .map(definition_names)
            .collect::<Option<Vec<_>>>()
            .map(|names| names.concat()),
        Value::Object(map) => {
            if let Some(tools) = map.get("tools") {
                return definition_names(tools);
            }
            if let Some(Value::Object(function)) = map.get("function") {
                let name = function.get("name")?.as_str()?;
                let definition = map.get("type").and_then(Value::as_str) == Some("function")
                    && !function.contains_key("arguments");
                return definition.then(|| vec![name.to_owned()]);
            }
            let name = map.get("name")?.as_str()?;
            let schema = ["parameters", "input_schema", "inputSchema"]
                .iter()
                .find_map(|k| map.get(*k))?;
            schema_like(schema).then(|| vec![name.to_owned()])
        }
        _ => None,
    }
}

/// A JSON schema (`properties`, or `"type": "object"`), or mm's own way of declaring
/// parameters (every entry an object with a `type`).
fn schema_like(value: &Value) -> bool {
    let Value::Object(map) = value else {
        return false;
    };
    map.contains_key("properties")
        || map.get("type").and_then(Value::as_str) == Some("object")
        || (!map.is_empty() && map.values().all(declared_parameter))
}

fn declared_parameter(value: &Value) -> bool {
    value
        .as_object()
        .is_some_and(|p: &Map<String, Value>| p.get("type").is_some_and(Value::is_string))
}

/// A whole JSON schema document: an object schema with its properties.
fn schema_document(value: &Value) -> bool {
    value.get("properties").is_some_and(Value::is_object)
        && (value.get("type").and_then(Value::as_str) == Some("object")
            || value.get("$schema").is_some())
}
