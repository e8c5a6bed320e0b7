//! Reading typed values out of the YAML tree: the decoding context ([`Cx`]: where errors
//! point, what relative paths resolve against) and one reader per kind of value, each with an
//! error that names the file, the line and the key.

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use super::AgentFileError;
use crate::text::did_you_mean;
use crate::yaml::{Entry, Kind, Node};

pub(super) type Result<T> = std::result::Result<T, AgentFileError>;

/// The decoding context: where errors point and what relative paths resolve against.
pub(crate) struct Cx {
    file: String,
    /// The agent file's folder, absolute.
    dir: PathBuf,
    pub warnings: Vec<AgentFileError>,
    /// Keys that parse but that nothing implements yet, in file order: using one is an error
    /// (a reserved built-in that would be silently ignored misleads), reported
    /// once the whole file is known to be well formed.
    pub unsupported: Vec<AgentFileError>,
}

impl Cx {
    pub fn new(file: String, agent_path: &Path) -> Self {
        let parent = agent_path.parent().unwrap_or(Path::new(""));
        let parent = if parent.as_os_str().is_empty() {
            Path::new(".")
        } else {
            parent
        };
        let dir = std::path::absolute(parent).unwrap_or_else(|_| parent.to_path_buf());
        Self {
            file,
            dir: clean(&dir),
            warnings: Vec::new(),
            unsupported: Vec::new(),
        }
    }

    pub fn err(&self, line: usize, key: &str, message: impl Into<String>) -> AgentFileError {
        AgentFileError {
            file: self.file.clone(),
            line,
            key: key.to_string(),
            message: message.into(),
        }
    }

    pub fn warn(&mut self, line: usize, key: &str, message: impl Into<String>) {
        let warning = self.err(line, key, message);
        self.warnings.push(warning);
    }

    /// `path` resolved against the agent file's folder when relative.
    pub fn resolve(&self, path: &str) -> PathBuf {
        let path = Path::new(path);
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            clean(&self.dir.join(path))
        }
    }

    /// A program (`command[0]`): a relative path with a `/` resolves against the agent file's
    /// folder; a bare name is kept for a `PATH` look-up when it runs.
    pub fn program(&self, program: &str) -> PathBuf {
        if program.contains('/') {
            self.resolve(program)
        } else {
            PathBuf::from(program)
        }
    }
}

/// Drops `.` components (`/a/./b` → `/a/b`); `..` is kept, as the file system may have
/// symlinks.
fn clean(path: &Path) -> PathBuf {
    path.components()
        .filter(|c| *c != Component::CurDir)
        .collect()
}

/// `path.key`, or `key` at the top.
pub(super) fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// `path[i]`.
pub(super) fn index(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}

pub(super) fn type_error(cx: &Cx, node: &Node, path: &str, expected: &str) -> AgentFileError {
    let hint = match (&node.kind, expected) {
        (Kind::Int(_) | Kind::Float(_) | Kind::Bool(_), "a string") => {
            format!("; quote it: \"{}\"", node.describe())
        }
        _ => String::new(),
    };
    cx.err(
        node.line,
        path,
        format!("expected {expected}, found {}{hint}", node.describe()),
    )
}

pub(super) fn map<'n>(cx: &Cx, node: &'n Node, path: &str) -> Result<&'n [Entry]> {
    match &node.kind {
        Kind::Map(entries) => Ok(entries),
        Kind::Null => Ok(&[]),
        _ => Err(type_error(cx, node, path, "a mapping")),
    }
}

pub(super) fn list<'n>(cx: &Cx, node: &'n Node, path: &str) -> Result<&'n [Node]> {
    match &node.kind {
        Kind::Seq(items) => Ok(items),
        Kind::Null => Ok(&[]),
        _ => Err(type_error(cx, node, path, "a list")),
    }
}

pub(super) fn string(cx: &Cx, node: &Node, path: &str) -> Result<String> {
    match &node.kind {
        Kind::Str(s) if s.contains('\0') => {
            Err(cx.err(node.line, path, "a NUL byte is not allowed"))
        }
        Kind::Str(s) => Ok(s.clone()),
        _ => Err(type_error(cx, node, path, "a string")),
    }
}

pub(super) fn non_empty_string(cx: &Cx, node: &Node, path: &str) -> Result<String> {
    let s = string(cx, node, path)?;
    if s.trim().is_empty() {
        return Err(cx.err(node.line, path, "may not be empty"));
    }
    Ok(s)
}

pub(super) fn boolean(cx: &Cx, node: &Node, path: &str) -> Result<bool> {
    match node.kind {
        Kind::Bool(b) => Ok(b),
        _ => Err(type_error(cx, node, path, "true or false")),
    }
}

/// A whole number from 1 to `max`.
pub(super) fn positive(cx: &Cx, node: &Node, path: &str, max: u64) -> Result<u64> {
    match node.kind {
        Kind::Int(i) if i >= 1 && i.unsigned_abs() <= max => Ok(i.unsigned_abs()),
        Kind::Int(i) if i >= 1 => {
            Err(cx.err(node.line, path, format!("{i} is too large (at most {max})")))
        }
        Kind::Int(i) => Err(cx.err(node.line, path, format!("must be at least 1, found {i}"))),
        _ => Err(type_error(cx, node, path, "a whole number")),
    }
}

