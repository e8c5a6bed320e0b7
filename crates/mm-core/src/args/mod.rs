//! The one argument validator and coercer, for declared and MCP tools alike.
//!
//! A tool's parameters are a [`Params`] list (built from an agent file's `parameters:` or from an
//! MCP tool's `inputSchema` with [`Params::from_json_schema`]). [`Params::validate`] takes the
//! arguments exactly as the model sent them (a raw string) and returns either the coerced
//! arguments or an [`Invalid`] that renders the answer the model reads: each problem, the call
//! quoted back and every parameter's form.
//!
//! Coercion is lenient and nothing more (SPEC §2): `"3"` and `3.0` are accepted for an integer,
//! `"true"` for a boolean, `3` for a string; anything that would need a guess (`"yes"`, `"three"`,
//! `"3.5"` for an integer) is refused with the reason.
//!
//! ```
//! use mm_core::{ParamSpec, ParamType, Params};
//!
//! let params = Params {
//!     params: vec![ParamSpec {
//!         name: "count".into(),
//!         ty: ParamType::Integer,
//!         description: None,
//!         required: true,
//!         enum_values: None,
//!         default: None,
//!         schema: None,
//!     }],
//!     deny_unknown: true,
//! };
//! let args = params.validate(r#"{"count":"3"}"#).unwrap();
//! assert_eq!(args["count"], 3);
//! let invalid = params.validate(r#"{"count":"three"}"#).unwrap_err();
//! assert_eq!(invalid.problems, ["count: \"three\" is not an integer"]);
//! ```

use std::collections::HashMap;
use std::fmt::Write as _;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::text::{did_you_mean, one_line};

mod coerce;
mod mcp_schema;

pub use coerce::render_value;
use coerce::{coerce, inexact_number, render_number, same_value};
pub use mcp_schema::PropertySchema;
use mcp_schema::simplified;

/// The type of one parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParamType {
    String,
    Integer,
    Number,
    Boolean,
    /// MCP only: a JSON array (items checked against `ParamSpec::schema`).
    Array,
    /// MCP only: a JSON object (checked against `ParamSpec::schema`).
    Object,
    /// MCP only: no type given; any JSON value.
    Any,
}

impl ParamType {
    /// The JSON Schema name of the type (`None` for [`ParamType::Any`]).
    pub fn json_name(self) -> Option<&'static str> {
        match self {
            ParamType::String => Some("string"),
            ParamType::Integer => Some("integer"),
            ParamType::Number => Some("number"),
            ParamType::Boolean => Some("boolean"),
            ParamType::Array => Some("array"),
            ParamType::Object => Some("object"),
            ParamType::Any => None,
        }
    }

    /// Parses a JSON Schema `type` name.
    pub fn from_json_name(name: &str) -> Option<Self> {
        Some(match name {
            "string" => ParamType::String,
            "integer" => ParamType::Integer,
            "number" => ParamType::Number,
            "boolean" => ParamType::Boolean,
            "array" => ParamType::Array,
            "object" => ParamType::Object,
            _ => return None,
        })
    }
}

/// One parameter of a tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamSpec {
    pub name: String,
    pub ty: ParamType,
    pub description: Option<String>,
    pub required: bool,
    /// Allowed values, when the parameter is an enum.
    pub enum_values: Option<Vec<Value>>,
    /// Used when the model omits the parameter.
    pub default: Option<Value>,
    /// MCP only: the property's full JSON Schema, for structural checks of arrays and objects.
    pub schema: Option<PropertySchema>,
}

/// The parameters of a tool, in declaration order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Params {
    pub params: Vec<ParamSpec>,
    /// Whether names not in `params` are refused (always for declared tools; MCP tools whose
    /// schema says `additionalProperties: false`).
    pub deny_unknown: bool,
}

/// A call that was not run, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Invalid {
    /// One line per problem, e.g. `channel: "alpha" is not one of: stable, beta`.
    pub problems: Vec<String>,
    /// The arguments exactly as the model sent them.
    pub raw: String,
    /// The values sent for enum parameters that the enum refused (`"EUR"` for a weight unit),
    /// so that the pipeline can name another tool that takes them.
    pub off_enum: Vec<Value>,
}

impl Params {
    /// Validates and coerces `raw` (the model's arguments text). See SPEC §2 "Coercion".
    ///
    /// Empty text (or `null`) is an empty object; a JSON string holding a JSON object is decoded
    /// once. Defaults are applied to omitted parameters; `null` for an optional parameter counts
    /// as omitted. Names not in the list are refused when `deny_unknown`, passed through as they
    /// are otherwise.
    pub fn validate(&self, raw: &str) -> Result<ValidArgs, Invalid> {
        self.validate_arguments(&Arguments::decode(raw))
    }

