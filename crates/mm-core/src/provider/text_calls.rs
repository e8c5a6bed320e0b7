//! Tool calls written as text: small models often print the call their chat template would have
//! parsed, when the server did not parse it (no `--jinja`, a template without tools, constrained
//! mode's answer field, …). Recognised forms:
//!
//! - Hermes / Qwen: `<tool_call>{"name":…,"arguments":{…}}</tool_call>` (several allowed; the
//!   closing tag may be missing at the end of the reply);
//! - Qwen3-Coder: `<tool_call><function=NAME><parameter=P>value</parameter>…</function></tool_call>`,
//!   also without the outer tags;
//! - Mistral: `[TOOL_CALLS][{"name":…,"arguments":{…}}]` and `[TOOL_CALLS]name[ARGS]{…}`;
//! - Llama: a reply that is nothing but `{"name":…,"parameters":{…}}` (or `"arguments"`), or a
//!   list of them, optionally inside a Markdown code fence or after `<|python_tag|>`; a reply
//!   that *starts* with such calls and runs on (small models add invented calls or a
//!   `{"response": …}` of their own after a real one) is those leading calls;
//! - tagged: `<function-name>NAME</function-name>` then `<arguments>…</arguments>` (JSON, or
//!   `key=value, …`) — Qwen2.5-Coder-0.5B wrote it;
//! - any of the JSON forms above inside one tag of the model's own (`<tools>{"name":…,
//!   "arguments":{…}}</tools>`, `<function_call>…`; Qwen2.5-Coder-1.5B wrote `<tools>`), as the
//!   whole reply, when what is inside is a call and not a tool's definition;
//! - a call object inside one brace too many (`{{"name":…,"arguments":{…}}}`; Qwen2.5-Coder-1.5B);
//! - a reply that is nothing but a call object short of its last closing brackets
//!   (`{"name":…,"arguments":{…}` and the end; Qwen2.5-Coder-0.5B);
//! - any JSON form above written as a Python dict (`{'name': 'x', 'arguments': {'a': True}}`),
//!   when the reply is nothing but calls; and, for a known tool, the keys other models use
//!   (`tool`, `tool_name` or `function` for the name; `args`, `input` or `params`);
//! - a reply that is nothing but a list of such calls (`[status(service="billing"), …]`: Llama
//!   3.2, Gemma 3), `print(name(args))` and `default_api.name(args)` (Gemma 3), or Phi-4-mini's
//!   `functools[{"name":…,"arguments":{…}}]`;
//! - a reply that is nothing but `name(args)` lines (`convert(amount=12, from="in")`,
//!   `status("billing")`, `status({"service": "billing"})`) or `name: {…}` lines, for a known
//!   tool.
//!
//! A block is a call only when every call in it names a known tool; otherwise it stays text —
//! unless the reply is nothing but calls: then a call to a name that is no tool (a skill's name,
//! an invented tool) is returned too, so that the call pipeline answers it like an invalid call
//! rather than the text being shown as the answer (SPEC §2b). Recognised blocks are removed from
//! the reply's text.

use serde_json::{Map, Value};

use crate::text::{bare_call, closed_json, python_literals};
use crate::tools::ToolSpec;

/// A call found in the text: the tool's name and its arguments as JSON text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TextCall {
    pub name: String,
    pub arguments: String,
}

const TOOL_CALL: &str = "<tool_call>";
const TOOL_CALL_END: &str = "</tool_call>";
const FUNCTION: &str = "<function=";
const FUNCTION_END: &str = "</function>";
const PARAMETER: &str = "<parameter=";
const PARAMETER_END: &str = "</parameter>";
const MISTRAL: &str = "[TOOL_CALLS]";
const FUNCTION_NAME: &str = "<function-name>";
const FUNCTION_NAME_END: &str = "</function-name>";
const PYTHON_TAG: &str = "<|python_tag|>";
const FUNCTOOLS: &str = "functools";
/// Markers that start a call inside a reply.
const MARKERS: [&str; 4] = [TOOL_CALL, FUNCTION, MISTRAL, FUNCTION_NAME];

