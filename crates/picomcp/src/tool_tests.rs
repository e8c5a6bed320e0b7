use serde::Serialize;
use serde_json::json;

use serde_json::Value;

use super::*;
use crate::content::{image, resource_link, text};
use crate::jsonrpc::ProtocolError;
use crate::result::{CallToolResult, IntoToolResult, Json, ToolError};

#[test]
fn names_are_checked() {
    for ok in ["a", "search_issues", "a.b-c_D9", &"x".repeat(128)] {
        assert!(ToolName::new(ok).is_ok(), "{ok}");
    }
    for bad in ["", "has space", "é", "a/b", &"x".repeat(129)] {
        assert!(
            matches!(ToolName::new(bad), Err(RegisterError::InvalidName(_))),
            "{bad}"
        );
    }
}

fn convert(r: impl IntoToolResult) -> Value {
    serde_json::to_value(r.into_tool_result().unwrap()).unwrap()
}

#[derive(Serialize)]
struct Price {
    sku: &'static str,
    cents: u32,
}

#[test]
fn return_values_convert_naturally() {
    assert_eq!(
        convert("hi"),
        json!({"content": [{"type": "text", "text": "hi"}]})
    );
    assert_eq!(
        convert(String::from("hi")),
        json!({"content": [{"type": "text", "text": "hi"}]})
    );
    assert_eq!(convert(()), json!({"content": []}));
    assert_eq!(
        convert(42_i64),
        json!({"content": [{"type": "text", "text": "42"}]})
    );
    assert_eq!(
        convert(1.5_f64),
        json!({"content": [{"type": "text", "text": "1.5"}]})
    );
    // An object: its JSON as text (key order depends on serde_json's features) and as
    // structuredContent.
    let object = convert(Json(Price { sku: "A", cents: 5 }));
    assert_eq!(object["structuredContent"], json!({"sku": "A", "cents": 5}));
    let copy = object["content"][0]["text"].as_str().unwrap_or_default();
    assert_eq!(
        serde_json::from_str::<Value>(copy).unwrap(),
        json!({"sku": "A", "cents": 5})
    );
    assert_eq!(object["content"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        convert(Json(vec![1, 2])),
        json!({"content": [{"type": "text", "text": "[1,2]"}]})
    );
    assert_eq!(
        convert(vec![text("a"), image(vec![0u8], "image/png")]),
        json!({"content": [{"type": "text", "text": "a"}, {"type": "image", "data": "AA==", "mimeType": "image/png"}]})
    );
    assert_eq!(
        convert(resource_link("file:///x", "x")),
        json!({"content": [{"type": "resource_link", "uri": "file:///x", "name": "x"}]})
    );
    let full = CallToolResult::error("nope");
    assert_eq!(
        convert(full),
        json!({"content": [{"type": "text", "text": "nope"}], "isError": true})
    );
}

#[test]
fn errors_choose_their_channel() {
    let tool = ToolError::new("No user 7. Call list_users.")
        .into_outcome()
        .unwrap();
    assert!(tool.is_error);
    let protocol = ToolError::protocol(-32001, "Not authorised")
        .into_outcome()
        .unwrap_err();
    assert_eq!(protocol.code, -32001);
    let from: ToolError = ProtocolError::new(-1, "x").into();
    assert!(from.as_protocol().is_some());
}
