//! The two eras of MCP and how the client tells which one a server speaks.
//!
//! - **legacy** (2025-11-25 and earlier): an `initialize` handshake, a session.
//! - **modern** (2026-07-28): no handshake; every request carries its protocol version, the
//!   client's identity and capabilities in `params._meta`, and over HTTP the standard headers
//!   (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`).
//!
//! The client probes with `server/discover` ([`classify`] reads the answer) unless the agent
//! file pins the era ([`McpProtocol`]). This module is pure: the probe's verdict, the `_meta`
//! and header builders, and the `x-mcp-header` rules of a tool's input schema.

use picomcp::{
    META_CLIENT_CAPABILITIES as META_CAPABILITIES, META_CLIENT_INFO,
    META_PROTOCOL_VERSION as META_VERSION, META_SERVER_INFO, ProtocolError, encode_header_value,
    param_header_text,
};
use serde_json::{Map, Value, json};

pub use crate::config::McpProtocol;

/// The modern versions mm speaks, preferred first: picomcp's, the wire types mm shares.
pub const MODERN_VERSIONS: &[&str] = picomcp::MODERN_PROTOCOL_VERSIONS;

/// `UnsupportedProtocolVersion` (its `data.supported` lists the server's versions).
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = picomcp::code::UNSUPPORTED_PROTOCOL_VERSION;

/// Which era a connection speaks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Era {
    /// `initialize`, then requests in its session.
    #[default]
    Legacy,
    /// Stateless requests, each with `_meta` (and headers over HTTP).
    Modern,
}

/// What the answer to a `server/discover` probe says.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Verdict {
    /// A modern server; its `DiscoverResult`, at this version.
    Modern { version: String, discovered: Value },
    /// A modern server that does not speak the version asked for: ask again at this one.
    Retry(String),
    /// Not a modern server (or not one mm can speak to): `initialize`.
    Legacy(String),
    /// Neither: the connection cannot be used.
    Error(String),
}

