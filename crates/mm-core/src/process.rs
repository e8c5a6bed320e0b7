//! The only module that spawns processes (`bash` and declared tools alike, hooks, MCP stdio
//! servers, and the `mm`s of `mm eval`); `clippy.toml` disallows `Command::new` elsewhere.
//!
//! Two shapes share one rule: every child leads its own process group, and the whole group is
//! stopped on timeout, cancellation or drop, so nothing a tool starts outlives its call —
//! SIGKILLed at once, or ([`Stop::Terminate`]) first asked with SIGTERM, for a child that must
//! stop processes of its own (an `mm` run by `mm eval` kills its tools' groups).
//! - [`run_process`]: run to the end with stdin closed, stdout and stderr together through one
//!   pipe, each chunk handed to a sink as it arrives (the call pipeline's [`crate::Output`] keeps
//!   head + tail and echoes; this module never buffers or truncates).
//! - [`spawn_piped`]: a long-lived child with piped stdin and stdout (MCP stdio servers, hooks),
//!   stderr piped or to a file, killed with its group when its handle is dropped.
//!
//! The program and its arguments are an argv: no shell is ever involved here (`bash` is simply
//! the program of the `bash` tool), so a value cannot add an argument or chain a command.
//!
//! A spec with a [`SandboxMode`] other than `off` is started through the sandbox helper
//! ([`crate::sandbox`]): here, once, for `bash`, declared tools and sandboxed MCP servers alike.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe::Receiver;
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio_util::sync::CancellationToken;

use crate::spawn_error::spawn_error;

use crate::sandbox::{self, SandboxMode, Wrapped};

/// What to run.
#[derive(Debug, Clone)]
pub struct ProcessSpec {
    pub program: OsString,
    pub args: Vec<OsString>,
    pub cwd: PathBuf,
    pub timeout: Duration,
    /// Confined to the working folder (`cwd`) when not `Off`.
    pub sandbox: SandboxMode,
}

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessOutcome {
    /// The exit code, `None` when killed by a signal (timeout, cancellation).
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub cancelled: bool,
    pub duration: Duration,
}

/// How long the pipe is still read once the group is dead or killed. Only a process that left
/// the group (`setsid`) can keep the pipe open past that; it must not hang mm.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// How long reaping a SIGKILLed child may take (a process stuck in the kernel cannot die).
const REAP_GRACE: Duration = Duration::from_secs(5);

const READ_BUFFER: usize = 64 * 1024;

/// Runs a process to its end, its timeout or `cancel`, handing each chunk of its combined
/// output to `sink` as it arrives.
///
/// Errors are for a process that could not be started (program not found or not executable, a
/// NUL byte in an argument, a missing working directory) or a failing pipe; a process that runs
/// and fails is an `Ok` outcome with its exit code.
pub async fn run_process(
    spec: &ProcessSpec,
    cancel: &CancellationToken,
    sink: &mut (dyn FnMut(&[u8]) + Send),
) -> io::Result<ProcessOutcome> {
    refuse_nul(spec)?;
    check_cwd(spec)?;
    let started = Instant::now();

    // One pipe for stdout and stderr, so the output interleaves as the user would see it, and a
    // process cannot block on a full stderr pipe nobody reads.
    let (reader, stdout, stderr) = output_pipe()?;
    // Held to the end: the sandbox's private temp folder is removed when it is dropped.
    let wrapped = sandbox::wrap(spec.sandbox, &spec.program, &spec.args, &spec.cwd)?;
    let mut command = command(spec, wrapped.as_ref());
    command
        .current_dir(&spec.cwd)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .process_group(0);
    let spawned = command.spawn();
    // The command holds the parent's copies of the write end: the pipe reaches its end only once
    // they are closed.
    drop(command);
    let mut child = spawned.map_err(|e| spawn_error(&spec.program, &spec.cwd, e))?;
    let group = GroupGuard::new(&child)?;
    let mut pipe = Receiver::from_owned_fd(reader)?;

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
                n => sink(&buf[..n]),
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
                sink(&buf[..n]);
            }
        };
        let _ = tokio::time::timeout(DRAIN_GRACE, drain).await;
    }
    group.disarm();
    drop(wrapped);

    Ok(ProcessOutcome {
        exit_code: status.and_then(|s: ExitStatus| s.code()),
        timed_out: matches!(end, End::TimedOut),
        cancelled: matches!(end, End::Cancelled),
        duration: started.elapsed(),
    })
}

/// The command for `spec`: the program itself, or the sandbox helper with the program's argv.
#[expect(clippy::disallowed_methods, reason = "the process runner itself")]
fn command(spec: &ProcessSpec, wrapped: Option<&Wrapped>) -> Command {
    match wrapped {
        None => {
            let mut command = Command::new(&spec.program);
            command.args(&spec.args);
            command
        }
        Some(wrapped) => {
            let mut command = Command::new(&wrapped.program);
            command
                .arg0(wrapped.arg0)
                .args(&wrapped.args)
                .env("TMPDIR", wrapped.tmp.path());
            command
        }
    }
}

enum End {
    Exited(ExitStatus),
    TimedOut,
    Cancelled,
}

/// Where a long-lived child's stderr goes.
#[derive(Debug, Default)]
#[non_exhaustive]
pub enum StderrTo {
    /// A pipe the caller reads ([`PipedChild::stderr`]); it must be read, or a chatty child
    /// blocks once the pipe is full.
    Piped,
    /// Appended to a file (an MCP server's log).
    File(std::fs::File),
    #[default]
    Null,
}

