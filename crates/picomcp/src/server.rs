//! The `Server` builder: registration of tools, resources, prompts and completion. Registration
//! checks names and schemas and fails at once; the registries are then frozen and shared by
//! every session (see `dispatch` for how messages are answered).

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, Weak};

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::context::Ctx;
use crate::jsonrpc::{self, ProtocolError};
use crate::mrtr::StateKey;
use crate::prompt::{
    CompleteRequest, Completion, CompletionHandler, IntoPromptResult, PromptConfig, PromptEntry,
};
use crate::resource::{
    self, IntoResourceContents, ResourceConfig, ResourceEntry, ResourceRequest, TemplateEntry,
    UriTemplate,
};
use crate::result::{CallToolResult, IntoToolResult, ToolError};
use crate::schema::{self, invalid_arguments};
use crate::session::{Session, lock};
use crate::tool::{RegisterError, ToolConfig, ToolEntry, ToolHandler, ToolName};

type SessionList = Arc<Mutex<Vec<Weak<Session>>>>;

/// An MCP server under construction: register tools, resources and prompts, then serve it with
/// [`Server::serve_stdio`] or [`crate::http::serve`].
pub struct Server {
    inner: ServerInner,
}

/// The frozen server, shared by all sessions.
pub(crate) struct ServerInner {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) title: Option<String>,
    pub(crate) instructions: Option<String>,
    pub(crate) tools: Vec<Arc<ToolEntry>>,
    tool_index: HashMap<String, usize>,
    pub(crate) resources: Vec<ResourceEntry>,
    resource_index: HashMap<String, usize>,
    pub(crate) templates: Vec<TemplateEntry>,
    pub(crate) prompts: Vec<PromptEntry>,
    prompt_index: HashMap<String, usize>,
    pub(crate) completion: Option<CompletionHandler>,
    /// Signs the `requestState` of multi round-trip requests (MCP 2026-07-28).
    pub(crate) state_key: StateKey,
    sessions: SessionList,
}

impl ServerInner {
    pub(crate) fn tool(&self, name: &str) -> Option<&Arc<ToolEntry>> {
        self.tool_index.get(name).and_then(|&i| self.tools.get(i))
    }

    pub(crate) fn resource(&self, uri: &str) -> Option<&ResourceEntry> {
        self.resource_index
            .get(uri)
            .and_then(|&i| self.resources.get(i))
    }

    pub(crate) fn prompt(&self, name: &str) -> Option<&PromptEntry> {
        self.prompt_index
            .get(name)
            .and_then(|&i| self.prompts.get(i))
    }

    /// The `capabilities` object of the `initialize` result.
    pub(crate) fn capabilities(&self) -> Value {
        let mut caps = Map::new();
        caps.insert("tools".into(), json!({ "listChanged": false }));
        caps.insert("logging".into(), json!({}));
        if !self.resources.is_empty() || !self.templates.is_empty() {
            caps.insert(
                "resources".into(),
                json!({ "subscribe": true, "listChanged": false }),
            );
        }
        if !self.prompts.is_empty() {
            caps.insert("prompts".into(), json!({ "listChanged": false }));
        }
        if self.completion.is_some() {
            caps.insert("completions".into(), json!({}));
        }
        Value::Object(caps)
    }

    /// The `capabilities` of `server/discover` (MCP 2026-07-28): as for `initialize`, without
    /// what this era has no way to deliver yet (resource subscriptions and list-changed
    /// notifications need `subscriptions/listen`, which picomcp does not serve).
    pub(crate) fn modern_capabilities(&self) -> Value {
        let mut caps = Map::new();
        caps.insert("tools".into(), json!({}));
        caps.insert("logging".into(), json!({}));
        if !self.resources.is_empty() || !self.templates.is_empty() {
            caps.insert("resources".into(), json!({}));
        }
        if !self.prompts.is_empty() {
            caps.insert("prompts".into(), json!({}));
        }
        if self.completion.is_some() {
            caps.insert("completions".into(), json!({}));
        }
        Value::Object(caps)
    }

