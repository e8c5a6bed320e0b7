//! One MCP server tool offered to the model: named `<prefix><tool>`, described with the
//! server's own words, its input schema read into the same [`Params`] as a declared tool (so the
//! same validator checks and coerces its arguments), its result turned into text.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

use super::client::{CallError, Client};
use crate::args::Params;
use crate::args::ValidArgs;
use crate::output::Output;
use crate::tools::{Outcome, Tool, ToolCtx, ToolKind, ToolSpec, describe};

/// The longest name a model API takes for a function.
const MAX_NAME: usize = 64;

/// An MCP server's tool, callable by the model.
pub struct McpTool {
    spec: ToolSpec,
    params: Params,
    /// The name the server knows it by.
    remote: String,
    server: String,
    client: Arc<Client>,
    timeout: Duration,
}

impl McpTool {
    /// Reads one entry of `tools/list`. `None` when it has no usable name.
    pub(crate) fn new(
        server: &str,
        prefix: &str,
        listed: &Value,
        client: Arc<Client>,
        timeout: Duration,
    ) -> Option<Self> {
        let remote = listed.get("name")?.as_str()?.to_string();
        if remote.is_empty() {
            return None;
        }
        let description = listed
            .get("description")
            .and_then(Value::as_str)
            .or_else(|| listed.get("title").and_then(Value::as_str))
            .unwrap_or_default();
        let schema = listed.get("inputSchema").cloned().unwrap_or(Value::Null);
        let params = Params::from_json_schema(&schema);
        let spec = ToolSpec {
            name: model_name(prefix, &remote),
            description: describe(description),
            parameters: params.model_schema(),
        };
        Some(Self {
            spec,
            params,
            remote,
            server: server.to_string(),
            client,
            timeout,
        })
    }

    /// The tool's name on its server.
    pub fn remote_name(&self) -> &str {
        &self.remote
    }

    /// The parameters whose schema mm cannot compile, with why.
    pub(crate) fn broken_schemas(&self) -> Vec<(&str, &str)> {
        self.params.broken_schemas()
    }
}

/// `prefix` + `name`, with every character a model API refuses in a function name replaced by
/// `_`, cut to 64 characters.
fn model_name(prefix: &str, name: &str) -> String {
    format!("{prefix}{name}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(MAX_NAME)
        .collect()
}

#[async_trait]
impl Tool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn params(&self) -> &Params {
        &self.params
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Mcp
    }
    fn preview(&self, args: &ValidArgs) -> Option<String> {
        let args = serde_json::to_string(args).unwrap_or_default();
        Some(format!(
            "{} {args} (tool {} of MCP server {})",
            self.spec.name, self.remote, self.server
        ))
    }

    async fn run(&self, args: &ValidArgs, ctx: &ToolCtx, out: &mut Output) -> Outcome {
        let called = self
            .client
            .call_tool(
                &self.remote,
                args,
                self.timeout,
                &ctx.cancel,
                ctx.progress.clone(),
            )
            .await;
        match called {
            Ok(result) => {
                if write_result(&result, out) {
                    Outcome::Failed
                } else {
                    Outcome::Success
                }
            }
            Err(CallError::Cancelled) => Outcome::Cancelled,
            Err(CallError::TimedOut(after)) => Outcome::TimedOut(after),
            Err(CallError::Protocol(error)) => {
                out.write_str(&format!(
                    "The MCP server {} refused the call: {} (code {})",
                    self.server, error.message, error.code
                ));
                Outcome::Failed
            }
            Err(error) => {
                out.write_str(&format!(
                    "The MCP server {} could not run the call: {error}",
                    self.server
                ));
                Outcome::Failed
            }
        }
    }
}

