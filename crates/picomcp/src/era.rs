//! The two protocol eras on one endpoint, and how a message says which one it speaks.
//!
//! - **Legacy** (2025-11-25 and earlier): an `initialize` handshake opens a session (the stdio
//!   process, or an `Mcp-Session-Id` over HTTP) that remembers the version, the client's
//!   capabilities and its log level.
//! - **Modern** (2026-07-28): no handshake. Every request carries its version, client info and
//!   capabilities in `params._meta` under `io.modelcontextprotocol/*`, and is served on its own:
//!   nothing is remembered between requests.
//!
//! A request is modern when its `_meta` has `io.modelcontextprotocol/protocolVersion` (whatever
//! the value: an unknown version is then refused with `-32022`, not served as legacy); anything
//! else is legacy. This is the spec's rule for dual-era servers ("a request carrying modern
//! per-request `_meta` is served statelessly; an `initialize` request selects legacy
//! semantics"), with the order of checks the official SDKs and the conformance suite use.

use base64::Engine as _;
use serde_json::{Map, Value, json};

use crate::jsonrpc::{ProtocolError, code};
use crate::session::LogLevel;

/// The modern protocol versions picomcp serves, newest first (what `server/discover` lists).
pub const MODERN_PROTOCOL_VERSIONS: &[&str] = &["2026-07-28"];

pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// What a modern request says about its client (read from its `_meta`).
#[derive(Debug, Clone)]
pub(crate) struct Modern {
    pub(crate) version: String,
    pub(crate) capabilities: Value,
    /// The level asked for with `io.modelcontextprotocol/logLevel`; without it no log message
    /// may be sent for the request.
    pub(crate) log_level: Option<LogLevel>,
}

impl Modern {
    /// Whether the client declared capability `name` (an object, possibly empty).
    pub(crate) fn has_capability(&self, name: &str) -> bool {
        self.capabilities.get(name).is_some_and(Value::is_object)
    }
}

/// The era a message is served in.
#[derive(Debug, Clone)]
pub(crate) enum Era {
    Legacy,
    Modern(Modern),
}

/// The request headers that mirror the body (Streamable HTTP only; stdio has none).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Headers<'a> {
    pub(crate) version: Option<&'a str>,
    pub(crate) method: Option<&'a str>,
    pub(crate) name: Option<&'a str>,
}

/// A request refused before it is dispatched: the HTTP status to send (stdio ignores it) and
/// the JSON-RPC error.
#[derive(Debug)]
pub(crate) struct Refusal {
    pub(crate) status: u16,
    pub(crate) error: ProtocolError,
}

impl Refusal {
    fn new(status: u16, code: i64, message: impl Into<String>) -> Self {
        Self {
            status,
            error: ProtocolError::new(code, message),
        }
    }
}

/// Whether `version` is one of the modern era's (2026-07-28 or later; versions are dates, so
/// they compare as strings).
pub(crate) fn is_modern_version(version: &str) -> bool {
    version >= "2026-07-28"
}

fn meta(params: Option<&Value>) -> Option<&Map<String, Value>> {
    params?.get("_meta")?.as_object()
}

/// Picks the era of a request from its method, params and (HTTP) headers, or refuses it.
pub(crate) fn classify(
    method: &str,
    params: Option<&Value>,
    headers: Option<Headers<'_>>,
) -> Result<Era, Refusal> {
    let claim = meta(params).and_then(|m| m.get(META_PROTOCOL_VERSION));
    let header_version = headers.and_then(|h| h.version);
    let Some(claim) = claim else {
        if let Some(v) = header_version.filter(|v| is_modern_version(v)) {
            return Err(Refusal::new(
                400,
                code::INVALID_PARAMS,
                format!(
                    "Invalid params: MCP-Protocol-Version {v} needs params._meta[\"{META_PROTOCOL_VERSION}\"] \
                     and params._meta[\"{META_CLIENT_CAPABILITIES}\"] in the body"
                ),
            ));
        }
        return Ok(Era::Legacy);
    };
    // `initialize` with a legacy version in `_meta` is still a legacy handshake.
    if method == "initialize" && !claim.as_str().is_some_and(is_modern_version) {
        return Ok(Era::Legacy);
    }
    let modern = read_meta(meta(params).unwrap_or(&Map::new()))?;
    if let Some(headers) = headers {
        check_headers(method, params, &modern.version, headers, true)?;
    }
    if !MODERN_PROTOCOL_VERSIONS.contains(&modern.version.as_str()) {
        let error = ProtocolError::new(
            code::UNSUPPORTED_PROTOCOL_VERSION,
            format!("Unsupported protocol version: {}", modern.version),
        )
        .with_data(json!({
            "supported": MODERN_PROTOCOL_VERSIONS,
            "requested": modern.version,
        }));
        return Err(Refusal { status: 400, error });
    }
    if let Some(headers) = headers {
        check_headers(method, params, &modern.version, headers, false)?;
    }
    Ok(Era::Modern(modern))
}

