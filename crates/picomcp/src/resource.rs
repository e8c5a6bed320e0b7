//! Resources: static URIs and URI templates (`{var}` segments), read through an async handler.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::content::ResourceContents;
use crate::context::Ctx;
use crate::jsonrpc::ProtocolError;
use crate::tool::BoxFuture;

/// What a resource handler is asked for: the URI and, for templates, the variables it matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceRequest {
    /// The URI the client asked for.
    pub uri: String,
    /// Template variables (`{id}` → `params["id"]`); empty for static resources.
    pub params: HashMap<String, String>,
}

/// How a resource presents itself in `resources/list` or `resources/templates/list`.
#[derive(Debug, Clone, Default)]
pub struct ResourceConfig {
    name: String,
    title: Option<String>,
    description: Option<String>,
    mime_type: Option<String>,
    size: Option<u64>,
}

impl ResourceConfig {
    /// A configuration with a (short, programmatic) name.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            ..Self::default()
        }
    }

    /// The display title.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// What the resource holds.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The MIME type.
    #[must_use]
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// The size in bytes.
    #[must_use]
    pub fn size(mut self, size: u64) -> Self {
        self.size = Some(size);
        self
    }

    pub(crate) fn descriptor(&self, key: &str, uri: &str) -> Value {
        let mut d = Map::new();
        d.insert(key.into(), Value::String(uri.to_string()));
        d.insert("name".into(), Value::String(self.name.clone()));
        for (k, v) in [
            ("title", &self.title),
            ("description", &self.description),
            ("mimeType", &self.mime_type),
        ] {
            if let Some(v) = v {
                d.insert(k.into(), Value::String(v.clone()));
            }
        }
        if let Some(size) = self.size {
            d.insert("size".into(), Value::from(size));
        }
        Value::Object(d)
    }
}

/// What a resource handler may return.
pub trait IntoResourceContents {
    /// Performs the conversion.
    fn into_contents(self) -> Vec<ResourceContents>;
}

impl IntoResourceContents for ResourceContents {
    fn into_contents(self) -> Vec<ResourceContents> {
        vec![self]
    }
}

impl IntoResourceContents for Vec<ResourceContents> {
    fn into_contents(self) -> Vec<ResourceContents> {
        self
    }
}

pub(crate) type ResourceHandler = Arc<
    dyn Fn(ResourceRequest, Ctx) -> BoxFuture<Result<Vec<ResourceContents>, ProtocolError>>
        + Send
        + Sync,
>;

pub(crate) fn boxed_handler<F, Fut, R>(f: F) -> ResourceHandler
where
    F: Fn(ResourceRequest, Ctx) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, ProtocolError>> + Send + 'static,
    R: IntoResourceContents,
{
    Arc::new(move |req, ctx| {
        let fut = f(req, ctx);
        Box::pin(async move { fut.await.map(IntoResourceContents::into_contents) })
    })
}

pub(crate) struct ResourceEntry {
    pub(crate) descriptor: Value,
    pub(crate) handler: ResourceHandler,
}

pub(crate) struct TemplateEntry {
    pub(crate) template: UriTemplate,
    pub(crate) descriptor: Value,
    pub(crate) handler: ResourceHandler,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Var(String),
}

/// A level-1 URI template (RFC 6570 simple expansion): `{name}` matches one or more characters
/// other than `/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UriTemplate {
    source: String,
    parts: Vec<Part>,
}

impl UriTemplate {
    pub(crate) fn parse(source: &str) -> Result<Self, String> {
        let mut parts = Vec::new();
        let mut rest = source;
        while let Some(open) = rest.find('{') {
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_string()));
            }
            let Some(close) = rest[open..].find('}') else {
                return Err(format!("unclosed '{{' in {source:?}"));
            };
            let name = &rest[open + 1..open + close];
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                return Err(format!("bad variable {name:?} in {source:?}"));
            }
            if matches!(parts.last(), Some(Part::Var(_))) {
                return Err(format!("two adjacent variables in {source:?}"));
            }
            parts.push(Part::Var(name.to_string()));
            rest = &rest[open + close + 1..];
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_string()));
        }
        Ok(Self {
            source: source.to_string(),
            parts,
        })
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.source
    }

    /// Matches `uri`, returning the variables.
    pub(crate) fn matches(&self, uri: &str) -> Option<HashMap<String, String>> {
        let mut vars = HashMap::new();
        let mut rest = uri;
        let mut i = 0;
        while i < self.parts.len() {
            match &self.parts[i] {
                Part::Literal(lit) => rest = rest.strip_prefix(lit.as_str())?,
                Part::Var(name) => {
                    let end = match self.parts.get(i + 1) {
                        Some(Part::Literal(next)) => rest.find(next.as_str())?,
                        _ => rest.len(),
                    };
                    let value = &rest[..end];
                    if value.is_empty() || value.contains('/') {
                        return None;
                    }
                    vars.insert(name.clone(), value.to_string());
                    rest = &rest[end..];
                }
            }
            i += 1;
        }
        rest.is_empty().then_some(vars)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_match_simple_variables() {
        let t = UriTemplate::parse("test://template/{id}/data").unwrap();
        let vars = t.matches("test://template/123/data").unwrap();
        assert_eq!(vars["id"], "123");
        assert!(t.matches("test://template//data").is_none());
        assert!(t.matches("test://template/1/2/data").is_none());
        assert!(t.matches("test://template/1/data/x").is_none());
        let t = UriTemplate::parse("file:///{dir}/{name}").unwrap();
        let vars = t.matches("file:///a/b.txt").unwrap();
        assert_eq!(
            (vars["dir"].as_str(), vars["name"].as_str()),
            ("a", "b.txt")
        );
        assert!(UriTemplate::parse("x://{a}{b}").is_err());
        assert!(UriTemplate::parse("x://{a").is_err());
    }
}