/// How a long-lived child's group is stopped (on [`PipedChild::kill`] or when it is dropped).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Stop {
    /// SIGKILL at once: servers and hooks have nothing of their own to clean up.
    #[default]
    Kill,
    /// SIGTERM, then SIGKILL after the grace: for a child that must stop what it started
    /// itself — an `mm` that `mm eval` runs kills its tools' process groups on SIGTERM, which a
    /// SIGKILL of its own group would orphan.
    Terminate(Duration),
}

/// A long-lived child: what to start.
#[derive(Debug, Default)]
pub struct PipedSpec {
    pub program: OsString,
    pub args: Vec<OsString>,
    pub cwd: PathBuf,
    /// Set on top of mm's environment.
    pub env: Vec<(OsString, OsString)>,
    /// Left out of mm's environment.
    pub env_remove: Vec<OsString>,
    pub stderr: StderrTo,
    pub stop: Stop,
    /// Confined to `cwd` when not `Off` (an MCP server's `sandbox:`).
    pub sandbox: SandboxMode,
}

/// A running long-lived child with piped stdin and stdout, leading its own process group. The
/// group is SIGKILLed when this is dropped (or on [`kill`](Self::kill)), so a server or a hook
/// cannot outlive mm's use of it.
pub struct PipedChild {
    child: Child,
    group: Option<GroupGuard>,
    /// A sandboxed child's private temp folder, removed with this.
    _tmp: Option<tempfile::TempDir>,
    pub stdin: Option<ChildStdin>,
    pub stdout: Option<ChildStdout>,
    pub stderr: Option<ChildStderr>,
}

/// Starts a long-lived child (see [`PipedChild`]). Errors as [`run_process`]'s: a program that
/// cannot be started, a NUL byte, a missing working directory.
pub fn spawn_piped(spec: PipedSpec) -> io::Result<PipedChild> {
    let run = ProcessSpec {
        program: spec.program,
        args: spec.args,
        cwd: spec.cwd,
        timeout: Duration::ZERO,
        sandbox: spec.sandbox,
    };
    refuse_nul(&run)?;
    check_cwd(&run)?;
    let wrapped = sandbox::wrap(run.sandbox, &run.program, &run.args, &run.cwd)?;
    let stderr = match spec.stderr {
        StderrTo::Piped => Stdio::piped(),
        StderrTo::File(file) => Stdio::from(file),
        StderrTo::Null => Stdio::null(),
    };
    let mut command = command(&run, wrapped.as_ref());
    for name in &spec.env_remove {
        command.env_remove(name);
    }
    command
        .envs(spec.env)
        .current_dir(&run.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .process_group(0);
    let mut child = command
        .spawn()
        .map_err(|e| spawn_error(&run.program, &run.cwd, e))?;
    let mut group = GroupGuard::new(&child)?;
    group.stop = spec.stop;
    Ok(PipedChild {
        stdin: child.stdin.take(),
        stdout: child.stdout.take(),
        stderr: child.stderr.take(),
        child,
        group: Some(group),
        _tmp: wrapped.map(|w| w.tmp),
    })
}

impl PipedChild {
    /// The group's id (the leader's pid).
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// Waits for the leader to exit, then kills what is left of its group.
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        let status = self.child.wait().await?;
        self.end_group();
        Ok(status)
    }

    /// Stops the whole group (as [`Stop`] says) and reaps the leader.
    pub async fn kill(&mut self) {
        if let Some(group) = &self.group {
            if let Stop::Terminate(grace) = group.stop {
                group.signal(Signal::SIGTERM);
                if tokio::time::timeout(grace, self.child.wait()).await.is_ok() {
                    self.end_group();
                    return;
                }
            }
            group.kill();
        }
        let _ = tokio::time::timeout(REAP_GRACE, self.child.wait()).await;
        self.end_group();
    }

    /// The leader is reaped: kill the rest once, then never again (the id may be reused).
    fn end_group(&mut self) {
        if let Some(group) = self.group.take() {
            group.kill();
            group.disarm();
        }
    }
}

/// SIGKILLs the child's process group when dropped, so that a cancelled (dropped) future leaves
/// no process behind. The dropped `Child` itself is reaped by tokio's orphan queue.
struct GroupGuard {
    pgid: Pid,
    armed: bool,
    stop: Stop,
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
            stop: Stop::Kill,
        })
    }

    fn kill(&self) {
        self.signal(Signal::SIGKILL);
    }

    fn signal(&self, signal: Signal) {
        // ESRCH (the group is already empty) is the expected case after a clean exit.
        let _ = killpg(self.pgid, signal);
    }

    /// Called once the group was killed after the leader was reaped: from then on the id may be
    /// reused by an unrelated group, which a later kill must not hit.
    fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        match self.stop {
            Stop::Kill => self.kill(),
            // A drop cannot wait: SIGTERM now, SIGKILL from a thread once the grace is over
            // (ESRCH by then when the group ended as asked).
            Stop::Terminate(grace) => {
                self.signal(Signal::SIGTERM);
                let pgid = self.pgid;
                std::thread::spawn(move || {
                    std::thread::sleep(grace);
                    let _ = killpg(pgid, Signal::SIGKILL);
                });
            }
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

fn check_cwd(spec: &ProcessSpec) -> io::Result<()> {
    if spec.cwd.is_dir() {
        return Ok(());
    }
    Err(io::Error::new(
        io::ErrorKind::NotFound,
        format!(
            "cannot run {}: the working directory {} does not exist",
            crate::spawn_error::name(&spec.program),
            spec.cwd.display()
        ),
    ))
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
            crate::spawn_error::name(&spec.program)
        ),
    ))
}

#[cfg(test)]
#[path = "process_tests.rs"]
pub(crate) mod tests;
