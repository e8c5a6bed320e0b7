//! The request's `response_format` for constrained mode, typed so that `tool` comes before
//! `arguments` whatever the map order (llama.cpp builds its grammar in the schema's property
//! order, and the model should choose the tool before writing its arguments). Built by
//! [`super::constrained::response_format`], sent by [`super::wire`].

use serde::Serialize;
use serde_json::Value;

/// `{"type": "json_schema", "json_schema": {...}}`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ResponseFormat {
    #[serde(rename = "type")]
    pub(super) kind: &'static str,
    pub(super) json_schema: JsonSchema,
}

#[derive(Debug, Clone, Serialize)]
pub(super) struct JsonSchema {
    pub(super) name: &'static str,
    pub(super) strict: bool,
    pub(super) schema: AnyOf,
}

#[derive(Debug, Clone, Serialize)]
pub(super) struct AnyOf {
    #[serde(rename = "anyOf")]
    pub(super) any_of: Vec<Branch>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub(super) enum Branch {
    Tool {
        #[serde(rename = "type")]
        kind: &'static str,
        properties: ToolProperties,
        required: [&'static str; 2],
        #[serde(rename = "additionalProperties")]
        additional_properties: bool,
    },
    Answer {
        #[serde(rename = "type")]
        kind: &'static str,
        properties: AnswerProperties,
        required: [&'static str; 1],
        #[serde(rename = "additionalProperties")]
        additional_properties: bool,
    },
}

#[derive(Debug, Clone, Serialize)]
pub(super) struct ToolProperties {
    pub(super) tool: Const,
    pub(super) arguments: Value,
}

#[derive(Debug, Clone, Serialize)]
pub(super) struct Const {
    #[serde(rename = "const")]
    pub(super) value: String,
}

#[derive(Debug, Clone, Serialize)]
pub(super) struct AnswerProperties {
    pub(super) answer: TypeOnly,
}

#[derive(Debug, Clone, Serialize)]
pub(super) struct TypeOnly {
    #[serde(rename = "type")]
    pub(super) kind: &'static str,
}
