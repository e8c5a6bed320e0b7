//! `tools:` — declared tools (SPEC §2): names, parameters, command templates, timeouts.

use std::time::Duration;

use serde_json::Value;

use super::read::{
    Cx, Result, boolean, child, command, duration, index, list, map, one_of, string, unknown_key,
    valid_name,
};
use crate::args::{ParamSpec, ParamType, Params};
use crate::config::{DeclaredToolConfig, placeholders};
use crate::text::did_you_mean;
use crate::tools::BUILTIN_NAMES;
use crate::yaml::{Entry, Kind, Node};

const TOOL_KEYS: &[&str] = &["description", "parameters", "command", "timeout"];
const PARAM_KEYS: &[&str] = &["type", "description", "required", "enum", "default"];
const TYPES: &[&str] = &["string", "integer", "number", "boolean"];
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

pub(super) fn tools(cx: &mut Cx, node: &Node, path: &str) -> Result<Vec<DeclaredToolConfig>> {
    if let Kind::Seq(_) = node.kind {
        return Err(cx.err(
            node.line,
            path,
            "expected a mapping of tool names to tools, found a list; to choose built-in tools, \
             use `builtins:`",
        ));
    }
    let mut tools = Vec::new();
    for entry in map(cx, node, path)? {
        tools.push(tool(cx, entry, &child(path, &entry.key))?);
    }
    Ok(tools)
}

fn tool(cx: &mut Cx, entry: &Entry, path: &str) -> Result<DeclaredToolConfig> {
    let name = entry.key.as_str();
    if BUILTIN_NAMES.contains(&name) {
        return Err(cx.err(
            entry.line,
            path,
            format!(
                "`{name}` is reserved: it is the name of a built-in tool (reserved even when that \
                 built-in is turned off); choose another name"
            ),
        ));
    }
    if !valid_name(name) {
        return Err(cx.err(
            entry.line,
            path,
            format!("invalid tool name `{name}`: use 1 to 64 letters, digits, `_` or `-`"),
        ));
    }
    let mut description = None;
    let mut params = Vec::new();
    let mut argv = None;
    let mut timeout = DEFAULT_TIMEOUT;
    for field in map(cx, &entry.value, path)? {
        let key = child(path, &field.key);
        let value = &field.value;
        if value.kind == Kind::Null && TOOL_KEYS.contains(&field.key.as_str()) {
            continue;
        }
        match field.key.as_str() {
            "description" => {
                let text = string(cx, value, &key)?;
                description = Some((text.trim().to_string(), value.line));
            }
            "parameters" => params = parameters(cx, value, &key)?,
            "command" => argv = Some((command(cx, value, &key)?, value)),
            "timeout" => timeout = duration(cx, value, &key)?,
            _ => return Err(unknown_key(cx, field, path, TOOL_KEYS)),
        }
    }
    let description = match description {
        Some((text, _)) if !text.is_empty() => text,
        Some((_, line)) => {
            return Err(cx.err(line, &child(path, "description"), "may not be empty"));
        }
        None => {
            return Err(cx.err(
                entry.line,
                &child(path, "description"),
                "missing: say what the tool does; the model reads it to decide when to call it",
            ));
        }
    };
    let Some(((argv, program), command_node)) = argv else {
        return Err(cx.err(
            entry.line,
            &child(path, "command"),
            "missing: give the program and its arguments, like [\"./run.sh\", \"{{arg}}\"]",
        ));
    };
    check_placeholders(cx, &argv, command_node, &params, &child(path, "command"))?;
    Ok(DeclaredToolConfig {
        name: name.to_string(),
        description,
        params: Params {
            params: params.into_iter().map(|(p, _)| p).collect(),
            deny_unknown: true,
        },
        command: argv,
        program,
        timeout,
    })
}

/// Every `{{name}}` names a parameter, none is in the program; unused parameters are warned of.
fn check_placeholders(
    cx: &mut Cx,
    argv: &[String],
    node: &Node,
    params: &[(ParamSpec, usize)],
    path: &str,
) -> Result<()> {
    let line_of = |i: usize| match &node.kind {
        Kind::Seq(items) => items.get(i).map_or(node.line, |n| n.line),
        _ => node.line,
    };
    let names: Vec<&str> = params.iter().map(|(p, _)| p.name.as_str()).collect();
    let mut used = vec![false; names.len()];
    for (i, entry) in argv.iter().enumerate() {
        let found = placeholders(entry);
        if i == 0 && !found.is_empty() {
            return Err(cx.err(
                line_of(0),
                &index(path, 0),
                "the program may not contain a placeholder",
            ));
        }
        for (_, name) in found {
            if let Some(at) = names.iter().position(|n| *n == name) {
                used[at] = true;
                continue;
            }
            let message = if names.is_empty() {
                format!("unknown placeholder {{{{{name}}}}}; the tool has no parameters")
            } else {
                let hint = did_you_mean(name, names.iter().copied())
                    .map(|m| format!(" did you mean {{{{{m}}}}}?"))
                    .unwrap_or_default();
                format!(
                    "unknown placeholder {{{{{name}}}}};{hint} parameters are: {}",
                    names.join(", ")
                )
            };
            return Err(cx.err(line_of(i), &index(path, i), message));
        }
    }
    let parent = path.strip_suffix(".command").unwrap_or(path);
    for ((spec, line), used) in params.iter().zip(used) {
        if !used {
            cx.warn(
                *line,
                &child(&child(parent, "parameters"), &spec.name),
                format!(
                    "no command entry uses {{{{{}}}}}: the model's value is ignored",
                    spec.name
                ),
            );
        }
    }
    Ok(())
}