    /// [`validate`](Self::validate) for arguments already decoded (the call pipeline decodes a
    /// call's arguments once, for the validator, the loop detector and the record).
    pub fn validate_arguments(&self, arguments: &Arguments) -> Result<ValidArgs, Invalid> {
        let raw = arguments.raw.as_str();
        let invalid = |problem: String| Invalid {
            problems: vec![problem],
            raw: raw.to_string(),
            off_enum: Vec::new(),
        };
        let (sent, text) = arguments.decoded.clone().map_err(invalid)?;
        // Each value's text as the model wrote it: numbers are checked against it (a float that
        // would lose digits is refused, a number for a string parameter keeps its spelling).
        let written: HashMap<String, &RawValue> = serde_json::from_str(&text).unwrap_or_default();

        let mut problems = Vec::new();
        let mut off_enum = Vec::new();
        let mut out = Map::new();
        for spec in &self.params {
            match (sent.get(&spec.name), &spec.default) {
                (None | Some(Value::Null), Some(default)) => {
                    out.insert(spec.name.clone(), default.clone());
                }
                (Some(Value::Null), None) if spec.required => {
                    problems.push(format!("{}: null is not allowed (required)", spec.name));
                }
                (None, None) if spec.required => {
                    problems.push(format!("{}: missing (required)", spec.name));
                }
                (None | Some(Value::Null), None) => {}
                (Some(value), _) => match spec
                    .check(value, written.get(&spec.name).map(|r| r.get()))
                {
                    Ok(value) => {
                        out.insert(spec.name.clone(), value);
                    }
                    Err(reasons) => {
                        if spec.enum_values.is_some() {
                            off_enum.push(value.clone());
                        }
                        problems.extend(reasons.into_iter().map(|r| format!("{}: {r}", spec.name)));
                    }
                },
            }
        }
        for (name, value) in &sent {
            if self.params.iter().any(|p| &p.name == name) {
                continue;
            }
            if self.deny_unknown {
                problems.push(match self.closest_name(name) {
                    Some(close) => format!("{name}: unknown parameter (did you mean {close}?)"),
                    None => format!("{name}: unknown parameter"),
                });
            } else {
                out.insert(name.clone(), value.clone());
            }
        }

        if problems.is_empty() {
            Ok(ValidArgs(out))
        } else {
            Err(Invalid {
                problems,
                raw: raw.to_string(),
                off_enum,
            })
        }
    }

    /// The schema the model sees for a declared tool (SPEC §2): each property's `type` and a
    /// description ending in `Required.` or `Optional.` (then `One of: a, b.` for an enum). The
    /// keywords `required` and `enum` are deliberately left out: an invalid call is answered in
    /// text, not refused by a grammar or a client-side schema check.
    pub fn model_schema(&self) -> Value {
        self.schema_for_model(true)
    }

    /// Whether every one of `values` (words, not numbers) is among the enum values of one of
    /// these parameters: the values another tool's enum refused may be this tool's (`"EUR"`
    /// sent to a weight converter belongs to the currency one).
    pub fn enum_takes_all(&self, values: &[Value]) -> bool {
        let word = |v: &Value| {
            v.as_str()
                .is_some_and(|s| s.chars().any(char::is_alphabetic))
        };
        !values.is_empty()
            && values.iter().all(|value| {
                word(value)
                    && self.params.iter().any(|p| {
                        p.enum_values.as_ref().is_some_and(|allowed| {
                            allowed.iter().any(|a| same_value(p.ty, a, value))
                        })
                    })
            })
    }

    /// [`model_schema`](Self::model_schema) for the built-in tools, whose every byte is paid by
    /// every request: a parameter is required unless its description says `Optional.`, so a
    /// required one carries no `Required.` (and no description at all when it has none).
    pub fn builtin_schema(&self) -> Value {
        self.schema_for_model(false)
    }

