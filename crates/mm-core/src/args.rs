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
use serde_json::{Map, Number, Value};

use crate::text::{one_line, similarity};

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

/// An MCP property's JSON Schema, compiled once when the tool is listed.
#[derive(Clone)]
pub struct PropertySchema {
    value: Value,
    /// The compiled check, or why the schema cannot be used (its values are then not checked
    /// here: the server's tool judges them, and mm says so at start-up).
    validator: Result<std::sync::Arc<jsonschema::Validator>, String>,
}

impl PropertySchema {
    pub fn new(value: Value) -> Self {
        let validator = jsonschema::validator_for(&value)
            .map(std::sync::Arc::new)
            .map_err(|e| e.to_string());
        Self { value, validator }
    }

    pub fn value(&self) -> &Value {
        &self.value
    }

    /// Why the schema cannot be used, when it cannot.
    pub fn broken(&self) -> Option<&str> {
        self.validator.as_ref().err().map(String::as_str)
    }

    /// The structural check of a value (arrays, objects, ranges, patterns…).
    fn check(&self, value: &Value) -> Result<(), Vec<String>> {
        let Ok(validator) = &self.validator else {
            return Ok(());
        };
        let reasons: Vec<String> = validator
            .iter_errors(value)
            .map(|e| match e.instance_path().as_str() {
                "" => e.to_string(),
                path => format!("at {path}: {e}"),
            })
            .collect();
        if reasons.is_empty() {
            Ok(())
        } else {
            Err(reasons)
        }
    }
}

impl std::fmt::Debug for PropertySchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.value.fmt(f)
    }
}

impl PartialEq for PropertySchema {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
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
}

