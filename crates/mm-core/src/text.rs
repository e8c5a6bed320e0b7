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

#[cfg(test)]
mod tests {
    use super::closed_json;

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
