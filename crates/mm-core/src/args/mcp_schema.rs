//! MCP tools' parameters: an `inputSchema` read into [`Params`], each property's full schema
//! compiled once ([`PropertySchema`]) for the structural checks mm's own rules do not cover.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::{ParamSpec, ParamType, Params, list_values, sentence};

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
    pub(super) fn check(&self, value: &Value) -> Result<(), Vec<String>> {
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

impl Params {
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
pub(super) fn simplified(schema: &Value, root: &Value, depth: u32) -> Map<String, Value> {
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