impl Params {
    /// Validates and coerces `raw` (the model's arguments text). See SPEC §2 "Coercion".
    ///
    /// Empty text (or `null`) is an empty object; a JSON string holding a JSON object is decoded
    /// once. Defaults are applied to omitted parameters; `null` for an optional parameter counts
    /// as omitted. Names not in the list are refused when `deny_unknown`, passed through as they
    /// are otherwise.
    pub fn validate(&self, raw: &str) -> Result<Map<String, Value>, Invalid> {
        let invalid = |problem: String| Invalid {
            problems: vec![problem],
            raw: raw.to_string(),
        };
        let (sent, text) = decode_arguments(raw).map_err(invalid)?;
        // Each value's text as the model wrote it: numbers are checked against it (a float that
        // would lose digits is refused, a number for a string parameter keeps its spelling).
        let written: HashMap<String, &RawValue> = serde_json::from_str(&text).unwrap_or_default();

        let mut problems = Vec::new();
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
            Ok(out)
        } else {
            Err(Invalid {
                problems,
                raw: raw.to_string(),
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

    /// [`model_schema`](Self::model_schema) for the built-in tools, whose every byte is paid by
    /// every request: a parameter is required unless its description says `Optional.`, so a
    /// required one carries no `Required.` (and no description at all when it has none).
    pub fn builtin_schema(&self) -> Value {
        self.schema_for_model(false)
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

    /// Reads an MCP tool's `inputSchema`: top-level properties with `type`, `description`,
    /// `enum`, `default`, the `required` list and `additionalProperties: false`. Each property's
    /// full schema is kept for the structural check (with the root's `$defs`/`definitions`, so
    /// local `$ref`s still resolve).
    pub fn from_json_schema(schema: &Value) -> Params {
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let deny_unknown = schema.get("additionalProperties") == Some(&Value::Bool(false));
        let mut params = Vec::new();
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            for (name, property) in properties {
                // A `$ref` (how generators write an enum or a nested model) is read through.
                let target = resolved(property, schema);
                let field = |key: &str| property.get(key).or_else(|| target.get(key));
                params.push(ParamSpec {
                    name: name.clone(),
                    ty: mcp_type(target),
                    description: field("description")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    required: required.contains(&name.as_str()),
                    enum_values: field("enum").and_then(Value::as_array).cloned(),
                    default: field("default").cloned(),
                    schema: Some(PropertySchema::new(with_definitions(property, schema))),
                });
            }
        }
        Params {
            params,
            deny_unknown,
        }
    }

    /// The parameters whose MCP schema cannot be used, with why: `(name, reason)`.
    pub fn broken_schemas(&self) -> Vec<(&str, &str)> {
        self.params
            .iter()
            .filter_map(|p| Some((p.name.as_str(), p.schema.as_ref()?.broken()?)))
            .collect()
    }

    fn closest_name(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .map(|p| (p.name.as_str(), similarity(name, &p.name)))
            .filter(|(_, score)| *score >= 0.7)
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(name, _)| name)
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

    /// The description the model reads: `<description> Required.` / `Optional.`, then the enum.
    /// Built-ins leave `Required.` out (`say_required` false).
    fn model_description(&self, say_required: bool) -> String {
        let mut text = self
            .description
            .as_deref()
            .map(sentence)
            .unwrap_or_default();
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

/// Applies the coercion table of SPEC §2. The error is the reason, without the parameter name.
fn coerce(ty: ParamType, value: &Value) -> Result<Value, String> {
    let refuse = |what: &str| Err(format!("{} is not {what}", show_sent(value)));
    match (ty, value) {
        (ParamType::Any, v) => Ok(v.clone()),
        (ParamType::String, Value::String(_)) => Ok(value.clone()),
        (ParamType::String, Value::Number(n)) => Ok(Value::String(n.to_string())),
        (ParamType::String, Value::Bool(b)) => Ok(Value::String(b.to_string())),
        (ParamType::Integer, Value::Number(n)) => {
            integer_of(n).map_err(|why| format!("{} is not an integer{why}", show_sent(value)))
        }
        (ParamType::Integer, Value::String(s)) => {
            let s = s.trim();
            if let Ok(i) = s.parse::<i64>() {
                Ok(i.into())
            } else if is_integer_text(s) {
                Err(format!(
                    "{} is not an integer{OUT_OF_RANGE}",
                    show_sent(value)
                ))
            } else {
                refuse("an integer")
            }
        }
        (ParamType::Number, Value::Number(_)) => Ok(value.clone()),
        (ParamType::Number, Value::String(s)) => match serde_json::from_str::<Value>(s.trim()) {
            Ok(n @ Value::Number(_)) => match inexact_number(s) {
                Some(reason) => Err(reason),
                None => Ok(n),
            },
            _ => refuse("a number"),
        },
        (ParamType::Boolean, Value::Bool(_)) => Ok(value.clone()),
        (ParamType::Boolean, Value::String(s)) if s.trim().eq_ignore_ascii_case("true") => {
            Ok(true.into())
        }
        (ParamType::Boolean, Value::String(s)) if s.trim().eq_ignore_ascii_case("false") => {
            Ok(false.into())
        }
        (ParamType::Boolean, Value::String(_)) => refuse("a boolean (true or false)"),
        (ParamType::Array, Value::Array(_)) | (ParamType::Object, Value::Object(_)) => {
            Ok(value.clone())
        }
        (ty, v) => Err(format!("expected {}, got {}", article(ty), kind(v))),
    }
}

/// Said when an integer does not fit the 64-bit range every program can read.
const OUT_OF_RANGE: &str = " in the 64-bit range (-9223372036854775808 to 9223372036854775807)";

/// An integer in the i64 range, or an integral float turned into one (`3.0` → `3`). The error
/// completes "X is not an integer".
fn integer_of(n: &Number) -> Result<Value, &'static str> {
    if n.is_i64() {
        return Ok(Value::Number(n.clone()));
    }
    if n.is_u64() {
        return Err(OUT_OF_RANGE);
    }
    let f = n.as_f64().ok_or("")?;
    if f.fract() != 0.0 || !f.is_finite() {
        return Err("");
    }
    // The bounds are ±2^63, exact in f64: every integral value inside converts without loss.
    if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f) {
        #[expect(
            clippy::cast_possible_truncation,
            reason = "integral and in range, checked above"
        )]
        Ok(Value::from(f as i64))
    } else {
        Err(OUT_OF_RANGE)
    }
}

/// `-?[0-9]+`
fn is_integer_text(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// The reason to refuse a value whose text holds a number that a 64-bit float cannot hold as
/// written (`9007199254740993.0`, `0.10000000000000000001`): passing it on would silently
/// change it. Integers that serde keeps exact (within i64/u64) are fine. Scans nested values
/// too (MCP arrays and objects); text inside strings is skipped.
fn inexact_number(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        if b == b'"' {
            in_string = true;
            i += 1;
            continue;
        }
        if b == b'-' || b.is_ascii_digit() {
            let start = i;
            while i < bytes.len()
                && matches!(bytes[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
            {
                i += 1;
            }
            let token = &text[start..i];
            if let Some(became) = lossy(token) {
                return Some(format!(
                    "{token} cannot be passed exactly: as a 64-bit number it becomes {became}"
                ));
            }
            continue;
        }
        i += 1;
    }
    None
}

/// What `token` becomes when it cannot be held exactly, `None` when it can.
fn lossy(token: &str) -> Option<String> {
    if token.parse::<i64>().is_ok() || token.parse::<u64>().is_ok() {
        return None;
    }
    let f: f64 = token.parse().ok()?;
    if !f.is_finite() {
        return Some(f.to_string());
    }
    let exact = decimal(token)?;
    // `{:e}` is the shortest text that reads back as the same float.
    let held = decimal(&format!("{f:e}"))?;
    if exact == held {
        return None;
    }
    Some(Number::from_f64(f).map_or_else(|| f.to_string(), |n| render_number(&n)))
}

/// A decimal number as (negative, significant digits, exponent): value = 0.DIGITS × 10^exp.
/// Zero is `(false, "", 0)` whatever its sign or spelling.
fn decimal(text: &str) -> Option<(bool, String, i64)> {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(at) => (&rest[..at], rest[at + 1..].parse::<i64>().ok()?),
        None => (rest, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all: String = format!("{int}{frac}");
    let leading = all.bytes().take_while(|&b| b == b'0').count();
    let digits = all[leading..].trim_end_matches('0');
    if digits.is_empty() {
        return Some((false, String::new(), 0));
    }
    let int_len = i64::try_from(int.len()).ok()?;
    let leading = i64::try_from(leading).ok()?;
    Some((negative, digits.to_string(), exponent + int_len - leading))
}

/// A value as program text (SPEC §2): strings as they are, integers in decimal, numbers in
/// their shortest JSON form (`3`, not `3.0`; `0`, not `-0.0`), booleans as `true`/`false`.
pub fn render_value(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => render_number(n),
        other => other.to_string(),
    }
}

fn render_number(n: &Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    match n.as_f64() {
        // Integral floats below 10^16 read as integers (`-0.0` too: it becomes `0`); past that
        // the exponent form is shorter.
        #[expect(
            clippy::cast_possible_truncation,
            reason = "integral and below 10^16, exact in i64"
        )]
        Some(f) if f.fract() == 0.0 && f.abs() < 1e16 => (f as i64).to_string(),
        // serde writes `1e+300`; `1e300` is the same JSON, shorter.
        _ => n.to_string().replace("e+", "e"),
    }
}

/// Whether an allowed enum value equals the coerced value (numbers compared by value, so an
/// enum `[1, 2]` accepts `"2"` and `2.0`).
fn same_value(ty: ParamType, allowed: &Value, value: &Value) -> bool {
    match (coerce(ty, allowed), value) {
        (Ok(Value::Number(a)), Value::Number(b)) => {
            a == *b || matches!((a.as_f64(), b.as_f64()), (Some(x), Some(y)) if x == y)
        }
        (Ok(a), b) => a == *b,
        (Err(_), b) => allowed == b,
    }
}

/// The MCP property's type: one JSON Schema type (`null` aside: `["string","null"]` and
/// `anyOf: [{type: string}, {type: null}]` are strings), else `Any` (the schema check does the
/// work).
fn mcp_type(property: &Value) -> ParamType {
    single_type(property)
        .and_then(ParamType::from_json_name)
        .unwrap_or(ParamType::Any)
}

/// The one non-null type a schema allows, if it names exactly one.
fn single_type(schema: &Value) -> Option<&str> {
    fn one(types: Vec<&str>) -> Option<&str> {
        let mut types: Vec<&str> = types.into_iter().filter(|t| *t != "null").collect();
        types.dedup();
        match types.as_slice() {
            [only] => Some(*only),
            _ => None,
        }
    }
    match schema.get("type") {
        Some(Value::String(ty)) => Some(ty.as_str()),
        Some(Value::Array(types)) => one(types.iter().filter_map(Value::as_str).collect()),
        _ => ["anyOf", "oneOf"].iter().find_map(|key| {
            let branches = schema.get(*key)?.as_array()?;
            one(branches
                .iter()
                .map(|b| b.get("type").and_then(Value::as_str).unwrap_or("?"))
                .collect())
            .filter(|t| *t != "?")
        }),
    }
}

/// Follows local `$ref`s (`#/$defs/…`, `#/definitions/…`) from `schema` into `root`.
fn resolved<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    let mut current = schema;
    for _ in 0..8 {
        let Some(target) = current
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix('#'))
            .and_then(|pointer| root.pointer(pointer))
        else {
            break;
        };
        current = target;
    }
    current
}