/// Writes a `tools/call` result as the model reads it; true when it is a tool error.
///
/// Text blocks as they are; `structuredContent` as JSON when no text block carries it; images,
/// audio and binary resources described (type and size), never dumped; resource links by URI;
/// embedded text resources with their URI.
pub(crate) fn write_result(result: &Value, out: &mut Output) -> bool {
    let mut parts: Vec<String> = Vec::new();
    if let Some(blocks) = result.get("content").and_then(Value::as_array) {
        parts.extend(blocks.iter().map(block_text));
    }
    if let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null()) {
        let json = serde_json::to_string(structured).unwrap_or_default();
        let carried = parts
            .iter()
            .any(|p| serde_json::from_str::<Value>(p).is_ok_and(|parsed| &parsed == structured));
        if !carried {
            parts.push(json);
        }
    }
    out.write_str(&parts.join("\n"));
    result.get("isError").and_then(Value::as_bool) == Some(true)
}

fn block_text(block: &Value) -> String {
    let text = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or_default();
    match text("type") {
        "text" => text("text").to_string(),
        "image" | "audio" => format!(
            "[{} {}, {} bytes]",
            text("type"),
            or_unknown(text("mimeType")),
            base64_size(text("data"))
        ),
        "resource_link" => {
            let mut line = format!("[resource {}", text("uri"));
            if !text("name").is_empty() {
                line.push_str(&format!(" ({})", text("name")));
            }
            if !text("description").is_empty() {
                line.push_str(&format!(": {}", text("description")));
            }
            line.push(']');
            line
        }
        "resource" => {
            let resource = block.get("resource").unwrap_or(&Value::Null);
            let field = |key: &str| resource.get(key).and_then(Value::as_str);
            let uri = field("uri").unwrap_or_default();
            match (field("text"), field("blob")) {
                (Some(body), _) => format!("[resource {uri}]\n{body}"),
                (None, Some(blob)) => format!(
                    "[resource {uri}: {}, {} bytes]",
                    or_unknown(field("mimeType").unwrap_or_default()),
                    base64_size(blob)
                ),
                (None, None) => format!("[resource {uri}]"),
            }
        }
        other => format!("[{} content]", or_unknown(other)),
    }
}

fn or_unknown(text: &str) -> &str {
    if text.is_empty() {
        "unknown type"
    } else {
        text
    }
}

/// The decoded size of base64 `data`.
fn base64_size(data: &str) -> usize {
    let data = data.trim_end_matches('=');
    data.len() * 3 / 4
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn text_of(result: Value) -> (String, bool) {
        let mut out = Output::new(1 << 20);
        let failed = write_result(&result, &mut out);
        (out.finish().text, failed)
    }

    #[test]
    fn names_are_prefixed_and_made_valid_for_the_model() {
        assert_eq!(model_name("proj_", "search"), "proj_search");
        assert_eq!(model_name("", "fs.read file"), "fs_read_file");
        assert_eq!(model_name("p_", &"x".repeat(100)).len(), 64);
    }

    #[test]
    fn blobs_are_described_not_dumped() {
        let (text, failed) = text_of(json!({"content": [
            {"type": "text", "text": "two blocks"},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            {"type": "resource_link", "uri": "file:///a.txt", "name": "a"},
            {"type": "resource", "resource": {"uri": "file:///b", "blob": "AAAA", "mimeType": "application/zip"}},
            {"type": "resource", "resource": {"uri": "file:///c", "text": "hello"}},
            {"type": "weird"}
        ]}));
        assert_eq!(
            text,
            "two blocks\n[image image/png, 8 bytes]\n[resource file:///a.txt (a)]\n\
             [resource file:///b: application/zip, 3 bytes]\n[resource file:///c]\nhello\n[weird content]"
        );
        assert!(!failed);
    }

    #[test]
    fn structured_content_is_passed_once() {
        let structured = json!({"temperature": 21.5});
        let (text, _) = text_of(json!({
            "content": [{"type": "text", "text": "{\"temperature\":21.5}"}],
            "structuredContent": structured,
        }));
        assert_eq!(text, "{\"temperature\":21.5}");
        let (text, _) = text_of(json!({"content": [], "structuredContent": structured}));
        assert_eq!(text, "{\"temperature\":21.5}");
    }

    #[test]
    fn tool_errors_are_failures_with_their_text() {
        let (text, failed) = text_of(json!({
            "content": [{"type": "text", "text": "no such city"}],
            "isError": true,
        }));
        assert_eq!((text.as_str(), failed), ("no such city", true));
    }
}
