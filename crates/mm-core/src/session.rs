//! Sessions: a conversation (its messages) and what happened in it (its events), appended as
//! it happens to one JSONL file, and read back to resume it.
//!
//! A session file holds one JSON object a line, each with a `type`:
//!
//! ```text
//! {"type":"session","version":1,"id":"20261203-121154-3f9a","cwd":"/src/app","created_ms":…,"agent":"mm.md","model":"qwen3"}
//! {"type":"user","text":"what changed?"}                      ← a turn starts
//! {"type":"assistant_message","text":"Let me look.","final":false}   ← events, as stream-json
//! {"type":"tool_call","id":"c1","name":"bash","arguments":"{\"command\":\"git status\"}"}
//! {"type":"tool_result","id":"c1","name":"bash","ok":true,"exit_code":0,"duration_ms":8,"content":"…"}
//! {"type":"assistant_message","text":"Two files.","final":true}
//! {"type":"message","message":{"role":"assistant",…}}         ← at the turn's end: the
//! {"type":"turn_end","stop_reason":"done","turns":2,"usage":{…}}   exact messages, then fsync
//! ```
//!
//! Invariants: the file is only appended to (`O_APPEND`), never rewritten; each line is written
//! with one `write` call, so a crash leaves at most its last line cut short, which reading
//! skips; the file is fsynced at the end of every turn. Events are written as they happen
//! (streaming pieces — text deltas, tool output chunks, progress — are not: the complete
//! message and result follow), so a turn cut short by `SIGKILL` is rebuilt from its events on
//! resume: its calls with the results written, a call without one answered as unknown.
//!
//! [`Session::turn`] runs one turn with the session: the user's message, the turn loop, the
//! events and the messages written. Print mode and interactive mode share it.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use nix::fcntl::{Flock, FlockArg};
use serde_json::{Value, json};

use self::read::{Stored, read_lines};
use crate::events::{Event, EventSink};
use crate::provider::{Message, Provider, ProviderError};
use crate::registry::Registry;
use crate::turn::{StopReason, TurnOptions, TurnResult, run_turn};

mod read;

/// The format of the session file.
const VERSION: u32 = 1;

/// What a call of a turn cut short by a crash is answered with on resume.
pub const UNKNOWN_RESULT: &str = "The result of this call is unknown: mm was stopped while it ran.";

/// Event types not written: pieces that a complete message or result follows.
const STREAMING: &[&str] = &[
    "text_delta",
    "reasoning_delta",
    "tool_output",
    "tool_progress",
];

/// A session cannot be created, found or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    #[error("no session {0} (mm sessions lists them)")]
    NotFound(String),
    #[error("{0} names more than one session: {1}")]
    Ambiguous(String, String),
    #[error("{path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{0}: not a session file (its first line is not a session header)")]
    NotASession(PathBuf),
    #[error(
        "the session {0} is in use by another mm; wait for it to end, or start a new session (without --continue / --resume)"
    )]
    Busy(String),
}

/// Who the session is for, written in its header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionMeta {
    /// The folder mm ran in: `--continue` resumes the latest session of this folder.
    pub cwd: PathBuf,
    /// Where the agent came from (`mm.md`, `default agent`).
    pub agent: String,
    pub model: String,
}

/// A session file, as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    pub id: String,
    pub cwd: PathBuf,
    pub created_ms: u64,
    /// When it was last written (the file's modification time).
    pub updated_ms: u64,
    /// The user's messages, in order.
    pub turns: usize,
    /// The first user message (its first line).
    pub title: String,
}

/// The folder of session files.
#[derive(Debug, Clone)]
pub struct SessionStore {
    dir: PathBuf,
}