/// Reads and checks the modern `_meta` keys (`-32602` when one is missing or has the wrong
/// type).
fn read_meta(meta: &Map<String, Value>) -> Result<Modern, Refusal> {
    let invalid =
        |what: String| Refusal::new(400, code::INVALID_PARAMS, format!("Invalid params: {what}"));
    let version = match meta.get(META_PROTOCOL_VERSION) {
        Some(Value::String(v)) => v.clone(),
        _ => {
            return Err(invalid(format!(
                "_meta[\"{META_PROTOCOL_VERSION}\"] must be a string"
            )));
        }
    };
    let capabilities = match meta.get(META_CLIENT_CAPABILITIES) {
        Some(c @ Value::Object(_)) => c.clone(),
        Some(_) => {
            return Err(invalid(format!(
                "_meta[\"{META_CLIENT_CAPABILITIES}\"] must be an object"
            )));
        }
        None => {
            return Err(invalid(format!(
                "_meta[\"{META_CLIENT_CAPABILITIES}\"] is required"
            )));
        }
    };
    if let Some(info) = meta.get(META_CLIENT_INFO) {
        if !info.is_object() {
            return Err(invalid(format!(
                "_meta[\"{META_CLIENT_INFO}\"] must be an object"
            )));
        }
    }
    let log_level = match meta.get(META_LOG_LEVEL) {
        None => None,
        Some(v) => Some(serde_json::from_value::<LogLevel>(v.clone()).map_err(|_| {
            invalid(format!(
                "_meta[\"{META_LOG_LEVEL}\"] must be one of debug, info, notice, warning, error, \
                 critical, alert, emergency"
            ))
        })?),
    };
    Ok(Modern {
        version,
        capabilities,
        log_level,
    })
}

/// The headers must repeat the body: `MCP-Protocol-Version`, `Mcp-Method` and, for the methods
/// that name something, `Mcp-Name`. `version_only`: check only that a version header, if any,
/// matches (done before the version itself is checked, so a mismatch wins over an unknown
/// version).
fn check_headers(
    method: &str,
    params: Option<&Value>,
    version: &str,
    headers: Headers<'_>,
    version_only: bool,
) -> Result<(), Refusal> {
    let mismatch = |message: String| Refusal::new(400, code::HEADER_MISMATCH, message);
    if version_only {
        return match headers.version {
            Some(h) if h != version => Err(mismatch(format!(
                "Header mismatch: MCP-Protocol-Version header value '{h}' does not match body value '{version}'"
            ))),
            _ => Ok(()),
        };
    }
    if headers.version.is_none() {
        return Err(mismatch(
            "Header mismatch: the MCP-Protocol-Version header is required".into(),
        ));
    }
    match headers.method {
        None => {
            return Err(mismatch(
                "Header mismatch: the Mcp-Method header is required".into(),
            ));
        }
        Some(h) if h != method => {
            return Err(mismatch(format!(
                "Header mismatch: Mcp-Method header value '{h}' does not match body value '{method}'"
            )));
        }
        Some(_) => {}
    }
    let key = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        _ => return Ok(()),
    };
    let body = params.and_then(|p| p.get(key)).and_then(Value::as_str);
    let Some(raw) = headers.name else {
        return Err(mismatch(
            "Header mismatch: the Mcp-Name header is required".into(),
        ));
    };
    let Some(decoded) = decode_header_value(raw) else {
        return Err(mismatch(format!(
            "Header mismatch: Mcp-Name header value '{raw}' is not a valid header value"
        )));
    };
    match body {
        Some(b) if b == decoded => Ok(()),
        other => Err(mismatch(format!(
            "Header mismatch: Mcp-Name header value '{decoded}' does not match body value '{}'",
            other.unwrap_or("")
        ))),
    }
}

