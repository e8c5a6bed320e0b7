//! Tools: validated names, registration errors, configuration and annotations, and the
//! registered entry (schemas compiled once, the `tools/list` descriptor built once).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::context::Ctx;
use crate::schema::CompiledSchema;

use crate::result::{CallToolResult, ToolError};

/// A boxed, sendable future.
pub(crate) type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// The type-erased tool handler: raw arguments in, result out.
pub(crate) type ToolHandler =
    Arc<dyn Fn(Value, Ctx) -> BoxFuture<Result<CallToolResult, ToolError>> + Send + Sync>;

/// A validated tool (or prompt) name: 1–128 of ASCII letters, digits, `_`, `.`, `-`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ToolName(String);

impl ToolName {
    /// Validates `name`.
    pub fn new(name: impl Into<String>) -> Result<Self, RegisterError> {
        let name = name.into();
        let ok = (1..=128).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
        if ok {
            Ok(Self(name))
        } else {
            Err(RegisterError::InvalidName(name))
        }
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why a tool, resource or prompt could not be registered. Registration fails at start-up, never
/// when a model calls.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegisterError {
    /// The name is empty, longer than 128 or has a character other than letters, digits, `_`,
    /// `.`, `-`.
    #[error("invalid name {0:?}: use 1-128 of letters, digits, '_', '.', '-'")]
    InvalidName(String),
    /// The name is already registered.
    #[error("{kind} {name:?} is already registered")]
    Duplicate {
        /// `tool`, `prompt`, `resource` or `resource template`.
        kind: &'static str,
        /// The name or URI.
        name: String,
    },
    /// The schema does not describe an object, or does not compile.
    #[error("invalid {which} schema for {name:?}: {reason}")]
    InvalidSchema {
        /// `input` or `output`.
        which: &'static str,
        /// The tool name.
        name: String,
        /// What is wrong.
        reason: String,
    },
}

/// Hints for clients about a tool's behaviour. Clients may use them to skip a confirmation:
/// annotate honestly.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// A display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Calling it twice with the same arguments has no further effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool talks to an open world (the web, third-party services).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

impl ToolAnnotations {
    fn is_empty(&self) -> bool {
        *self == ToolAnnotations::default()
    }
}

/// How a tool presents itself: title, description, annotations.
#[derive(Debug, Clone, Default)]
pub struct ToolConfig {
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) annotations: ToolAnnotations,
    pub(crate) input_schema: Option<Value>,
    pub(crate) output_schema: Option<Value>,
    pub(crate) meta: Option<Value>,
    pub(crate) skip_input_validation: bool,
}

impl ToolConfig {
    /// An empty configuration.
    pub fn new() -> Self {
        Self::default()
    }

    /// The display title.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// What the tool does and when to use it; the model reads this.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets `readOnlyHint`.
    #[must_use]
    pub fn read_only_hint(mut self, v: bool) -> Self {
        self.annotations.read_only_hint = Some(v);
        self
    }

    /// Sets `destructiveHint`.
    #[must_use]
    pub fn destructive_hint(mut self, v: bool) -> Self {
        self.annotations.destructive_hint = Some(v);
        self
    }

    /// Sets `idempotentHint`.
    #[must_use]
    pub fn idempotent_hint(mut self, v: bool) -> Self {
        self.annotations.idempotent_hint = Some(v);
        self
    }

    /// Sets `openWorldHint`.
    #[must_use]
    pub fn open_world_hint(mut self, v: bool) -> Self {
        self.annotations.open_world_hint = Some(v);
        self
    }

    /// Replaces all annotations at once.
    #[must_use]
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// The input schema of a tool registered with [`crate::Server::tool_dynamic`] (ignored by
    /// typed tools, whose schema comes from their input type).
    #[must_use]
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.input_schema = Some(schema);
        self
    }

    /// An output schema for a dynamic tool: results must then carry matching
    /// `structuredContent`.
    #[must_use]
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Hands the arguments to the handler without validating them against the input schema (the
    /// schema is still announced). For servers that validate and coerce themselves, such as an
    /// agent serving its declared tools; typed tools then see serde's error instead.
    #[must_use]
    pub fn skip_input_validation(mut self) -> Self {
        self.skip_input_validation = true;
        self
    }

    /// `_meta` sent with the tool in `tools/list`.
    #[must_use]
    pub fn meta(mut self, meta: Value) -> Self {
        self.meta = Some(meta);
        self
    }
}

