//! Consent: whether a call runs at once, asks the user, or is refused (SPEC §2 "Consent").
//!
//! With `yolo` nothing asks. Otherwise an `allow:` entry lets a call run without asking:
//! - a bare tool name (`status`) allows every call of that tool;
//! - `bash:PREFIX*` allows a `bash` command line that is **one simple command** whose first
//!   words are PREFIX's words (the trailing `*`: any further arguments; without it, exactly
//!   those words). A line with an operator, a substitution, an expansion or a redirection never
//!   matches; see the `shell` submodule and docs/permissions.md;
//! - `tool:pattern` for any other tool is a glob (`*` any text, `?` one character) over the
//!   call's validated arguments as compact JSON.
//!
//! Everything else asks; with no one to ask, it is refused. A rule that cannot be read allows
//! nothing: consent fails closed.

mod shell;

use serde_json::{Map, Value};

/// What to do with a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Allow,
    Ask,
    Deny,
}

/// Asks the user about one call; `None` when there is no one to ask (print mode, no terminal).
pub trait ConsentAsker: Send + Sync {
    fn ask(&self, tool: &str, summary: &str) -> Option<bool>;
}

/// The consent rules of an agent: `yolo` and `allow:`.
#[derive(Debug, Clone, Default)]
pub struct Permissions {
    pub yolo: bool,
    pub allow: Vec<String>,
}

impl Permissions {
    /// Decides for a call of `tool` with validated `args`.
    pub fn decide(&self, tool: &str, args: &Map<String, Value>) -> Decision {
        if self.yolo {
            return Decision::Allow;
        }
        let allowed = self.allow.iter().any(|entry| allows(entry, tool, args));
        if allowed {
            Decision::Allow
        } else {
            Decision::Ask
        }
    }
}

/// What the user is shown when asked about a call: a `bash` call's command line, any other
/// call's arguments as compact JSON — the text a `tool:pattern` glob is matched against.
pub fn subject(tool: &str, args: &Map<String, Value>) -> String {
    match (tool, args.get("command")) {
        ("bash", Some(Value::String(command))) => command.clone(),
        _ => Value::Object(args.clone()).to_string(),
    }
}

/// Whether `pattern` (what follows `bash:` in an `allow:` entry) is a rule at all: the words of
/// one simple command, optionally ending in `*`. A pattern that is not allows nothing, so the
/// agent file refuses it rather than let the user believe it works.
pub fn is_bash_rule(pattern: &str) -> bool {
    shell::BashRule::parse(pattern).is_some()
}

/// Whether one `allow:` entry allows this call.
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
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn glob() {
        assert!(glob_match("git status*", "git status --short"));
        assert!(glob_match("git status*", "git status"));
        assert!(!glob_match("git status*", "git push; git status"));
        assert!(glob_match("a?c", "abc"));
        assert!(!glob_match("a?c", "ac"));
        assert!(glob_match("*", ""));
        assert!(glob_match("*b*", "aaabaaa"));
    }

    fn decide(allow: &[&str], tool: &str, a: Value) -> Decision {
        let p = Permissions {
            yolo: false,
            allow: allow.iter().map(|s| s.to_string()).collect(),
        };
        p.decide(tool, &args(a))
    }

    #[test]
    fn bash_rules_allow_one_simple_command_only() {
        let rule = ["bash:git status*"];
        for line in [
            "git status",
            "git status --short",
            "git  status",
            "'git' \\status -s",
        ] {
            let got = decide(&rule, "bash", json!({"command": line}));
            assert_eq!(got, Decision::Allow, "{line:?}");
        }
        for line in [
            "git status; touch /tmp/x",
            "git status && touch x",
            "git statusx",
            "git statusx; touch x",
            "git status\ntouch x",
            "git status > x",
        ] {
            let got = decide(&rule, "bash", json!({"command": line}));
            assert_eq!(got, Decision::Ask, "{line:?}");
        }
        // The rule is about `command`; another tool, or no command string, never matches it.
        assert_eq!(
            decide(&rule, "git", json!({"command": "git status"})),
            Decision::Ask
        );
        assert_eq!(decide(&rule, "bash", json!({"command": 3})), Decision::Ask);
        // A rule that cannot be read allows nothing.
        for bad in [
            "bash:git status; *",
            "bash:ls *.txt",
            "bash:FOO=1 make*",
            "bash:",
        ] {
            assert_eq!(
                decide(&[bad], "bash", json!({"command": "ls a.txt"})),
                Decision::Ask,
                "{bad:?}"
            );
        }
        // A bare `bash` still allows every command line.
        assert_eq!(
            decide(&["bash"], "bash", json!({"command": "a; b"})),
            Decision::Allow
        );
    }

    #[test]
    fn other_rules_glob_over_the_arguments_as_json() {
        let rule = [r#"release:{"version":"*","channel":"beta"}"#];
        let beta = json!({"version": "1.4.2", "channel": "beta"});
        let stable = json!({"version": "1.4.2", "channel": "stable"});
        assert_eq!(decide(&rule, "release", beta.clone()), Decision::Allow);
        assert_eq!(decide(&rule, "release", stable), Decision::Ask);
        assert_eq!(decide(&rule, "deploy", beta), Decision::Ask);
        // A value holding the pattern's quotes is escaped in the JSON, so it cannot fake a field.
        let fake = json!({"version": "1\",\"channel\":\"beta", "channel": "stable"});
        assert_eq!(decide(&rule, "release", fake), Decision::Ask);
    }

    #[test]
    fn decisions() {
        let p = Permissions {
            yolo: false,
            allow: vec!["status".into(), "bash:git status*".into()],
        };
        assert_eq!(
            p.decide("status", &args(json!({"service": "x"}))),
            Decision::Allow
        );
        assert_eq!(p.decide("release", &args(json!({}))), Decision::Ask);
        assert_eq!(
            p.decide("bash", &args(json!({"command": "git status -s"}))),
            Decision::Allow
        );
        assert_eq!(
            p.decide("bash", &args(json!({"command": "rm -rf /"}))),
            Decision::Ask
        );
        let yolo = Permissions {
            yolo: true,
            allow: vec![],
        };
        assert_eq!(
            yolo.decide("bash", &args(json!({"command": "rm -rf /"}))),
            Decision::Allow
        );
    }
}