/// Splits a reply into its text (calls removed, trimmed) and the calls it contains. With no call
/// found, the text is returned unchanged.
pub(crate) fn extract(content: &str, tools: &[ToolSpec]) -> (String, Vec<TextCall>) {
    if tools.is_empty() {
        return (content.to_owned(), Vec::new());
    }
    // First as if any name could be called: a reply that is nothing but calls is taken whole.
    let lenient = Known { tools, any: true };
    let (text, calls) = extract_with(content, &lenient);
    if !calls.is_empty() && text.is_empty() {
        return (text, calls);
    }
    let found = extract_with(content, &Known { tools, any: false });
    if found.1.is_empty()
        && let Some(json) = python_literals(content)
    {
        // `{'name': 'status', 'arguments': {…}}`: a Python dict for the JSON, taken when the
        // reply is nothing but calls (the conversion would change the quotes of any prose).
        let (text, calls) = extract_with(&json, &lenient);
        if !calls.is_empty() && text.is_empty() {
            return (text, calls);
        }
    }
    found
}

fn extract_with(content: &str, known: &Known) -> (String, Vec<TextCall>) {
    if let Some(calls) = whole_reply_json(content, known) {
        return (String::new(), calls);
    }
    if let Some(calls) = whole_reply_lines(content, known) {
        return (String::new(), calls);
    }
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut rest = content;
    while let Some((at, marker)) = first_marker(rest) {
        text.push_str(&rest[..at]);
        let block = &rest[at..];
        match parse_block(marker, block, known) {
            Some((consumed, found)) => {
                calls.extend(found);
                rest = &block[consumed..];
            }
            None => {
                text.push_str(marker);
                rest = &block[marker.len()..];
            }
        }
    }
    if calls.is_empty() {
        return (content.to_owned(), calls);
    }
    text.push_str(rest);
    (text.trim().to_owned(), calls)
}

/// The tools the model may call; with `any`, a name that is no tool is accepted too (for a reply
/// that is nothing but calls: the pipeline answers it).
struct Known<'a> {
    tools: &'a [ToolSpec],
    any: bool,
}

impl Known<'_> {
    /// The tool of that name, if any.
    fn spec(&self, name: &str) -> Option<&ToolSpec> {
        self.tools.iter().find(|spec| spec.name == name)
    }

    /// Whether a call to `name` is taken as one.
    fn accepts(&self, name: &str) -> bool {
        if self.any {
            !name.is_empty() && name.len() <= 128 && !name.contains('\n')
        } else {
            self.spec(name).is_some()
        }
    }
}

fn first_marker(text: &str) -> Option<(usize, &'static str)> {
    MARKERS
        .iter()
        .filter_map(|m| text.find(m).map(|at| (at, *m)))
        .min_by_key(|(at, _)| *at)
}

/// Parses the block that starts with `marker`; returns the bytes it spans and its calls.
fn parse_block(marker: &str, block: &str, known: &Known) -> Option<(usize, Vec<TextCall>)> {
    match marker {
        TOOL_CALL => {
            let body = &block[TOOL_CALL.len()..];
            let (inner, consumed) = match body.find(TOOL_CALL_END) {
                Some(end) => (&body[..end], TOOL_CALL.len() + end + TOOL_CALL_END.len()),
                None => (body, block.len()),
            };
            let inner = inner.trim();
            let calls = if inner.starts_with(FUNCTION) {
                xml_functions(inner, known)?
            } else {
                json_calls(strip_fence(inner), known)?
            };
            Some((consumed, calls))
        }
        FUNCTION => {
            let (consumed, call) = xml_function(block, known)?;
            Some((consumed, vec![call]))
        }
        FUNCTION_NAME => {
            let (consumed, call) = tagged_function(block, known)?;
            Some((consumed, vec![call]))
        }
        _ => mistral(block, known),
    }
}

