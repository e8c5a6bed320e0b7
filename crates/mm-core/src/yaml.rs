//! The YAML layer of agent files, skills' front matter and eval suites: saphyr's marked tree
//! turned into a small owned tree that keeps, for every key and value, its line in the file,
//! and the order of keys as written. Deep nesting is refused before the tree is built.

use saphyr::{LoadableYamlNode, MarkedYaml, Scalar, YamlData};
use saphyr_parser::Event;

/// One YAML value and the line (of the file, 1-based) where it starts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    pub line: usize,
    pub kind: Kind,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<Entry>),
}

/// One `key: value` of a mapping.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub key: String,
    /// The line of the key.
    pub line: usize,
    pub value: Node,
}

/// A YAML problem: the line (of the file) and what is wrong.
#[derive(Debug)]
pub(crate) struct YamlError {
    pub line: usize,
    pub message: String,
}

/// Parses `text` (one YAML document) whose first line is line `first_line` of the file.
/// An empty document is `None`.
pub(crate) fn parse(text: &str, first_line: usize) -> Result<Option<Node>, YamlError> {
    let offset = first_line.saturating_sub(1);
    check_depth(text, offset)?;
    let docs = MarkedYaml::load_from_str(text).map_err(|e| {
        let line = e.marker().line().max(1) + offset;
        let mut message = format!(
            "invalid YAML: {} (column {})",
            e.info(),
            e.marker().col() + 1
        );
        let bad_line = text
            .lines()
            .nth(e.marker().line().saturating_sub(1))
            .unwrap_or("");
        if bad_line.trim_start_matches(' ').starts_with('\t') && !e.info().contains("tab") {
            message.push_str("; indent with spaces, YAML does not allow tabs");
        }
        YamlError { line, message }
    })?;
    let mut docs = docs.into_iter();
    let Some(first) = docs.next() else {
        return Ok(None);
    };
    if let Some(second) = docs.next() {
        return Err(YamlError {
            line: second.span.start.line().max(1) + offset,
            message: "only one YAML document is allowed".into(),
        });
    }
    if matches!(first.data, YamlData::BadValue) {
        // An empty document (only comments or nothing).
        return Ok(None);
    }
    convert(&first, offset).map(Some)
}

/// Deeper than any agent file needs (`tools.T.parameters.P.enum[i]` is 5 levels).
const MAX_DEPTH: usize = 32;

/// Refuses deep nesting before building the tree: saphyr's loader and the tree walk recurse
/// once per level, and `- - - - …` nests a thousand levels in two kilobytes. The event parser
/// itself is a state machine, so this pass is safe on any input; syntax errors are left to the
/// loader, which reports them the same way.
fn check_depth(text: &str, offset: usize) -> Result<(), YamlError> {
    let mut depth = 0usize;
    for event in saphyr_parser::Parser::new_from_str(text) {
        let Ok((event, span)) = event else { break };
        match event {
            Event::SequenceStart(..) | Event::MappingStart(..) => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(YamlError {
                        line: span.start.line().max(1) + offset,
                        message: format!("nested too deeply (more than {MAX_DEPTH} levels)"),
                    });
                }
            }
            Event::SequenceEnd | Event::MappingEnd => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

fn convert(node: &MarkedYaml<'_>, offset: usize) -> Result<Node, YamlError> {
    let line = node.span.start.line().max(1) + offset;
    let kind = match &node.data {
        YamlData::Value(scalar) => scalar_kind(scalar),
        YamlData::Representation(text, _, _) => Kind::Str(text.to_string()),
        YamlData::Sequence(items) => Kind::Seq(
            items
                .iter()
                .map(|item| convert(item, offset))
                .collect::<Result<_, _>>()?,
        ),
        YamlData::Mapping(map) => {
            let mut entries = Vec::with_capacity(map.len());
            for (key, value) in map {
                let key_line = key.span.start.line().max(1) + offset;
                let key = key_text(key).ok_or_else(|| YamlError {
                    line: key_line,
                    message: "a key must be plain text, not a list or a mapping".into(),
                })?;
                let mut value = convert(value, offset)?;
                if value.kind == Kind::Null {
                    // An empty value has no position of its own worth showing.
                    value.line = key_line;
                }
                entries.push(Entry {
                    key,
                    line: key_line,
                    value,
                });
            }
            Kind::Map(entries)
        }
        // Tags other than the core schema's carry no meaning in an agent file.
        YamlData::Tagged(_, inner) => return convert(inner, offset),
        YamlData::Alias(_) => {
            return Err(YamlError {
                line,
                message: "unknown YAML alias".into(),
            });
        }
        YamlData::BadValue => {
            return Err(YamlError {
                line,
                message: "a value that does not match its tag".into(),
            });
        }
    };
    Ok(Node { line, kind })
}

fn scalar_kind(scalar: &Scalar<'_>) -> Kind {
    match scalar {
        Scalar::Null => Kind::Null,
        Scalar::Boolean(b) => Kind::Bool(*b),
        Scalar::Integer(i) => Kind::Int(*i),
        Scalar::FloatingPoint(f) => Kind::Float(f.into_inner()),
        Scalar::String(s) => Kind::Str(s.to_string()),
    }
}

/// A mapping key as text: YAML lets `1:` or `true:` be keys; they mean their text.
fn key_text(key: &MarkedYaml<'_>) -> Option<String> {
    match &key.data {
        YamlData::Value(scalar) => Some(match scalar {
            Scalar::Null => "null".into(),
            Scalar::Boolean(b) => b.to_string(),
            Scalar::Integer(i) => i.to_string(),
            Scalar::FloatingPoint(f) => f.into_inner().to_string(),
            Scalar::String(s) => s.to_string(),
        }),
        YamlData::Representation(text, _, _) => Some(text.to_string()),
        YamlData::Tagged(_, inner) => key_text(inner),
        _ => None,
    }
}

impl Node {
    /// What the value is, for "expected X, found Y" messages: a scalar quoted as JSON, or its
    /// kind.
    pub fn describe(&self) -> String {
        match &self.kind {
            Kind::Null => "nothing".into(),
            Kind::Bool(b) => b.to_string(),
            Kind::Int(i) => i.to_string(),
            Kind::Float(f) => format!("{f:?}"),
            Kind::Str(s) => serde_json::Value::from(s.as_str()).to_string(),
            Kind::Seq(_) => "a list".into(),
            Kind::Map(_) => "a mapping".into(),
        }
    }
}

/// One YAML document as JSON (mappings keep their order), for files that are not agent files
/// (an `mm eval` suite). `Err` is `line: message`.
pub fn to_json(text: &str) -> Result<serde_json::Value, String> {
    fn json(node: &Node) -> serde_json::Value {
        match &node.kind {
            Kind::Null => serde_json::Value::Null,
            Kind::Bool(b) => (*b).into(),
            Kind::Int(i) => (*i).into(),
            Kind::Float(f) => {
                serde_json::Number::from_f64(*f).map_or(serde_json::Value::Null, Into::into)
            }
            Kind::Str(s) => s.clone().into(),
            Kind::Seq(items) => items.iter().map(json).collect(),
            Kind::Map(entries) => entries
                .iter()
                .map(|e| (e.key.clone(), json(&e.value)))
                .collect::<serde_json::Map<_, _>>()
                .into(),
        }
    }
    match parse(text, 1) {
        Ok(Some(node)) => Ok(json(&node)),
        Ok(None) => Ok(serde_json::Value::Null),
        Err(e) => Err(format!("{}: {}", e.line, e.message)),
    }
}
