//! JSON-RPC 2.0 wire types: request ids, incoming message classification, outgoing message
//! encoding and the protocol error type. Public, so that an MCP client (mm's) speaks with the
//! same types as the server.
//!
//! Outgoing messages are encoded to a `String` once, where they are produced, so transports only
//! move bytes.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Standard JSON-RPC error codes, plus the MCP-specific ones picomcp uses.
pub mod code {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters.
    pub const INVALID_PARAMS: i64 = -32602;
    /// Internal JSON-RPC error.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// A resource URI that the server does not know (MCP 2025-11-25 and earlier; the
    /// 2026-07-28 era answers `INVALID_PARAMS` instead).
    pub const RESOURCE_NOT_FOUND: i64 = -32002;
    /// A request-metadata header is missing or does not match the body (MCP 2026-07-28).
    pub const HEADER_MISMATCH: i64 = -32020;
    /// The request needs a capability the client did not declare in its `_meta`
    /// (MCP 2026-07-28); `data.requiredCapabilities` names it.
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
    /// The request's protocol version is not served; `data.supported` lists those that are
    /// (MCP 2026-07-28).
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
    /// Generic server error used by the HTTP transport (bad session, bad version, ...).
    pub const SERVER_ERROR: i64 = -32000;
}

/// A JSON-RPC request id: a number or a string.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    /// A numeric id.
    Number(i64),
    /// A string id.
    String(String),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => f.write_str(s),
        }
    }
}

/// An error that is answered as a JSON-RPC error object instead of a result.
///
/// Use it from a handler only when the request itself is at fault (for example the caller lacks
/// rights); a failure the model should read and react to is a [`crate::ToolError`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{message} (code {code})")]
pub struct ProtocolError {
    /// The JSON-RPC error code.
    pub code: i64,
    /// A short description.
    pub message: String,
    /// Optional extra data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ProtocolError {
    /// An error with a code and a message.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Attaches `data` to the error.
    #[must_use]
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// `-32602 Invalid params`.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(code::INVALID_PARAMS, message)
    }

    /// `-32601 Method not found`.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            code::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
    }

    /// `-32603 Internal error`.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(code::INTERNAL_ERROR, message)
    }
}

/// One incoming message, classified.
#[derive(Debug)]
pub enum Incoming {
    Request {
        id: RequestId,
        method: String,
        params: Option<Value>,
    },
    Notification {
        method: String,
        params: Option<Value>,
    },
    Response {
        id: RequestId,
        result: Result<Value, ProtocolError>,
    },
}

#[derive(Deserialize)]
struct Raw {
    jsonrpc: Option<String>,
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    method: Option<String>,
    params: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    result: Option<Value>,
    error: Option<ProtocolError>,
}

/// Keeps `"id": null` distinguishable from a missing id.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// Why a message could not be classified; answered with `id`, if one could be read.
#[derive(Debug)]
pub struct BadMessage {
    /// The message's id, when one could be read.
    pub id: Option<RequestId>,
    /// What was wrong.
    pub error: ProtocolError,
}

impl Incoming {
    /// Parses one JSON-RPC message. Batches (arrays) are rejected, as MCP 2025-06-18 and later
    /// require.
    pub fn parse(bytes: &[u8]) -> Result<Incoming, Box<BadMessage>> {
        let raw: Raw = serde_json::from_slice(bytes).map_err(|e| {
            let error = if e.is_data() {
                // Valid JSON that is not an object (an array, a number...).
                ProtocolError::new(
                    code::INVALID_REQUEST,
                    "Invalid request: expected a JSON-RPC object",
                )
            } else {
                ProtocolError::new(code::PARSE_ERROR, format!("Parse error: {e}"))
            };
            Box::new(BadMessage { id: None, error })
        })?;
        let id = match raw.id {
            None => None,
            Some(v) => match serde_json::from_value::<RequestId>(v) {
                Ok(id) => Some(id),
                Err(_) => {
                    return Err(Box::new(BadMessage {
                        id: None,
                        error: ProtocolError::new(code::INVALID_REQUEST, "Invalid request id"),
                    }));
                }
            },
        };
        if raw.jsonrpc.as_deref() != Some("2.0") {
            return Err(Box::new(BadMessage {
                id,
                error: ProtocolError::new(
                    code::INVALID_REQUEST,
                    "Invalid request: jsonrpc must be \"2.0\"",
                ),
            }));
        }
        match (raw.method, id) {
            (Some(method), Some(id)) => Ok(Incoming::Request {
                id,
                method,
                params: raw.params,
            }),
            (Some(method), None) => Ok(Incoming::Notification {
                method,
                params: raw.params,
            }),
            (None, Some(id)) => {
                let result = match (raw.result, raw.error) {
                    (_, Some(e)) => Err(e),
                    (Some(r), None) => Ok(r),
                    (None, None) => {
                        return Err(Box::new(BadMessage {
                            id: Some(id),
                            error: ProtocolError::new(
                                code::INVALID_REQUEST,
                                "Invalid response: no result or error",
                            ),
                        }));
                    }
                };
                Ok(Incoming::Response { id, result })
            }
            (None, None) => Err(Box::new(BadMessage {
                id: None,
                error: ProtocolError::new(code::INVALID_REQUEST, "Invalid request: no method"),
            })),
        }
    }
}

