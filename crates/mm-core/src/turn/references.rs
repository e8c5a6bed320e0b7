//! The references an action gives back (`Opened INC-40733`, `LV-2292 submitted`, `Temporary
//! password: Tmp-8841-Kite`) and whether an answer passes them on.
//!
//! An answer that leaves them out is no junk (it can be right: "Your sick half-day is
//! recorded."), but its user now has no number to quote, and the model had it in front of it.
//! Measured on Qwen2.5-Coder-1.5B after its right calls of the project's suite in English: the
//! answer step asks for "the exact figures and references", and still 4 answers of 29 left out
//! the request number or the temporary password the tool printed. The turn loop asks
//! once more when an answer names none of them ([`left_out`]), naming them, and holds a streamed
//! answer until it names one (or ends).
//!
//! A reference here is a code made of a prefix led by a capital letter, a hyphen and a run of
//! at least three digits, with more hyphenated parts allowed: `INC-40721`, `M-3327`,
//! `PR-7720-3391`, `Tmp-8841-Kite`. Dates (`2026-12-07`), bare numbers, names and file names
//! (`/tmp/output-16581-x`, `Report-2026.pdf`) are not references. One the user or the agent's
//! instructions already wrote is not new to the user and is not asked for; an output with more
//! than [`MAX_REFERENCES`] new ones is a listing, from which the answer picks.

use std::sync::LazyLock;

use regex::Regex;

/// More new references than this in the turn's outputs: a listing, nothing is asked for.
const MAX_REFERENCES: usize = 3;

static REFERENCE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"\b[A-Z][A-Za-z0-9]*-[0-9]{3,}(?:-[A-Za-z0-9]+)*\b").ok());

/// The references in `outputs` (the outputs of the turn's calls that worked) that no text of
/// `known` (the user's messages, the system prompt) holds, in order of appearance; empty when
/// there are none or more than [`MAX_REFERENCES`].
pub(super) fn new_references(outputs: &[String], known: &[&str]) -> Vec<String> {
    let Some(re) = REFERENCE.as_ref() else {
        return Vec::new();
    };
    let known: Vec<String> = known.iter().map(|k| k.to_lowercase()).collect();
    let mut found: Vec<String> = Vec::new();
    for output in outputs {
        for m in re.find_iter(output) {
            if in_a_path(output, m.start(), m.end()) {
                continue;
            }
            let reference = m.as_str();
            let lower = reference.to_lowercase();
            let is_known = known.iter().any(|k| k.contains(&lower));
            if !is_known && !found.iter().any(|f| f.to_lowercase() == lower) {
                found.push(reference.to_string());
            }
        }
    }
    if found.len() > MAX_REFERENCES {
        found.clear();
    }
    found
}

/// Whether the match at `start..end` is part of a path or a file name (`/tmp/Out-16581-a`,
/// `Report-2026.pdf`): a `/` or `\\` right before it, or `/`, `\\` or a `.` and a letter right
/// after.
fn in_a_path(text: &str, start: usize, end: usize) -> bool {
    let before = text[..start].chars().next_back();
    let mut after = text[end..].chars();
    let next = after.next();
    matches!(before, Some('/' | '\\'))
        || matches!(next, Some('/' | '\\'))
        || (next == Some('.') && after.next().is_some_and(char::is_alphanumeric))
}

/// Whether `answer` names at least one of `references` (case ignored).
fn names_one(answer: &str, references: &[String]) -> bool {
    let answer = answer.to_lowercase();
    references
        .iter()
        .any(|r| answer.contains(&r.to_lowercase()))
}

/// Whether `answer` leaves out every one of `references` (never, when there are none).
pub(super) fn left_out(answer: &str, references: &[String]) -> bool {
    !references.is_empty() && !names_one(answer, references)
}

