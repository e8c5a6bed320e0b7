//! JSON Schema generation (schemars, 2020-12 dialect) and validation (jsonschema) with
//! field-naming messages worded like zod's, so a model reads the same text from picomcp in Rust
//! and in TypeScript: `limit: Too big: expected number to be <=50`.

use std::fmt::Write as _;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{ValidationError, Validator};
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// The JSON Schema of `T` in the 2020-12 dialect, with the root `title` removed (the model pays
/// for every token and the Rust type name tells it nothing).
pub fn schema_for<T: JsonSchema>() -> Value {
    let schema = SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>();
    let mut value = schema.to_value();
    if let Value::Object(map) = &mut value {
        map.remove("title");
    }
    value
}

/// Whether a schema describes objects (`"type": "object"`), as MCP requires of `inputSchema` and
/// `outputSchema`.
pub(crate) fn is_object_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

/// A compiled validator; compiled once at registration and shared by every call.
pub(crate) struct CompiledSchema {
    validator: Validator,
}

impl CompiledSchema {
    /// Compiles `schema` for the 2020-12 dialect. The error is the compiler's own message.
    pub(crate) fn compile(schema: &Value) -> Result<Self, String> {
        jsonschema::draft202012::new(schema)
            .map(|validator| Self { validator })
            .map_err(|e| e.to_string())
    }

    /// Validates `instance`; on failure, one line per problem: `path: message`.
    pub(crate) fn validate(&self, instance: &Value) -> Result<(), Vec<String>> {
        if self.validator.is_valid(instance) {
            return Ok(());
        }
        let mut lines = Vec::new();
        for error in self.validator.iter_errors(instance) {
            describe(&error, &mut lines);
        }
        if lines.is_empty() {
            lines.push("Invalid input".to_string());
        }
        Err(lines)
    }
}

/// Turns a JSON pointer (`/address/city`, `/items/0`) into a dotted path (`address.city`,
/// `items.0`).
fn dotted(pointer: &str) -> String {
    pointer
        .split('/')
        .skip(1)
        .map(|seg| seg.replace("~1", "/").replace("~0", "~"))
        .collect::<Vec<_>>()
        .join(".")
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn line(path: &str, message: &str) -> String {
    if path.is_empty() {
        message.to_string()
    } else {
        format!("{path}: {message}")
    }
}

/// zod's names for JSON value kinds.
fn received(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// zod's name for a JSON Schema type (`integer` is `int`).
fn expected_name(name: &str) -> &str {
    match name {
        "integer" => "int",
        other => other,
    }
}

fn limit_text(limit: &Value) -> String {
    match limit {
        Value::Number(n) => n.to_string(),
        other => other.to_string(),
    }
}

fn options_text(options: &Value) -> String {
    match options {
        Value::Array(items) => items
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join("|"),
        other => other.to_string(),
    }
}

fn describe(error: &ValidationError<'_>, lines: &mut Vec<String>) {
    let path = dotted(error.instance_path().as_str());
    let instance = error.instance();
    let got = received(instance);
    let sized = match &**instance {
        Value::String(_) => Some(("string", "characters")),
        Value::Array(_) => Some(("array", "items")),
        Value::Object(_) => Some(("object", "properties")),
        _ => None,
    };
    let message = match error.kind() {
        ValidationErrorKind::Required { property } => {
            let key = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_string);
            lines.push(line(&join(&path, &key), "Required"));
            return;
        }
        ValidationErrorKind::AdditionalProperties { unexpected }
        | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
            for key in unexpected {
                lines.push(line(&join(&path, key), "Unrecognized key"));
            }
            return;
        }
        ValidationErrorKind::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(t) => expected_name(&t.to_string()).to_string(),
                TypeKind::Multiple(set) => set
                    .iter()
                    .map(|t| expected_name(&t.to_string()).to_string())
                    .collect::<Vec<_>>()
                    .join(" | "),
            };
            format!("Invalid input: expected {expected}, received {got}")
        }
        ValidationErrorKind::Maximum { limit } => {
            format!("Too big: expected number to be <={}", limit_text(limit))
        }
        ValidationErrorKind::ExclusiveMaximum { limit } => {
            format!("Too big: expected number to be <{}", limit_text(limit))
        }
        ValidationErrorKind::Minimum { limit } => {
            format!("Too small: expected number to be >={}", limit_text(limit))
        }
        ValidationErrorKind::ExclusiveMinimum { limit } => {
            format!("Too small: expected number to be >{}", limit_text(limit))
        }
        ValidationErrorKind::MaxLength { limit }
        | ValidationErrorKind::MaxItems { limit }
        | ValidationErrorKind::MaxProperties { limit } => {
            let (kind, unit) = sized.unwrap_or(("value", "items"));
            format!("Too big: expected {kind} to have <={limit} {unit}")
        }
        ValidationErrorKind::MinLength { limit }
        | ValidationErrorKind::MinItems { limit }
        | ValidationErrorKind::MinProperties { limit } => {
            let (kind, unit) = sized.unwrap_or(("value", "items"));
            format!("Too small: expected {kind} to have >={limit} {unit}")
        }
        ValidationErrorKind::Enum { options } => {
            format!("Invalid option: expected one of {}", options_text(options))
        }
        ValidationErrorKind::Constant { expected_value } => {
            format!("Invalid input: expected {expected_value}")
        }
        ValidationErrorKind::Pattern { pattern } => {
            format!("Invalid string: must match pattern /{pattern}/")
        }
        ValidationErrorKind::MultipleOf { multiple_of } => {
            format!("Invalid number: must be a multiple of {multiple_of}")
        }
        ValidationErrorKind::Format { format } => format!("Invalid {format}"),
        ValidationErrorKind::UniqueItems => "Invalid input: expected unique items".to_string(),
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
            // `Option<T>` becomes `anyOf: [T, null]`: when only one branch fails for a reason
            // other than the value's type, its errors are the useful ones.
            let here = error.instance_path().as_str();
            let wrong_type_only = |branch: &Vec<ValidationError<'static>>| {
                branch.iter().all(|e| {
                    matches!(e.kind(), ValidationErrorKind::Type { .. })
                        && e.instance_path().as_str() == here
                })
            };
            let relevant: Vec<_> = context.iter().filter(|b| !wrong_type_only(b)).collect();
            if let [branch] = relevant.as_slice() {
                for e in branch.iter() {
                    describe(e, lines);
                }
                return;
            }
            "Invalid input".to_string()
        }
        _ => {
            let mut s = String::new();
            let _ = write!(s, "{error}");
            s
        }
    };
    lines.push(line(&path, &message));
}

/// Formats the tool-error text for invalid arguments.
pub(crate) fn invalid_arguments(tool: &str, lines: &[String]) -> String {
    format!(
        "Invalid arguments for tool \"{tool}\":\n{}",
        lines.join("\n")
    )
}

/// Formats the tool-error text for an output that does not match the declared schema.
pub(crate) fn invalid_output(tool: &str, lines: &[String]) -> String {
    format!("Invalid output from tool \"{tool}\":\n{}", lines.join("\n"))
}

/// An empty object schema, for tools without arguments.
pub(crate) fn empty_object_schema() -> Value {
    let mut map = Map::new();
    map.insert("type".into(), Value::String("object".into()));
    map.insert("properties".into(), Value::Object(Map::new()));
    Value::Object(map)
}

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;
