//! Consent: whether a call runs at once, asks the user, or is refused (SPEC §2 "Consent").
//!
//! A call is decided in this order (docs/permissions.md):
//! 1. a **deny** rule of the project's `.mm/permissions` that matches refuses it — deny wins
//!    over everything, `yolo` included;
//! 2. with `yolo` nothing asks;
//! 3. an **allow** rule lets it run without asking: an `allow:` entry of the agent file, an
//!    `allow` line of `.mm/permissions`, or an "always" answer given earlier in this session;
//! 4. everything else asks; with no one to ask, it is refused.
//!
//! The rule language is the same everywhere:
//! - a bare tool name (`status`) matches every call of that tool;
//! - `bash:PREFIX*` matches a `bash` command line that is **one simple command** whose first
//!   words are PREFIX's words (the trailing `*`: any further arguments; without it, exactly
//!   those words). A line with an operator, a substitution, an expansion or a redirection never
//!   matches an allow rule; see the `shell` submodule and docs/permissions.md;
//! - `tool:pattern` for any other tool is a glob (`*` any text, `?` one character) over the
//!   call's validated arguments as compact JSON.
//!
//! A rule that cannot be read allows nothing and, as a deny rule, denies every call of its
//! tool: consent fails closed.

mod project;
mod shell;
mod target;

pub use target::Target;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use serde_json::{Map, Value};

/// What to do with a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Allow,
    Ask,
    /// Refused by this deny rule (as written in `.mm/permissions`).
    Deny(String),
}

/// A question to the user about one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsentRequest {
    /// The tool's name.
    pub tool: String,
    /// Exactly what will run: a `bash` command line, a declared tool's argv, else the
    /// arguments as JSON. Model-supplied: escape it before drawing it.
    pub summary: String,
    /// The rule an "always" answer adds (`bash:git status*`, `release`), shown to the user;
    /// `None` when there is none to offer (a `bash` line that is not one simple command).
    pub always: Option<String>,
    /// Why this call asks when it would not otherwise, or what it touches that the call does
    /// not show (`it reads /etc/shadow, outside the working folder`). Model-influenced: escape.
    pub note: Option<String>,
    /// The sandbox the call will run in, when it runs in one (`sandbox:`, `--sandbox`).
    pub sandbox: Option<crate::SandboxMode>,
}

/// The user's answer to a [`ConsentRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConsentAnswer {
    /// Run this call.
    Once,
    /// Run this call and, for the rest of the session, every call the request's `always` rule
    /// matches; `save`: also write the rule to the project's `.mm/permissions`.
    Always { save: bool },
    /// Do not run it; the reason, if given, is sent to the model.
    Deny { reason: Option<String> },
    /// The user interrupted (Ctrl-C in the dialog): the call is not run and the turn ends.
    Interrupt,
}

/// Asks the user about calls. The question may take as long as the user does; the pipeline
/// drops the future when the turn is cancelled.
#[async_trait]
pub trait ConsentAsker: Send + Sync {
    /// `None` when there is no one to ask (print mode, no terminal).
    async fn ask(&self, request: &ConsentRequest) -> Option<ConsentAnswer>;
}

/// The consent rules of a session: `yolo`, the agent file's `allow:`, the project's
/// `.mm/permissions`, and the "always" answers given so far. Clones share the answers, so that
/// the state lives as long as the session, not one turn.
#[derive(Debug, Clone, Default)]
pub struct Permissions {
    yolo: bool,
    allow: Vec<String>,
    project: Option<project::ProjectRules>,
    /// "Always" answers of this session.
    learned: Arc<Mutex<Vec<String>>>,
}

impl Permissions {
    /// The agent's `yolo` and `allow:` entries.
    pub fn new(yolo: bool, allow: Vec<String>) -> Self {
        Self {
            yolo,
            allow,
            ..Self::default()
        }
    }

    /// Also the rules of the project's permissions file at `path` (normally `.mm/permissions`;
    /// a missing file is no rules) — "always" answers that are saved go there. Returns a
    /// warning (`FILE:LINE: …`) for each line that cannot be read: such a line is ignored,
    /// except a deny rule of a known tool that cannot be read, which denies that tool.
    pub fn with_project_file(mut self, path: &Path) -> (Self, Vec<String>) {
        let (rules, warnings) = project::ProjectRules::load(path);
        self.project = Some(rules);
        (self, warnings)
    }

