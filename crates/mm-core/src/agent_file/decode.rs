//! Walking the YAML tree into an [`AgentConfig`]: the top-level keys and `limits:` (the typed
//! reads every part of the file uses are in [`super::read`]).
//!
//! Conventions: a key whose value is empty (`model:`, `~`, `null`) counts as absent; each
//! mapping is walked in file order and an unknown key is an error where it stands; errors on a
//! value point at the value's line, errors on a missing key at the line of its parent's key.

use super::read::{
    Cx, Result, boolean, child, duration, index, list, map, non_empty_string, one_of, positive,
    string, unknown_choice, unknown_key,
};
use crate::config::{AgentConfig, Limits, Presentation, SchemaStyle, ToolCallMode};
use crate::tools::{BUILTIN_NAMES, IMPLEMENTED_BUILTINS};
use crate::yaml::{Entry, Kind, Node};

const TOP_KEYS: &[&str] = &[
    "name",
    "model",
    "base_url",
    "api_key_env",
    "tool_calls",
    "yolo",
    "allow",
    "builtins",
    "tools",
    "skills",
    "mcp",
    "hooks",
    "limits",
    "sandbox",
    "presentation",
    "instructions",
];
const PRESENTATION_KEYS: &[&str] = &["closing_sentence", "schema"];
const LIMIT_KEYS: &[&str] = &[
    "max_turns",
    "max_output",
    "loop",
    "max_tokens",
    "reply_timeout",
];
const MODES: &[&str] = &["native", "constrained", "auto"];

/// The whole file: `root` is the front matter (or YAML file), `body` the Markdown body.
pub(super) fn agent(cx: &mut Cx, root: Option<&Node>, body: Option<&str>) -> Result<AgentConfig> {
    let mut config = AgentConfig {
        path: None,
        instructions: body.map(str::trim).unwrap_or_default().to_string(),
        ..AgentConfig::default()
    };
    if let Some(root) = root {
        let Kind::Map(entries) = &root.kind else {
            return Err(cx.err(
                root.line,
                "",
                format!(
                    "expected a mapping of keys (like `model: qwen3`), found {}",
                    root.describe()
                ),
            ));
        };
        for entry in entries {
            top_level(cx, &mut config, entry, body.is_some())?;
        }
    }
    config.warnings = std::mem::take(&mut cx.warnings);
    Ok(config)
}

fn top_level(cx: &mut Cx, config: &mut AgentConfig, entry: &Entry, markdown: bool) -> Result<()> {
    let key = entry.key.as_str();
    let value = &entry.value;
    if key.starts_with("x-") {
        // Extension keys, as in Compose files: a home for anchors, or for other programs.
        return Ok(());
    }
    if value.kind == Kind::Null && TOP_KEYS.contains(&key) {
        return Ok(());
    }
    match key {
        "name" => config.name = Some(non_empty_string(cx, value, key)?),
        "model" => config.model = non_empty_string(cx, value, key)?,
        "base_url" => config.base_url = http_url(cx, value, key)?,
        "api_key_env" => config.api_key_env = Some(env_name(cx, value, key)?),
        "tool_calls" => {
            config.tool_calls = match one_of(cx, value, key, "mode", MODES)? {
                "native" => ToolCallMode::Native,
                "constrained" => ToolCallMode::Constrained,
                _ => ToolCallMode::Auto,
            }
        }
        "yolo" => config.yolo = boolean(cx, value, key)?,
        "allow" => config.allow = allow(cx, value, key)?,
        "builtins" => config.builtins = Some(builtins(cx, value, key)?),
        "tools" => config.tools = super::tools::tools(cx, value, key)?,
        "skills" => {
            config.skills = super::extras::skills(cx, value, key)?;
        }
        "mcp" => config.mcp = super::extras::mcp(cx, value, key)?,
        "hooks" => config.hooks = super::extras::hooks(cx, value, key)?,
        "limits" => config.limits = limits(cx, value, key)?,
        "sandbox" => config.sandbox = super::read::sandbox(cx, value, key)?,
        "presentation" => config.presentation = presentation(cx, value, key)?,
        "instructions" if markdown => {
            return Err(cx.err(
                entry.line,
                key,
                "only a .yaml agent file has `instructions:`; in Markdown the body after the \
                 front matter is the instructions",
            ));
        }
        "instructions" => config.instructions = string(cx, value, key)?.trim().to_string(),
        _ => return Err(unknown_key(cx, entry, "", TOP_KEYS)),
    }
    Ok(())
}

