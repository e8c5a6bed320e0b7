//! Prompts (typed arguments, messages) and argument completion.

use std::future::Future;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::content::{Content, text};
use crate::context::Ctx;
use crate::jsonrpc::ProtocolError;
use crate::schema::{self, CompiledSchema};
use crate::tool::{BoxFuture, RegisterError, ToolName};

/// Who speaks a prompt message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The assistant.
    Assistant,
}

/// One message of a prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: Content,
}

impl PromptMessage {
    /// A user message.
    pub fn user(content: impl Into<Content>) -> Self {
        Self {
            role: Role::User,
            content: content.into(),
        }
    }

    /// An assistant message.
    pub fn assistant(content: impl Into<Content>) -> Self {
        Self {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// The result of `prompts/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetPromptResult {
    /// An optional description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
}

/// What a prompt handler may return: messages, a full result, or a string (one user message).
pub trait IntoPromptResult {
    /// Performs the conversion.
    fn into_prompt_result(self) -> GetPromptResult;
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self) -> GetPromptResult {
        self
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> GetPromptResult {
        GetPromptResult {
            description: None,
            messages: self,
        }
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> GetPromptResult {
        vec![PromptMessage::user(text(self))].into_prompt_result()
    }
}

/// How a prompt presents itself in `prompts/list`.
#[derive(Debug, Clone, Default)]
pub struct PromptConfig {
    title: Option<String>,
    description: Option<String>,
}

impl PromptConfig {
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

    /// What the prompt is for.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

type PromptHandler =
    Arc<dyn Fn(Value, Ctx) -> BoxFuture<Result<GetPromptResult, ProtocolError>> + Send + Sync>;

pub(crate) struct PromptEntry {
    pub(crate) name: ToolName,
    pub(crate) descriptor: Value,
    schema: CompiledSchema,
    handler: PromptHandler,
}

impl PromptEntry {
    pub(crate) fn new<In, F, Fut, R>(
        name: ToolName,
        config: PromptConfig,
        f: F,
    ) -> Result<Self, RegisterError>
    where
        In: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(In, Ctx) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ProtocolError>> + Send + 'static,
        R: IntoPromptResult,
    {
        let schema_value = schema::schema_for::<In>();
        let invalid = |reason: String| RegisterError::InvalidSchema {
            which: "input",
            name: name.to_string(),
            reason,
        };
        let schema = CompiledSchema::compile(&schema_value).map_err(invalid)?;
        let mut d = Map::new();
        d.insert("name".into(), Value::String(name.to_string()));
        if let Some(t) = config.title {
            d.insert("title".into(), Value::String(t));
        }
        if let Some(t) = config.description {
            d.insert("description".into(), Value::String(t));
        }
        let arguments = arguments_of(&schema_value);
        if !arguments.is_empty() {
            d.insert("arguments".into(), Value::Array(arguments));
        }
        let f = Arc::new(f);
        let handler: PromptHandler = Arc::new(move |args, ctx| {
            let f = Arc::clone(&f);
            Box::pin(async move {
                let input: In = serde_json::from_value(args).map_err(|e| {
                    ProtocolError::invalid_params(format!("Invalid arguments: {e}"))
                })?;
                f(input, ctx)
                    .await
                    .map(IntoPromptResult::into_prompt_result)
            })
        });
        Ok(Self {
            name,
            descriptor: Value::Object(d),
            schema,
            handler,
        })
    }

    pub(crate) async fn get(
        &self,
        arguments: Value,
        ctx: Ctx,
    ) -> Result<GetPromptResult, ProtocolError> {
        if let Err(lines) = self.schema.validate(&arguments) {
            let message = format!(
                "Invalid arguments for prompt \"{}\":\n{}",
                self.name,
                lines.join("\n")
            );
            return Err(ProtocolError::invalid_params(message));
        }
        (self.handler)(arguments, ctx).await
    }
}

/// The `arguments` list of `prompts/list`, read from the input schema's properties.
fn arguments_of(schema: &Value) -> Vec<Value> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    props
        .iter()
        .map(|(name, prop)| {
            let mut a = Map::new();
            a.insert("name".into(), Value::String(name.clone()));
            if let Some(d) = prop.get("description") {
                a.insert("description".into(), d.clone());
            }
            a.insert(
                "required".into(),
                Value::Bool(required.contains(&name.as_str())),
            );
            Value::Object(a)
        })
        .collect()
}

/// A `completion/complete` request.
#[derive(Debug, Clone, Deserialize)]
pub struct CompleteRequest {
    /// `{"type":"ref/prompt","name":...}` or `{"type":"ref/resource","uri":...}`.
    #[serde(rename = "ref")]
    pub reference: Value,
    /// The argument being completed.
    pub argument: CompleteArgument,
    /// Already-resolved arguments, if the client sent them.
    #[serde(default)]
    pub context: Option<Value>,
}

/// The argument being completed.
#[derive(Debug, Clone, Deserialize)]
pub struct CompleteArgument {
    /// Its name.
    pub name: String,
    /// What the user typed so far.
    pub value: String,
}

/// Completion values.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// At most 100 values.
    pub values: Vec<String>,
    /// The total number of matches, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether more values exist than were sent.
    pub has_more: bool,
}

impl From<Vec<String>> for Completion {
    fn from(mut values: Vec<String>) -> Self {
        let total = values.len() as u64;
        let has_more = values.len() > 100;
        values.truncate(100);
        Self {
            values,
            total: Some(total),
            has_more,
        }
    }
}

pub(crate) type CompletionHandler =
    Arc<dyn Fn(CompleteRequest, Ctx) -> BoxFuture<Result<Completion, ProtocolError>> + Send + Sync>;
