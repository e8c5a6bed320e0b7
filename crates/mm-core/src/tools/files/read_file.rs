//! `read_file`: a text file's lines, numbered `N: text`, from line `offset` for `limit` lines.
//!
//! The file is read as a stream, so a huge log costs only the lines shown (plus a newline count
//! of the rest, for the "how to read on" line). Binary files are refused rather than shown as
//! garbage: a NUL byte in the first 8 KiB (git's and ripgrep's test) or bytes that are not
//! UTF-8.

use std::io::{BufRead, BufReader};

use super::{Answer, FileTool, Job, done, open_regular, refuse};
use crate::args::{ParamSpec, ParamType};

/// Lines shown when the model does not ask for fewer; also the most it may ask for.
pub(super) const MAX_LINES: usize = 2000;
/// The most text one call returns; past it the answer says where to read on.
pub(super) const MAX_BYTES: usize = 256 * 1024;
/// How much of the file decides whether it is binary.
const SNIFF: usize = 8 * 1024;
/// How far past the shown lines newlines are counted for the "N more lines" hint.
const COUNT_LIMIT: u64 = 64 * 1024 * 1024;

pub(super) fn tool() -> FileTool {
    FileTool::new(
        "read_file",
        "Read a file with line numbers.",
        vec![
            ParamSpec::new("path", ParamType::String, None, true),
            ParamSpec::new("offset", ParamType::Integer, Some("First line"), false),
            ParamSpec::new("limit", ParamType::Integer, Some("Max lines"), false),
        ],
        true,
        read,
    )
}

fn read(job: &Job) -> Answer {
    let shown = job.str("path");
    let path = job.path("path");
    let offset = job.int("offset").unwrap_or(1);
    if offset < 1 {
        return refuse("offset is the first line to read: 1 or more.");
    }
    let limit = job.int("limit").unwrap_or(MAX_LINES as i64);
    if limit < 1 {
        return refuse("limit is a number of lines: 1 or more.");
    }
    let first = usize::try_from(offset).unwrap_or(usize::MAX);
    let limit = usize::try_from(limit).unwrap_or(usize::MAX).min(MAX_LINES);
    let file = match open_regular(&path, shown) {
        Ok(file) => file,
        Err(why) => return refuse(why),
    };
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    match reader.fill_buf() {
        Ok(start) if looks_binary(&start[..start.len().min(SNIFF)]) => {
            return refuse(format!(
                "{shown} is a binary file; read_file shows text only."
            ));
        }
        Ok(_) => {}
        Err(e) => return refuse(format!("{shown} cannot be read: {e}")),
    }
    match numbered(&mut reader, first, limit) {
        Ok(text) => text.answer(shown, first),
        Err(Problem::NotText(line)) => refuse(format!(
            "{shown} is not UTF-8 text (line {line}); read_file shows text only."
        )),
        Err(Problem::Io(e)) => refuse(format!("{shown} cannot be read: {e}")),
    }
}

/// A NUL byte, or bytes that are not UTF-8 (a character cut at the end of the sample is fine).
fn looks_binary(sample: &[u8]) -> bool {
    sample.contains(&0) || matches!(std::str::from_utf8(sample), Err(e) if e.error_len().is_some())
}

enum Problem {
    NotText(usize),
    Io(std::io::Error),
}

/// The lines read, and what is left.
struct Lines {
    text: String,
    /// Lines in the file before `first` (all of them when `first` is past the end).
    skipped: usize,
    shown: usize,
    /// Lines after the shown ones, when counted (`None`: more than [`COUNT_LIMIT`] bytes).
    more: Option<usize>,
    /// The byte cap stopped the reading.
    capped: bool,
    /// The one line shown was cut at the byte cap.
    line_cut: bool,
}

fn numbered(reader: &mut impl BufRead, first: usize, limit: usize) -> Result<Lines, Problem> {
    let mut lines = Lines {
        text: String::new(),
        skipped: 0,
        shown: 0,
        more: Some(0),
        capped: false,
        line_cut: false,
    };
    let mut line = Vec::new();
    let mut number = 0;
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).map_err(Problem::Io)? == 0 {
            return Ok(lines);
        }
        number += 1;
        if number < first {
            lines.skipped += 1;
            continue;
        }
        if lines.shown == limit {
            break;
        }
        let text = std::str::from_utf8(&line).map_err(|_| Problem::NotText(number))?;
        let text = text.strip_suffix('\n').unwrap_or(text);
        let text = text.strip_suffix('\r').unwrap_or(text);
        let entry = format!("{number}: {text}\n");
        if lines.text.len() + entry.len() > MAX_BYTES {
            lines.capped = true;
            if lines.shown > 0 {
                break;
            }
            // A single line longer than the cap: its start is better than nothing.
            let mut end = MAX_BYTES;
            while !entry.is_char_boundary(end) {
                end -= 1;
            }
            lines.text.push_str(&entry[..end]);
            lines.text.push('\n');
            lines.line_cut = true;
            lines.shown = 1;
            line.clear();
            break;
        }
        lines.text.push_str(&entry);
        lines.shown += 1;
    }
    // The line in `line` was read but not shown; count it and the rest.
    let mut more = usize::from(!line.is_empty());
    let mut counted = 0u64;
    let mut chunk = vec![0; 64 * 1024];
    let mut ends_with_newline = line.last() == Some(&b'\n') || line.is_empty();
    loop {
        let n = reader.read(&mut chunk).map_err(Problem::Io)?;
        if n == 0 {
            break;
        }
        counted += n as u64;
        if counted > COUNT_LIMIT {
            lines.more = None;
            return Ok(lines);
        }
        more += chunk[..n].iter().filter(|&&b| b == b'\n').count();
        ends_with_newline = chunk[n - 1] == b'\n';
    }
    // A last line without a newline is a line too.
    if counted > 0 && !ends_with_newline {
        more += 1;
    }
    lines.more = Some(more);
    Ok(lines)
}

impl Lines {
    fn answer(self, shown: &str, first: usize) -> Answer {
        if self.shown == 0 {
            return match self.skipped {
                0 => done(format!("{shown} is empty.")),
                total => refuse(format!(
                    "{shown} has {total} lines; offset {first} is past the end."
                )),
            };
        }
        let mut text = self.text;
        let next = first + self.shown;
        let why = if self.line_cut {
            format!("line {first} cut at {} KiB", MAX_BYTES / 1024)
        } else if self.capped {
            format!("{} KiB shown", MAX_BYTES / 1024)
        } else {
            String::new()
        };
        let more = match self.more {
            Some(0) if why.is_empty() => return done(text),
            Some(0) => {
                text.push_str(&format!("… {why}\n"));
                return done(text);
            }
            Some(n) => format!("{n} more lines"),
            None => "more lines".to_string(),
        };
        let why = if why.is_empty() { why } else { why + "; " };
        text.push_str(&format!(
            "… {why}{more}; call read_file with offset={next}\n"
        ));
        done(text)
    }
}