    /// `serverInfo` (legacy `initialize`) or `_meta["io.modelcontextprotocol/serverInfo"]`.
    pub(crate) fn info(&self) -> Value {
        let mut info = Map::new();
        info.insert("name".into(), Value::String(self.name.clone()));
        info.insert("version".into(), Value::String(self.version.clone()));
        if let Some(t) = &self.title {
            info.insert("title".into(), Value::String(t.clone()));
        }
        Value::Object(info)
    }

    /// A new session of this server, listed for its notifications ([`ServerHandle`]).
    pub(crate) fn new_session(&self) -> Arc<Session> {
        let session = Session::new();
        self.register_session(&session);
        session
    }

    fn register_session(&self, session: &Arc<Session>) {
        let mut list = lock(&self.sessions);
        // Prune dead entries now and then so the list stays proportional to live sessions.
        if list.len() >= 64 && list.len().is_power_of_two() {
            list.retain(|w| w.strong_count() > 0);
        }
        list.push(Arc::downgrade(session));
    }
}

/// A handle to notify the live sessions of a server being served (resource updates, ...).
#[derive(Clone)]
pub struct ServerHandle {
    sessions: SessionList,
}

impl ServerHandle {
    fn live(&self) -> Vec<Arc<Session>> {
        lock(&self.sessions)
            .iter()
            .filter_map(Weak::upgrade)
            // Only sessions opened with `initialize`: a modern (2026-07-28) client on a stdio
            // connection asks for notifications with `subscriptions/listen`, not by connecting.
            .filter(|s| s.client().is_some())
            .collect()
    }

    /// Sends `notifications/resources/updated` to every session subscribed to `uri`; returns how
    /// many received it.
    pub fn resource_updated(&self, uri: &str) -> usize {
        let message =
            jsonrpc::encode_notification("notifications/resources/updated", &json!({ "uri": uri }));
        self.live()
            .iter()
            .filter(|s| s.is_subscribed(uri) && s.send_standalone(message.clone()))
            .count()
    }

    /// Sends a notification to every session that has a stream open for it.
    pub fn notify_all(&self, method: &str, params: &impl Serialize) -> usize {
        let message = jsonrpc::encode_notification(method, params);
        self.live()
            .iter()
            .filter(|s| s.send_standalone(message.clone()))
            .count()
    }
}

