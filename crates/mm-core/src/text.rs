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
