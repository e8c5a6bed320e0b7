//! `skills:`, `mcp:` and `hooks:`: checked for shape here, used by their own modules.

use std::path::PathBuf;
use std::time::Duration;

use super::read::{
    Cx, Result, child, command, duration, index, list, map, non_empty_string, one_of, string,
    unknown_key, valid_name,
};
use crate::config::{
    HookConfig, HooksConfig, McpProtocol, McpServerConfig, McpTransport, ToolMatcher,
};
use crate::sandbox::SandboxMode;
use crate::yaml::{Entry, Kind, Node};

const MCP_KEYS: &[&str] = &[
    "url", "headers", "command", "env", "prefix", "timeout", "sandbox", "protocol",
];
/// How long one MCP tool call may take when `timeout` is not given (as a declared tool).
const MCP_CALL_TIMEOUT: Duration = Duration::from_secs(120);
const HOOK_EVENTS: &[&str] = &["preToolCall", "postToolCall"];
const HOOK_KEYS: &[&str] = &["match", "command", "timeout"];
const HOOK_TIMEOUT: Duration = Duration::from_secs(60);

/// `skills:` — folders, resolved against the agent file's folder.
pub(super) fn skills(cx: &Cx, node: &Node, path: &str) -> Result<Vec<PathBuf>> {
    list(cx, node, path)?
        .iter()
        .enumerate()
        .map(|(i, item)| Ok(cx.resolve(&non_empty_string(cx, item, &index(path, i))?)))
        .collect()
}

/// `mcp:` — servers in file order.
pub(super) fn mcp(cx: &Cx, node: &Node, path: &str) -> Result<Vec<McpServerConfig>> {
    map(cx, node, path)?
        .iter()
        .map(|entry| server(cx, entry, &child(path, &entry.key)))
        .collect()
}

fn server(cx: &Cx, entry: &Entry, path: &str) -> Result<McpServerConfig> {
    let name = entry.key.as_str();
    if !valid_name(name) {
        return Err(cx.err(
            entry.line,
            path,
            format!("invalid server name `{name}`: use 1 to 64 letters, digits, `_` or `-`"),
        ));
    }
    let mut url = None;
    let mut headers: Option<(Vec<(String, String)>, usize)> = None;
    let mut argv = None;
    let mut env: Option<(Vec<(String, String)>, usize)> = None;
    let mut prefix = format!("{name}_");
    let mut timeout = MCP_CALL_TIMEOUT;
    let mut sandbox: Option<(SandboxMode, usize)> = None;
    let mut protocol = McpProtocol::default();
    for field in map(cx, &entry.value, path)? {
        let key = child(path, &field.key);
        let value = &field.value;
        if value.kind == Kind::Null && MCP_KEYS.contains(&field.key.as_str()) {
            continue;
        }
        match field.key.as_str() {
            "url" => url = Some(url_value(cx, value, &key)?),
            "headers" => headers = Some((string_map(cx, value, &key)?, field.line)),
            "command" => argv = Some(command(cx, value, &key)?),
            "env" => env = Some((string_map(cx, value, &key)?, field.line)),
            "prefix" => {
                let text = string(cx, value, &key)?;
                if !text.is_empty() && !valid_name(&text) {
                    return Err(cx.err(
                        value.line,
                        &key,
                        "use letters, digits, `_` or `-` (or \"\" for no prefix)",
                    ));
                }
                prefix = if text.is_empty() {
                    text
                } else {
                    format!("{text}_")
                };
            }
            "timeout" => timeout = duration(cx, value, &key)?,
            "sandbox" => sandbox = Some((super::read::sandbox(cx, value, &key)?, value.line)),
            "protocol" => {
                let name = one_of(cx, value, &key, "protocol", McpProtocol::NAMES)?;
                // `one_of` returned one of the names.
                protocol = McpProtocol::parse(name).unwrap_or_default();
            }
            _ => return Err(unknown_key(cx, field, path, MCP_KEYS)),
        }
    }
    let transport = match (url, argv) {
        (Some(_), Some(_)) => {
            return Err(cx.err(
                entry.line,
                path,
                "give either `url` (an HTTP server) or `command` (a stdio server), not both",
            ));
        }
        (None, None) => {
            return Err(cx.err(
                entry.line,
                path,
                "missing `url` (an HTTP server) or `command` (a stdio server)",
            ));
        }
        (Some(url), None) => {
            if let Some((_, line)) = env {
                return Err(cx.err(line, &child(path, "env"), "`env` is for `command` servers"));
            }
            if let Some((_, line)) = sandbox {
                return Err(cx.err(
                    line,
                    &child(path, "sandbox"),
                    "`sandbox` is for `command` servers (mm runs no process for a `url` server)",
                ));
            }
            McpTransport::Http {
                url,
                headers: headers.map(|(h, _)| h).unwrap_or_default(),
            }
        }
        (None, Some((command, program))) => {
            if let Some((_, line)) = headers {
                return Err(cx.err(
                    line,
                    &child(path, "headers"),
                    "`headers` is for `url` servers",
                ));
            }
            McpTransport::Stdio {
                command,
                program,
                env: env.map(|(e, _)| e).unwrap_or_default(),
            }
        }
    };
    Ok(McpServerConfig {
        name: name.to_string(),
        transport,
        tool_prefix: prefix,
        call_timeout: timeout,
        sandbox: sandbox.map(|(mode, _)| mode).unwrap_or_default(),
        protocol,
    })
}