impl SessionStore {
    /// Sessions in `dir` (created on the first session).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Starts a new session: its file holds the header only.
    pub fn create(&self, meta: &SessionMeta) -> Result<Session, SessionError> {
        let io = |error| SessionError::Io {
            path: self.dir.clone(),
            error,
        };
        // Conversations can hold anything the user or a tool wrote: the user's eyes only.
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .map_err(io)?;
        let created_ms = now_ms();
        let mut attempt = 0u32;
        let (id, path, file) = loop {
            let id = new_id(created_ms, attempt);
            let path = self.dir.join(format!("{id}.jsonl"));
            let opened = OpenOptions::new()
                .append(true)
                .create_new(true)
                .mode(0o600)
                .open(&path);
            match opened {
                Ok(file) => break (id, path, file),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 100 => {
                    attempt += 1;
                }
                Err(error) => return Err(SessionError::Io { path, error }),
            }
        };
        // Nobody can have a file that did not exist; the lock is for those who resume it.
        let file = lock(file).map_err(|_| SessionError::Busy(id.clone()))?;
        let session = Session::new(id.clone(), path, file, Vec::new());
        session.log.write(&json!({
            "type": "session", "version": VERSION, "id": id, "cwd": meta.cwd,
            "created_ms": created_ms, "agent": meta.agent, "model": meta.model,
            "mm": env!("CARGO_PKG_VERSION"),
        }));
        // Not fsynced here: start-up stays fast, and the first turn's end syncs the header.
        session.log.error().map_or(Ok(session), |error| {
            Err(SessionError::Io {
                path: self.dir.clone(),
                error,
            })
        })
    }

    /// Opens the session `id` (or the one session whose id starts with `id`) to go on with it:
    /// its messages are read back, and what happens next is appended to the same file.
    pub fn resume(&self, id: &str) -> Result<Resumed, SessionError> {
        let id = self.find(id)?;
        let path = self.dir.join(format!("{id}.jsonl"));
        let io = |error| SessionError::Io {
            path: path.clone(),
            error,
        };
        // Locked before it is read: what another mm appends from now on cannot be missed, and
        // two processes never interleave their turns in one file (each would believe its own
        // conversation is the whole one).
        let file = OpenOptions::new()
            .append(true)
            .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
            .open(&path)
            .map_err(io)?;
        let kind = file.metadata().map_err(io)?.file_type();
        if !kind.is_file() {
            return Err(SessionError::NotASession(path));
        }
        let file = lock(file).map_err(|_| SessionError::Busy(id.clone()))?;
        let text = crate::regular::read(&path, MAX_SESSION_BYTES).map_err(io)?;
        let read = read_lines(&text);
        if read.header.is_none() {
            return Err(SessionError::NotASession(path));
        }
        let session = Session::new(id, path.clone(), file, read.messages);
        if !text.is_empty() && !text.ends_with(b"\n") {
            // A line cut short by a crash: what comes next starts on a line of its own.
            session.log.write_raw(b"\n");
        }
        session
            .log
            .write(&json!({"type": "resumed", "at_ms": now_ms()}));
        Ok(Resumed {
            session,
            warnings: read.warnings,
            interrupted: read.interrupted,
        })
    }

    /// The most recently written session of the folder `cwd`. Reads only the headers of the
    /// newest files until one is of `cwd`, so that `--continue` stays fast with many sessions.
    pub fn latest_in(&self, cwd: &Path) -> Option<String> {
        let mut files = self.files();
        files.sort_by_key(|f| std::cmp::Reverse((f.updated_ms, f.id.clone())));
        files
            .into_iter()
            .find(|f| read::header_of(&f.path).is_some_and(|h| h.cwd == cwd))
            .map(|f| f.id)
    }

    /// Every session, oldest first. Files that are not sessions are left out.
    pub fn list(&self) -> Vec<SessionInfo> {
        let mut sessions: Vec<SessionInfo> = self
            .files()
            .into_iter()
            .filter_map(|file| {
                let text = crate::regular::read(&file.path, MAX_SESSION_BYTES).ok()?;
                let read = read_lines(&text);
                let header = read.header?;
                Some(SessionInfo {
                    id: file.id,
                    cwd: header.cwd,
                    created_ms: header.created_ms,
                    updated_ms: file.updated_ms,
                    turns: read.users.len(),
                    title: read
                        .users
                        .first()
                        .and_then(|t| t.lines().next())
                        .unwrap_or_default()
                        .to_string(),
                })
            })
            .collect();
        sessions.sort_by_key(|s| (s.created_ms, s.id.clone()));
        sessions
    }