/// `[TOOL_CALLS][{…},…]`, `[TOOL_CALLS]{…}` or `[TOOL_CALLS]name[ARGS]{…}`.
fn mistral(block: &str, known: &Known) -> Option<(usize, Vec<TextCall>)> {
    let body = &block[MISTRAL.len()..];
    let trimmed = body.trim_start();
    let skipped = MISTRAL.len() + body.len() - trimmed.len();
    if trimmed.starts_with('[') || trimmed.starts_with('{') {
        let (value, used) = json_prefix(trimmed)?;
        let calls = calls_of(&value, known)?;
        return Some((skipped + used, calls));
    }
    let args_at = trimmed.find("[ARGS]")?;
    let head = &trimmed[..args_at];
    // Newer templates put an id between the name and the arguments: `name[CALL_ID]id[ARGS]`.
    let name = head.split("[CALL_ID]").next().unwrap_or(head).trim();
    if name.is_empty() || name.contains(char::is_whitespace) || !known.accepts(name) {
        return None;
    }
    let json = &trimmed[args_at + "[ARGS]".len()..];
    let json_trimmed = json.trim_start();
    let (value, used) = json_prefix(json_trimmed)?;
    let consumed = skipped + args_at + "[ARGS]".len() + (json.len() - json_trimmed.len()) + used;
    Some((
        consumed,
        vec![TextCall {
            name: name.to_owned(),
            arguments: arguments_text(&value),
        }],
    ))
}

/// A reply that is nothing but a call object or a list of them — or that starts with one or more
/// call objects of known tools and runs on with something else (the leading calls are taken,
/// the rest is dropped: it is not an answer either).
fn whole_reply_json(content: &str, known: &Known) -> Option<Vec<TextCall>> {
    let trimmed = content.trim();
    let trimmed = trimmed.strip_prefix(PYTHON_TAG).unwrap_or(trimmed).trim();
    // Phi-4-mini's `functools[{"name": …, "arguments": {…}}]`.
    let trimmed = trimmed
        .strip_prefix(FUNCTOOLS)
        .filter(|rest| rest.starts_with('['))
        .unwrap_or(trimmed);
    if let Some(inner) = strip_tag_wrapper(trimmed) {
        // `<tools>{…}</tools>`: a call, unless it is a tool's definition written out.
        let body = strip_fence(inner);
        let (value, _) = json_prefix(body)?;
        if is_definition(&value) {
            return None;
        }
        return whole_reply_json(inner, known);
    }
    let body = strip_fence(trimmed);
    if !(body.starts_with('{') || body.starts_with('[')) {
        return None;
    }
    if let Some(inner) = doubled_brace(body) {
        // `{{"name": …, "arguments": {…}}}`: the call inside one brace too many.
        let (value, _) = json_prefix(inner)?;
        return call_of(value.as_object()?, known).map(|call| vec![call]);
    }
    if let Ok(value) = serde_json::from_str::<Value>(body) {
        return calls_of(&value, known);
    }
    if let Some(value) = closed_json(body).and_then(|c| serde_json::from_str::<Value>(&c).ok()) {
        // A call one or more brackets short at the end (Qwen2.5-Coder-0.5B: `{"name": …,
        // "arguments": {…}` and then the end of its reply): the call it is.
        return calls_of(&value, known);
    }
    // A call, then anything (more calls, a `{"response": …}`, text): the first call is the
    // reply. Small models run on after a real call with invented ones (measured with
    // Qwen2.5-Coder-0.5B: a status call, then calls of `lights`, `thermostat`, `scene`… until
    // max_tokens); running those would be calls nobody wanted.
    let (value, _) = json_prefix(body)?;
    let object = value.as_object()?;
    let strict = Known {
        tools: known.tools,
        any: false,
    };
    call_of(object, &strict).map(|call| vec![call])
}

/// Whether the reply so far starts with a complete call written as text (a JSON call object,
/// possibly fenced or after `<|python_tag|>`, or a closed `<tool_call>`, `<function=…>` or
/// `<function-name>` block): the reply is that call, and what the model writes after it need not
/// be waited for.
pub(crate) fn starts_with_complete_call(content: &str) -> bool {
    let start = content.trim_start();
    let start = start.strip_prefix(PYTHON_TAG).unwrap_or(start).trim_start();
    let start = match tag_opening(start) {
        Some((_, rest)) => rest.trim_start(),
        None => start,
    };
    let body = match start.strip_prefix("```") {
        Some(fenced) => match fenced.split_once('\n') {
            Some((_, rest)) => rest.trim_start(),
            None => return false,
        },
        None => start,
    };
    if body.starts_with('{') {
        let body = doubled_brace(body).unwrap_or(body);
        return json_prefix(body).is_some_and(|(value, _)| {
            value.as_object().is_some_and(|object| {
                object.contains_key("function")
                    || (object.get("name").is_some_and(Value::is_string)
                        && (object.contains_key("arguments") || object.contains_key("parameters")))
            })
        });
    }
    [
        (TOOL_CALL, TOOL_CALL_END),
        (FUNCTION, FUNCTION_END),
        (FUNCTION_NAME, "</arguments>"),
        (FUNCTION_NAME, "</parameters>"),
    ]
    .iter()
    .any(|(open, close)| body.starts_with(open) && body.contains(close))
}

