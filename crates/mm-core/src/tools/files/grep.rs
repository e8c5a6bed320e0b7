//! `grep`: the lines matching a regex in the files under a folder (or in one file), as
//! `file:line:text`, with ripgrep's own crates: `grep-regex` for the matcher, `grep-searcher`
//! for the search (binary files are skipped at their first NUL byte) and the shared
//! [`super::walk`] for ignore rules. Files come in sorted order; matches are capped, and past the
//! cap they are still counted so that the answer can say how many were left out.

use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, SearcherBuilder, sinks::Lossy};

use super::{Answer, FileTool, Filter, Job, done, refuse, walk};
use crate::args::{ParamSpec, ParamType};
use crate::tools::Outcome;

/// The most matching lines one answer shows.
pub(super) const MAX_MATCHES: usize = 200;
/// The longest line shown, in bytes; the rest of a longer line is cut.
pub(super) const MAX_LINE: usize = 300;
/// The most memory the searcher's buffer may take: a file with a longer line is skipped.
const MAX_HEAP: usize = 4 << 20;

pub(super) fn tool() -> FileTool {
    FileTool::new(
        "grep",
        "Regex search: file:line:text.",
        vec![
            ParamSpec::new("pattern", ParamType::String, None, true),
            ParamSpec::new("path", ParamType::String, None, false),
            ParamSpec::new("glob", ParamType::String, Some("File glob"), false),
        ],
        true,
        grep,
    )
}

fn grep(job: &Job) -> Answer {
    let pattern = job.str("pattern");
    let matcher = match RegexMatcherBuilder::new()
        .line_terminator(Some(b'\n'))
        .build(pattern)
    {
        Ok(matcher) => matcher,
        Err(e) => return refuse(format!("invalid regex {pattern:?}: {e}")),
    };
    let shown_root = job.opt_str("path").unwrap_or(".");
    let root = job.path("path");
    match std::fs::metadata(&root) {
        Ok(meta) if meta.is_dir() || meta.is_file() => {}
        Ok(meta) => {
            return refuse(format!(
                "{shown_root} is {}; grep searches regular files and folders.",
                crate::regular::what(meta.file_type())
            ));
        }
        Err(_) => return refuse(format!("{shown_root} does not exist.")),
    }
    let filter = match Filter::new(job.opt_str("glob")) {
        Ok(filter) => filter,
        Err(e) => return refuse(e),
    };
    // The searcher holds a whole line in memory: a line longer than the limit (a 300 MB
    // minified file) is an error for that file, which is then skipped and counted, instead of
    // a buffer as large as the line.
    let mut searcher = SearcherBuilder::new()
        .binary_detection(BinaryDetection::quit(0))
        .line_number(true)
        .heap_limit(Some(MAX_HEAP))
        .build();
    let mut lines = String::new();
    let (mut total, mut files, mut too_long) = (0usize, 0usize, 0usize);
    let walked = walk(&root, shown_root, &filter, &job.cancel, |path, shown| {
        let before = total;
        let sink = Lossy(|number, line: &str| {
            total += 1;
            if total <= MAX_MATCHES {
                let line = line.trim_end_matches(['\n', '\r']);
                lines.push_str(&format!("{shown}:{number}:{}\n", trimmed(line)));
            }
            Ok(!job.cancel.is_cancelled())
        });
        // A file that cannot be read is skipped, as ripgrep does (after saying so on stderr).
        // Opened without blocking and only when regular (a FIFO, `/proc/kmsg`: see
        // `crate::regular`).
        if let Ok(file) = crate::regular::open(path)
            && let Err(e) = searcher.search_file(&matcher, &file, sink)
            && e.to_string().contains("allocation limit")
        {
            too_long += 1;
        }
        files += usize::from(total > before);
        Some(())
    });
    if job.cancel.is_cancelled() {
        return (Outcome::Cancelled, lines);
    }
    if let Err(outcome) = walked {
        return (outcome, lines);
    }
    let skipped = match too_long {
        0 => String::new(),
        n => format!(
            "… {n} file(s) not searched to the end: a line longer than {}\n",
            crate::regular::size(MAX_HEAP as u64)
        ),
    };
    if total == 0 {
        let none = format!("No matches for {pattern} in {shown_root}.");
        return done(if skipped.is_empty() {
            none
        } else {
            format!("{none}\n{skipped}")
        });
    }
    if total > MAX_MATCHES {
        lines.push_str(&format!(
            "… {} more matches ({total} in {files} files); narrow the pattern, path or glob\n",
            total - MAX_MATCHES
        ));
    }
    lines.push_str(&skipped);
    done(lines)
}

/// `line` within [`MAX_LINE`] bytes, cut on a character boundary.
fn trimmed(line: &str) -> String {
    if line.len() <= MAX_LINE {
        return line.to_string();
    }
    let mut end = MAX_LINE;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &line[..end])
}
