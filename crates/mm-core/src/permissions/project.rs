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
}

impl ProjectRules {
    /// Reads `path` (a missing file is no rules); a warning for each line that cannot be read.
    pub(super) fn load(path: &Path) -> (Self, Vec<String>) {
        let mut rules = Self {
            path: path.to_path_buf(),
            ..Self::default()
        };
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (rules, Vec::new()),
            Err(e) => {
                // Unreadable: no allow rules, and no way to honour its deny rules. Say so.
                let warning = format!(
                    "{}: cannot be read ({e}); its rules are ignored",
                    path.display()
                );
                return (rules, vec![warning]);
            }
        };
        let mut warnings = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let at = format!("{}:{}", path.display(), n + 1);
            let (verb, rule) = match line.split_once(char::is_whitespace) {
                Some((verb, rule)) => (verb, rule.trim()),
                None => (line, ""),
            };
            match (verb, check(rule)) {
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
                    let tool = rule.split_once(':').map_or(rule, |(tool, _)| tool);
                    warnings.push(format!(
                        "{at}: `{line}` cannot be read ({why}); it denies every {tool} call until it is fixed"
                    ));
                    rules.deny.push(rule.to_string());
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