/// A reply that is nothing but `name(args)` or `name: {…}` lines (optionally in a code fence),
/// each naming a known tool.
fn whole_reply_lines(content: &str, known: &Known) -> Option<Vec<TextCall>> {
    let body = strip_any_fence(content.trim());
    // Llama 3.2's and Gemma 3's list of calls: `[status(service="billing"), light(on=true)]`.
    if let Some(inner) = body.strip_prefix('[').and_then(|b| b.strip_suffix(']')) {
        let calls: Option<Vec<TextCall>> = split_top_level(inner)
            .into_iter()
            .map(|part| line_call(part.trim(), known))
            .collect();
        if let Some(calls) = calls.filter(|calls| !calls.is_empty()) {
            return Some(calls);
        }
    }
    let mut calls = Vec::new();
    for line in body.lines().map(str::trim).filter(|l| !l.is_empty()) {
        calls.push(line_call(line, known)?);
    }
    (!calls.is_empty()).then_some(calls)
}

/// `name(args)` or `name: {…}` / `name {…}` for a known tool (never an unknown name: prose like
/// `Note: {…}` or `f(x)` must stay text).
fn line_call(line: &str, known: &Known) -> Option<TextCall> {
    let line = line.strip_suffix(';').unwrap_or(line).trim();
    let line = bare_call(line);
    let name_end = line
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.'))
        .unwrap_or(line.len());
    let name = &line[..name_end];
    let spec = known.spec(name)?;
    let rest = line[name_end..].trim_start();
    let arguments = if let Some(inner) = rest.strip_prefix('(') {
        let inner = inner.strip_suffix(')')?.trim();
        call_arguments(inner, spec)?
    } else {
        let rest = rest.strip_prefix(':').unwrap_or(rest).trim_start();
        if !rest.starts_with('{') {
            return None;
        }
        let value: Value = serde_json::from_str(rest).ok()?;
        value.as_object()?;
        value
    };
    Some(TextCall {
        name: name.to_owned(),
        arguments: arguments.to_string(),
    })
}

/// The inside of `name(…)`: nothing, a JSON object, `key=value` / `key: value` pairs, or
/// positional values given to the tool's parameters in their declared order.
fn call_arguments(inner: &str, spec: &ToolSpec) -> Option<Value> {
    if inner.is_empty() {
        return Some(Value::Object(Map::new()));
    }
    if inner.starts_with('{') {
        let value: Value = serde_json::from_str(inner).ok()?;
        return value.is_object().then_some(value);
    }
    key_values(inner, Some(spec))
}

/// `key=value, key: "value", …` (and, with a spec, bare positional values for its parameters in
/// their declared order) as a JSON object.
fn key_values(text: &str, spec: Option<&ToolSpec>) -> Option<Value> {
    let names: Vec<&str> = spec
        .and_then(|spec| spec.parameters.get("properties"))
        .and_then(Value::as_object)
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let mut arguments = Map::new();
    for (i, part) in split_top_level(text).into_iter().enumerate() {
        let (key, value) = match key_value(part) {
            Some((key, value)) => (key.to_owned(), value),
            None => ((*names.get(i)?).to_owned(), part.trim()),
        };
        let value = loose_value(spec, &key, value);
        arguments.insert(key, value);
    }
    (!arguments.is_empty()).then_some(Value::Object(arguments))
}

/// `key=value` or `key: value` with an identifier for a key.
fn key_value(part: &str) -> Option<(&str, &str)> {
    let at = part.find(['=', ':'])?;
    let key = part[..at].trim();
    let key = key.trim_matches(|c| c == '"' || c == '\'');
    let ok = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    ok.then(|| (key, part[at + 1..].trim()))
}

/// Splits on commas outside quotes, brackets and braces.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut quote, mut start, mut escaped) = (0i32, None::<char>, 0, false);
    for (i, c) in text.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '[' | '{' | '(' => depth += 1,
            ']' | '}' | ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