    /// The `*.jsonl` regular files of the folder (a symlink to one counts), unread. Anything
    /// else named so (a FIFO, whose reading would wait for a writer forever) is left out.
    fn files(&self) -> Vec<SessionFile> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        entries
            .filter_map(|entry| {
                let entry = entry.ok()?;
                let name = entry.file_name().into_string().ok()?;
                let id = name.strip_suffix(".jsonl")?.to_string();
                let meta = std::fs::metadata(entry.path()).ok()?;
                if !meta.is_file() {
                    return None;
                }
                let updated_ms = meta
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                    .map_or(0, crate::millis);
                Some(SessionFile {
                    id,
                    path: entry.path(),
                    updated_ms,
                })
            })
            .collect()
    }

    /// The id of the session `id` names: itself, or the one id it is the start of.
    fn find(&self, id: &str) -> Result<String, SessionError> {
        let valid = !id.is_empty()
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !valid {
            return Err(SessionError::NotFound(id.to_string()));
        }
        if self.dir.join(format!("{id}.jsonl")).is_file() {
            return Ok(id.to_string());
        }
        let mut matching: Vec<String> = self
            .files()
            .into_iter()
            .map(|f| f.id)
            .filter(|s| s.starts_with(id))
            .collect();
        matching.sort();
        match matching.as_slice() {
            [] => Err(SessionError::NotFound(id.to_string())),
            [one] => Ok(one.clone()),
            many => Err(SessionError::Ambiguous(id.to_string(), many.join(", "))),
        }
    }
}

/// A file of the store, before it is read.
struct SessionFile {
    id: String,
    path: PathBuf,
    updated_ms: u64,
}

/// A session opened again, with what reading it found.
pub struct Resumed {
    pub session: Session,
    /// Lines that could not be read (a line cut short by a crash is not one of them).
    pub warnings: Vec<String>,
    /// The last turn has no end in the file (mm was killed during it); it was rebuilt from its
    /// events.
    pub interrupted: bool,
}

/// A conversation being had: its messages (the system prompt first, once set) and the file its
/// events and messages are appended to.
pub struct Session {
    id: String,
    path: PathBuf,
    /// Without the system prompt, which [`Session::turn`] puts first: it is the agent's, not
    /// the session's, and may change between runs.
    messages: Vec<Message>,
    log: Arc<Log>,
}

impl Session {
    fn new(id: String, path: PathBuf, file: Locked, messages: Vec<Message>) -> Self {
        Self {
            id,
            path,
            messages,
            log: Arc::new(Log {
                file: Mutex::new(Some(file)),
                error: Mutex::new(None),
            }),
        }
    }

    /// A session kept in memory only, for when its file cannot be created: the conversation
    /// goes on, and cannot be resumed.
    pub fn unsaved() -> Self {
        Self {
            id: String::new(),
            path: PathBuf::new(),
            messages: Vec::new(),
            log: Arc::new(Log {
                file: Mutex::new(None),
                error: Mutex::new(None),
            }),
        }
    }