impl Server {
    /// A server that introduces itself as `name` `version`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            inner: ServerInner {
                name: name.into(),
                version: version.into(),
                title: None,
                instructions: None,
                tools: Vec::new(),
                tool_index: HashMap::new(),
                resources: Vec::new(),
                resource_index: HashMap::new(),
                templates: Vec::new(),
                prompts: Vec::new(),
                prompt_index: HashMap::new(),
                completion: None,
                state_key: StateKey::random(),
                sessions: Arc::new(Mutex::new(Vec::new())),
            },
        }
    }

    /// The display title in `serverInfo`.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.inner.title = Some(title.into());
        self
    }

    /// Instructions sent to the client in the `initialize` result.
    #[must_use]
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.inner.instructions = Some(instructions.into());
        self
    }

    /// The secret that signs the `requestState` of multi round-trip requests (MCP 2026-07-28).
    /// A random one per process by default; set it when several instances serve one address,
    /// so that a client's next round may reach another instance. Use 32 random bytes or more.
    #[must_use]
    pub fn request_state_secret(mut self, secret: impl AsRef<[u8]>) -> Self {
        self.inner.state_key = StateKey::from_secret(secret.as_ref());
        self
    }

    /// A handle to notify sessions once the server is served.
    pub fn handle(&self) -> ServerHandle {
        ServerHandle {
            sessions: Arc::clone(&self.inner.sessions),
        }
    }

    pub(crate) fn into_inner(self) -> Arc<ServerInner> {
        Arc::new(self.inner)
    }

    fn add_tool(&mut self, entry: ToolEntry) -> Result<&mut Self, RegisterError> {
        let name = entry.name.to_string();
        if self.inner.tool_index.contains_key(&name) {
            return Err(RegisterError::Duplicate { kind: "tool", name });
        }
        self.inner.tool_index.insert(name, self.inner.tools.len());
        self.inner.tools.push(Arc::new(entry));
        Ok(self)
    }

    /// Registers a tool whose input is the type `In` (its JSON Schema is the tool's
    /// `inputSchema`; serde defaults apply). Arguments are validated against the schema before
    /// `handler` runs; a failure is a tool error naming each field.
    ///
    /// Fails at once for an invalid or duplicate name.
    pub fn tool<In, R, E, F, Fut>(
        &mut self,
        name: impl Into<String>,
        config: ToolConfig,
        handler: F,
    ) -> Result<&mut Self, RegisterError>
    where
        In: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(In, Ctx) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, E>> + Send + 'static,
        R: IntoToolResult + 'static,
        E: Into<ToolError>,
    {
        let name = ToolName::new(name)?;
        let handler = typed_handler(name.clone(), handler, |r: R| r.into_tool_result());
        let entry = ToolEntry::new(name, config, schema::schema_for::<In>(), None, handler)?;
        self.add_tool(entry)
    }

    /// Registers a tool with a typed output: `Out`'s schema is announced as `outputSchema`, and
    /// each value is validated at run time and sent as `structuredContent` plus a JSON text copy.
    /// A value that does not match is a tool error, never malformed data.
    pub fn tool_with_output<In, Out, E, F, Fut>(
        &mut self,
        name: impl Into<String>,
        config: ToolConfig,
        handler: F,
    ) -> Result<&mut Self, RegisterError>
    where
        In: DeserializeOwned + JsonSchema + Send + 'static,
        Out: Serialize + JsonSchema + 'static,
        F: Fn(In, Ctx) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Out, E>> + Send + 'static,
        E: Into<ToolError>,
    {
        let name = ToolName::new(name)?;
        let handler = typed_handler(name.clone(), handler, structured);
        let output = Some(schema::schema_for::<Out>());
        let entry = ToolEntry::new(name, config, schema::schema_for::<In>(), output, handler)?;
        self.add_tool(entry)
    }

    /// Registers a tool whose schemas are JSON values known only at run time
    /// ([`ToolConfig::input_schema`], default: an object with no properties; optional
    /// [`ToolConfig::output_schema`]). The handler receives the validated arguments as JSON.
    pub fn tool_dynamic<R, E, F, Fut>(
        &mut self,
        name: impl Into<String>,
        mut config: ToolConfig,
        handler: F,
    ) -> Result<&mut Self, RegisterError>
    where
        F: Fn(Value, Ctx) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, E>> + Send + 'static,
        R: IntoToolResult,
        E: Into<ToolError>,
    {
        let name = ToolName::new(name)?;
        let input = config
            .input_schema
            .take()
            .unwrap_or_else(schema::empty_object_schema);
        let output = config.output_schema.take();
        let handler: ToolHandler = Arc::new(move |args, ctx| {
            let fut = handler(args, ctx);
            Box::pin(async move { fut.await.map_err(Into::into)?.into_tool_result() })
        });
        let entry = ToolEntry::new(name, config, input, output, handler)?;
        self.add_tool(entry)
    }

    /// Registers a resource at a fixed URI.
    pub fn resource<R, F, Fut>(
        &mut self,
        uri: impl Into<String>,
        config: ResourceConfig,
        handler: F,
    ) -> Result<&mut Self, RegisterError>
    where
        F: Fn(ResourceRequest, Ctx) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ProtocolError>> + Send + 'static,
        R: IntoResourceContents,
    {
        let uri = uri.into();
        if uri.is_empty() {
            return Err(RegisterError::InvalidName(uri));
        }
        if self.inner.resource_index.contains_key(&uri) {
            return Err(RegisterError::Duplicate {
                kind: "resource",
                name: uri,
            });
        }
        let descriptor = config.descriptor("uri", &uri);
        self.inner
            .resource_index
            .insert(uri, self.inner.resources.len());
        self.inner.resources.push(ResourceEntry {
            descriptor,
            handler: resource::boxed_handler(handler),
        });
        Ok(self)
    }

    /// Registers a resource template such as `file:///{path}`; the handler receives the matched
    /// variables in [`ResourceRequest::params`].
    pub fn resource_template<R, F, Fut>(
        &mut self,
        template: &str,
        config: ResourceConfig,
        handler: F,
    ) -> Result<&mut Self, RegisterError>
    where
        F: Fn(ResourceRequest, Ctx) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ProtocolError>> + Send + 'static,
        R: IntoResourceContents,
    {
        let parsed =
            UriTemplate::parse(template).map_err(|reason| RegisterError::InvalidSchema {
                which: "uri template",
                name: template.to_string(),
                reason,
            })?;
        if self
            .inner
            .templates
            .iter()
            .any(|t| t.template.as_str() == template)
        {
            return Err(RegisterError::Duplicate {
                kind: "resource template",
                name: template.to_string(),
            });
        }
        self.inner.templates.push(TemplateEntry {
            descriptor: config.descriptor("uriTemplate", template),
            template: parsed,
            handler: resource::boxed_handler(handler),
        });
        Ok(self)
    }

    /// Registers a prompt whose arguments are the fields of `In` (use [`crate::NoArgs`] for
    /// none). Arguments are validated like tool arguments; a failure is a `-32602` error.
    pub fn prompt<In, R, F, Fut>(
        &mut self,
        name: impl Into<String>,
        config: PromptConfig,
        handler: F,
    ) -> Result<&mut Self, RegisterError>
    where
        In: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(In, Ctx) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ProtocolError>> + Send + 'static,
        R: IntoPromptResult,
    {
        let name = ToolName::new(name)?;
        if self.inner.prompt_index.contains_key(name.as_str()) {
            return Err(RegisterError::Duplicate {
                kind: "prompt",
                name: name.to_string(),
            });
        }
        let entry = PromptEntry::new(name, config, handler)?;
        self.inner
            .prompt_index
            .insert(entry.name.to_string(), self.inner.prompts.len());
        self.inner.prompts.push(entry);
        Ok(self)
    }

    /// Answers `completion/complete` (prompt arguments and template variables); declares the
    /// `completions` capability.
    pub fn completion<C, F, Fut>(&mut self, handler: F) -> &mut Self
    where
        F: Fn(CompleteRequest, Ctx) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<C, ProtocolError>> + Send + 'static,
        C: Into<Completion>,
    {
        self.inner.completion = Some(Arc::new(move |req, ctx| {
            let fut = handler(req, ctx);
            Box::pin(async move { fut.await.map(Into::into) })
        }));
        self
    }
}

