//! The project's permissions file, `.mm/permissions`: rules kept with the project, read at
//! start-up, and where "always … and save" answers are appended.
//!
//! One rule a line, `allow RULE` or `deny RULE`, in the rule language of `allow:` (a tool name,
//! `bash:PREFIX*`, `tool:GLOB`); blank lines and lines starting with `#` are ignored:
//!
//! ```text
//! # mm permissions for this project
//! allow bash:git status*
//! allow status
//! deny bash:git push*
//! ```
//!
//! The file is only ever appended to, never rewritten: a person may edit it, and mm keeps what
//! they wrote.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::shell::BashRule;

/// The first line of a file mm creates.
const HEADER: &str = "# mm permissions for this project: one `allow RULE` or `deny RULE` a line \
                      (docs/permissions.md). Deny wins over allow.\n";

/// The rules read from a project's permissions file.
#[derive(Debug, Clone, Default)]
pub(super) struct ProjectRules {
    pub(super) path: PathBuf,
    pub(super) allow: Vec<String>,
    pub(super) deny: Vec<String>,
    /// The file exists but could not be read: every call is refused.
    pub(super) deny_all: bool,
}

/// The largest permissions file read (a person writes a few lines).
const MAX_BYTES: u64 = 1 << 20;

/// The tool a rule names: what comes before its `:`, or all of it.
pub(super) fn tool_of(rule: &str) -> &str {
    rule.split_once(':').map_or(rule, |(tool, _)| tool).trim()
}

impl ProjectRules {
    /// Reads `path` (a missing file is no rules); a warning for each line that cannot be read.
    /// Fails closed: a deny line that cannot be read denies every call of its tool, and a file
    /// that exists but cannot be read at all denies every call.
    pub(super) fn load(path: &Path) -> (Self, Vec<String>) {
        let mut rules = Self {
            path: path.to_path_buf(),
            ..Self::default()
        };
        let bytes = match crate::regular::read(path, MAX_BYTES) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (rules, Vec::new()),
            Err(e) => {
                // Its deny rules cannot be honoured: nothing runs until it is fixed.
                rules.deny_all = true;
                let warning = format!(
                    "{}: cannot be read ({e}); every call is refused until it is fixed or removed",
                    path.display()
                );
                return (rules, vec![warning]);
            }
        };
        let bytes = match decode(&bytes) {
            Ok(bytes) => bytes,
            Err(why) => {
                rules.deny_all = true;
                let warning = format!(
                    "{}: cannot be read ({why}); every call is refused until it is fixed or removed",
                    path.display()
                );
                return (rules, vec![warning]);
            }
        };
        let mut warnings = Vec::new();
        for (n, raw) in bytes.split(|&b| b == b'\n').enumerate() {
            let at = format!("{}:{}", path.display(), n + 1);
            let (line, utf8) = match std::str::from_utf8(raw) {
                Ok(line) => (line.to_string(), true),
                Err(_) => (String::from_utf8_lossy(raw).into_owned(), false),
            };
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (verb, rule) = match line.split_once(char::is_whitespace) {
                Some((verb, rule)) => (verb, rule.trim()),
                None => (line, ""),
            };
            // `deny`, `Deny`, `DENY:` alike: a deny misread as something else would fail open.
            let verb = verb.trim_end_matches(':').to_ascii_lowercase();
            if !utf8 {
                if strsim::damerau_levenshtein(&verb, "deny") <= 1 {
                    let tool = tool_of(rule);
                    warnings.push(format!(
                        "{at}: the line is not UTF-8; it denies every {tool} call until it is fixed"
                    ));
                    rules.deny.push(tool.to_string());
                } else {
                    warnings.push(format!("{at}: the line is not UTF-8; it is ignored"));
                }
                continue;
            }
            match (verb.as_str(), check(rule)) {
                ("allow" | "deny", Err(why)) if rule.is_empty() => {
                    warnings.push(format!("{at}: `{verb}` needs a rule: {why}"));
                }
                ("allow", Ok(())) => rules.allow.push(rule.to_string()),
                ("allow", Err(why)) => {
                    warnings.push(format!("{at}: `{line}` allows nothing: {why}"));
                }
                ("deny", Ok(())) => rules.deny.push(rule.to_string()),
                ("deny", Err(why)) => {
                    // Kept: an unreadable `bash:` deny rule denies every bash call.
                    let tool = tool_of(rule);
                    warnings.push(format!(
                        "{at}: `{line}` cannot be read ({why}); it denies every {tool} call until it is fixed"
                    ));
                    rules.deny.push(rule.to_string());
                }
                // A misspelt deny (`denny`, `dney`) is still a deny: ignoring it would fail open.
                (verb, _) if !rule.is_empty() && strsim::damerau_levenshtein(verb, "deny") <= 1 => {
                    let tool = tool_of(rule);
                    warnings.push(format!(
                        "{at}: `{line}`: read as `deny`; it denies every {tool} call until it is fixed"
                    ));
                    rules.deny.push(tool.to_string());
                }
                _ => warnings.push(format!(
                    "{at}: `{line}`: a line is `allow RULE` or `deny RULE` (or a `#` comment)"
                )),
            }
        }
        (rules, warnings)
    }

    /// Appends `allow RULE`, creating the folder and the file (with a header) when needed.
    pub(super) fn append_allow(&self, rule: &str) -> Result<(), String> {
        let shown = self.path.display();
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .map_err(|e| format!("cannot open {shown}: {e}"))?;
        let fresh = file.metadata().map(|m| m.len() == 0).unwrap_or(false);
        let mut text = String::new();
        if fresh {
            text.push_str(HEADER);
        }
        text.push_str(&format!("allow {rule}\n"));
        file.write_all(text.as_bytes())
            .and_then(|()| file.sync_data())
            .map_err(|e| format!("cannot write {shown}: {e}"))
    }
}