/// A value written loosely: a quoted string is that string; anything else is read as
/// [`typed_value`] reads XML values.
fn loose_value(spec: Option<&ToolSpec>, key: &str, value: &str) -> Value {
    let value = value.trim();
    if value.len() >= 2 && value.starts_with('"') && value.ends_with('"') {
        if let Ok(Value::String(s)) = serde_json::from_str::<Value>(value) {
            return Value::String(s);
        }
    }
    for q in ['"', '\''] {
        if value.len() >= 2 && value.starts_with(q) && value.ends_with(q) {
            return Value::String(value[1..value.len() - 1].to_owned());
        }
    }
    typed_value(spec, key, value)
}

/// `<function-name>NAME</function-name>` then `<arguments>…</arguments>` (or `<parameters>`),
/// the arguments as a JSON object or `key=value` pairs.
fn tagged_function(block: &str, known: &Known) -> Option<(usize, TextCall)> {
    let after = &block[FUNCTION_NAME.len()..];
    let name_end = after.find(FUNCTION_NAME_END)?;
    let name = after[..name_end].trim();
    if !known.accepts(name) {
        return None;
    }
    let spec = known.spec(name);
    let mut consumed = FUNCTION_NAME.len() + name_end + FUNCTION_NAME_END.len();
    let rest = &block[consumed..];
    let trimmed = rest.trim_start();
    let mut arguments = Value::Object(Map::new());
    for (open, close) in [
        ("<arguments>", "</arguments>"),
        ("<parameters>", "</parameters>"),
    ] {
        if let Some(body) = trimmed.strip_prefix(open) {
            let (inner, used) = match body.find(close) {
                Some(end) => (&body[..end], open.len() + end + close.len()),
                None => (body, trimmed.len()),
            };
            let inner = inner.trim();
            arguments = if inner.starts_with('{') {
                serde_json::from_str(inner).ok()?
            } else if inner.is_empty() {
                Value::Object(Map::new())
            } else {
                key_values(inner, spec)?
            };
            consumed += rest.len() - trimmed.len() + used;
            break;
        }
    }
    Some((
        consumed,
        TextCall {
            name: name.to_owned(),
            arguments: arguments.to_string(),
        },
    ))
}

/// The inside of a reply wrapped in one tag of the model's own (`<tools>…</tools>`; the closing
/// tag may be missing), when the tag is a word and what follows it opens like JSON (`{`, `[`, a
/// fence). `None` otherwise, and for the markers read elsewhere (`<tool_call>`, …).
fn strip_tag_wrapper(text: &str) -> Option<&str> {
    let (tag, rest) = tag_opening(text)?;
    let rest = rest.trim();
    if !(rest.starts_with('{') || rest.starts_with('[') || rest.starts_with("```")) {
        return None;
    }
    let closing = format!("</{tag}>");
    Some(rest.strip_suffix(closing.as_str()).unwrap_or(rest).trim())
}

/// `<word>` at the start of `text` (a word of letters, digits, `_` and `-`, at most 32 bytes,
/// not one of the markers read elsewhere): the word and what follows the tag.
fn tag_opening(text: &str) -> Option<(&str, &str)> {
    let after = text.strip_prefix('<')?;
    let end = after.find('>')?;
    let tag = &after[..end];
    let marker = MARKERS.iter().any(|m| text.starts_with(m));
    (!tag.is_empty() && is_tag_word(tag) && !marker).then(|| (tag, &after[end + 1..]))
}

