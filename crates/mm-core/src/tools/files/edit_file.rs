//! `edit_file`: replaces an exact text in a file, written back atomically.
//!
//! The old text must occur exactly once unless `replace_all` is set: a small model that quotes
//! too little context would otherwise edit the wrong place. When it does not occur, the answer
//! names the line closest to the text's first line, which is usually a whitespace slip. A file
//! with CRLF line ends matches an old text written with plain newlines.

use std::io::Read;

use super::{Answer, FileTool, Job, cannot_read, done, open_regular, refuse, write_atomic};
use crate::args::{ParamSpec, ParamType};

/// How alike (0–1, normalized Levenshtein) a line must be to be offered as "closest".
const CLOSE_ENOUGH: f64 = 0.6;
/// Longest line quoted in that hint.
const HINT_CHARS: usize = 120;
/// The largest file edited: it is held in memory twice (before and after).
const MAX_SIZE: u64 = 16 << 20;

pub(super) fn tool() -> FileTool {
    FileTool::new(
        "edit_file",
        "Replace unique old_text with new_text.",
        vec![
            ParamSpec::new("path", ParamType::String, None, true),
            ParamSpec::new("old_text", ParamType::String, None, true),
            ParamSpec::new("new_text", ParamType::String, None, true),
        ],
        false,
        edit,
    )
}

fn edit(job: &Job) -> Answer {
    let shown = job.str("path");
    let path = job.path("path");
    let (old, new) = (job.str("old_text"), job.str("new_text"));
    if old.is_empty() {
        return refuse("old_text is empty; to create or overwrite a file, use write_file.");
    }
    if old == new {
        return refuse("old_text and new_text are the same; nothing to change.");
    }
    let bytes = match open_regular(&path, shown).and_then(|file| {
        let mut bytes = Vec::new();
        match file.take(MAX_SIZE + 1).read_to_end(&mut bytes) {
            Ok(_) if bytes.len() as u64 > MAX_SIZE => Err(format!(
                "{shown} is larger than {}; edit_file edits smaller files (use bash).",
                crate::regular::size(MAX_SIZE)
            )),
            Ok(_) => Ok(bytes),
            Err(e) => Err(cannot_read(shown, &e)),
        }
    }) {
        Ok(bytes) => bytes,
        Err(why) => return refuse(why),
    };
    let Ok(text) = String::from_utf8(bytes) else {
        return refuse(format!(
            "{shown} is not UTF-8 text; edit_file edits text only."
        ));
    };
    let crlf = |s: &str| s.replace("\r\n", "\n").replace('\n', "\r\n");
    let (old, new) = if !text.contains(old) && text.contains("\r\n") && old.contains('\n') {
        (crlf(old), crlf(new))
    } else {
        (old.to_string(), new.to_string())
    };
    let count = text.matches(old.as_str()).count();
    if count == 0 {
        return refuse(match closest_line(&text, &old) {
            Some((n, line)) => format!(
                "old_text was not found in {shown}. Closest line {n}: {line}\nCopy the text exactly, whitespace included."
            ),
            None => format!("old_text was not found in {shown}."),
        });
    }
    if count > 1 {
        return refuse(format!(
            "old_text matches {count} times in {shown}; add the lines around it to make it unique."
        ));
    }
    let edited = text.replace(old.as_str(), &new);
    match write_atomic(&path, edited.as_bytes()) {
        Ok(_) if count == 1 => done(format!("Replaced 1 match in {shown}.")),
        Ok(_) => done(format!("Replaced {count} matches in {shown}.")),
        Err(e) => refuse(format!("{shown} was not written: {e}")),
    }
}

/// The line of `text` most like the first non-blank line of `old`, if one is alike enough.
fn closest_line(text: &str, old: &str) -> Option<(usize, String)> {
    let wanted = old.lines().find(|l| !l.trim().is_empty())?.trim();
    let mut best: Option<(usize, &str, f64)> = None;
    for (i, line) in text.lines().enumerate() {
        // Very long lines (minified files) are slow to compare and useless as a hint.
        if line.len() > 4 * HINT_CHARS {
            continue;
        }
        let score = strsim::normalized_levenshtein(line.trim(), wanted);
        if best.is_none_or(|(_, _, top)| score > top) {
            best = Some((i + 1, line, score));
        }
    }
    let (n, line, score) = best?;
    if score < CLOSE_ENOUGH {
        return None;
    }
    let mut quoted: String = line.chars().take(HINT_CHARS).collect();
    if quoted.len() < line.len() {
        quoted.push('…');
    }
    Some((n, quoted))
}