fn limits(cx: &Cx, node: &Node, path: &str) -> Result<Limits> {
    let mut limits = Limits::default();
    for entry in map(cx, node, path)? {
        if entry.value.kind == Kind::Null && LIMIT_KEYS.contains(&entry.key.as_str()) {
            continue;
        }
        let key = child(path, &entry.key);
        let value = &entry.value;
        match entry.key.as_str() {
            "max_turns" => limits.max_turns = positive(cx, value, &key, u32::MAX.into())? as u32,
            "max_output" => {
                limits.max_output = positive(cx, value, &key, u32::MAX.into())? as usize
            }
            "loop" => limits.loop_threshold = positive(cx, value, &key, u32::MAX.into())? as u32,
            "max_tokens" => limits.max_tokens = positive(cx, value, &key, u32::MAX.into())? as u32,
            "reply_timeout" => limits.reply_timeout = duration(cx, value, &key)?,
            _ => return Err(unknown_key(cx, entry, path, LIMIT_KEYS)),
        }
    }
    Ok(limits)
}

fn presentation(cx: &Cx, node: &Node, path: &str) -> Result<Presentation> {
    let mut presentation = Presentation::default();
    for entry in map(cx, node, path)? {
        if entry.value.kind == Kind::Null && PRESENTATION_KEYS.contains(&entry.key.as_str()) {
            continue;
        }
        let key = child(path, &entry.key);
        let value = &entry.value;
        match entry.key.as_str() {
            "closing_sentence" => presentation.closing_sentence = boolean(cx, value, &key)?,
            "schema" => {
                let name = one_of(cx, value, &key, "schema style", SchemaStyle::NAMES)?;
                presentation.schema = SchemaStyle::parse(name).unwrap_or_default();
            }
            _ => return Err(unknown_key(cx, entry, path, PRESENTATION_KEYS)),
        }
    }
    Ok(presentation)
}

/// The end of the message for a key that nothing implements yet.
const NOT_YET: &str = "not supported yet in this version of mm; remove the key";

fn builtins(cx: &mut Cx, node: &Node, path: &str) -> Result<Vec<String>> {
    let mut names: Vec<String> = Vec::new();
    for (i, item) in list(cx, node, path)?.iter().enumerate() {
        let key = index(path, i);
        let name = string(cx, item, &key)?;
        if !BUILTIN_NAMES.contains(&name.as_str()) {
            return Err(cx.err(
                item.line,
                &key,
                unknown_choice("built-in", &format!("`{name}`"), BUILTIN_NAMES, "built-ins"),
            ));
        }
        if names.contains(&name) {
            return Err(cx.err(item.line, &key, format!("`{name}` is listed twice")));
        }
        if !IMPLEMENTED_BUILTINS.contains(&name.as_str()) {
            let e = cx.err(
                item.line,
                &key,
                format!(
                    "the built-in `{name}` is {NOT_YET}; built-ins available now: {}",
                    IMPLEMENTED_BUILTINS.join(", ")
                ),
            );
            cx.unsupported.push(e);
        }
        names.push(name);
    }
    Ok(names)
}

fn allow(cx: &Cx, node: &Node, path: &str) -> Result<Vec<String>> {
    let mut entries = Vec::new();
    for (i, item) in list(cx, node, path)?.iter().enumerate() {
        let key = index(path, i);
        let entry = non_empty_string(cx, item, &key)?;
        if entry.starts_with(':') {
            return Err(cx.err(
                item.line,
                &key,
                "give a tool name, or `tool:pattern` (like \"bash:git status*\")",
            ));
        }
        if let Some(pattern) = entry.strip_prefix("bash:")
            && !crate::permissions::is_bash_rule(pattern)
        {
            return Err(cx.err(
                item.line,
                &key,
                format!(
                    "{entry:?} would allow nothing: a bash rule is the words of one simple \
                     command, optionally ending in * (like \"bash:git status*\"), with no \
                     operator, $, quote left open or pattern character before the final *; \
                     see docs/permissions.md"
                ),
            ));
        }
        entries.push(entry);
    }
    Ok(entries)
}

fn http_url(cx: &Cx, node: &Node, path: &str) -> Result<String> {
    let text = non_empty_string(cx, node, path)?;
    crate::config::base_url(&text).ok_or_else(|| {
        cx.err(
            node.line,
            path,
            format!(
                "{} is not an http(s) URL; write like http://127.0.0.1:8080/v1",
                node.describe()
            ),
        )
    })
}

fn env_name(cx: &Cx, node: &Node, path: &str) -> Result<String> {
    let name = non_empty_string(cx, node, path)?;
    let valid = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    if !valid {
        return Err(cx.err(
            node.line,
            path,
            format!(
                "{} is not an environment variable name; give the name of the variable that \
                 holds the key, like OPENAI_API_KEY",
                node.describe()
            ),
        ));
    }
    Ok(name)
}