    /// The allow rules of the project's permissions file, in file order.
    pub fn project_allows(&self) -> Vec<String> {
        self.project
            .as_ref()
            .map(|p| p.allow.clone())
            .unwrap_or_default()
    }

    /// Takes back what an untrusted folder would grant (folder trust, SPEC §1): the project's
    /// allow rules and, when the agent is the folder's own (`agent_too`), its `allow:` entries
    /// and its `yolo` (`yolo` is then the user's own `--yolo`). Deny rules stay: they only
    /// restrict.
    pub fn without_grants(mut self, agent_too: bool, yolo: bool) -> Self {
        if let Some(project) = &mut self.project {
            project.allow.clear();
        }
        if agent_too {
            self.allow.clear();
            self.yolo = yolo;
        }
        self
    }

    /// The project's permissions file, if one was given.
    pub fn project_file(&self) -> Option<&Path> {
        self.project.as_ref().map(|p| p.path.as_path())
    }

    /// Decides for a call of `tool` with validated `args`.
    pub fn decide(&self, tool: &str, args: &Map<String, Value>) -> Decision {
        self.decide_at(tool, args, None)
    }

    /// Decides for a call of `tool` with validated `args` that touches the file or folder
    /// `target` (its `path` argument, resolved: see [`Target`]). A `tool:GLOB` rule sees the
    /// call with `path` resolved: an allow rule only that form (so `notes/../../x` is not in
    /// `notes/*`), a deny rule that form and the path as written (`./secret.txt`,
    /// `sub/../secret.txt` and a link to it are all `secret.txt`).
    pub fn decide_at(
        &self,
        tool: &str,
        args: &Map<String, Value>,
        target: Option<&Target>,
    ) -> Decision {
        let resolved = target.map(|target| {
            let mut args = args.clone();
            args.insert("path".into(), Value::String(target.shown.clone()));
            args
        });
        let for_rules = resolved.as_ref().unwrap_or(args);
        if let Some(project) = self.project.as_ref().filter(|p| p.deny_all) {
            return Decision::Deny(format!(
                "* (every call: {} cannot be read)",
                project.path.display()
            ));
        }
        if let Some(rule) = self
            .project
            .iter()
            .flat_map(|p| &p.deny)
            .find(|rule| denies(rule, tool, args) || denies(rule, tool, for_rules))
        {
            return Decision::Deny(rule.clone());
        }
        if self.yolo {
            return Decision::Allow;
        }
        // A path no file can have (a NUL in it) is never allowed by a rule: the call asks.
        if target.is_some_and(|t| t.shown.contains('\0')) {
            return Decision::Ask;
        }
        let learned = self.learned.lock().unwrap_or_else(PoisonError::into_inner);
        let allowed = self
            .allow
            .iter()
            .chain(self.project.iter().flat_map(|p| &p.allow))
            .chain(learned.iter())
            .any(|entry| allows(entry, tool, for_rules));
        if allowed {
            Decision::Allow
        } else {
            Decision::Ask
        }
    }

    /// Allows what `rule` matches for the rest of the session and, with `save`, appends it to
    /// the project's permissions file. `Err` says why it could not be saved (it is still
    /// allowed for the session).
    pub fn remember(&self, rule: &str, save: bool) -> Result<(), String> {
        self.learned
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(rule.to_string());
        if !save {
            return Ok(());
        }
        match &self.project {
            Some(project) => project.append_allow(rule),
            None => Err("there is no project permissions file to save to".into()),
        }
    }

    /// A warning for each rule of the project's permissions file that names no tool in
    /// `tools` (the tools offered, and the built-in names): a typo there would otherwise be
    /// silent. A deny rule whose tool differs only in case is applied to that tool, and says so.
    pub fn unknown_tools(&self, tools: &[&str]) -> Vec<String> {
        let Some(project) = &self.project else {
            return Vec::new();
        };
        let file = project.path.display();
        let mut warnings = Vec::new();
        let rules = project
            .deny
            .iter()
            .map(|r| ("deny", r))
            .chain(project.allow.iter().map(|r| ("allow", r)));
        for (verb, rule) in rules {
            let named = project::tool_of(rule);
            if tools.contains(&named) {
                continue;
            }
            let same_but_case = tools.iter().find(|t| t.eq_ignore_ascii_case(named));
            warnings.push(match (verb, same_but_case) {
                ("deny", Some(tool)) => format!(
                    "{file}: `{verb} {rule}` names `{named}`; it is applied to `{tool}` (tool names are exact: write `{tool}`)"
                ),
                (_, Some(tool)) => format!(
                    "{file}: `{verb} {rule}` names `{named}`, which is no tool; did you mean `{tool}`? (it allows nothing)"
                ),
                _ => format!("{file}: `{verb} {rule}` names `{named}`, which is no tool mm offers"),
            });
        }
        warnings
    }

