//! The loop detector (SPEC §7): the same call (same tool, same arguments) made again and again.

use serde_json::Value;

/// Counts identical consecutive calls. Arguments that parse as JSON compare as JSON values (key
/// order does not matter); anything else compares as raw text. Valid and invalid calls count
/// alike.
#[derive(Debug, Default)]
pub struct LoopGuard {
    last: Option<(String, Key)>,
    count: u32,
}

#[derive(Debug, PartialEq)]
enum Key {
    Json(Value),
    Raw(String),
}

impl LoopGuard {
    /// Records a call and returns how many times in a row it has now been made (1 for a new one).
    pub fn observe(&mut self, tool: &str, raw_arguments: &str) -> u32 {
        let key = match serde_json::from_str::<Value>(raw_arguments) {
            Ok(value) => Key::Json(value),
            Err(_) => Key::Raw(raw_arguments.trim().to_string()),
        };
        let same = matches!(&self.last, Some((t, k)) if t == tool && *k == key);
        if same {
            self.count += 1;
        } else {
            self.last = Some((tool.to_string(), key));
            self.count = 1;
        }
        self.count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_identical_calls_in_a_row() {
        let mut g = LoopGuard::default();
        assert_eq!(g.observe("a", r#"{"x":1,"y":2}"#), 1);
        assert_eq!(g.observe("a", r#"{"y":2, "x":1}"#), 2);
        assert_eq!(g.observe("a", r#"{"x":1,"y":2}"#), 3);
        assert_eq!(g.observe("b", r#"{"x":1,"y":2}"#), 1);
        assert_eq!(g.observe("a", r#"{"x":1,"y":2}"#), 1);
        assert_eq!(g.observe("a", "not json"), 1);
        assert_eq!(g.observe("a", "not json "), 2);
    }
}
