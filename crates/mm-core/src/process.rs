//! The only module that spawns processes (for `bash` and declared tools alike).
//!
//! A process runs with stdin closed, stdout and stderr captured together through one pipe, in its
//! own process group; on timeout, cancellation or drop the whole group is killed. Output is kept
//! as head + tail within a byte cap, and the full output is streamed to a file when it overflows,
//! so memory stays flat whatever the process prints.
//!
//! The program and its arguments are an argv: no shell is ever involved here (`bash` is simply
//! the program of the `bash` tool), so a value cannot add an argument or chain a command.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::pipe::Receiver;
use tokio::process::{Child, Command};
use tokio_util::sync::CancellationToken;

/// Receives the process's combined output as it arrives (for the user's echo).
pub type OutputSink = Arc<dyn Fn(&[u8]) + Send + Sync>;

/// What to run.
#[derive(Debug, Clone)]
pub struct ProcessSpec {
    pub program: OsString,
    pub args: Vec<OsString>,
    pub cwd: PathBuf,
    pub timeout: Duration,
    /// Output over this many bytes keeps its head and tail (`limits.max_output`).
    pub max_output: usize,
}

/// How a process ended.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessOutcome {
    /// The combined output, truncated to head + tail with a line saying what was cut and where
    /// the full output was saved.
    pub output: String,
    /// The exit code, `None` when killed by a signal (timeout, cancellation).
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub cancelled: bool,
    /// Where the full output was saved, when it was truncated.
    pub full_output: Option<PathBuf>,
    pub duration: Duration,
}

/// How long the pipe is still read once the group is dead or killed. Only a process that left
/// the group (`setsid`) can keep the pipe open past that; it must not hang mm.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// How long reaping a SIGKILLed child may take (a process stuck in the kernel cannot die).
const REAP_GRACE: Duration = Duration::from_secs(5);

const READ_BUFFER: usize = 64 * 1024;

/// Runs a process to its end, its timeout or `cancel`.
///
/// Errors are for a process that could not be started (program not found or not executable, a
/// NUL byte in an argument, a missing working directory) or a failing pipe; a process that runs
/// and fails is an `Ok` outcome with its exit code.
pub async fn run_process(
    spec: &ProcessSpec,
    cancel: &CancellationToken,
    echo: Option<OutputSink>,
) -> io::Result<ProcessOutcome> {
    refuse_nul(spec)?;
    if !spec.cwd.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "cannot run {}: the working directory {} does not exist",
                name(&spec.program),
                spec.cwd.display()
            ),
        ));
    }
    let started = Instant::now();

    // One pipe for stdout and stderr, so the output interleaves as the user would see it, and a
    // process cannot block on a full stderr pipe nobody reads.
    let (reader, stdout, stderr) = output_pipe()?;
    let mut command = Command::new(&spec.program);
    command
        .args(&spec.args)
        .current_dir(&spec.cwd)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .process_group(0);
    let spawned = command.spawn();
    // The command holds the parent's copies of the write end: the pipe reaches its end only once
    // they are closed.
    drop(command);
    let mut child = spawned.map_err(|e| spawn_error(spec, e))?;
    let group = GroupGuard::new(&child)?;
    let mut pipe = Receiver::from_owned_fd(reader)?;

    let mut out = Collector::new(spec.max_output);
    let mut buf = vec![0; READ_BUFFER];
    let deadline = tokio::time::sleep(spec.timeout);
    tokio::pin!(deadline);
    let mut pipe_open = true;
    let end = loop {
        tokio::select! {
            biased;
            () = cancel.cancelled() => break End::Cancelled,
            () = &mut deadline => break End::TimedOut,
            status = child.wait() => break End::Exited(status?),
            read = pipe.read(&mut buf), if pipe_open => match read? {
                0 => pipe_open = false,
                n => out.push(&buf[..n], echo.as_ref()).await,
            },
        }
    };

    // Whatever ended it, nothing of the group may outlive the call: after a normal exit that is
    // a background process still holding the pipe (`sleep 1000 &`), which would otherwise hang
    // the drain below or be orphaned. (The leader is already reaped then, but its id cannot
    // name another group this soon: Linux hands out pids in sequence up to `pid_max`.)
    group.kill();
    let status = match end {
        End::Exited(status) => Some(status),
        End::TimedOut | End::Cancelled => tokio::time::timeout(REAP_GRACE, child.wait())
            .await
            .ok()
            .transpose()?,
    };
    if pipe_open {
        let drain = async {
            while let Ok(n @ 1..) = pipe.read(&mut buf).await {
                out.push(&buf[..n], echo.as_ref()).await;
            }
        };
        let _ = tokio::time::timeout(DRAIN_GRACE, drain).await;
    }
    group.disarm();

    let (output, full_output) = out.finish().await;
    Ok(ProcessOutcome {
        output,
        exit_code: status.and_then(|s: ExitStatus| s.code()),
        timed_out: matches!(end, End::TimedOut),
        cancelled: matches!(end, End::Cancelled),
        full_output,
        duration: started.elapsed(),
    })
}

/// The output kept in memory: the first `max / 2` bytes and a ring of the last `max - max / 2`.
/// Once the total passes `max`, everything (what came before included) is streamed to a file, so
/// memory stays flat however much the process prints.
struct Collector {
    max: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    tail_cap: usize,
    total: u64,
    spill: Spill,
}

enum Spill {
    /// Everything so far is in `head` + `tail`.
    None,
    File {
        file: tokio::fs::File,
        path: PathBuf,
    },
    /// The file could not be created or written; the reason goes into the note.
    Failed(String),
}