/// `parameters:` in file order, each with the line of its name.
fn parameters(cx: &Cx, node: &Node, path: &str) -> Result<Vec<(ParamSpec, usize)>> {
    let mut params = Vec::new();
    for entry in map(cx, node, path)? {
        params.push((parameter(cx, entry, &child(path, &entry.key))?, entry.line));
    }
    Ok(params)
}

fn parameter(cx: &Cx, entry: &Entry, path: &str) -> Result<ParamSpec> {
    let name = entry.key.as_str();
    if !valid_name(name) {
        return Err(cx.err(
            entry.line,
            path,
            format!("invalid parameter name `{name}`: use 1 to 64 letters, digits, `_` or `-`"),
        ));
    }
    let mut ty = None;
    let mut description = None;
    let mut required: Option<(bool, usize)> = None;
    let mut enum_node = None;
    let mut default_node = None;
    let fields = match &entry.value.kind {
        Kind::Str(_) => {
            return Err(cx.err(
                entry.value.line,
                path,
                format!(
                    "expected a mapping, like {{type: {}}}",
                    string(cx, &entry.value, path).unwrap_or_default()
                ),
            ));
        }
        _ => map(cx, &entry.value, path)?,
    };
    for field in fields {
        let key = child(path, &field.key);
        let value = &field.value;
        if value.kind == Kind::Null && PARAM_KEYS.contains(&field.key.as_str()) {
            continue;
        }
        match field.key.as_str() {
            "type" => ty = Some(param_type(one_of(cx, value, &key, "type", TYPES)?)),
            "description" => {
                let text = string(cx, value, &key)?.trim().to_string();
                description = (!text.is_empty()).then_some(text);
            }
            "required" => required = Some((boolean(cx, value, &key)?, value.line)),
            "enum" => enum_node = Some(value),
            "default" => default_node = Some(value),
            _ => return Err(unknown_key(cx, field, path, PARAM_KEYS)),
        }
    }
    let Some(ty) = ty else {
        return Err(cx.err(
            entry.line,
            &child(path, "type"),
            format!("missing: one of {}", TYPES.join(", ")),
        ));
    };
    let enum_values = match enum_node {
        Some(node) => Some(enum_values(cx, node, ty, &child(path, "enum"))?),
        None => None,
    };
    let default = match default_node {
        Some(node) => {
            let key = child(path, "default");
            let value = typed(cx, node, ty, &key)?;
            if let Some(allowed) = &enum_values {
                if !allowed.contains(&value) {
                    return Err(cx.err(
                        node.line,
                        &key,
                        format!(
                            "{value} is not one of the enum values: {}",
                            render_values(allowed)
                        ),
                    ));
                }
            }
            Some(value)
        }
        None => None,
    };
    // A default makes the parameter optional for the model; saying it is required too is a
    // contradiction worth pointing out rather than silently resolving.
    let required = match (required, &default) {
        (Some((true, line)), Some(_)) => {
            return Err(cx.err(
                line,
                &child(path, "required"),
                "a parameter with a `default` is optional; remove `required: true` or the default",
            ));
        }
        (Some((r, _)), _) => r,
        (None, default) => default.is_none(),
    };
    Ok(ParamSpec {
        name: name.to_string(),
        ty,
        description,
        required,
        enum_values,
        default,
        schema: None,
    })
}

fn param_type(name: &str) -> ParamType {
    match name {
        "integer" => ParamType::Integer,
        "number" => ParamType::Number,
        "boolean" => ParamType::Boolean,
        _ => ParamType::String,
    }
}

fn enum_values(cx: &Cx, node: &Node, ty: ParamType, path: &str) -> Result<Vec<Value>> {
    let items = list(cx, node, path)?;
    if items.is_empty() {
        return Err(cx.err(node.line, path, "an enum needs at least one value"));
    }
    let mut values = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let key = index(path, i);
        let value = typed(cx, item, ty, &key)?;
        if values.contains(&value) {
            return Err(cx.err(item.line, &key, format!("{value} is listed twice")));
        }
        values.push(value);
    }
    Ok(values)
}

/// `node` as a JSON value of type `ty`, or an error saying it is not one.
fn typed(cx: &Cx, node: &Node, ty: ParamType, path: &str) -> Result<Value> {
    let value = match (&node.kind, ty) {
        (Kind::Str(s), ParamType::String) => Some(Value::from(s.as_str())),
        (Kind::Int(i), ParamType::Integer | ParamType::Number) => Some(Value::from(*i)),
        (Kind::Float(f), ParamType::Number) => serde_json::Number::from_f64(*f).map(Value::Number),
        (Kind::Bool(b), ParamType::Boolean) => Some(Value::from(*b)),
        _ => None,
    };
    value.ok_or_else(|| {
        let expected = match ty {
            ParamType::Integer => "an integer",
            ParamType::Number => "a finite number",
            ParamType::Boolean => "a boolean (true or false)",
            _ => "a string",
        };
        let hint = match (&node.kind, ty) {
            (Kind::Int(_) | Kind::Float(_) | Kind::Bool(_), ParamType::String) => {
                format!("; quote it: \"{}\"", node.describe())
            }
            _ => String::new(),
        };
        cx.err(
            node.line,
            path,
            format!("{} is not {expected}{hint}", node.describe()),
        )
    })
}

fn render_values(values: &[Value]) -> String {
    values
        .iter()
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}