#[derive(Serialize)]
struct OutResult<'a, T: Serialize> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    result: &'a T,
}

#[derive(Serialize)]
struct OutError<'a> {
    jsonrpc: &'static str,
    id: Option<&'a RequestId>,
    error: &'a ProtocolError,
}

#[derive(Serialize)]
struct OutMessage<'a, T: Serialize> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a RequestId>,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a T>,
}

/// Encodes a successful response.
pub fn encode_result<T: Serialize>(id: &RequestId, result: &T) -> String {
    serde_json::to_string(&OutResult {
        jsonrpc: "2.0",
        id,
        result,
    })
    .unwrap_or_else(|e| {
        encode_error(
            Some(id),
            &ProtocolError::internal(format!("cannot encode result: {e}")),
        )
    })
}

/// Encodes an error response; `id` is `None` (sent as `null`) when the request id is unknown.
pub fn encode_error(id: Option<&RequestId>, error: &ProtocolError) -> String {
    serde_json::to_string(&OutError {
        jsonrpc: "2.0",
        id,
        error,
    })
    // A ProtocolError is plain strings and numbers plus a `Value`; it always serializes.
    .unwrap_or_else(|_| {
        String::from(
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"encoding failed"}}"#,
        )
    })
}

/// Encodes a notification.
pub fn encode_notification<T: Serialize>(method: &str, params: &T) -> String {
    serde_json::to_string(&OutMessage {
        jsonrpc: "2.0",
        id: None,
        method,
        params: Some(params),
    })
    .unwrap_or_default()
}

/// Encodes a server-to-client request.
pub fn encode_request<T: Serialize>(id: &RequestId, method: &str, params: Option<&T>) -> String {
    serde_json::to_string(&OutMessage {
        jsonrpc: "2.0",
        id: Some(id),
        method,
        params,
    })
    .unwrap_or_default()
}

/// Reads `params` as an object, treating a missing `params` as `{}`.
pub(crate) fn params_object(params: Option<Value>) -> Result<Map<String, Value>, ProtocolError> {
    match params {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m),
        Some(_) => Err(ProtocolError::invalid_params("params must be an object")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_messages() {
        let m = Incoming::parse(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap();
        assert!(matches!(
            m,
            Incoming::Request {
                id: RequestId::Number(1),
                ..
            }
        ));
        let m =
            Incoming::parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap();
        assert!(matches!(m, Incoming::Notification { .. }));
        let m = Incoming::parse(br#"{"jsonrpc":"2.0","id":"a","result":{}}"#).unwrap();
        assert!(matches!(m, Incoming::Response { result: Ok(_), .. }));
        let m = Incoming::parse(br#"{"jsonrpc":"2.0","id":"a","error":{"code":-1,"message":"x"}}"#)
            .unwrap();
        assert!(matches!(m, Incoming::Response { result: Err(_), .. }));
        let e = Incoming::parse(b"{nope").unwrap_err();
        assert_eq!(e.error.code, code::PARSE_ERROR);
        let e = Incoming::parse(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#).unwrap_err();
        assert_eq!(e.error.code, code::INVALID_REQUEST);
    }

    #[test]
    fn encodes_messages() {
        let id = RequestId::String("x".into());
        assert_eq!(
            encode_result(&id, &serde_json::json!({})),
            r#"{"jsonrpc":"2.0","id":"x","result":{}}"#
        );
        assert_eq!(
            encode_error(None, &ProtocolError::new(-1, "m")),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"m"}}"#
        );
    }
}