    /// The rules learned from "always" answers in this session, in order.
    pub fn learned(&self) -> Vec<String> {
        self.learned
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// The project's permissions file in `dir`: `DIR/.mm/permissions`.
pub fn project_file(dir: &Path) -> PathBuf {
    dir.join(".mm").join("permissions")
}

/// What the user is shown when asked about a call: a `bash` call's command line, any other
/// call's arguments as compact JSON — the text a `tool:pattern` glob is matched against.
pub fn subject(tool: &str, args: &Map<String, Value>) -> String {
    match (tool, args.get("command")) {
        ("bash", Some(Value::String(command))) => command.clone(),
        _ => Value::Object(args.clone()).to_string(),
    }
}

/// The rule an "always" answer to this call would add: for `bash`, the call's command prefix
/// (`bash:git status*` for `git status --short`), `None` when the line is not one simple
/// command; for any other tool, its name.
pub fn always_rule(tool: &str, args: &Map<String, Value>) -> Option<String> {
    if tool != "bash" {
        return Some(tool.to_string());
    }
    match args.get("command") {
        Some(Value::String(line)) => shell::prefix_rule(line).map(|p| format!("bash:{p}")),
        _ => None,
    }
}

/// The programs a `bash` command line may run, in order (nested command lines such as
/// `bash -c '…'` included), read leniently: what a consent dialog lists when a line runs more
/// than one.
pub fn bash_programs(line: &str) -> Vec<String> {
    shell::programs(line)
}

/// Whether `pattern` (what follows `bash:` in an `allow:` entry) is a rule at all: the words of
/// one simple command, optionally ending in `*`. A pattern that is not allows nothing, so the
/// agent file refuses it rather than let the user believe it works.
pub fn is_bash_rule(pattern: &str) -> bool {
    shell::BashRule::parse(pattern).is_some()
}

/// Whether one allow rule allows this call.
fn allows(entry: &str, tool: &str, args: &Map<String, Value>) -> bool {
    match entry.split_once(':') {
        None => entry == tool,
        Some((name, _)) if name != tool => false,
        Some(("bash", pattern)) => match args.get("command") {
            Some(Value::String(line)) => {
                shell::BashRule::parse(pattern).is_some_and(|r| r.matches(line))
            }
            _ => false,
        },
        Some((_, pattern)) => glob_match(pattern, &subject(tool, args)),
    }
}

/// Whether one deny rule refuses this call. Stricter than [`allows`] where it must be: a
/// `bash:` deny rule matches its words as a prefix (with or without `*`), also inside a line
/// that is more than one simple command (see [`shell::BashRule::denies`]), and a `bash:` rule
/// that cannot be read denies every `bash` call.
/// Tool names are compared in any case (`deny Bash:rm*` is about `bash`): a deny rule that
/// names no tool because of its case would fail open.
fn denies(entry: &str, tool: &str, args: &Map<String, Value>) -> bool {
    match entry.split_once(':') {
        None => entry.trim().eq_ignore_ascii_case(tool),
        Some((name, _)) if !name.trim().eq_ignore_ascii_case(tool) => false,
        Some((_, pattern)) if tool == "bash" => {
            match (shell::BashRule::parse(pattern), args.get("command")) {
                (Some(rule), Some(Value::String(line))) => rule.denies(line),
                // A command that is not a string is refused by validation before consent; deny
                // anyway rather than rely on it.
                _ => true,
            }
        }
        Some((_, pattern)) => glob_match(pattern, &subject(tool, args)),
    }
}

/// `*` matches any run of characters, `?` one character; everything else matches itself.
fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // Classic two-pointer wildcard match with backtracking to the last `*`.
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
#[path = "permissions_tests.rs"]
mod tests;