/// Wraps a typed handler: JSON arguments → `In` → handler → `convert`.
fn typed_handler<In, T, E, F, Fut>(
    name: ToolName,
    handler: F,
    convert: fn(T) -> Result<CallToolResult, ToolError>,
) -> ToolHandler
where
    In: DeserializeOwned + Send + 'static,
    T: 'static,
    F: Fn(In, Ctx) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<T, E>> + Send + 'static,
    E: Into<ToolError>,
{
    Arc::new(move |args, ctx| {
        // The schema accepted the arguments; serde can still refuse what a hand-written schema
        // allows, and that too is an error the model can act on.
        let input: In = match serde_json::from_value(args) {
            Ok(input) => input,
            Err(e) => {
                let message = invalid_arguments(name.as_str(), &[e.to_string()]);
                return Box::pin(async move { Err(ToolError::new(message)) });
            }
        };
        let fut = handler(input, ctx);
        Box::pin(async move { convert(fut.await.map_err(Into::into)?) })
    })
}

/// A typed output: structured content plus its JSON as text.
fn structured<Out: Serialize>(out: Out) -> Result<CallToolResult, ToolError> {
    let value = serde_json::to_value(&out)?;
    let body = serde_json::to_string(&value)?;
    Ok(CallToolResult::new(vec![crate::content::text(body)]).with_structured(value))
}
