//! `read_file`: a text file's lines, numbered `N: text`, from line `offset` for `limit` lines.
//!
//! The file is read as a stream, so a huge log costs only the lines shown (plus a newline count
//! of the rest, for the "how to read on" line). Binary files are refused rather than shown as
//! garbage: a NUL byte in the first 8 KiB (git's and ripgrep's test) or bytes that are not
//! UTF-8.

use std::io::{BufRead, BufReader};

use super::{Answer, FileTool, Job, cannot_read, done, open_regular, refuse};
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
        Err(e) => return refuse(cannot_read(shown, &e)),
    }
    match numbered(&mut reader, first, limit) {
        Ok(text) => text.answer(shown, first),
        Err(Problem::NotText(line)) => refuse(format!(
            "{shown} is not UTF-8 text (line {line}); read_file shows text only."
        )),
        Err(Problem::Io(e)) => refuse(cannot_read(shown, &e)),
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
    // A line was read but not shown (it is counted with the rest).
    let mut unshown = false;
    // Whether the last line read ended with a newline.
    let mut ended;
    loop {
        // Lines before `first` are only counted; a shown line is kept up to the cap (one byte
        // more tells that it went past it). The rest of a longer line is read and dropped, so a
        // 300 MB line costs 256 KiB, not 300 MB.
        let keep = if number + 1 < first { 0 } else { MAX_BYTES + 1 };
        let Some(read) = read_line(reader, &mut line, keep).map_err(Problem::Io)? else {
            return Ok(lines);
        };
        number += 1;
        ended = read.ended;
        if number < first {
            lines.skipped += 1;
            continue;
        }
        if lines.shown == limit {
            unshown = true;
            break;
        }
        let text = match std::str::from_utf8(&line) {
            Ok(text) => text,
            // A character cut by the cap is not an error; a bad byte before it is.
            Err(e) if read.cut && e.error_len().is_none() => {
                std::str::from_utf8(&line[..e.valid_up_to()]).unwrap_or_default()
            }
            Err(_) => return Err(Problem::NotText(number)),
        };
        let text = text.strip_suffix('\n').unwrap_or(text);
        let text = text.strip_suffix('\r').unwrap_or(text);
        let entry = format!("{number}: {text}\n");
        if lines.text.len() + entry.len() > MAX_BYTES || read.cut {
            lines.capped = true;
            if lines.shown > 0 {
                unshown = true;
                break;
            }
            // A single line longer than the cap: its start is better than nothing.
            let mut end = MAX_BYTES.min(entry.len());
            while !entry.is_char_boundary(end) {
                end -= 1;
            }
            lines.text.push_str(entry[..end].trim_end_matches('\n'));
            lines.text.push('\n');
            lines.line_cut = true;
            lines.shown = 1;
            break;
        }
        lines.text.push_str(&entry);
        lines.shown += 1;
    }
    // Count the line read but not shown, and the rest.
    let mut more = usize::from(unshown);
    let mut counted = 0u64;
    let mut chunk = vec![0; 64 * 1024];
    let mut ends_with_newline = ended;
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

/// One line read by [`read_line`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct LineRead {
    /// It ended with a newline (not with the end of the file).
    ended: bool,
    /// It was longer than what was kept of it.
    cut: bool,
}

/// Reads the next line into `line` (cleared first), keeping at most `keep` of its bytes (its
/// newline included when kept); the rest of the line is read and dropped. `None` at the end
/// of the file. Memory stays at `keep` plus the reader's buffer, however long the line.
fn read_line(
    reader: &mut impl BufRead,
    line: &mut Vec<u8>,
    keep: usize,
) -> std::io::Result<Option<LineRead>> {
    line.clear();
    let mut any = false;
    let mut cut = false;
    loop {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok(any.then_some(LineRead { ended: false, cut }));
        }
        any = true;
        let (take, ended) = match buf.iter().position(|&b| b == b'\n') {
            Some(at) => (at + 1, true),
            None => (buf.len(), false),
        };
        let room = keep.saturating_sub(line.len());
        line.extend_from_slice(&buf[..take.min(room)]);
        cut |= take > room;
        reader.consume(take);
        if ended {
            return Ok(Some(LineRead { ended: true, cut }));
        }
    }
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

#[cfg(test)]
mod tests {
    use std::io::{BufReader, Read};

    use super::*;

    #[test]
    fn a_huge_line_costs_only_what_is_kept() {
        // 32 MiB of one line, then a short one: only the cap is ever held.
        let huge = std::io::repeat(b'x')
            .take(32 << 20)
            .chain(&b"\nshort\n"[..]);
        let mut reader = BufReader::with_capacity(64 * 1024, huge);
        let mut line = Vec::new();
        let read =
            read_line(&mut reader, &mut line, MAX_BYTES + 1).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            read,
            Some(LineRead {
                ended: true,
                cut: true
            })
        );
        assert_eq!(line.len(), MAX_BYTES + 1);
        assert!(line.capacity() <= 4 * MAX_BYTES, "{}", line.capacity());
        let read =
            read_line(&mut reader, &mut line, MAX_BYTES + 1).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            read,
            Some(LineRead {
                ended: true,
                cut: false
            })
        );
        assert_eq!(line, b"short\n");
        assert_eq!(read_line(&mut reader, &mut line, 10).ok(), Some(None));
        // Skipped lines keep nothing.
        let mut line = Vec::new();
        let mut reader = BufReader::new(std::io::repeat(b'y').take(10 << 20));
        let read = read_line(&mut reader, &mut line, 0).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            read,
            Some(LineRead {
                ended: false,
                cut: true
            })
        );
        assert!(
            line.is_empty() && line.capacity() < 1024,
            "{}",
            line.capacity()
        );
    }
}