/// The file's text as UTF-8 lines ending in `\n`: a byte-order mark (UTF-8, or UTF-16, whose
/// text is decoded) is skipped, and `\r\n` or a lone `\r` ends a line. A NUL byte anywhere (UTF-16
/// without its mark, a binary file) makes the file unreadable: its rules cannot be known.
fn decode(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let utf16 = |bytes: &[u8], unit: fn([u8; 2]) -> u16| {
        let units: Vec<u16> = bytes
            .chunks(2)
            .map(|pair| unit([pair[0], pair.get(1).copied().unwrap_or(0)]))
            .collect();
        String::from_utf16_lossy(&units).into_bytes()
    };
    let text = if let Some(rest) = bytes.strip_prefix(b"\xff\xfe") {
        utf16(rest, u16::from_le_bytes)
    } else if let Some(rest) = bytes.strip_prefix(b"\xfe\xff") {
        utf16(rest, u16::from_be_bytes)
    } else {
        bytes
            .strip_prefix("\u{feff}".as_bytes())
            .unwrap_or(bytes)
            .to_vec()
    };
    if text.contains(&0) {
        return Err("it holds NUL bytes: UTF-16 without a byte-order mark, or not text".into());
    }
    let mut lines = Vec::with_capacity(text.len());
    let mut bytes = text.iter().peekable();
    while let Some(&b) = bytes.next() {
        if b == b'\r' {
            if bytes.peek() != Some(&&b'\n') {
                lines.push(b'\n');
            }
        } else {
            lines.push(b);
        }
    }
    Ok(lines)
}

/// Whether `rule` is one the rule language can read.
fn check(rule: &str) -> Result<(), String> {
    if rule.is_empty() {
        return Err("the line has no rule".into());
    }
    if rule.contains(char::is_whitespace) && !rule.contains(':') {
        return Err("a tool name has no blanks".into());
    }
    match rule.split_once(':') {
        Some(("bash", pattern)) if BashRule::parse(pattern).is_none() => Err(format!(
            "`{pattern}` is not the words of one simple command (optionally ending in `*`)"
        )),
        Some(("", _)) => Err("the rule names no tool".into()),
        _ => Ok(()),
    }
}
