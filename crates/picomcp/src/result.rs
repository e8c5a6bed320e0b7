//! Tool results: `CallToolResult`, the `IntoToolResult` conversions of handler return values,
//! and `ToolError`, the handler's two-channel failure (tool error or protocol error).

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::content::{Content, ResourceLink, text};
use crate::jsonrpc::ProtocolError;

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