    /// The schema the model sees for a declared tool with `presentation: {schema: keywords}`:
    /// `required` and `enum` as JSON Schema keywords, each parameter's own description without
    /// the sentences [`model_schema`](Self::model_schema) adds (nothing else differs).
    pub fn keyword_schema(&self) -> Value {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for spec in &self.params {
            let mut property = Map::new();
            if let Some(ty) = spec.ty.json_name() {
                property.insert("type".into(), ty.into());
            }
            if let Some(description) = spec.description.as_deref().map(sentence) {
                property.insert("description".into(), description.into());
            }
            if let Some(values) = &spec.enum_values {
                property.insert("enum".into(), Value::Array(values.clone()));
            }
            if spec.must_be_sent() {
                required.push(Value::String(spec.name.clone()));
            }
            properties.insert(spec.name.clone(), Value::Object(property));
        }
        serde_json::json!({"type": "object", "properties": properties, "required": required})
    }

    fn schema_for_model(&self, say_required: bool) -> Value {
        let mut properties = Map::new();
        for spec in &self.params {
            let mut property = match (spec.schema.as_ref().map(PropertySchema::value), spec.ty) {
                // MCP arrays and objects keep their structure (items, properties), simplified.
                (Some(schema), ParamType::Array | ParamType::Object) => {
                    let mut nested = simplified(schema, schema, 0);
                    nested.remove("description");
                    nested
                }
                _ => Map::new(),
            };
            if let Some(ty) = spec.ty.json_name() {
                property.insert("type".into(), ty.into());
            }
            let description = spec.model_description(say_required);
            if !description.is_empty() {
                property.insert("description".into(), description.into());
            }
            properties.insert(spec.name.clone(), Value::Object(property));
        }
        serde_json::json!({"type": "object", "properties": properties})
    }

    /// The schema a constrained reply must match for these arguments. Unlike
    /// [`model_schema`](Self::model_schema) it states `required` and `enum`, so that a server's
    /// grammar enforces them; parameters with a default are not required.
    pub fn strict_schema(&self) -> Value {
        self.full_schema(false)
    }

    /// The JSON Schema an MCP client reads (`mm serve`): [`strict_schema`](Self::strict_schema)
    /// with each parameter's `description` and `default`. MCP clients drive large models and
    /// check arguments themselves; mm's own validator still coerces and answers what they send.
    pub fn mcp_schema(&self) -> Value {
        self.full_schema(true)
    }

    fn full_schema(&self, documented: bool) -> Value {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for spec in &self.params {
            let mut property = match spec.schema.as_ref().map(PropertySchema::value) {
                Some(Value::Object(schema)) => schema.clone(),
                _ => Map::new(),
            };
            if let Some(ty) = spec.ty.json_name() {
                property.insert("type".into(), ty.into());
            }
            if let Some(values) = &spec.enum_values {
                property.insert("enum".into(), Value::Array(values.clone()));
            }
            if documented {
                if let Some(description) = &spec.description {
                    property.insert("description".into(), description.clone().into());
                }
                if let Some(default) = &spec.default {
                    property.insert("default".into(), default.clone());
                }
            }
            if spec.required && spec.default.is_none() {
                required.push(Value::String(spec.name.clone()));
            }
            properties.insert(spec.name.clone(), Value::Object(property));
        }
        serde_json::json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": !self.deny_unknown,
        })
    }

    fn closest_name(&self, name: &str) -> Option<&str> {
        did_you_mean(name, self.params.iter().map(|p| p.name.as_str()))
    }
}

impl ParamSpec {
    /// A parameter with no enum, default or schema (the built-ins' parameters).
    pub fn new(name: &str, ty: ParamType, description: Option<&str>, required: bool) -> Self {
        Self {
            name: name.into(),
            ty,
            description: description.map(Into::into),
            required,
            enum_values: None,
            default: None,
            schema: None,
        }
    }

    /// Whether the model has to send this parameter: required and without a default.
    fn must_be_sent(&self) -> bool {
        self.required && self.default.is_none()
    }

    /// Coerces `value` to this parameter's type, then checks the enum and (MCP) the schema.
    /// `written` is the value's text as the model sent it. Returns the reasons, without the
    /// parameter's name, when refused.
    fn check(&self, value: &Value, written: Option<&str>) -> Result<Value, Vec<String>> {
        let value = match (self.ty, value, written) {
            // A number given for a string keeps the digits the model wrote (`1.50`, not `1.5`).
            (ParamType::String, Value::Number(_), Some(text)) => Value::String(text.trim().into()),
            (ParamType::String, _, _) => coerce(self.ty, value).map_err(|reason| vec![reason])?,
            (_, _, written) => {
                if let Some(reason) = written.and_then(inexact_number) {
                    return Err(vec![reason]);
                }
                coerce(self.ty, value).map_err(|reason| vec![reason])?
            }
        };
        if let Some(allowed) = &self.enum_values {
            if !allowed.iter().any(|a| same_value(self.ty, a, &value)) {
                return Err(vec![format!(
                    "{value} is not one of: {}",
                    list_values(allowed)
                )]);
            }
        }
        if let Some(schema) = &self.schema {
            schema.check(&value)?;
        }
        Ok(value)
    }

