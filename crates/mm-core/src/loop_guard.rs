//! The loop detector (SPEC §7): the same call (same tool, same arguments) made again and again.

use serde_json::Value;

use crate::args::Arguments;

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
    /// The arguments compare as the validator reads them: `"{\"a\":1}"` (an object sent as a
    /// JSON string) is the same call as `{"a":1}`.
    pub fn observe(&mut self, tool: &str, arguments: &Arguments) -> u32 {
        let key = match arguments.object() {
            Some(object) => Key::Json(Value::Object(object.clone())),
            None => match serde_json::from_str::<Value>(arguments.raw()) {
                Ok(value) => Key::Json(value),
                Err(_) => Key::Raw(arguments.raw().trim().to_string()),
            },
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
        assert_eq!(g.observe("a", &Arguments::decode(r#"{"x":1,"y":2}"#)), 1);
        assert_eq!(g.observe("a", &Arguments::decode(r#"{"y":2, "x":1}"#)), 2);
        assert_eq!(g.observe("a", &Arguments::decode(r#"{"x":1,"y":2}"#)), 3);
        assert_eq!(g.observe("b", &Arguments::decode(r#"{"x":1,"y":2}"#)), 1);
        assert_eq!(g.observe("a", &Arguments::decode(r#"{"x":1,"y":2}"#)), 1);
        assert_eq!(g.observe("a", &Arguments::decode("not json")), 1);
        assert_eq!(g.observe("a", &Arguments::decode("not json ")), 2);
    }

    #[test]
    fn an_object_sent_as_a_json_string_is_the_same_call() {
        let mut g = LoopGuard::default();
        assert_eq!(g.observe("a", &Arguments::decode(r#"{"a":1}"#)), 1);
        assert_eq!(g.observe("a", &Arguments::decode(r#""{\"a\":1}""#)), 2);
        assert_eq!(g.observe("a", &Arguments::decode(r#"{"a": 1}"#)), 3);
    }
}
