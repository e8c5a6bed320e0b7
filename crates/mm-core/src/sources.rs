//! Where a call's identifiers come from. A small model that needs an ISBN, a ticket or a
//! tracking number it was never given writes one: `9782261000000` for a book it knows only by
//! title, the description's own example (`INC-40721`, "a ticket number like INC-40721") for a
//! question no tool answers. Such a call of a declared or MCP tool is held back and answered in
//! text, like an invalid call. Sent again, it is not run either: the turn asks for the answer
//! in words (every call the models sent again was a wrong one).
//!
//! An identifier is a string value (of a parameter without `enum`) with no white space, three
//! digits in a row or more, and a letter or five digits in a row or more: `INC-40721`,
//! `LH2034`, `9782070377220`, `58213`. Dates, times, versions and amounts (`2026-12-09`,
//! `14:00`, `1.4.3`, `10kg`) are not: a model rightly works them out. It comes from nowhere
//! when its words (letters and digits, split where they change) are not, in the same order,
//! in anything the model was shown as said: the system prompt, the user's messages, the
//! answers, the tools' outputs. The tools' descriptions are not among them.
//!
//! Measured on the runs recorded for the project's suite (docs/eval-results.md): it flags
//! invented ISBNs, the descriptions' example numbers copied for questions no tool answers, a
//! tracking number for a parcel nobody named, and no call that was right.
//!
//! The other side, [`not_looked_up`]: the identifiers a user's message gives that no tool output
//! shows, for the turn loop to ask for a call when the model answers about them unlooked.

use serde_json::{Map, Value};

use crate::args::{ParamType, ValidArgs};
use crate::tools::{Tool, ToolKind};

/// What the model was shown, and the calls held back once already this turn.
#[derive(Debug, Default)]
pub struct Sources {
    /// Each text's words, lowercased, joined by single spaces, with a space at each end.
    shown: Vec<String>,
    /// The calls held back (tool name and arguments): sent again, they run.
    held: Vec<(String, Map<String, Value>)>,
}

impl Sources {
    /// Replaces what the model was shown (the calls held back stay held).
    pub fn show<'t>(&mut self, texts: impl IntoIterator<Item = &'t str>) {
        self.shown = texts
            .into_iter()
            .map(|text| format!(" {} ", words(text).join(" ")))
            .collect();
    }

    /// The answer to the model when `args` has an identifier that comes from nowhere; `None`
    /// when the call may go on.
    pub fn hold_back(&mut self, name: &str, tool: &dyn Tool, args: &ValidArgs) -> Option<Held> {
        if tool.kind() == ToolKind::Builtin {
            return None;
        }
        let unsourced: Vec<String> = tool
            .params()
            .params
            .iter()
            .filter(|p| p.ty == ParamType::String && p.enum_values.is_none())
            .filter_map(|p| {
                let value = args.get(&p.name)?.as_str()?;
                (is_identifier(value) && !self.found(value))
                    .then(|| format!("{} {value:?}", p.name))
            })
            .collect();
        if unsourced.is_empty() {
            return None;
        }
        let call = (name.to_owned(), (**args).clone());
        let values = unsourced.join(" and ");
        let verb = if unsourced.len() == 1 { "is" } else { "are" };
        if self.held.contains(&call) {
            return Some(Held {
                answer: format!(
                    "The call to {name} was not run this time either: {values} {verb} still \
                     not in this conversation."
                ),
                again: true,
            });
        }
        self.held.push(call);
        Some(Held {
            answer: format!(
                "The call to {name} was not run: {values} {verb} not in this conversation \
                 (nobody gave it). If the user named it another way, like a title or a name, \
                 look it up with another tool first. If the question needs no tool, answer it \
                 in words."
            ),
            again: false,
        })
    }

    /// Whether `value`'s words are, in order, in one of the texts shown.
    fn found(&self, value: &str) -> bool {
        let needle = format!(" {} ", words(value).join(" "));
        self.shown.iter().any(|text| text.contains(&needle))
    }
}

/// A call held back: what the model is told, and whether the same call was held back before in
/// this turn (the turn then asks for the answer in words).
#[derive(Debug)]
pub struct Held {
    pub answer: String,
    pub again: bool,
}

/// Which identifiers an agent's own tools could be given: a code needs a string parameter
/// without `enum`, a bare number that or an integer parameter. An agent whose tools take
/// neither (a thermostat of enums and numbers) has nothing to look a `CR2032` up with.
#[derive(Debug, Clone, Copy, Default)]
pub struct Takes {
    pub codes: bool,
    pub numbers: bool,
}

impl Takes {
    /// What `tools` (the built-in ones left out) can take; with `skills`, anything (a skill's
    /// command line is written with `bash`).
    pub fn of<'t>(tools: impl IntoIterator<Item = &'t dyn Tool>, skills: bool) -> Self {
        let mut takes = Self {
            codes: skills,
            numbers: skills,
        };
        for tool in tools {
            if tool.kind() == ToolKind::Builtin {
                continue;
            }
            for p in &tool.params().params {
                let free_string = p.ty == ParamType::String && p.enum_values.is_none();
                takes.codes |= free_string;
                takes.numbers |= free_string || p.ty == ParamType::Integer;
            }
        }
        takes
    }
}