fn url_value(cx: &Cx, node: &Node, path: &str) -> Result<String> {
    let text = non_empty_string(cx, node, path)?;
    match reqwest::Url::parse(&text) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.has_host() => Ok(text),
        _ => Err(cx.err(
            node.line,
            path,
            format!("{} is not an http(s) URL", node.describe()),
        )),
    }
}

/// A mapping of names to string values (`headers:`, `env:`), in file order.
fn string_map(cx: &Cx, node: &Node, path: &str) -> Result<Vec<(String, String)>> {
    map(cx, node, path)?
        .iter()
        .map(|entry| {
            let value = string(cx, &entry.value, &child(path, &entry.key))?;
            Ok((entry.key.clone(), value))
        })
        .collect()
}

/// `hooks:` — `preToolCall` and `postToolCall` lists.
pub(super) fn hooks(cx: &Cx, node: &Node, path: &str) -> Result<HooksConfig> {
    let mut hooks = HooksConfig::default();
    for entry in map(cx, node, path)? {
        let key = child(path, &entry.key);
        let target = match entry.key.as_str() {
            "preToolCall" => &mut hooks.pre_tool_call,
            "postToolCall" => &mut hooks.post_tool_call,
            _ => return Err(unknown_key(cx, entry, path, HOOK_EVENTS)),
        };
        for (i, item) in list(cx, &entry.value, &key)?.iter().enumerate() {
            target.push(hook(cx, item, &index(&key, i))?);
        }
    }
    Ok(hooks)
}

fn hook(cx: &Cx, node: &Node, path: &str) -> Result<HookConfig> {
    if !matches!(node.kind, Kind::Map(_)) {
        return Err(cx.err(
            node.line,
            path,
            format!(
                "expected a mapping like {{match: \"bash\", command: [\"./guard.sh\"]}}, found {}",
                node.describe()
            ),
        ));
    }
    let mut matcher = None;
    let mut argv = None;
    let mut timeout = HOOK_TIMEOUT;
    for field in map(cx, node, path)? {
        let key = child(path, &field.key);
        let value = &field.value;
        if value.kind == Kind::Null && HOOK_KEYS.contains(&field.key.as_str()) {
            continue;
        }
        match field.key.as_str() {
            "match" => {
                let pattern = string(cx, value, &key)?;
                let compiled = ToolMatcher::new(&pattern).map_err(|e| {
                    cx.err(
                        value.line,
                        &key,
                        format!("invalid regex: {}", regex_reason(&e)),
                    )
                })?;
                matcher = Some(compiled);
            }
            "command" => argv = Some(command(cx, value, &key)?),
            "timeout" => timeout = duration(cx, value, &key)?,
            _ => return Err(unknown_key(cx, field, path, HOOK_KEYS)),
        }
    }
    let Some((command, program)) = argv else {
        return Err(cx.err(
            node.line,
            &child(path, "command"),
            "missing: the hook's argv list",
        ));
    };
    Ok(HookConfig {
        matcher,
        command,
        program,
        timeout,
    })
}

/// The last line of a regex error (`error: unclosed group`), without its `error: `.
fn regex_reason(error: &regex::Error) -> String {
    let text = error.to_string();
    let last = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or(&text);
    last.trim().trim_start_matches("error: ").to_string()
}
