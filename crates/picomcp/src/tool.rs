//! Tools: validated names, configuration, results and the conversion of handler return values.

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::content::{Content, ResourceLink, text};
use crate::context::Ctx;
use crate::jsonrpc::ProtocolError;
use crate::schema::CompiledSchema;

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
    pub(crate) input: CompiledSchema,
    pub(crate) output: Option<CompiledSchema>,
    pub(crate) handler: ToolHandler,
}

impl ToolEntry {
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
            output,
            handler,
        })
    }
}

/// The result of a tool call, as sent to the client.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// The content blocks.
    pub content: Vec<Content>,
    /// Structured output (a JSON object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether this is a tool error the model should read.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// Extra metadata.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

impl CallToolResult {
    /// A successful result with these blocks.
    pub fn new(content: Vec<Content>) -> Self {
        Self {
            content,
            ..Self::default()
        }
    }

    /// A tool error whose text the model reads.
    pub fn error(message: impl Into<String>) -> Self {
        Self {
            content: vec![text(message)],
            is_error: true,
            ..Self::default()
        }
    }

    /// Sets `structuredContent`.
    #[must_use]
    pub fn with_structured(mut self, value: Value) -> Self {
        self.structured_content = Some(value);
        self
    }
}

/// A handler's failure. By default a *tool error*: its text goes to the model with
/// `isError: true`. Built from a [`ProtocolError`] it becomes a JSON-RPC error instead.
#[derive(Debug)]
pub struct ToolError(ErrorKind);

#[derive(Debug)]
enum ErrorKind {
    Tool(String),
    Protocol(ProtocolError),
}

impl ToolError {
    /// A tool error with this message. Write it for the model: what went wrong, what to do next.
    pub fn new(message: impl Into<String>) -> Self {
        Self(ErrorKind::Tool(message.into()))
    }

    /// A protocol error (JSON-RPC `code` and `message`).
    pub fn protocol(code: i64, message: impl Into<String>) -> Self {
        Self(ErrorKind::Protocol(ProtocolError::new(code, message)))
    }

    /// A tool error from anything printable, e.g. `.map_err(ToolError::from_display)`.
    pub fn from_display(error: impl fmt::Display) -> Self {
        Self::new(error.to_string())
    }

    /// The message.
    pub fn message(&self) -> &str {
        match &self.0 {
            ErrorKind::Tool(m) => m,
            ErrorKind::Protocol(p) => &p.message,
        }
    }

    /// The protocol error, when this is one.
    pub fn as_protocol(&self) -> Option<&ProtocolError> {
        match &self.0 {
            ErrorKind::Protocol(p) => Some(p),
            ErrorKind::Tool(_) => None,
        }
    }

    pub(crate) fn into_outcome(self) -> Result<CallToolResult, ProtocolError> {
        match self.0 {
            ErrorKind::Tool(m) => Ok(CallToolResult::error(m)),
            ErrorKind::Protocol(p) => Err(p),
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for ToolError {}

impl From<String> for ToolError {
    fn from(m: String) -> Self {
        Self::new(m)
    }
}

impl From<&str> for ToolError {
    fn from(m: &str) -> Self {
        Self::new(m)
    }
}

impl From<ProtocolError> for ToolError {
    fn from(p: ProtocolError) -> Self {
        Self(ErrorKind::Protocol(p))
    }
}

impl From<std::io::Error> for ToolError {
    fn from(e: std::io::Error) -> Self {
        Self::from_display(e)
    }
}

impl From<serde_json::Error> for ToolError {
    fn from(e: serde_json::Error) -> Self {
        Self::from_display(e)
    }
}

impl From<std::convert::Infallible> for ToolError {
    fn from(e: std::convert::Infallible) -> Self {
        match e {}
    }
}

/// Wraps a serializable value returned by a handler: an object becomes its JSON as text *and*
/// `structuredContent`; anything else (array, number, ...) becomes JSON text.
#[derive(Debug, Clone)]
pub struct Json<T>(pub T);

/// Converts what a handler returns into a [`CallToolResult`].
///
/// | handler returns | client receives |
/// | --- | --- |
/// | `String`, `&str` | one text block |
/// | [`Json<T>`], `serde_json::Value` | JSON text; objects also as `structuredContent` |
/// | integers, floats, `bool` | JSON text |
/// | [`Content`], `Vec<Content>`, [`ResourceLink`] | the blocks as they are |
/// | [`CallToolResult`] | as it is |
/// | `()` | an empty result |
pub trait IntoToolResult {
    /// Performs the conversion.
    fn into_tool_result(self) -> Result<CallToolResult, ToolError>;
}

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(self)
    }
}

impl IntoToolResult for () {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::default())
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::new(vec![text(self)]))
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::new(vec![text(self)]))
    }
}

impl IntoToolResult for Cow<'static, str> {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::new(vec![text(self)]))
    }
}

impl IntoToolResult for Content {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::new(vec![self]))
    }
}

impl IntoToolResult for ResourceLink {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::new(vec![self.into()]))
    }
}

impl IntoToolResult for Vec<Content> {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::new(self))
    }
}

impl IntoToolResult for Value {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        let body = serde_json::to_string(&self)?;
        let structured = matches!(self, Value::Object(_)).then_some(self);
        Ok(CallToolResult {
            content: vec![text(body)],
            structured_content: structured,
            ..CallToolResult::default()
        })
    }
}

impl<T: Serialize> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        serde_json::to_value(&self.0)?.into_tool_result()
    }
}

macro_rules! json_text {
    ($($t:ty),*) => {$(
        impl IntoToolResult for $t {
            fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
                Ok(CallToolResult::new(vec![text(serde_json::to_string(&self)?)]))
            }
        }
    )*};
}
json_text!(
    i8, i16, i32, i64, u8, u16, u32, u64, usize, isize, f32, f64, bool
);

#[cfg(test)]
#[path = "tool_tests.rs"]
mod tests;
