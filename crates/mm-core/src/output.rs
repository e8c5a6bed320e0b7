//! A tool's output on its way to the model and the user: kept as head + tail within
//! `limits.max_output` bytes, streamed whole to a file once it overflows, and echoed to the user
//! (capped too) as it arrives.
//!
//! Every kind of tool writes its output here — a process's pipe, a file tool's text, an MCP
//! server's result — and the call pipeline ([`crate::pipeline`]) alone creates and finishes it, so
//! no tool truncates or echoes by itself. Memory stays flat whatever a tool prints: past the cap,
//! only `max_output` bytes are held and the rest goes to the file.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::DirBuilderExt;
use std::path::PathBuf;

/// The user's live view of a call's output.
pub type Echo = Box<dyn FnMut(&[u8]) + Send>;

/// Said once on the echo when it reaches its cap (the model still gets head and tail).
const ECHO_CUT: &[u8] = b"\n[... more output not shown here ...]\n";

/// The output of one call, as it is written.
pub struct Output {
    max: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    tail_cap: usize,
    total: u64,
    spill: Spill,
    echo: Option<Echo>,
    echoed: usize,
}

enum Spill {
    /// Everything so far is in `head` + `tail`.
    None,
    File {
        file: File,
        path: PathBuf,
    },
    /// The file could not be created or written; the reason goes into the note.
    Failed(String),
}

/// The output once the tool is done.
#[derive(Debug, Clone, PartialEq)]
pub struct Captured {
    /// Head and tail with a line saying what was cut and where the full output was saved, or
    /// the whole output when it fits.
    pub text: String,
    /// Where the full output was saved, when it was cut.
    pub full_output: Option<PathBuf>,
    /// Bytes written in all.
    pub total: u64,
}

impl Output {
    /// Output kept within `max` bytes (head `max / 2`, tail the rest), with no echo.
    pub fn new(max: usize) -> Self {
        let head_cap = max / 2;
        Self {
            max,
            head: Vec::with_capacity(head_cap.min(64 * 1024)),
            tail: VecDeque::new(),
            tail_cap: max - head_cap,
            total: 0,
            spill: Spill::None,
            echo: None,
            echoed: 0,
        }
    }

    /// Output that is also shown to the user as it comes, up to `max` bytes.
    pub fn with_echo(max: usize, echo: Echo) -> Self {
        Self {
            echo: Some(echo),
            ..Self::new(max)
        }
    }

    pub fn write_str(&mut self, text: &str) {
        self.write(text.as_bytes());
    }

    /// Appends a chunk. Writing the spill file is a plain blocking write: it goes to the page
    /// cache, and a chunk is at most a pipe read (64 KiB).
    pub fn write(&mut self, chunk: &[u8]) {
        if chunk.is_empty() {
            return;
        }
        self.echo_chunk(chunk);
        if matches!(self.spill, Spill::None) && self.total + chunk.len() as u64 > self.max as u64 {
            // Nothing was dropped yet: head + tail still hold every byte before this chunk.
            self.spill = match self.start_spill() {
                Ok(spill) => spill,
                Err(e) => Spill::Failed(e.to_string()),
            };
        }
        if let Spill::File { file, .. } = &mut self.spill {
            if let Err(e) = file.write_all(chunk) {
                self.spill = Spill::Failed(e.to_string());
            }
        }
        self.total += chunk.len() as u64;

        let head_room = (self.max / 2)
            .saturating_sub(self.head.len())
            .min(chunk.len());
        self.head.extend_from_slice(&chunk[..head_room]);
        let rest = &chunk[head_room..];
        let keep = rest.len().min(self.tail_cap);
        let overflow = (self.tail.len() + keep).saturating_sub(self.tail_cap);
        self.tail.drain(..overflow);
        self.tail.extend(&rest[rest.len() - keep..]);
    }

    /// Bytes written so far.
    pub fn total(&self) -> u64 {
        self.total
    }

    fn echo_chunk(&mut self, chunk: &[u8]) {
        let Some(echo) = &mut self.echo else { return };
        if self.echoed >= self.max {
            return;
        }
        let take = chunk.len().min(self.max - self.echoed);
        self.echoed += chunk.len();
        if take == chunk.len() {
            echo(chunk);
        } else {
            let mut shown = chunk[..take].to_vec();
            shown.extend_from_slice(ECHO_CUT);
            echo(&shown);
        }
    }

    fn start_spill(&self) -> io::Result<Spill> {
        let dir = std::env::temp_dir().join("mm-output");
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)?;
        let (mut file, path) = tempfile::Builder::new()
            .prefix(&format!("mm-output-{}-", std::process::id()))
            .suffix(".log")
            .tempfile_in(&dir)?
            .keep()
            .map_err(|e| e.error)?;
        file.write_all(&self.head)?;
        let (a, b) = self.tail.as_slices();
        file.write_all(a)?;
        file.write_all(b)?;
        Ok(Spill::File { file, path })
    }

    /// The text the model reads, and where the full output was saved.
    pub fn finish(mut self) -> Captured {
        let total = self.total;
        self.tail.make_contiguous();
        let (tail, _) = self.tail.as_slices();
        if total <= self.max as u64 {
            let mut all = std::mem::take(&mut self.head);
            all.extend_from_slice(tail);
            return Captured {
                text: String::from_utf8_lossy(&all).into_owned(),
                full_output: None,
                total,
            };
        }
        // Cut on character boundaries: a split character would read as garbage on both sides.
        let head = &self.head[..complete_prefix(&self.head)];
        let tail = &tail[tail
            .iter()
            .take(3)
            .take_while(|&&b| is_continuation(b))
            .count()..];
        let cut = total - head.len() as u64 - tail.len() as u64;
        let (where_, full_output) = match std::mem::replace(&mut self.spill, Spill::None) {
            Spill::File { mut file, path } => match file.flush() {
                Ok(()) => (
                    format!("full output ({total} bytes) saved to {}", path.display()),
                    Some(path),
                ),
                Err(e) => (
                    format!("the full output ({total} bytes) could not be saved: {e}"),
                    None,
                ),
            },
            Spill::Failed(e) => (
                format!("the full output ({total} bytes) could not be saved: {e}"),
                None,
            ),
            Spill::None => (format!("full output: {total} bytes"), None),
        };
        let mut text = String::from_utf8_lossy(head).into_owned();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!("[… {cut} bytes cut; {where_} …]\n"));
        text.push_str(&String::from_utf8_lossy(tail));
        Captured {
            text,
            full_output,
            total,
        }
    }
}

/// The length of `bytes` without a character cut at its end.
fn complete_prefix(bytes: &[u8]) -> usize {
    match std::str::from_utf8(bytes) {
        Err(e) if e.error_len().is_none() => e.valid_up_to(),
        _ => bytes.len(),
    }
}

fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

#[cfg(test)]
#[path = "output_tests.rs"]
mod tests;