/// Letters, digits, `_` and `-`, at most 32 bytes: what a model's own tag name is made of.
fn is_tag_word(text: &str) -> bool {
    text.len() <= 32
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The text after the first brace of `{{"name": …`, a call object written inside one brace too
/// many (Qwen2.5-Coder-1.5B wrote `{{"name": "suivi_commande", "arguments": {"numero": 77104}}}`);
/// `None` when the text does not open so.
fn doubled_brace(body: &str) -> Option<&str> {
    let inner = body.strip_prefix('{')?.trim_start();
    let after = inner.strip_prefix('{')?.trim_start();
    after.starts_with("\"name\"").then_some(inner)
}

/// Whether a JSON value is a tool's definition (what the model was shown) rather than a call:
/// a `description`, or `parameters` that hold a schema.
fn is_definition(value: &Value) -> bool {
    let object = match value {
        Value::Array(items) => return items.first().is_some_and(is_definition),
        Value::Object(object) => object,
        _ => return false,
    };
    if let Some(function @ Value::Object(_)) = object.get("function") {
        return is_definition(function);
    }
    let schema = object
        .get("parameters")
        .and_then(Value::as_object)
        .is_some_and(|p| {
            p.contains_key("properties") || p.get("type") == Some(&Value::from("object"))
        });
    object.contains_key("description") || schema
}

/// The body of a Markdown code fence (```json … ```), or the text as it is. A fence that is
/// not closed counts to the end of the text: mm stops reading a reply as soon as the call in it
/// is complete (`starts_with_complete_call`), before the closing fence arrives.
fn strip_fence(text: &str) -> &str {
    let Some(after) = text.strip_prefix("```") else {
        return text;
    };
    let after = after.trim_end();
    let body = after.strip_suffix("```").unwrap_or(after);
    // Drop the info string (`json`) on the fence's first line.
    match body.split_once('\n') {
        Some((info, rest)) if !info.trim_start().starts_with('{') => rest.trim(),
        _ => body.trim(),
    }
}

/// The body of any Markdown code fence (```python …```), or the text as it is; a fence that
/// is not closed counts to the end of the text, as in [`strip_fence`].
fn strip_any_fence(text: &str) -> &str {
    let Some(after) = text.strip_prefix("```") else {
        return text;
    };
    let after = after.trim_end();
    let body = after.strip_suffix("```").unwrap_or(after);
    match body.split_once('\n') {
        Some((_, rest)) => rest.trim(),
        None => body.trim(),
    }
}

/// One or more JSON call objects, one after the other.
fn json_calls(text: &str, known: &Known) -> Option<Vec<TextCall>> {
    let mut calls = Vec::new();
    for value in serde_json::Deserializer::from_str(text).into_iter::<Value>() {
        calls.extend(calls_of(&value.ok()?, known)?);
    }
    (!calls.is_empty()).then_some(calls)
}

/// A call object or a non-empty list of them, every one naming a known tool.
fn calls_of(value: &Value, known: &Known) -> Option<Vec<TextCall>> {
    match value {
        Value::Object(object) => Some(vec![call_of(object, known)?]),
        Value::Array(items) if !items.is_empty() => items
            .iter()
            .map(|item| item.as_object().and_then(|object| call_of(object, known)))
            .collect(),
        _ => None,
    }
}

/// Keys other models write for a call's tool and its arguments (`{"tool": "status", "args":
/// {…}}`), the same the junk judge knows: taken for a known tool only.
const OTHER_NAME_KEYS: [&str; 3] = ["tool", "tool_name", "function"];
const OTHER_ARGUMENT_KEYS: [&str; 3] = ["args", "input", "params"];

/// `{"name": N, "arguments"|"parameters": {…}}`, also OpenAI's `{"function": {…}}` wrapper, and
/// the [other keys](OTHER_NAME_KEYS) for a known tool.
fn call_of(object: &Map<String, Value>, known: &Known) -> Option<TextCall> {
    if let Some(Value::Object(function)) = object.get("function") {
        return call_of(function, known);
    }
    let arguments = object.get("arguments").or_else(|| object.get("parameters"));
    if let (Some(name), Some(arguments)) = (object.get("name").and_then(Value::as_str), arguments) {
        let name = name.trim();
        return known.accepts(name).then(|| TextCall {
            name: name.to_owned(),
            arguments: arguments_text(arguments),
        });
    }
    let name = ["name"]
        .iter()
        .chain(&OTHER_NAME_KEYS)
        .find_map(|key| object.get(*key).and_then(Value::as_str))?
        .trim();
    known.spec(name)?;
    let arguments = OTHER_ARGUMENT_KEYS
        .iter()
        .find_map(|key| object.get(*key))
        .or(arguments)?;
    Some(TextCall {
        name: name.to_owned(),
        arguments: arguments_text(arguments),
    })
}

fn arguments_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => "{}".to_owned(),
        other => other.to_string(),
    }
}

/// Parses one JSON value at the start of `text`; returns it and the bytes it used.
fn json_prefix(text: &str) -> Option<(Value, usize)> {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    let value = stream.next()?.ok()?;
    Some((value, stream.byte_offset()))
}