    /// The description the model reads: `<description> Required.` / `Default 3. Optional.` /
    /// `Optional.`, then the enum. Built-ins leave `Required.` out (`say_required` false).
    ///
    /// The default is said because a small model that does not know it guesses a value:
    /// measured on Qwen2.5-Coder-1.5B, the first requests of the held-out agents' single-turn
    /// actions (docs/eval-results.md), 13 of 30 calls right without it (`count: 5` for "the next
    /// trams", `e_bikes: true` for "share bikes"), 24 of 30 with it; the nine agents' English
    /// actions, with fewer defaults, 24 and 23 of 45.
    fn model_description(&self, say_required: bool) -> String {
        let mut text = self
            .description
            .as_deref()
            .map(sentence)
            .unwrap_or_default();
        // A parameter with a default is never one the model must send.
        if let Some(default) = &self.default {
            if !text.is_empty() {
                text.push(' ');
            }
            let _ = write!(text, "Default {}.", show_value(default));
        }
        let ending = match (self.must_be_sent(), say_required) {
            (true, true) => "Required.",
            (true, false) => "",
            (false, _) => "Optional.",
        };
        if !text.is_empty() && !ending.is_empty() {
            text.push(' ');
        }
        text.push_str(ending);
        if let Some(allowed) = &self.enum_values {
            let space = if text.is_empty() { "" } else { " " };
            let _ = write!(text, "{space}One of: {}.", list_values(allowed));
        }
        text
    }

    /// One line of the "expected form" list: `- name (type, required, one of: a, b): description`.
    fn form(&self) -> String {
        let mut facts = vec![self.ty.json_name().unwrap_or("any type").to_string()];
        facts.push(
            if self.must_be_sent() {
                "required"
            } else {
                "optional"
            }
            .into(),
        );
        if let Some(allowed) = &self.enum_values {
            facts.push(format!("one of: {}", list_values(allowed)));
        }
        if let Some(default) = &self.default {
            facts.push(format!("default {}", show_value(default)));
        }
        let mut line = format!("- {} ({})", self.name, facts.join(", "));
        if let Some(description) = self
            .description
            .as_deref()
            .map(str::trim)
            .filter(|d| !d.is_empty())
        {
            let _ = write!(line, ": {}", one_line(description));
        }
        line
    }
}

impl Invalid {
    /// The text answered to the model in place of the tool's result.
    ///
    /// ```text
    /// The call to release was not run: its arguments are invalid.
    /// - channel: missing (required)
    /// You sent: {"version":"1.4.2 1.4.2, channel beta"}
    /// Parameters:
    /// - version (string, required): The version, like 1.4.2.
    /// - channel (string, required, one of: stable, beta)
    /// Call release again with each parameter as its own field.
    /// ```
    pub fn render(&self, tool: &str, params: &Params) -> String {
        let mut text = format!("The call to {tool} was not run: its arguments are invalid.\n");
        for problem in &self.problems {
            let _ = writeln!(text, "- {problem}");
        }
        if self.raw.trim().is_empty() {
            text.push_str("You sent no arguments.\n");
        } else {
            let _ = writeln!(text, "You sent: {}", self.raw);
        }
        if params.params.is_empty() {
            text.push_str("This tool takes no parameters.\n");
        } else {
            text.push_str("Parameters:\n");
            for spec in &params.params {
                text.push_str(&spec.form());
                text.push('\n');
            }
        }
        let _ = write!(
            text,
            "Call {tool} again with each parameter as its own field."
        );
        text
    }

    /// The last line of the answer when `other` is the one tool whose enums take every value
    /// this call's enums refused: `"EUR" and "USD" are values that exchange takes: if that is
    /// what the user asked for, call exchange instead.` `None` when no enum refused a value.
    pub fn taken_by(&self, other: &str) -> Option<String> {
        let values: Vec<String> = self.off_enum.iter().map(Value::to_string).collect();
        let (last, init) = values.split_last()?;
        let (values, verb) = if init.is_empty() {
            (last.clone(), "is a value")
        } else {
            (format!("{} and {last}", init.join(", ")), "are values")
        };
        Some(format!(
            "{values} {verb} that {other} takes: if that is what the user asked for, call {other} instead."
        ))
    }
}

