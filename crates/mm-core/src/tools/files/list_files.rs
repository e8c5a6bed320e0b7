//! `list_files`: the files under a folder that a glob selects, sorted and capped, with ignore
//! rules applied the way ripgrep applies them (see [`super::walk`]).

use super::{Answer, FileTool, Filter, Job, done, refuse, walk};
use crate::args::{ParamSpec, ParamType};

/// The most paths one answer lists.
pub(super) const MAX_FILES: usize = 500;

pub(super) fn tool() -> FileTool {
    FileTool::new(
        "list_files",
        "List files (skips .gitignored).",
        vec![ParamSpec::new(
            "pattern",
            ParamType::String,
            Some("Glob"),
            false,
        )],
        true,
        list,
    )
}

fn list(job: &Job) -> Answer {
    // From the working directory; a folder goes in the pattern (`src/**/*.rs`).
    let shown_root = ".";
    let root = job.cwd.clone();
    let filter = match Filter::new(job.opt_str("pattern")) {
        Ok(filter) => filter,
        Err(e) => return refuse(e),
    };
    let mut files = Vec::new();
    if let Err(outcome) = walk(&root, shown_root, &filter, &job.cancel, |_, shown| {
        files.push(shown);
        Some(())
    }) {
        return (outcome, String::new());
    }
    if files.is_empty() {
        return done(match job.opt_str("pattern") {
            Some(pattern) => format!("No files match {pattern} in {shown_root}."),
            None => format!("No files in {shown_root}."),
        });
    }
    // The walk is in name order per folder; a plain sort makes the whole list read as sorted.
    files.sort_unstable();
    let more = files.len().saturating_sub(MAX_FILES);
    files.truncate(MAX_FILES);
    let mut text = files.join("\n");
    text.push('\n');
    if more > 0 {
        text.push_str(&format!("… {more} more files; narrow the pattern\n"));
    }
    done(text)
}
