//! Consent: whether a call runs at once, asks the user, or is refused (SPEC §2 "Consent").
//!
//! With `yolo` nothing asks. Otherwise an `allow:` entry lets a call run without asking: a bare
//! tool name (`status`) allows every call of that tool; `tool:pattern` (`bash:git status*`)
//! allows the calls whose subject matches the glob pattern (`*` any text, `?` one character).
//! The subject of a `bash` call is its command line; of any other tool, its arguments as
//! compact JSON. Everything else asks; with no one to ask, it is refused.

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
        let subject = subject(tool, args);
        let allowed = self.allow.iter().any(|entry| match entry.split_once(':') {
            Some((name, pattern)) => name == tool && glob_match(pattern, &subject),
            None => entry == tool,
        });
        if allowed {
            Decision::Allow
        } else {
            Decision::Ask
        }
    }
}

/// The text an `allow:` pattern is matched against, and what the user is shown when asked.
pub fn subject(tool: &str, args: &Map<String, Value>) -> String {
    match (tool, args.get("command")) {
        ("bash", Some(Value::String(command))) => command.clone(),
        _ => Value::Object(args.clone()).to_string(),
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
