//! The keyboard: one thread owns the terminal's input and reads a line when asked — the
//! prompt (rustyline: editing, history kept across sessions, multi-line input, completion of
//! `/` commands) or an answer to a dialog. Only one read is ever in progress, so a consent
//! question and the prompt never compete for a key.
//!
//! rustyline reads in raw mode, so Ctrl-C at the prompt or in a dialog is a key
//! ([`Read::Interrupted`]), not a SIGINT. While a turn runs, the terminal is in its normal
//! mode and Ctrl-C is a SIGINT to mm (signals.rs cancels the turn); tools run in process
//! groups of their own and do not get it from the terminal.
//!
//! Without a terminal (stdin a pipe), lines are read as they come, with no editing.

use std::io::BufRead;
use std::path::PathBuf;
use std::sync::mpsc;

use rustyline::completion::Completer;
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::{FileHistory, MemHistory};
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{Cmd, Config, Context, Editor, EventHandler, Helper, KeyCode, KeyEvent, Modifiers};
use tokio::sync::oneshot;

/// The prompt.
pub const PROMPT: &str = "> ";

/// What a read gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Read {
    Line(String),
    /// Ctrl-C.
    Interrupted,
    /// Ctrl-D on an empty line, or the end of the input.
    Eof,
}

enum Request {
    /// The prompt: the line is added to the history.
    Prompt(oneshot::Sender<Read>),
    /// A dialog's answer, with its own prompt and no history.
    Answer(String, oneshot::Sender<Read>),
}

/// The reading thread; cheap to clone.
#[derive(Clone)]
pub struct Input {
    requests: mpsc::Sender<Request>,
}

impl Input {
    /// Starts the thread: with a line editor on a terminal (its history in `history`), else
    /// reading stdin line by line. `commands` are completed after a `/`.
    pub fn start(terminal: bool, history: Option<PathBuf>, commands: Vec<&'static str>) -> Self {
        let (requests, incoming) = mpsc::channel();
        std::thread::spawn(move || {
            if terminal {
                match Keyboard::new(history, commands) {
                    Ok(keyboard) => return keyboard.serve(&incoming),
                    Err(e) => {
                        crate::render::warn(&format!("no line editor ({e}); reading plain lines"))
                    }
                }
            }
            serve_plain(&incoming);
        });
        Self { requests }
    }

    pub async fn prompt(&self) -> Read {
        self.read(Request::Prompt).await
    }

    /// A dialog's answer, after `prompt`.
    pub async fn answer(&self, prompt: &str) -> Read {
        let prompt = prompt.to_string();
        self.read(|reply| Request::Answer(prompt, reply)).await
    }

    async fn read(&self, request: impl FnOnce(oneshot::Sender<Read>) -> Request) -> Read {
        let (reply, read) = oneshot::channel();
        if self.requests.send(request(reply)).is_err() {
            return Read::Eof;
        }
        read.await.unwrap_or(Read::Eof)
    }
}

/// The line editors of a terminal session.
struct Keyboard {
    prompt: Editor<Commands, FileHistory>,
    dialog: Editor<(), MemHistory>,
    history: Option<PathBuf>,
}

impl Keyboard {
    fn new(history: Option<PathBuf>, commands: Vec<&'static str>) -> rustyline::Result<Self> {
        let config = Config::builder()
            .auto_add_history(false)
            .history_ignore_space(true)
            .max_history_size(2000)?
            .bracketed_paste(true)
            .build();
        let mut prompt = Editor::<Commands, FileHistory>::with_config(config.clone())?;
        prompt.set_helper(Some(Commands(commands)));
        // Alt-Enter starts a new line; so does a line ending in `\` (the validator).
        prompt.bind_sequence(
            KeyEvent(KeyCode::Enter, Modifiers::ALT),
            EventHandler::Simple(Cmd::Newline),
        );
        if let Some(path) = &history {
            // A missing file is a first session; an unreadable one is not worth a warning.
            let _ = prompt.load_history(path);
        }
        let dialog = Editor::with_history(config, MemHistory::new())?;
        Ok(Self {
            prompt,
            dialog,
            history,
        })
    }

    fn serve(mut self, incoming: &mpsc::Receiver<Request>) {
        while let Ok(request) = incoming.recv() {
            match request {
                Request::Prompt(reply) => {
                    let read = read(self.prompt.readline(PROMPT));
                    if let Read::Line(line) = &read {
                        self.remember(line);
                    }
                    let _ = reply.send(read);
                }
                Request::Answer(prompt, reply) => {
                    let _ = reply.send(read(self.dialog.readline(&prompt)));
                }
            }
        }
    }

    /// Adds the line to the history and appends it to the file at once: a session that
    /// crashes keeps what was typed.
    fn remember(&mut self, line: &str) {
        if line.trim().is_empty() {
            return;
        }
        if self.prompt.add_history_entry(line).unwrap_or(false)
            && let Some(path) = &self.history
        {
            if let Some(dir) = path.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            if let Err(e) = self.prompt.append_history(path) {
                crate::render::warn(&format!(
                    "cannot save the history to {}: {e}",
                    path.display()
                ));
            }
        }
    }
}

fn read(result: rustyline::Result<String>) -> Read {
    match result {
        Ok(line) => Read::Line(line),
        Err(ReadlineError::Interrupted) => Read::Interrupted,
        Err(_) => Read::Eof,
    }
}

fn serve_plain(incoming: &mpsc::Receiver<Request>) {
    while let Ok(request) = incoming.recv() {
        let reply = match request {
            Request::Prompt(reply) | Request::Answer(_, reply) => reply,
        };
        let mut line = String::new();
        let read = match std::io::stdin().lock().read_line(&mut line) {
            Ok(0) | Err(_) => Read::Eof,
            Ok(_) => Read::Line(line.trim_end_matches(['\n', '\r']).to_string()),
        };
        let _ = reply.send(read);
    }
}

/// The prompt's helper: completes `/` commands, and keeps reading after a line that ends in
/// `\` or inside an open ```` ``` ```` block.
struct Commands(Vec<&'static str>);

impl Completer for Commands {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        let typed = &line[..pos];
        if !typed.starts_with('/') || typed.contains(char::is_whitespace) {
            return Ok((0, Vec::new()));
        }
        let matches = self
            .0
            .iter()
            .filter(|c| c.starts_with(typed))
            .map(|c| (*c).to_string())
            .collect();
        Ok((0, matches))
    }
}

impl Hinter for Commands {
    type Hint = String;
}

impl Highlighter for Commands {}

impl Validator for Commands {
    fn validate(&self, ctx: &mut ValidationContext<'_>) -> rustyline::Result<ValidationResult> {
        Ok(if continues(ctx.input()) {
            ValidationResult::Incomplete
        } else {
            ValidationResult::Valid(None)
        })
    }
}

impl Helper for Commands {}

/// Whether the input goes on on another line: it ends in `\`, or a ```` ``` ```` fence is
/// open.
pub fn continues(input: &str) -> bool {
    let fences = input
        .lines()
        .filter(|l| l.trim_start().starts_with("```"))
        .count();
    input.ends_with('\\') || fences % 2 == 1
}

/// The text of a multi-line input: a `\` that ended a line is removed.
pub fn joined(input: &str) -> String {
    input.replace("\\\n", "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_line_input() {
        assert!(!continues("hello"));
        assert!(continues("first line \\"));
        assert!(continues("look:\n```\ncode"));
        assert!(!continues("look:\n```\ncode\n```"));
        assert_eq!(joined("one \\\ntwo"), "one \ntwo");
    }
}
