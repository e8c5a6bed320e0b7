//! `mm eval --variants` (docs/eval.md): the same tools shown to the model in other ways — the
//! closing sentence left out, a server-name prefix on the names, "MCP tool from server …" before
//! the descriptions, `required`/`enum` as schema keywords, tools and parameters renamed,
//! descriptions rewritten. What runs does not change: a renamed parameter keeps its place in the
//! command, so the recorded argv is judged as before.

use std::collections::BTreeMap;
use std::path::Path;

use mm_core::{DeclaredToolConfig, Presentation, SchemaStyle};
use serde::Deserialize;

/// The server name of the built-in variants that imitate an MCP server's tools (the seed's
/// stand-in served its tools from a server named `proj`).
const SERVER: &str = "proj";

/// One way of showing the tools.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    /// The row's name in the table.
    pub name: String,
    /// `false` leaves out "Give each parameter as its own field." (`presentation.closing_sentence`).
    #[serde(default)]
    pub closing_sentence: Option<bool>,
    /// `sentences` or `keywords` (`presentation.schema`).
    #[serde(default)]
    pub schema: Option<String>,
    /// Put before every tool's name, as mm names an MCP server's tools (`proj_`).
    #[serde(default)]
    pub prefix: Option<String>,
    /// Begin every description with "MCP tool from server NAME: ".
    #[serde(default)]
    pub server: Option<String>,
    /// Per tool (by its name in the agent file): a new name, description, parameter names and
    /// descriptions.
    #[serde(default)]
    pub tools: BTreeMap<String, ToolChange>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolChange {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub parameters: BTreeMap<String, ParamChange>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParamChange {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
}

/// The name of the row of the tools as the agent file shows them.
pub const AS_DECLARED: &str = "declared";

impl Variant {
    /// The tools as the agent file shows them (the `declared` row).
    pub fn as_declared() -> Self {
        Self {
            name: AS_DECLARED.into(),
            ..Self::default()
        }
    }
}

/// The built-in variants, the agent's own presentation first: each changes one thing, the
/// last all three ways the seed's MCP stand-in differed from the declared tools.
pub fn builtin() -> Vec<Variant> {
    let base = |name: &str| Variant {
        name: name.into(),
        ..Variant::default()
    };
    vec![
        Variant::as_declared(),
        Variant {
            closing_sentence: Some(false),
            ..base("no-closing")
        },
        Variant {
            prefix: Some(format!("{SERVER}_")),
            ..base("prefix")
        },
        Variant {
            server: Some(SERVER.into()),
            ..base("mcp-description")
        },
        Variant {
            schema: Some("keywords".into()),
            ..base("keywords")
        },
        Variant {
            closing_sentence: Some(false),
            prefix: Some(format!("{SERVER}_")),
            server: Some(SERVER.into()),
            ..base("stand-in")
        },
    ]
}

/// `--variants FILE|builtin`: the built-in list, or the file's (`variants:` a list), after the
/// agent's own presentation unless the file names a variant `declared` itself.
pub fn load(spec: &str) -> Result<Vec<Variant>, String> {
    if spec == "builtin" {
        return Ok(builtin());
    }
    let path = Path::new(spec);
    let file = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{file}: cannot read the variants: {e} (or give `builtin`)"))?;
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct File {
        variants: Vec<Variant>,
    }
    let parsed: File = super::suite::from_yaml(path, &text)?;
    let mut variants = parsed.variants;
    if variants.is_empty() {
        return Err(format!("{file}: variants: give at least one"));
    }
    for (i, v) in variants.iter().enumerate() {
        if v.name.trim().is_empty() {
            return Err(format!("{file}: variants[{i}].name: give the row a name"));
        }
        if variants[..i].iter().any(|other| other.name == v.name) {
            return Err(format!(
                "{file}: variants[{i}].name: `{}` is used twice",
                v.name
            ));
        }
        if let Some(style) = &v.schema
            && SchemaStyle::parse(style).is_none()
        {
            return Err(format!(
                "{file}: variants[{i}].schema: `{style}` is not one of: {}",
                SchemaStyle::NAMES.join(", ")
            ));
        }
    }
    if !variants.iter().any(|v| v.name == AS_DECLARED) {
        variants.insert(0, Variant::as_declared());
    }
    Ok(variants)
}

impl Variant {
    /// The agent's tools and presentation as this variant shows them. `Err` names what does
    /// not fit the agent (a tool or parameter it does not have, a name that is not one).
    pub fn apply(
        &self,
        tools: &[DeclaredToolConfig],
        presentation: Presentation,
    ) -> Result<(Vec<DeclaredToolConfig>, Presentation), String> {
        let at = format!("variant `{}`", self.name);
        for name in self.tools.keys() {
            if !tools.iter().any(|t| &t.name == name) {
                return Err(format!(
                    "{at}: tools.{name}: the agent has no tool `{name}`{}",
                    hint(name, tools.iter().map(|t| t.name.as_str()))
                ));
            }
        }
        let mut out = Vec::with_capacity(tools.len());
        for tool in tools {
            let change = self.tools.get(&tool.name);
            let mut tool = tool.clone();
            if let Some(change) = change {
                rename_params(&mut tool, change, &at)?;
                if let Some(description) = &change.description {
                    tool.description.clone_from(description);
                }
                if let Some(name) = &change.name {
                    tool.name.clone_from(name);
                }
            }
            if let Some(prefix) = &self.prefix {
                tool.name = format!("{prefix}{}", tool.name);
            }
            if let Some(server) = &self.server {
                tool.description = format!("MCP tool from server {server}: {}", tool.description);
            }
            if !valid_name(&tool.name) {
                return Err(format!(
                    "{at}: `{}` is not a tool name (1–64 of A-Z a-z 0-9 _ -)",
                    tool.name
                ));
            }
            if out.iter().any(|t: &DeclaredToolConfig| t.name == tool.name) {
                return Err(format!("{at}: two tools would be named `{}`", tool.name));
            }
            out.push(tool);
        }
        let mut presentation = presentation;
        if let Some(closing) = self.closing_sentence {
            presentation.closing_sentence = closing;
        }
        if let Some(style) = self.schema.as_deref().and_then(SchemaStyle::parse) {
            presentation.schema = style;
        }
        Ok((out, presentation))
    }
}

/// Renames and redescribes `tool`'s parameters, each placeholder of the command following its
/// parameter's new name.
fn rename_params(
    tool: &mut DeclaredToolConfig,
    change: &ToolChange,
    at: &str,
) -> Result<(), String> {
    let tool_name = tool.name.clone();
    for (old, param) in &change.parameters {
        let Some(spec) = tool.params.params.iter_mut().find(|p| &p.name == old) else {
            let names: Vec<String> = tool.params.params.iter().map(|p| p.name.clone()).collect();
            return Err(format!(
                "{at}: tools.{tool_name}.parameters.{old}: `{tool_name}` has no parameter `{old}`{}",
                hint(old, names.iter().map(String::as_str))
            ));
        };
        if let Some(description) = &param.description {
            spec.description = Some(description.clone());
        }
        let Some(new) = &param.name else { continue };
        if !valid_name(new) {
            return Err(format!(
                "{at}: tools.{tool_name}.parameters.{old}.name: `{new}` is not a parameter name"
            ));
        }
        spec.name.clone_from(new);
        for entry in &mut tool.command {
            *entry = rename_placeholder(entry, old, new);
        }
    }
    let mut seen: Vec<&str> = Vec::new();
    for p in &tool.params.params {
        if seen.contains(&p.name.as_str()) {
            return Err(format!(
                "{at}: tools.{tool_name}: two parameters would be named `{}`",
                p.name
            ));
        }
        seen.push(&p.name);
    }
    Ok(())
}

/// `entry` with each `{{old}}` (spaces inside the braces allowed) written `{{new}}`.
pub(super) fn rename_placeholder(entry: &str, old: &str, new: &str) -> String {
    let mut out = String::with_capacity(entry.len());
    let mut copied = 0;
    for (range, name) in mm_core::placeholders(entry) {
        if name == old {
            out.push_str(&entry[copied..range.start]);
            out.push_str(&format!("{{{{{new}}}}}"));
            copied = range.end;
        }
    }
    out.push_str(&entry[copied..]);
    out
}

fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn hint<'a>(name: &str, names: impl Iterator<Item = &'a str>) -> String {
    mm_core::did_you_mean(name, names)
        .map_or_else(String::new, |n| format!("; did you mean `{n}`?"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_follow_their_parameter() {
        assert_eq!(
            rename_placeholder(
                "--channel={{ channel }}/{{channels}}{{channel}}",
                "channel",
                "ch"
            ),
            "--channel={{ch}}/{{channels}}{{ch}}"
        );
        assert_eq!(rename_placeholder("plain", "a", "b"), "plain");
    }

    #[test]
    fn the_builtin_list_starts_with_the_agent_as_it_is() {
        let list = builtin();
        let names: Vec<&str> = list.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "declared",
                "no-closing",
                "prefix",
                "mcp-description",
                "keywords",
                "stand-in"
            ]
        );
        assert_eq!(
            list[0],
            Variant {
                name: "declared".into(),
                ..Variant::default()
            }
        );
    }
}