/// The things the user's `message` names by identifier that none of `outputs` shows and that
/// the tools could be given (`takes`): a turn that answers without a call can only have made up
/// what it says of them ("INC-40698 is currently open."). Stricter than a call's identifier,
/// since a question no tool answers may hold a model name or a round figure: a code needs four
/// digits in a row (`LH2034`, `E1042`, not `A380`), a number five digits or more and not a
/// multiple of 100 (`58213`, not `10000`).
pub fn not_looked_up<'m>(message: &'m str, outputs: &[&str], takes: Takes) -> Vec<&'m str> {
    let mut sources = Sources::default();
    sources.show(outputs.iter().copied());
    let mut unseen: Vec<&str> = Vec::new();
    for token in message.split_whitespace() {
        let token = token.trim_matches(|c: char| !c.is_alphanumeric());
        if names_a_thing(token, takes) && !unseen.contains(&token) && !sources.found(token) {
            unseen.push(token);
        }
    }
    unseen
}

/// An identifier the user gave as the name of a thing to look up: see [`not_looked_up`].
fn names_a_thing(token: &str, takes: Takes) -> bool {
    if !is_identifier(token) {
        return false;
    }
    if token.chars().any(char::is_alphabetic) {
        takes.codes && longest_digits(token) >= 4
    } else {
        takes.numbers && !token.ends_with("00")
    }
}

/// The length of the longest run of digits in `value`.
fn longest_digits(value: &str) -> usize {
    value
        .split(|c: char| !c.is_ascii_digit())
        .map(str::len)
        .max()
        .unwrap_or(0)
}

/// Whether a value is an identifier: see the module's documentation.
fn is_identifier(value: &str) -> bool {
    if value.is_empty() || value.chars().any(char::is_whitespace) || starts_with_date(value) {
        return false;
    }
    let digits = longest_digits(value);
    let has_letter = value.chars().any(char::is_alphabetic);
    digits >= 5 || (digits >= 3 && has_letter)
}

/// `2026-12-09`, `2026-12-09T10:00`: a date the model may work out ("next Monday").
fn starts_with_date(value: &str) -> bool {
    let b = value.as_bytes();
    b.len() >= 10
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[5..7].iter().all(u8::is_ascii_digit)
        && b[7] == b'-'
        && b[8..10].iter().all(u8::is_ascii_digit)
}

/// The words of a text, lowercased: runs of letters or of digits (`LH2034` is `lh 2034`, as
/// is `LH 2034`).
fn words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut digits = false;
    for c in text.chars() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            continue;
        }
        let is_digit = c.is_ascii_digit();
        if !current.is_empty() && is_digit != digits {
            out.push(std::mem::take(&mut current));
        }
        digits = is_digit;
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_codes_and_long_numbers_not_dates_versions_or_amounts() {
        for id in [
            "INC-40721",
            "LV-2291",
            "LH2034",
            "M-3318",
            "E1042",
            "PR-7720-3391",
            "9782261000000",
            "58213",
            "Tmp-8841-Kite",
        ] {
            assert!(is_identifier(id), "{id}");
        }
        for not in [
            "2026-12-09",
            "2026-12-09T10:00",
            "14:00",
            "1.4.3",
            "10kg",
            "v2",
            "1234",
            "pickup_point",
            "Annie Ernaux 1974",
            "",
        ] {
            assert!(!is_identifier(not), "{not}");
        }
    }

    #[test]
    fn a_value_is_found_when_its_words_are_in_order_in_one_text() {
        let mut sources = Sources::default();
        sources.show([
            "Is LH 2034 on time? And order #58213?",
            "1. La Place — ISBN 9782070377220",
        ]);
        assert!(sources.found("LH2034"));
        assert!(sources.found("lh-2034"));
        assert!(sources.found("58213"));
        assert!(sources.found("9782070377220"));
        // Not a part of a longer number, not words from two texts, not out of order.
        assert!(!sources.found("5821"));
        assert!(!sources.found("2034-LH"));
        assert!(!sources.found("9782070377220-58213"));
        assert!(!sources.found("PR-7720-3391"));
    }

    #[test]
    fn the_things_a_message_names_are_those_no_output_shows() {
        let message = "Where is my parcel PR-7720-3391 (order #58213)? Is LH2034 on time, \
                       and is E1042 mine? Not A380, 10000 steps, 1.4.3 or 2026-12-09.";
        let any = Takes {
            codes: true,
            numbers: true,
        };
        assert_eq!(
            not_looked_up(message, &[], any),
            ["PR-7720-3391", "58213", "LH2034", "E1042"]
        );
        assert_eq!(
            not_looked_up(
                message,
                &["PR 7720 3391: at the depot", "LH 2034 on time; e1042"],
                any
            ),
            ["58213"]
        );
        assert!(not_looked_up("What is 21 °C in Fahrenheit?", &[], any).is_empty());
        // Only what the tools could be given.
        let numbers = Takes {
            codes: false,
            numbers: true,
        };
        assert_eq!(not_looked_up(message, &[], numbers), ["58213"]);
        assert!(not_looked_up(message, &[], Takes::default()).is_empty());
    }

    #[test]
    fn words_split_where_letters_and_digits_change() {
        assert_eq!(words("INC-40721"), ["inc", "40721"]);
        assert_eq!(words("Tmp-8841-Kite"), ["tmp", "8841", "kite"]);
        assert_eq!(words("LH2034 today"), ["lh", "2034", "today"]);
        assert_eq!(words("Ärger 3x"), ["ärger", "3", "x"]);
    }
}