    /// Whether the session is written to a file (see [`Session::unsaved`]).
    pub fn is_saved(&self) -> bool {
        !self.id.is_empty()
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The conversation so far (the user's and the model's messages and tool results; no
    /// system prompt).
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The user's messages so far.
    pub fn user_turns(&self) -> usize {
        self.messages
            .iter()
            .filter(|m| matches!(m, Message::User(_)))
            .count()
    }

    /// Records a note in the file (e.g. `{"type":"model","model":…}` when the user switches
    /// models). `entry` must be an object with a `type` that is not an event's.
    pub fn note(&self, entry: &Value) {
        self.log.write(entry);
    }

    /// The first error writing the file met since the last call, if any: the session goes on
    /// in memory, and the user should be told once.
    pub fn take_error(&self) -> Option<std::io::Error> {
        self.log.error()
    }

    /// Runs one user turn: writes the user's message, runs the turn loop over the conversation
    /// with `system` as its system prompt (every event is written as it happens, and passed on
    /// to `opts.events`), then writes the messages the turn added and how it ended, and
    /// fsyncs.
    pub async fn turn(
        &mut self,
        provider: &Provider,
        registry: &Registry,
        system: &str,
        text: &str,
        opts: &TurnOptions,
    ) -> Result<TurnResult, ProviderError> {
        self.log.write(&json!({"type": "user", "text": text}));
        let mut messages = Vec::with_capacity(self.messages.len() + 2);
        messages.push(Message::System(system.to_string()));
        messages.append(&mut self.messages);
        messages.push(Message::User(text.to_string()));
        let start = messages.len();

        let log = self.log.clone();
        let downstream = opts.events.clone();
        let events: EventSink = Arc::new(move |event: &Event| {
            log.event(event);
            downstream(event);
        });
        let opts = TurnOptions {
            events,
            ..opts.clone()
        };
        let outcome = run_turn(provider, registry, &mut messages, &opts).await;

        for message in &messages[start..] {
            self.log
                .write(&json!({"type": "message", "message": Stored::from(message)}));
        }
        match &outcome {
            Ok(result) => self.log.write(&json!({
                "type": "turn_end", "stop_reason": result.stop_reason, "turns": result.turns,
                "usage": result.usage,
            })),
            Err(error) => self.log.write(&json!({
                "type": "turn_end", "stop_reason": StopReason::Error, "error": error.to_string(),
            })),
        }
        self.log.sync();
        messages.remove(0);
        self.messages = messages;
        outcome
    }
}

/// The largest session file read back (a conversation is far smaller; a file past this is not
/// one mm wrote).
const MAX_SESSION_BYTES: u64 = 1 << 30;

/// The session file, locked (`flock`, exclusive) for as long as this process has it open: a
/// second mm resuming the same session is refused ([`SessionError::Busy`]) instead of
/// interleaving its turns with ours. The lock goes with the file (and with the process).
type Locked = Flock<File>;

fn lock(file: File) -> Result<Locked, nix::errno::Errno> {
    Flock::lock(file, FlockArg::LockExclusiveNonblock).map_err(|(_, errno)| errno)
}

/// The file, shared by the session and its event sink (`None`: an unsaved session).
struct Log {
    file: Mutex<Option<Locked>>,
    error: Mutex<Option<std::io::Error>>,
}

impl Log {
    fn event(&self, event: &Event) {
        let Ok(value) = serde_json::to_value(event) else {
            return;
        };
        let streaming = value
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| STREAMING.contains(&t));
        if !streaming {
            self.write(&value);
        }
    }

    /// One line, in one `write`: a crash cuts at most this line short.
    fn write(&self, value: &Value) {
        let mut line = value.to_string();
        line.push('\n');
        self.write_raw(line.as_bytes());
    }

    fn write_raw(&self, bytes: &[u8]) {
        let mut file = self.file.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(file) = file.as_mut() {
            let result = file.write_all(bytes);
            self.keep(result);
        }
    }

    fn sync(&self) {
        let file = self.file.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(file) = file.as_ref() {
            let result = file.sync_data();
            self.keep(result);
        }
    }

    fn keep(&self, result: std::io::Result<()>) {
        if let Err(e) = result {
            let mut error = self.error.lock().unwrap_or_else(PoisonError::into_inner);
            error.get_or_insert(e);
        }
    }

    fn error(&self) -> Option<std::io::Error> {
        self.error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, crate::millis)
}

/// `YYYYMMDD-HHMMSS-xxxx` (UTC): sorts by time, and is short enough to type.
fn new_id(ms: u64, attempt: u32) -> String {
    let secs = ms / 1000;
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(i64::try_from(days).unwrap_or(0));
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let salt = (nanos ^ std::process::id().rotate_left(16) ^ attempt.wrapping_mul(0x9e37)) & 0xffff;
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}-{salt:04x}",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// Days since 1970-01-01 to (year, month, day) (Howard Hinnant's algorithm).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = u32::try_from(doy - (153 * mp + 2) / 5 + 1).unwrap_or(1);
    let m = u32::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
