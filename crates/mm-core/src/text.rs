//! Small text helpers every part of the engine uses (a leaf: it imports nothing of mm's).

/// Text on one line: every run of whitespace (newlines of `>` and `|` strings too) becomes one
/// space.
pub(crate) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// How close two names are, from 0 to 1, case ignored: the better of Jaro-Winkler and the
/// normalised Damerau-Levenshtein distance. Used to name the parameter or skill meant.
pub(crate) fn similarity(a: &str, b: &str) -> f64 {
    let (a, b) = (a.to_lowercase(), b.to_lowercase());
    if a == b {
        return 1.0;
    }
    strsim::jaro_winkler(&a, &b).max(strsim::normalized_damerau_levenshtein(&a, &b))
}

/// The candidate closest to `word`, if close enough (the one "did you mean" of mm: agent-file
/// keys, values and placeholders, tool parameters): the same once case, `_` and `-` are
/// ignored, or Jaro-Winkler ≥ 0.8, or at most 2 edits (fewer than the word's length).
pub fn did_you_mean<'c>(
    word: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> Option<&'c str> {
    let norm = |s: &str| s.to_lowercase().replace(['_', '-', ' '], "");
    let word_norm = norm(word);
    let mut best: Option<(f64, &str)> = None;
    for candidate in candidates {
        let cand_norm = norm(candidate);
        let score = if cand_norm == word_norm {
            2.0
        } else {
            let jw = strsim::jaro_winkler(&word_norm, &cand_norm);
            let edits = strsim::levenshtein(&word_norm, &cand_norm);
            if jw >= 0.8 || (edits <= 2 && edits < word_norm.chars().count()) {
                jw
            } else {
                continue;
            }
        };
        if best.is_none_or(|(s, _)| score > s) {
            best = Some((score, candidate));
        }
    }
    best.map(|(_, c)| c)
}

/// JSON that stops before its last closing brackets (a small model ends its reply one `}` short
/// of the call it wrote: `{"name": "x", "arguments": {"a": 1}`), closed: the text with the
/// missing `}`/`]` added. `None` when the text is not such a prefix: it does not start with `{`
/// or `[`, it is balanced already, it ends inside a string or after `:`/`,`, or a bracket
/// closes the wrong one (serde then judges the rest).
pub(crate) fn closed_json(text: &str) -> Option<String> {
    let text = text.trim_end();
    if !text.starts_with(['{', '[']) {
        return None;
    }
    let mut open = Vec::new();
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' => open.push('}'),
            '[' => open.push(']'),
            '}' | ']' => {
                if open.pop() != Some(c) {
                    return None;
                }
                if open.is_empty() {
                    // Balanced before the end: something follows a whole value.
                    return None;
                }
            }
            _ => {}
        }
    }
    if in_string || open.is_empty() || text.ends_with([':', ',']) {
        return None;
    }
    Some(open.iter().rev().fold(text.to_owned(), |mut closed, c| {
        closed.push(*c);
        closed
    }))
}

/// Text with Python's literals written as JSON: single-quoted strings become double-quoted, and
/// `True`, `False` and `None` outside strings become `true`, `false` and `null`. Small models
/// write a call as a Python dict (`{'name': 'status', 'arguments': {'service': 'billing'}}`).
/// `None` when the text has no single-quoted string, or a string is not closed (prose with an
/// apostrophe: "I'm").
pub(crate) fn python_literals(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut converted = false;
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                out.push('"');
                loop {
                    let c = chars.next()?;
                    out.push(c);
                    match c {
                        '\\' => out.push(chars.next()?),
                        '"' => break,
                        _ => {}
                    }
                }
            }
            '\'' => {
                let mut value = String::new();
                loop {
                    match chars.next()? {
                        '\\' => match chars.next()? {
                            'n' => value.push('\n'),
                            't' => value.push('\t'),
                            other => value.push(other),
                        },
                        '\'' => break,
                        other => value.push(other),
                    }
                }
                out.push_str(&serde_json::Value::String(value).to_string());
                converted = true;
            }
            c if c.is_ascii_alphabetic() => {
                let mut word = String::from(c);
                while let Some(&next) = chars.peek() {
                    if !(next.is_ascii_alphanumeric() || next == '_') {
                        break;
                    }
                    word.push(next);
                    chars.next();
                }
                out.push_str(match word.as_str() {
                    "True" => "true",
                    "False" => "false",
                    "None" => "null",
                    other => other,
                });
            }
            other => out.push(other),
        }
    }
    converted.then_some(out)
}

/// A call line without the wrappers models put around it: `[…]` (a list of one call; Llama 3.2,
/// Gemma 3), `print(…)` and `default_api.` (Gemma 3).
pub(crate) fn bare_call(line: &str) -> &str {
    let line = line
        .strip_prefix('[')
        .and_then(|inner| inner.strip_suffix(']'))
        .map_or(line, str::trim);
    let line = line
        .strip_prefix("print(")
        .and_then(|inner| inner.strip_suffix(')'))
        .map_or(line, str::trim);
    line.strip_prefix("default_api.").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::{closed_json, python_literals};

    #[test]
    fn python_literals_become_json() {
        assert_eq!(
            python_literals(
                "{'name': 'status', 'arguments': {'service': 'billing', 'dry': True, 'n': None}}"
            )
            .as_deref(),
            Some(
                r#"{"name": "status", "arguments": {"service": "billing", "dry": true, "n": null}}"#
            )
        );
        assert_eq!(
            python_literals(r#"{'q': 'say "hi"', 'r': 'it\'s', "s": "a'b"}"#).as_deref(),
            Some(r#"{"q": "say \"hi\"", "r": "it's", "s": "a'b"}"#)
        );
        assert_eq!(
            python_literals("I'm fine, True."),
            None,
            "an apostrophe is no string"
        );
        assert_eq!(python_literals(r#"{"a": "b"}"#), None, "nothing to convert");
    }

    #[test]
    fn json_short_of_its_last_brackets_is_closed() {
        let closed = |t: &str| closed_json(t);
        assert_eq!(
            closed(r#"{"name": "x", "arguments": {"a": [1, 2]}"#).as_deref(),
            Some(r#"{"name": "x", "arguments": {"a": [1, 2]}}"#)
        );
        assert_eq!(closed(r#"[{"a": "}"#), None, "ends inside a string");
        assert_eq!(
            closed(r#"{"a": "x\"}""#).as_deref(),
            Some(r#"{"a": "x\"}"}"#),
            "a quote and a brace inside the string"
        );
        assert_eq!(closed(r#"{"a": "x\""#), None, "still inside the string");
        assert_eq!(closed(r#"{"a": "x\"""#).as_deref(), Some(r#"{"a": "x\""}"#));
        assert_eq!(closed(r#"{"a": 1}"#), None, "balanced already");
        assert_eq!(
            closed(r#"{"a": 1} {"b": 2"#),
            None,
            "a whole value, then more"
        );
        assert_eq!(closed(r#"{"a":"#), None, "after a colon");
        assert_eq!(closed(r#"{"a": 1,"#), None, "after a comma");
        assert_eq!(closed(r#"{"a": [1}"#), None, "the wrong bracket");
        assert_eq!(closed("The answer {is"), None, "not JSON");
    }
}