/// How the probe's request ended, as far as classifying goes.
#[derive(Debug)]
pub(crate) enum ProbeOutcome<'a> {
    Result(&'a Value),
    Error(&'a ProtocolError),
    /// An HTTP status without a JSON-RPC error in its body.
    Status(u16),
    /// No answer in time.
    TimedOut,
    /// The server went away (a stdio server that exited).
    Closed,
    /// Any other failure (the network, an unreadable answer).
    Failed(String),
}

/// Reads the answer to `server/discover` asked at `asked`. `on_stdio`: a timeout means a legacy
/// server there (some ignore unknown requests before `initialize`), an error over HTTP.
pub(crate) fn classify(outcome: ProbeOutcome<'_>, asked: &str, on_stdio: bool) -> Verdict {
    match outcome {
        ProbeOutcome::Result(result) => {
            let Some(versions) = result.get("supportedVersions").and_then(Value::as_array) else {
                return Verdict::Legacy(
                    "its server/discover result has no supportedVersions".into(),
                );
            };
            if !result.get("capabilities").is_some_and(Value::is_object) {
                return Verdict::Legacy("its server/discover result has no capabilities".into());
            }
            match result.get("resultType") {
                None => {}
                Some(Value::String(kind)) if kind == "complete" => {}
                Some(other) => {
                    return Verdict::Error(format!(
                        "its server/discover result has resultType {other}"
                    ));
                }
            }
            let versions: Vec<&str> = versions.iter().filter_map(Value::as_str).collect();
            match mutual(&versions, asked) {
                Some(version) => Verdict::Modern {
                    version,
                    discovered: result.clone(),
                },
                None => Verdict::Legacy(format!(
                    "it supports {}, no modern version mm speaks",
                    versions.join(", ")
                )),
            }
        }
        ProbeOutcome::Error(error) if error.code == UNSUPPORTED_PROTOCOL_VERSION => {
            let supported: Vec<&str> = error
                .data
                .as_ref()
                .and_then(|d| d.get("supported"))
                .and_then(Value::as_array)
                .map(|list| list.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if supported.is_empty() {
                return Verdict::Legacy(format!("server/discover refused: {}", error.message));
            }
            if let Some(version) = mutual(&supported, "") {
                return Verdict::Retry(version);
            }
            if supported.iter().any(|v| is_modern(v)) {
                return Verdict::Error(format!(
                    "the server speaks MCP {}; mm speaks {}",
                    supported.join(", "),
                    MODERN_VERSIONS.join(", ")
                ));
            }
            Verdict::Legacy(format!("it supports {} only", supported.join(", ")))
        }
        // The probe is well-formed JSON: a parse error is an answer that could not be read
        // (too large, too deep; mm's own error for it), no sign of a legacy server.
        ProbeOutcome::Error(error) if error.code == picomcp::code::PARSE_ERROR => {
            Verdict::Error(error.message.clone())
        }
        ProbeOutcome::Error(error) => Verdict::Legacy(format!(
            "server/discover refused: {} (code {})",
            error.message, error.code
        )),
        ProbeOutcome::Status(status @ (401 | 403)) => Verdict::Error(format!(
            "HTTP {status}: the server refuses mm (authorization is not supported)"
        )),
        ProbeOutcome::Status(status) if status >= 500 => {
            Verdict::Error(format!("HTTP {status} on server/discover"))
        }
        ProbeOutcome::Status(status) => {
            Verdict::Legacy(format!("HTTP {status} on server/discover"))
        }
        ProbeOutcome::TimedOut if on_stdio => {
            Verdict::Legacy("no answer to server/discover".into())
        }
        ProbeOutcome::TimedOut => Verdict::Error("no answer to server/discover".into()),
        ProbeOutcome::Closed => Verdict::Legacy("the server went away on server/discover".into()),
        ProbeOutcome::Failed(why) => Verdict::Error(why),
    }
}

/// The version to speak from `offered`: `asked` when offered, else mm's first that is.
fn mutual(offered: &[&str], asked: &str) -> Option<String> {
    if offered.contains(&asked) && MODERN_VERSIONS.contains(&asked) {
        return Some(asked.to_string());
    }
    MODERN_VERSIONS
        .iter()
        .find(|v| offered.contains(v))
        .map(|v| v.to_string())
}

/// A modern version string (the spec compares them as text).
fn is_modern(version: &str) -> bool {
    version >= MODERN_VERSIONS[MODERN_VERSIONS.len() - 1]
}

/// The client's name and version, as sent in `_meta` and `initialize`.
pub(crate) fn client_info() -> Value {
    json!({"name": "mm", "version": env!("CARGO_PKG_VERSION")})
}

/// The capabilities the client declares: `elicitation` only when it can answer one; never
/// sampling or roots.
pub(crate) fn client_capabilities(elicits: bool) -> Map<String, Value> {
    let mut capabilities = Map::new();
    if elicits {
        capabilities.insert("elicitation".into(), json!({"form": {}}));
    }
    capabilities
}

/// Puts the modern `_meta` keys into `params` (an object; anything else is replaced by one),
/// keeping what `_meta` already holds (a progress token).
pub(crate) fn with_meta(params: Value, version: &str, elicits: bool) -> Value {
    let mut params = match params {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let mut meta = match params.remove("_meta") {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    };
    meta.insert(META_VERSION.into(), Value::from(version));
    meta.insert(META_CLIENT_INFO.into(), client_info());
    meta.insert(
        META_CAPABILITIES.into(),
        Value::Object(client_capabilities(elicits)),
    );
    params.insert("_meta".into(), Value::Object(meta));
    Value::Object(params)
}

/// The server's name and version from a `DiscoverResult`: `_meta.serverInfo`, or a body
/// `serverInfo` some servers send.
pub(crate) fn server_info(discovered: &Value) -> (String, String) {
    let info = discovered
        .get("_meta")
        .and_then(|m| m.get(META_SERVER_INFO))
        .or_else(|| discovered.get("serverInfo"));
    let text = |key: &str| {
        info.and_then(|i| i.get(key))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    (text("name"), text("version"))
}

/// One `x-mcp-header` of a tool: the argument at `path` (property names from the root) is
/// mirrored into `Mcp-Param-{name}`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ParamHeader {
    pub path: Vec<String>,
    pub name: String,
}

/// The `x-mcp-header` annotations of an input schema, checked as the spec asks of an HTTP
/// client: each a non-empty RFC 9110 token, unique whatever the case, on a `string`, `integer`
/// or `boolean` property reached through `properties` alone. `Err` says why the tool must be
/// left out.
pub(crate) fn param_headers(schema: &Value) -> Result<Vec<ParamHeader>, String> {
    let mut found = Vec::new();
    walk(schema, &mut Vec::new(), true, &mut found)?;
    let mut seen: Vec<String> = Vec::new();
    for header in &found {
        let lower = header.name.to_ascii_lowercase();
        if seen.contains(&lower) {
            return Err(format!("x-mcp-header `{}` is used twice", header.name));
        }
        seen.push(lower);
    }
    Ok(found)
}

/// Walks every subschema; `reachable` while the path from the root is `properties` keys only.
fn walk(
    node: &Value,
    path: &mut Vec<String>,
    reachable: bool,
    found: &mut Vec<ParamHeader>,
) -> Result<(), String> {
    match node {
        Value::Object(map) => {
            if let Some(header) = map.get("x-mcp-header") {
                let at = if path.is_empty() {
                    "the schema root".to_string()
                } else {
                    format!("`{}`", path.join("."))
                };
                let Value::String(name) = header else {
                    return Err(format!("x-mcp-header of {at} is not a string"));
                };
                if !reachable || path.is_empty() {
                    return Err(format!(
                        "x-mcp-header `{}` on {at}, not a property reached through `properties`",
                        name.escape_debug()
                    ));
                }
                if name.is_empty() {
                    return Err(format!("x-mcp-header of {at} is empty"));
                }
                if !name.bytes().all(is_tchar) {
                    return Err(format!(
                        "x-mcp-header `{}` of {at} is not an HTTP token",
                        name.escape_debug()
                    ));
                }
                let primitive = matches!(
                    map.get("type").and_then(Value::as_str),
                    Some("string" | "integer" | "boolean")
                );
                if !primitive {
                    return Err(format!(
                        "x-mcp-header `{name}` of {at} is not on a string, integer or boolean"
                    ));
                }
                found.push(ParamHeader {
                    path: path.clone(),
                    name: name.clone(),
                });
            }
            for (key, value) in map {
                if key == "properties" {
                    if let Value::Object(properties) = value {
                        for (name, schema) in properties {
                            path.push(name.clone());
                            walk(schema, path, reachable, found)?;
                            path.pop();
                        }
                        continue;
                    }
                }
                if key != "x-mcp-header" {
                    walk(value, path, false, found)?;
                }
            }
            Ok(())
        }
        Value::Array(items) => items
            .iter()
            .try_for_each(|item| walk(item, path, false, found)),
        _ => Ok(()),
    }
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// The HTTP headers of a modern request: `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`
/// (`tools/call`, `prompts/get`: `params.name`; `resources/read`: `params.uri`) and, for a
/// `tools/call`, `Mcp-Param-*` for each annotated argument present and not null.
pub(crate) fn headers(
    version: &str,
    method: &str,
    params: &Value,
    param_headers: &[ParamHeader],
) -> Vec<(String, String)> {
    let mut headers = vec![
        ("MCP-Protocol-Version".to_string(), version.to_string()),
        ("Mcp-Method".to_string(), method.to_string()),
    ];
    let name = match method {
        "tools/call" | "prompts/get" => params.get("name"),
        "resources/read" => params.get("uri"),
        _ => None,
    };
    if let Some(Value::String(name)) = name {
        headers.push(("Mcp-Name".to_string(), encode_header_value(name)));
    }
    if let ("tools/call", Some(arguments)) = (method, params.get("arguments")) {
        for header in param_headers {
            let value = header.path.iter().try_fold(arguments, |v, key| v.get(key));
            let Some(text) = value.and_then(param_header_text) else {
                continue;
            };
            let text = encode_header_value(&text);
            headers.push((format!("Mcp-Param-{}", header.name), text));
        }
    }
    headers
}

/// What a modern result's `resultType` says.
#[derive(Debug, PartialEq)]
pub(crate) enum ResultKind {
    Complete,
    InputRequired,
}

/// `resultType`: absent or `complete` is complete; `input_required`; anything else is invalid.
pub(crate) fn result_kind(result: &Value) -> Result<ResultKind, String> {
    match result.get("resultType") {
        None => Ok(ResultKind::Complete),
        Some(Value::String(kind)) if kind == "complete" => Ok(ResultKind::Complete),
        Some(Value::String(kind)) if kind == "input_required" => Ok(ResultKind::InputRequired),
        Some(other) => Err(format!(
            "the server's result has an unknown resultType {other}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_are_encoded_as_the_spec_shows() {
        assert_eq!(encode_header_value("us-west1"), "us-west1");
        assert_eq!(encode_header_value("us west 1"), "us west 1");
        assert_eq!(encode_header_value(""), "");
        assert_eq!(
            encode_header_value("Hello, 世界"),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(encode_header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(
            encode_header_value("line1\nline2"),
            "=?base64?bGluZTEKbGluZTI=?="
        );
        assert_eq!(encode_header_value("\tindented"), "=?base64?CWluZGVudGVk?=");
        assert_eq!(
            encode_header_value("=?base64?x?="),
            "=?base64?PT9iYXNlNjQ/eD89?="
        );
    }

    #[test]
    fn invalid_x_mcp_headers_are_refused_and_valid_ones_found() {
        let ok = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "deep": {"type": "object", "properties": {"flag": {"type": "boolean", "x-mcp-header": "Flag"}}},
            "plain": {"type": "number"}
        }});
        let found = param_headers(&ok).unwrap_or_default();
        let names: Vec<&str> = found.iter().map(|h| h.name.as_str()).collect();
        assert_eq!(names, ["Region", "N", "Flag"]);
        assert_eq!(found[2].path, ["deep", "flag"]);
        let bad = [
            json!({"properties": {"v": {"type": "string", "x-mcp-header": ""}}}),
            json!({"properties": {"v": {"type": "object", "x-mcp-header": "V"}}}),
            json!({"properties": {"v": {"type": "array", "items": {"type": "string"}, "x-mcp-header": "V"}}}),
            json!({"properties": {"v": {"type": "null", "x-mcp-header": "V"}}}),
            json!({"properties": {"v": {"type": "number", "x-mcp-header": "V"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "R"}, "b": {"type": "string", "x-mcp-header": "R"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "MyField"}, "b": {"type": "string", "x-mcp-header": "myfield"}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": "My Region"}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": "Region:Primary"}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": "Région"}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": "Region\t1"}}}),
            json!({"properties": {"v": {"type": "array", "items": {"type": "string", "x-mcp-header": "V"}}}}),
            json!({"properties": {"v": {"anyOf": [{"type": "string", "x-mcp-header": "V"}]}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": 7}}}),
        ];
        for schema in bad {
            assert!(param_headers(&schema).is_err(), "{schema}");
        }
    }

    #[test]
    fn param_headers_mirror_present_non_null_arguments() {
        let annotated = param_headers(&json!({"properties": {
            "r": {"type": "string", "x-mcp-header": "Region"},
            "v": {"type": "boolean", "x-mcp-header": "Verbose"},
            "p": {"type": "integer", "x-mcp-header": "Priority"},
            "q": {"type": "string"}
        }}))
        .unwrap_or_default();
        let params = json!({"name": "t", "arguments": {"r": "ü", "v": null, "p": 42, "q": "x"}});
        let got = headers("2026-07-28", "tools/call", &params, &annotated);
        let want: Vec<(String, String)> = [
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "t"),
            ("Mcp-Param-Region", "=?base64?w7w=?="),
            ("Mcp-Param-Priority", "42"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn the_probe_is_read_as_the_spec_says() {
        let asked = "2026-07-28";
        let discovered = json!({"supportedVersions": ["2026-07-28"], "capabilities": {}});
        assert!(matches!(
            classify(ProbeOutcome::Result(&discovered), asked, false),
            Verdict::Modern { .. }
        ));
        let empty = json!({});
        assert!(matches!(
            classify(ProbeOutcome::Result(&empty), asked, false),
            Verdict::Legacy(_)
        ));
        let mut unsupported = ProtocolError::new(-32022, "no");
        unsupported.data = Some(json!({"supported": ["2026-07-28"], "requested": "x"}));
        assert_eq!(
            classify(ProbeOutcome::Error(&unsupported), asked, false),
            Verdict::Retry("2026-07-28".into())
        );
        unsupported.data = Some(json!({"supported": ["2025-11-25"]}));
        assert!(matches!(
            classify(ProbeOutcome::Error(&unsupported), asked, false),
            Verdict::Legacy(_)
        ));
        unsupported.data = Some(json!({"supported": ["2027-01-01"]}));
        assert!(matches!(
            classify(ProbeOutcome::Error(&unsupported), asked, false),
            Verdict::Error(_)
        ));
        let missing = ProtocolError::new(-32601, "no such method");
        assert!(matches!(
            classify(ProbeOutcome::Error(&missing), asked, false),
            Verdict::Legacy(_)
        ));
        assert!(matches!(
            classify(ProbeOutcome::Status(400), asked, false),
            Verdict::Legacy(_)
        ));
        for status in [401, 403, 500, 503] {
            assert!(matches!(
                classify(ProbeOutcome::Status(status), asked, false),
                Verdict::Error(_)
            ));
        }
        assert!(matches!(
            classify(ProbeOutcome::TimedOut, asked, true),
            Verdict::Legacy(_)
        ));
        assert!(matches!(
            classify(ProbeOutcome::TimedOut, asked, false),
            Verdict::Error(_)
        ));
    }

    #[test]
    fn result_types() {
        assert_eq!(result_kind(&json!({})), Ok(ResultKind::Complete));
        assert_eq!(
            result_kind(&json!({"resultType": "complete"})),
            Ok(ResultKind::Complete)
        );
        assert_eq!(
            result_kind(&json!({"resultType": "input_required"})),
            Ok(ResultKind::InputRequired)
        );
        assert!(result_kind(&json!({"resultType": "partial"})).is_err());
        assert!(result_kind(&json!({"resultType": 1})).is_err());
    }
}