/// Arguments the validator accepted and coerced. Only [`Params::validate`] makes one, so a tool
/// (whose [`run`](crate::Tool::run) takes this) never sees arguments that were not checked.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(transparent)]
pub struct ValidArgs(Map<String, Value>);

impl std::ops::Deref for ValidArgs {
    type Target = Map<String, Value>;

    fn deref(&self) -> &Map<String, Value> {
        &self.0
    }
}

impl ValidArgs {
    pub fn into_map(self) -> Map<String, Value> {
        self.0
    }

    /// Arguments a test hands to a tool as they are, to reach what validation would refuse.
    #[cfg(test)]
    pub(crate) fn unchecked(map: Map<String, Value>) -> Self {
        Self(map)
    }
}

/// A call's arguments text, decoded once: the object (a JSON string holding an object is
/// unwrapped once) with its JSON text, or why it is not an object.
#[derive(Debug, Clone, PartialEq)]
pub struct Arguments {
    raw: String,
    decoded: Result<(Map<String, Value>, String), String>,
}

impl Arguments {
    pub fn decode(raw: &str) -> Self {
        Self {
            raw: raw.to_string(),
            decoded: decode_arguments(raw),
        }
    }

    /// The text exactly as the model sent it.
    pub fn raw(&self) -> &str {
        &self.raw
    }

    /// The arguments object, when the text holds one.
    pub fn object(&self) -> Option<&Map<String, Value>> {
        self.decoded.as_ref().ok().map(|(object, _)| object)
    }

    /// As a record shows them: the object, else the text's JSON value, else the text.
    pub fn value(&self) -> Value {
        match self.object() {
            Some(object) => Value::Object(object.clone()),
            None => {
                serde_json::from_str(&self.raw).unwrap_or_else(|_| Value::String(self.raw.clone()))
            }
        }
    }
}

/// Parses the raw arguments into an object, with the object's JSON text (`raw`, or the string it
/// was wrapped in); the error is the problem line.
fn decode_arguments(raw: &str) -> Result<(Map<String, Value>, String), String> {
    if raw.trim().is_empty() {
        return Ok((Map::new(), String::new()));
    }
    let value: Value =
        serde_json::from_str(raw).map_err(|e| format!("the arguments are not valid JSON ({e})"))?;
    // Some models send the arguments object as a JSON string: decode it once, no more.
    let (value, text) = match value {
        Value::String(inner) => match serde_json::from_str::<Value>(&inner) {
            Ok(Value::Object(object)) => (Value::Object(object), inner),
            _ => (Value::String(inner), String::new()),
        },
        other => (other, raw.to_string()),
    };
    match value {
        Value::Object(object) => Ok((object, text)),
        Value::Null => Ok((Map::new(), String::new())),
        other => Err(format!(
            "the arguments must be a JSON object, not {}",
            kind(&other)
        )),
    }
}

/// A value as the model sent it, for a refusal: strings quoted, other values as JSON.
fn show_sent(value: &Value) -> String {
    match value {
        Value::Number(n)
            if n.as_f64()
                .is_some_and(|f| f.fract() != 0.0 || f.abs() >= 1e16) =>
        {
            render_number(n)
        }
        Value::Array(_) | Value::Object(_) => kind(value).to_string(),
        other => other.to_string(),
    }
}

/// A value for a list the model reads: strings bare unless that would be ambiguous.
fn show_value(value: &Value) -> String {
    match value {
        Value::Number(n) => render_number(n),
        Value::String(s)
            if !s.is_empty() && !s.contains(',') && s.trim() == s && !s.contains('\n') =>
        {
            s.clone()
        }
        other => other.to_string(),
    }
}

fn list_values(values: &[Value]) -> String {
    values.iter().map(show_value).collect::<Vec<_>>().join(", ")
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn article(ty: ParamType) -> &'static str {
    match ty {
        ParamType::String => "a string",
        ParamType::Integer => "an integer",
        ParamType::Number => "a number",
        ParamType::Boolean => "a boolean",
        ParamType::Array => "an array",
        ParamType::Object => "an object",
        ParamType::Any => "a value",
    }
}

/// `text` trimmed, on one line, ending with a full stop (or `!`/`?`).
fn sentence(text: &str) -> String {
    let mut text = one_line(text.trim());
    if !text.is_empty() && !text.ends_with(['.', '!', '?']) {
        text.push('.');
    }
    text
}

#[cfg(test)]
mod tests;
