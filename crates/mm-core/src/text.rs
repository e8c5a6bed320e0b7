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