/// A nested MCP schema as the model reads it: types, descriptions, `items` and `properties`
/// kept (`$ref`s read through), an `enum` worded into the description as for a declared
/// parameter; titles, formats, `$defs`, `required` and `additionalProperties` left out: small
/// models pay for every byte, and the validator still checks the full schema.
fn simplified(schema: &Value, root: &Value, depth: u32) -> Map<String, Value> {
    let mut out = Map::new();
    if depth > 8 {
        return out;
    }
    let schema = resolved(schema, root);
    if let Some(ty) = single_type(schema) {
        out.insert("type".into(), ty.into());
    }
    let mut description = schema
        .get("description")
        .and_then(Value::as_str)
        .map(sentence)
        .unwrap_or_default();
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let space = if description.is_empty() { "" } else { " " };
        let _ = write!(description, "{space}One of: {}.", list_values(values));
    }
    if !description.is_empty() {
        out.insert("description".into(), description.into());
    }
    if let Some(items) = schema.get("items").filter(|i| i.is_object()) {
        out.insert(
            "items".into(),
            Value::Object(simplified(items, root, depth + 1)),
        );
    }
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        let nested = properties
            .iter()
            .map(|(name, p)| (name.clone(), Value::Object(simplified(p, root, depth + 1))))
            .collect();
        out.insert("properties".into(), Value::Object(nested));
    }
    out
}

/// The property schema, carrying the root's definitions so that `#/$defs/…` still resolves.
fn with_definitions(property: &Value, root: &Value) -> Value {
    let mut property = property.clone();
    if let Value::Object(map) = &mut property {
        for key in ["$defs", "definitions"] {
            match root.get(key) {
                Some(defs) if !map.contains_key(key) => {
                    map.insert(key.into(), defs.clone());
                }
                _ => {}
            }
        }
    }
    property
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
#[path = "args_tests.rs"]
mod tests;