/// Every `<function=…>` in a `<tool_call>` body; nothing else may be there.
fn xml_functions(mut text: &str, known: &Known) -> Option<Vec<TextCall>> {
    let mut calls = Vec::new();
    while !text.is_empty() {
        if !text.starts_with(FUNCTION) {
            return None;
        }
        let (consumed, call) = xml_function(text, known)?;
        calls.push(call);
        text = text[consumed..].trim_start();
    }
    Some(calls)
}

/// `<function=NAME><parameter=P>value</parameter>…</function>` at the start of `text`.
fn xml_function(text: &str, known: &Known) -> Option<(usize, TextCall)> {
    let after = &text[FUNCTION.len()..];
    let name_end = after.find('>')?;
    let name = after[..name_end].trim();
    if !known.accepts(name) {
        return None;
    }
    let spec = known.spec(name);
    let body_start = FUNCTION.len() + name_end + 1;
    let body = &text[body_start..];
    let (body, consumed) = match body.find(FUNCTION_END) {
        Some(end) => (&body[..end], body_start + end + FUNCTION_END.len()),
        None => (body, text.len()),
    };
    let mut arguments = Map::new();
    let mut rest = body;
    while let Some(start) = rest.find(PARAMETER) {
        let after = &rest[start + PARAMETER.len()..];
        let key_end = after.find('>')?;
        let key = after[..key_end].trim();
        let value_text = &after[key_end + 1..];
        let value_end = [value_text.find(PARAMETER_END), value_text.find(PARAMETER)]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(value_text.len());
        let value = trim_one_newline(&value_text[..value_end]);
        arguments.insert(key.to_owned(), typed_value(spec, key, value));
        rest = value_text[value_end..]
            .strip_prefix(PARAMETER_END)
            .unwrap_or(&value_text[value_end..]);
    }
    let call = TextCall {
        name: name.to_owned(),
        arguments: Value::Object(arguments).to_string(),
    };
    Some((consumed, call))
}

/// Qwen3-Coder writes each value on its own lines: drop one newline on each side, nothing more.
fn trim_one_newline(value: &str) -> &str {
    let value = value
        .strip_prefix("\r\n")
        .or_else(|| value.strip_prefix('\n'))
        .unwrap_or(value);
    value
        .strip_suffix("\r\n")
        .or_else(|| value.strip_suffix('\n'))
        .unwrap_or(value)
}

/// XML values are text: a parameter the schema types as something other than a string is read as
/// JSON when it is valid JSON (`3`, `true`, `["a"]`); the validator coerces the rest.
fn typed_value(spec: Option<&ToolSpec>, key: &str, value: &str) -> Value {
    let declared = spec
        .and_then(|spec| spec.parameters.get("properties"))
        .and_then(|p| p.get(key))
        .and_then(|p| p.get("type"));
    let is_string = declared.is_none_or(|t| t == "string");
    if !is_string {
        if let Ok(parsed) = serde_json::from_str::<Value>(value.trim()) {
            return parsed;
        }
    }
    Value::String(value.to_owned())
}

/// Decides what part of a streaming reply may be shown before the reply is complete: text up to
/// a call marker, and nothing of a reply that opens like a bare JSON call.
#[derive(Debug, Default)]
pub(crate) struct TextGate {
    shown: usize,
    held: bool,
}

impl TextGate {
    /// The new part of `content` (the reply so far) that is safe to show.
    pub fn advance<'c>(&mut self, content: &'c str) -> &'c str {
        if self.held {
            return "";
        }
        if self.shown == 0 {
            let start = content.trim_start();
            if start.is_empty() || PYTHON_TAG.starts_with(start) {
                return "";
            }
            // How the reply opens decides: `None` too early to tell, `Some(true)` it may be a
            // call (held until complete), `Some(false)` text.
            let opening = if start.starts_with("```") {
                // A fenced reply is held only when it opens like fenced JSON.
                fence_opening(start)
            } else if start.starts_with('<') && !opens_marker(start) {
                // `<tools>{…`: a call in a tag of the model's own.
                tag_wrapper_opening(start)
            } else if start.starts_with('{')
                || start.starts_with(PYTHON_TAG)
                || start.starts_with("functools[")
            {
                // Could be a call written as the whole reply: wait for its end.
                Some(true)
            } else if let Some(rest) = start.strip_prefix('[') {
                // `[{"name": …}]` or `[status(…)]`: a list of calls.
                list_opening(rest.trim_start())
            } else {
                // `name(…)` or `name: {…}`: wait until the opening tells.
                call_line_opening(start)
            };
            match opening {
                None => return "",
                Some(true) => {
                    self.held = true;
                    return "";
                }
                Some(false) => {}
            }
        }
        let new = &content[self.shown..];
        let safe = match first_marker(new) {
            Some((at, _)) => {
                self.held = true;
                at
            }
            None => new.len() - partial_marker_len(new),
        };
        self.shown += safe;
        &new[..safe]
    }

    /// What is left to show once the reply is complete: the rest of the final text, when the
    /// shown part is still its beginning.
    pub fn finish<'f>(&mut self, raw: &str, final_text: &'f str) -> &'f str {
        let shown = raw.get(..self.shown).unwrap_or("");
        self.shown = raw.len();
        self.held = true;
        final_text.strip_prefix(shown).unwrap_or("")
    }
}