const SENTINEL_START: &str = "=?base64?";
const SENTINEL_END: &str = "?=";

/// The text an argument's `Mcp-Param-*` header carries (SEP-2243), before
/// [`encode_header_value`]: a string as is, a boolean or number as JSON writes it; `None` for
/// anything else (null, objects, lists: no header).
pub fn param_header_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Checks the `Mcp-Param-*` headers of a modern `tools/call` over HTTP against its arguments
/// (SEP-2243): each argument the tool's schema marks with `x-mcp-header` that the body carries
/// must come with its header, and the header (decoded: plain text, or `=?base64?…?=`, strictly
/// padded) must say the same; a header for an argument the body does not carry is refused too.
/// `-32020` with HTTP 400 otherwise. `header` looks a header up by its full name.
pub(crate) fn check_param_headers<'h>(
    param_headers: &[(String, String)],
    arguments: Option<&Value>,
    header: impl Fn(&str) -> Option<&'h str>,
) -> Result<(), Refusal> {
    let mismatch = |message: String| Refusal::new(400, code::HEADER_MISMATCH, message);
    for (argument, name) in param_headers {
        let full = format!("Mcp-Param-{name}");
        let expected = arguments
            .and_then(|a| a.get(argument))
            .and_then(param_header_text);
        match (expected, header(&full)) {
            (None, None) => {}
            (Some(_), None) => {
                return Err(mismatch(format!(
                    "Header mismatch: {full} is required when arguments.{argument} is given"
                )));
            }
            (None, Some(_)) => {
                return Err(mismatch(format!(
                    "Header mismatch: {full} is given but arguments.{argument} is not"
                )));
            }
            (Some(expected), Some(raw)) => match decode_header_value(raw.trim()) {
                None => {
                    return Err(mismatch(format!(
                        "Header mismatch: {full} is not a valid header value (bad Base64?)"
                    )));
                }
                Some(value) if value != expected => {
                    return Err(mismatch(format!(
                        "Header mismatch: {full} does not match arguments.{argument}"
                    )));
                }
                Some(_) => {}
            },
        }
    }
    Ok(())
}

/// Decodes a request-metadata header value: plain visible ASCII as is, or the sentinel form
/// `=?base64?{Base64 of UTF-8}?=` for anything else. `None` for a value that is neither.
pub fn decode_header_value(raw: &str) -> Option<String> {
    if let Some(inner) = raw
        .strip_prefix(SENTINEL_START)
        .and_then(|r| r.strip_suffix(SENTINEL_END))
    {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(inner)
            .ok()?;
        return String::from_utf8(bytes).ok();
    }
    raw.bytes()
        .all(|b| (0x20..0x7f).contains(&b))
        .then(|| raw.to_string())
}

/// Encodes a value for a request-metadata header (the inverse of [`decode_header_value`]):
/// plain visible ASCII without leading or trailing spaces as is, anything else in the sentinel
/// form.
pub fn encode_header_value(value: &str) -> String {
    let visible = value.bytes().all(|b| (0x20..0x7f).contains(&b));
    let padded = value.starts_with(' ') || value.ends_with(' ');
    let looks_encoded = value.starts_with(SENTINEL_START) && value.ends_with(SENTINEL_END);
    let plain = visible && !padded && !looks_encoded;
    if plain {
        value.to_string()
    } else {
        let encoded = base64::engine::general_purpose::STANDARD.encode(value.as_bytes());
        format!("{SENTINEL_START}{encoded}{SENTINEL_END}")
    }
}

#[cfg(test)]
#[path = "era_tests.rs"]
mod tests;