impl Collector {
    fn new(max: usize) -> Self {
        let head_cap = max / 2;
        Self {
            max,
            head: Vec::with_capacity(head_cap.min(READ_BUFFER)),
            tail: VecDeque::new(),
            tail_cap: max - head_cap,
            total: 0,
            spill: Spill::None,
        }
    }

    async fn push(&mut self, chunk: &[u8], echo: Option<&OutputSink>) {
        if let Some(echo) = echo {
            echo(chunk);
        }
        if matches!(self.spill, Spill::None) && self.total + chunk.len() as u64 > self.max as u64 {
            // Nothing was dropped yet: head + tail still hold every byte before this chunk.
            self.spill = match self.start_spill().await {
                Ok(spill) => spill,
                Err(e) => Spill::Failed(e.to_string()),
            };
        }
        let written = match &mut self.spill {
            Spill::File { file, .. } => file.write_all(chunk).await,
            _ => Ok(()),
        };
        if let Err(e) = written {
            self.spill = Spill::Failed(e.to_string());
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

    async fn start_spill(&self) -> io::Result<Spill> {
        let dir = std::env::temp_dir().join("mm-output");
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)?;
        let (file, path) = tempfile::Builder::new()
            .prefix(&format!("mm-output-{}-", std::process::id()))
            .suffix(".log")
            .tempfile_in(&dir)?
            .keep()
            .map_err(|e| e.error)?;
        let mut file = tokio::fs::File::from_std(file);
        file.write_all(&self.head).await?;
        let (a, b) = self.tail.as_slices();
        file.write_all(a).await?;
        file.write_all(b).await?;
        Ok(Spill::File { file, path })
    }

    /// The text the model reads, and where the full output was saved.
    async fn finish(mut self) -> (String, Option<PathBuf>) {
        self.tail.make_contiguous();
        let (tail, _) = self.tail.as_slices();
        if self.total <= self.max as u64 {
            let mut all = self.head;
            all.extend_from_slice(tail);
            return (String::from_utf8_lossy(&all).into_owned(), None);
        }
        // Cut on character boundaries: a split character would read as garbage on both sides.
        let head = &self.head[..complete_prefix(&self.head)];
        let tail = &tail[tail
            .iter()
            .take(3)
            .take_while(|&&b| is_continuation(b))
            .count()..];
        let cut = self.total - head.len() as u64 - tail.len() as u64;
        let total = self.total;
        let (where_, path) = match self.spill {
            Spill::File { mut file, path } => match file.flush().await {
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
        (text, path)
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

enum End {
    Exited(ExitStatus),
    TimedOut,
    Cancelled,
}

/// SIGKILLs the child's process group when dropped, so that a cancelled (dropped) future leaves
/// no process behind. The dropped `Child` itself is reaped by tokio's orphan queue.
struct GroupGuard {
    pgid: Pid,
    armed: bool,
}

impl GroupGuard {
    fn new(child: &Child) -> io::Result<Self> {
        let pid = child
            .id()
            .ok_or_else(|| io::Error::other("the child exited before it was watched"))?;
        let pid = i32::try_from(pid).map_err(io::Error::other)?;
        // `process_group(0)`: the child leads a group whose id is its pid.
        Ok(Self {
            pgid: Pid::from_raw(pid),
            armed: true,
        })
    }

    fn kill(&self) {
        // ESRCH (the group is already empty) is the expected case after a clean exit.
        let _ = killpg(self.pgid, Signal::SIGKILL);
    }

    /// Called once the group was killed after the leader was reaped: from then on the id may be
    /// reused by an unrelated group, which a later kill must not hit.
    fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.armed {
            self.kill();
        }
    }
}

/// One pipe: its read end and two write ends (stdout and stderr). Both ends are close-on-exec,
/// so a process spawned at the same time by another call cannot inherit them and hold them open.
fn output_pipe() -> io::Result<(OwnedFd, OwnedFd, OwnedFd)> {
    let (reader, writer) = io::pipe()?;
    let stderr = writer.try_clone()?;
    Ok((reader.into(), writer.into(), stderr.into()))
}

fn refuse_nul(spec: &ProcessSpec) -> io::Result<()> {
    let nul = |value: &OsStr| value.as_bytes().contains(&0);
    let what = if nul(&spec.program) {
        "the program name".to_string()
    } else if let Some(i) = spec.args.iter().position(|a| nul(a)) {
        format!("argument {}", i + 1)
    } else if nul(spec.cwd.as_os_str()) {
        "the working directory".to_string()
    } else {
        return Ok(());
    };
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "cannot run {}: {what} contains a NUL byte, which cannot be passed to a program",
            name(&spec.program)
        ),
    ))
}

/// A spawn failure, worded for the model and the user: which program, and why.
fn spawn_error(spec: &ProcessSpec, e: io::Error) -> io::Error {
    let program = name(&spec.program);
    let is_path = spec.program.as_bytes().contains(&b'/');
    let reason = match e.kind() {
        io::ErrorKind::NotFound if !is_path => "no such program on PATH".to_string(),
        io::ErrorKind::NotFound if resolve(spec).exists() => {
            "its interpreter (the #! line) was not found".to_string()
        }
        io::ErrorKind::NotFound => "no such file".to_string(),
        io::ErrorKind::PermissionDenied => {
            "permission denied (is it an executable file?)".to_string()
        }
        _ => e.to_string(),
    };
    io::Error::new(e.kind(), format!("cannot run {program}: {reason}"))
}

/// The program's path as the OS sees it (relative paths are relative to the working directory).
fn resolve(spec: &ProcessSpec) -> PathBuf {
    spec.cwd.join(Path::new(&spec.program))
}

fn name(program: &OsStr) -> String {
    program.to_string_lossy().into_owned()
}

#[cfg(test)]
#[path = "process_tests.rs"]
mod tests;