/// For a reply that starts with a word: whether it opens like a `name(…)` or `name: {…}` call
/// (`None`: too early to tell). A word longer than any tool name, or followed by anything else,
/// is text.
fn call_line_opening(start: &str) -> Option<bool> {
    let name_end = start
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.'))
        .unwrap_or(start.len());
    if name_end == 0 || name_end > 64 {
        return Some(false);
    }
    let rest = &start[name_end..];
    let next = rest.chars().next()?;
    match next {
        '(' => Some(true),
        // `name: {` or `name {`; anything else after the word is prose.
        ':' | ' ' => rest[1..]
            .trim_start()
            .chars()
            .next()
            .map(|c| c == '{' || (next == ' ' && c == ':')),
        _ => Some(false),
    }
}

/// For a reply that starts with `[`: whether what follows opens a call (`{`, or `name(`);
/// `None`: too early to tell. `[TOOL_CALLS]` and prose (`[1] First`) are not held here.
fn list_opening(rest: &str) -> Option<bool> {
    match rest.chars().next()? {
        '{' => Some(true),
        _ => call_line_opening(rest).map(|call| call && !rest.starts_with("TOOL_CALLS")),
    }
}

/// Whether `start` is, or begins like, one of the markers read elsewhere (`<tool_call>`, …).
fn opens_marker(start: &str) -> bool {
    MARKERS.iter().any(|m| {
        start.starts_with(m)
            || start
                .get(..start.len().min(m.len()))
                .is_some_and(|so_far| m.starts_with(so_far))
    })
}

/// For a reply that starts with `<`: whether it opens like `<word>` then JSON or a fence
/// (`None`: too early to tell).
fn tag_wrapper_opening(start: &str) -> Option<bool> {
    if !start.contains('>') {
        // Still inside the tag: a word so far (and not too long) may be one.
        return if is_tag_word(&start[1..]) {
            None
        } else {
            Some(false)
        };
    }
    let Some((_, rest)) = tag_opening(start) else {
        return Some(false);
    };
    let rest = rest.trim_start();
    let first = rest.chars().next()?;
    if first == '`' {
        return if rest.len() < 3 {
            None
        } else {
            Some(rest.starts_with("```"))
        };
    }
    Some(first == '{' || first == '[')
}

/// For a reply that starts with a code fence: whether it opens like fenced JSON (`None`: too
/// early to tell).
fn fence_opening(start: &str) -> Option<bool> {
    let (info, body) = start[3..].split_once('\n')?;
    if info.trim().eq_ignore_ascii_case("tool_code") {
        // Gemma 3's block for its calls.
        return Some(true);
    }
    let body = body.trim_start();
    let first = body.chars().next()?;
    let info = info.trim();
    Some((info.is_empty() || info.eq_ignore_ascii_case("json")) && (first == '{' || first == '['))
}

/// The length of the longest end of `text` that could be the start of a marker.
fn partial_marker_len(text: &str) -> usize {
    let bytes = text.as_bytes();
    (1..=bytes.len().min(MISTRAL.len()))
        .rev()
        .find(|&n| {
            let tail = &bytes[bytes.len() - n..];
            MARKERS
                .iter()
                .any(|m| m.len() > n && m.as_bytes().starts_with(tail))
        })
        .unwrap_or(0)
}

#[cfg(test)]
#[path = "text_calls_tests.rs"]
mod tests;