/// `sandbox:` (of the agent, or of an MCP server): `workspace`, `off` or `best-effort`.
pub(super) fn sandbox(cx: &Cx, node: &Node, path: &str) -> Result<crate::sandbox::SandboxMode> {
    let name = one_of(
        cx,
        node,
        path,
        "sandbox mode",
        crate::sandbox::SandboxMode::NAMES,
    )?;
    // `one_of` returned one of the names.
    Ok(crate::sandbox::SandboxMode::parse(name).unwrap_or_default())
}

/// A string that must be one of `choices`: the matching choice.
pub(super) fn one_of(
    cx: &Cx,
    node: &Node,
    path: &str,
    what: &str,
    choices: &[&'static str],
) -> Result<&'static str> {
    if let Kind::Str(s) = &node.kind {
        if let Some(choice) = choices.iter().find(|c| **c == s) {
            return Ok(choice);
        }
    }
    let found = match &node.kind {
        Kind::Str(s) => format!("`{s}`"),
        _ => node.describe(),
    };
    Err(cx.err(
        node.line,
        path,
        unknown_choice(what, &found, choices, &format!("{what}s")),
    ))
}

/// `unknown mode `nativ`; did you mean `native`? modes are: native, constrained, auto`.
pub(super) fn unknown_choice(what: &str, found: &str, choices: &[&str], plural: &str) -> String {
    let word = found.trim_matches('`');
    let hint = did_you_mean(word, choices.iter().copied())
        .map(|m| format!("; did you mean `{m}`?"))
        .unwrap_or_else(|| ";".into());
    format!(
        "unknown {what} {found}{hint} {plural} are: {}",
        choices.join(", ")
    )
}

/// The longest timeout accepted: longer is surely a typo, and it keeps deadline arithmetic
/// (`Instant + timeout`) far from overflow.
const MAX_DURATION: Duration = Duration::from_secs(24 * 3600);

/// A duration: `500ms`, `60s`, `2m`, `1h`, combined (`1m30s`), or a number of seconds.
pub(super) fn duration(cx: &Cx, node: &Node, path: &str) -> Result<Duration> {
    let seconds = |s: f64| {
        (s.is_finite() && s >= 0.001)
            .then(|| Duration::try_from_secs_f64(s).ok())
            .flatten()
    };
    let parsed = match &node.kind {
        Kind::Int(i) if *i >= 1 => Some(Duration::from_secs(i.unsigned_abs())),
        Kind::Float(f) => seconds(*f),
        Kind::Str(s) => parse_duration(s),
        _ => None,
    };
    match parsed {
        Some(d) if d > MAX_DURATION => Err(cx.err(
            node.line,
            path,
            format!("{} is longer than the maximum, 24h", node.describe()),
        )),
        Some(d) => Ok(d),
        None => Err(cx.err(
            node.line,
            path,
            format!(
                "{} is not a duration; write like 60s, 2m, 500ms, 1h or a number of seconds",
                node.describe()
            ),
        )),
    }
}

pub(super) fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    if let Ok(secs) = text.parse::<u64>() {
        return (secs >= 1).then(|| Duration::from_secs(secs));
    }
    let mut rest = text;
    let mut total_ms = 0f64;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest.get(..num_len)?.parse().ok()?;
        rest = rest.get(num_len..)?;
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit_ms = match rest.get(..unit_len)? {
            "ms" => 1.0,
            "s" => 1_000.0,
            "m" => 60_000.0,
            "h" => 3_600_000.0,
            _ => return None,
        };
        rest = rest.get(unit_len..)?;
        total_ms += number * unit_ms;
    }
    if total_ms.is_nan() || total_ms < 1.0 {
        return None;
    }
    Duration::try_from_secs_f64(total_ms / 1000.0).ok()
}

/// A `command:`: a non-empty list of strings. Returns the argv and the resolved program.
pub(super) fn command(cx: &Cx, node: &Node, path: &str) -> Result<(Vec<String>, PathBuf)> {
    let items = match &node.kind {
        Kind::Seq(items) => items,
        Kind::Str(_) => {
            return Err(cx.err(
                node.line,
                path,
                "expected a list, one argv entry per element, like [\"./run.sh\", \"--fast\"]; \
                 no shell splits a string",
            ));
        }
        _ => return Err(type_error(cx, node, path, "a list")),
    };
    let mut argv = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        argv.push(string(cx, item, &index(path, i))?);
    }
    let Some(program) = argv.first() else {
        return Err(cx.err(
            node.line,
            path,
            "the command may not be empty; give the program and its arguments",
        ));
    };
    if program.trim().is_empty() {
        return Err(cx.err(
            items[0].line,
            &index(path, 0),
            "the program may not be empty",
        ));
    }
    let program = cx.program(program);
    Ok((argv, program))
}

// ---- Unknown keys and suggestions ----

/// `KEY: unknown key; did you mean `x`?` (or the list of known keys when none is close).
pub(super) fn unknown_key(cx: &Cx, entry: &Entry, path: &str, known: &[&str]) -> AgentFileError {
    let message = match did_you_mean(&entry.key, known.iter().copied()) {
        Some(m) => format!("unknown key; did you mean `{m}`?"),
        None => format!("unknown key; expected one of: {}", known.join(", ")),
    };
    cx.err(entry.line, &child(path, &entry.key), message)
}

/// 1–64 of `A-Z a-z 0-9 _ -`: tool, parameter, MCP server names.
pub(super) fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}
