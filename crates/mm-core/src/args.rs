//! The one argument validator and coercer, for declared and MCP tools alike.
//!
//! A tool's parameters are a [`Params`] list (built from an agent file's `parameters:` or from an
//! MCP tool's `inputSchema`). [`Params::validate`] takes the arguments exactly as the model sent
//! them (a raw string) and returns either the coerced arguments or an [`Invalid`] that renders
//! the answer the model reads: each problem, the call quoted back and every parameter's form.

use serde_json::{Map, Value};

/// The type of one parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParamType {
    String,
    Integer,
    Number,
    Boolean,
    /// MCP only: a JSON array (items checked against `ParamSpec::schema`).
    Array,
    /// MCP only: a JSON object (checked against `ParamSpec::schema`).
    Object,
    /// MCP only: no type given; any JSON value.
    Any,
}

/// One parameter of a tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamSpec {
    pub name: String,
    pub ty: ParamType,
    pub description: Option<String>,
    pub required: bool,
    /// Allowed values, when the parameter is an enum.
    pub enum_values: Option<Vec<Value>>,
    /// Used when the model omits the parameter.
    pub default: Option<Value>,
    /// MCP only: the property's full JSON Schema, for structural checks of arrays and objects.
    pub schema: Option<Value>,
}

/// The parameters of a tool, in declaration order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Params {
    pub params: Vec<ParamSpec>,
    /// Whether names not in `params` are refused (always for declared tools; MCP tools whose
    /// schema says `additionalProperties: false`).
    pub deny_unknown: bool,
}

/// A call that was not run, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Invalid {
    /// One line per problem, e.g. `channel: "alpha" is not one of: stable, beta`.
    pub problems: Vec<String>,
    /// The arguments exactly as the model sent them.
    pub raw: String,
}

impl Params {
    /// Validates and coerces `raw` (the model's arguments text). See SPEC §2 "Coercion".
    pub fn validate(&self, raw: &str) -> Result<Map<String, Value>, Invalid> {
        let _ = raw;
        Err(Invalid { problems: vec!["not implemented".into()], raw: raw.to_string() })
    }
}

impl Invalid {
    /// The text answered to the model in place of the tool's result.
    pub fn render(&self, tool: &str, params: &Params) -> String {
        let _ = (tool, params);
        self.problems.join("\n")
    }
}