/// A registered tool, ready to be called.
pub(crate) struct ToolEntry {
    pub(crate) name: ToolName,
    /// The `tools/list` entry, built once.
    pub(crate) descriptor: Value,
    /// `None` when the config asked to skip input validation.
    pub(crate) input: Option<CompiledSchema>,
    /// Top-level `default`s of the input schema, filled in for missing arguments once they are
    /// validated (typed tools get the same values from serde; dynamic tools only from here).
    pub(crate) defaults: Vec<(String, Value)>,
    pub(crate) output: Option<CompiledSchema>,
    pub(crate) handler: ToolHandler,
    /// Top-level arguments the input schema mirrors into an HTTP header (`x-mcp-header`,
    /// MCP 2026-07-28): (argument, header name after `Mcp-Param-`).
    pub(crate) param_headers: Vec<(String, String)>,
}

impl ToolEntry {
    /// Fills in the schema's defaults for arguments the caller left out.
    pub(crate) fn apply_defaults(&self, args: &mut Value) {
        if let Value::Object(map) = args {
            for (key, value) in &self.defaults {
                map.entry(key.as_str()).or_insert_with(|| value.clone());
            }
        }
    }

    pub(crate) fn new(
        name: ToolName,
        config: ToolConfig,
        input_schema: Value,
        output_schema: Option<Value>,
        handler: ToolHandler,
    ) -> Result<Self, RegisterError> {
        let invalid = |which: &'static str, reason: String| RegisterError::InvalidSchema {
            which,
            name: name.to_string(),
            reason,
        };
        if !crate::schema::is_object_schema(&input_schema) {
            return Err(invalid(
                "input",
                "the root must be {\"type\": \"object\"}".into(),
            ));
        }
        let input = CompiledSchema::compile(&input_schema).map_err(|r| invalid("input", r))?;
        let input = (!config.skip_input_validation).then_some(input);
        let defaults = input_schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|props| {
                props
                    .iter()
                    .filter_map(|(k, p)| Some((k.clone(), p.get("default")?.clone())))
                    .collect()
            })
            .unwrap_or_default();
        let param_headers = input_schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|props| {
                props
                    .iter()
                    .filter_map(|(k, p)| {
                        let header = p.get("x-mcp-header")?.as_str()?;
                        Some((k.clone(), header.to_string()))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let output = match &output_schema {
            None => None,
            Some(schema) => {
                if !crate::schema::is_object_schema(schema) {
                    return Err(invalid(
                        "output",
                        "the root must be {\"type\": \"object\"}".into(),
                    ));
                }
                Some(CompiledSchema::compile(schema).map_err(|r| invalid("output", r))?)
            }
        };
        let mut d = Map::new();
        d.insert("name".into(), Value::String(name.to_string()));
        if let Some(t) = &config.title {
            d.insert("title".into(), Value::String(t.clone()));
        }
        if let Some(t) = &config.description {
            d.insert("description".into(), Value::String(t.clone()));
        }
        d.insert("inputSchema".into(), input_schema);
        if let Some(s) = output_schema {
            d.insert("outputSchema".into(), s);
        }
        if !config.annotations.is_empty() {
            let a = serde_json::to_value(&config.annotations)
                .map_err(|e| invalid("input", e.to_string()))?;
            d.insert("annotations".into(), a);
        }
        if let Some(m) = config.meta {
            d.insert("_meta".into(), m);
        }
        Ok(Self {
            name,
            descriptor: Value::Object(d),
            input,
            defaults,
            output,
            handler,
            param_headers,
        })
    }
}

#[cfg(test)]
#[path = "tool_tests.rs"]
mod tests;