/// The lines of `outputs` that hold one of `references`, each once, in order, trimmed: what
/// follows an answer that still leaves them all out after it was asked for them.
pub(super) fn lines_holding<'o>(
    outputs: impl IntoIterator<Item = &'o str>,
    references: &[String],
) -> Vec<&'o str> {
    let mut lines: Vec<&str> = Vec::new();
    for output in outputs {
        for line in output.lines().map(str::trim) {
            if names_one(line, references) && !lines.contains(&line) {
                lines.push(line);
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(outputs: &[&str], known: &[&str]) -> Vec<String> {
        let outputs: Vec<String> = outputs.iter().map(|s| s.to_string()).collect();
        new_references(&outputs, known)
    }

    #[test]
    fn codes_an_action_printed_are_references_and_dates_numbers_and_names_are_not() {
        // Real outputs of the project's suite (eval/agents).
        assert_eq!(
            refs(
                &[
                    "LV-2292 recorded: sick leave, 0.5 days from 2026-12-07 for E1042 (Sam Ortiz). No approval needed.\n"
                ],
                &["Put me down as off sick for half a day today, 2026-12-07."]
            ),
            ["LV-2292"]
        );
        assert_eq!(
            refs(
                &[
                    "Unlocked jdoe (John Doe); the account had been locked since 08:14 after 5 failed sign-ins.\nTemporary password: Tmp-8841-Kite (valid 24 h, must be changed at the next sign-in).\n"
                ],
                &["jdoe locked himself out again."]
            ),
            ["Tmp-8841-Kite"]
        );
        assert!(refs(&["support on 2026-12-10: Ana Lima (vacation, back 2026-12-14), Ben Okafor (sick).\n"], &[]).is_empty());
        assert!(refs(&["UTF-8, x86-64, COVID-19, 21-day notice"], &[]).is_empty());
        assert!(refs(
            &["[… full output in /tmp/mm/output-16581-Yvd1WJ, see Report-2026.pdf or /srv/Build-1234/log]"],
            &[]
        )
        .is_empty());
        // At the end of a sentence, a reference is still one.
        assert_eq!(refs(&["Your request is LV-2291."], &[]), ["LV-2291"]);
        assert_eq!(
            refs(&["Shipped, tracking PR-7720-3391"], &[]),
            ["PR-7720-3391"]
        );
    }

    #[test]
    fn the_lines_holding_a_reference_are_kept_whole_and_once() {
        let outputs = [
            "Virement VIR-50111 enregistré le 07/12/2026.\nArrivée prévue le 08/12/2026.\n",
            "  VIR-50111 again  \nVirement VIR-50111 enregistré le 07/12/2026.\n",
        ];
        assert_eq!(
            lines_holding(outputs, &["VIR-50111".to_string()]),
            [
                "Virement VIR-50111 enregistré le 07/12/2026.",
                "VIR-50111 again"
            ]
        );
        assert!(lines_holding(outputs, &["T-1042".to_string()]).is_empty());
    }

    #[test]
    fn a_reference_the_user_or_the_instructions_wrote_is_not_new() {
        let out = ["Closed INC-40721 (VPN gateway unreachable from home) as fixed.".to_string()];
        assert!(new_references(&out, &["What's the status of inc-40721?"]).is_empty());
        assert_eq!(new_references(&out, &["Close it."]), ["INC-40721"]);
    }

    #[test]
    fn more_than_three_new_references_are_a_listing() {
        let listing = "INC-40721 open\nINC-40722 open\nINC-40698 closed\nINC-40733 open\n";
        assert!(refs(&[listing], &[]).is_empty());
        assert_eq!(
            refs(&["INC-40721 open\nINC-40721 again\nINC-40722 open"], &[]).len(),
            2
        );
    }

    #[test]
    fn an_answer_naming_one_reference_leaves_nothing_out() {
        let r = vec!["LV-2291".to_string(), "Tmp-8841-Kite".to_string()];
        assert!(!left_out("Your request lv-2291 is cancelled.", &r));
        assert!(left_out("The vacation request has been cancelled.", &r));
        assert!(!left_out("Anything at all.", &[]));
    }
}
