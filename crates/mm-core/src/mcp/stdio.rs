//! stdio: the server is a child process (its own process group, killed with it) speaking
//! newline-delimited JSON-RPC on stdin and stdout; its stderr goes to a log file (rewritten at each
//! start), whose last line explains a server that went away.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use picomcp::RequestId;
use picomcp::jsonrpc::Incoming;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::ChildStdin;

use super::client::{CallError, Headers, Inbox, MAX_MESSAGE, Transport, unreadable_answer};
use crate::process::{PipedChild, PipedSpec, StderrTo, spawn_piped};

/// How long a server may take to exit once its stdin is closed, before it is killed.
const EXIT_GRACE: Duration = Duration::from_millis(500);

pub(crate) struct StdioTransport {
    stdin: tokio::sync::Mutex<Option<ChildStdin>>,
    child: tokio::sync::Mutex<Option<PipedChild>>,
    log: Option<PathBuf>,
    reader: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// Why the reader stopped reading the server, when it was mm's choice.
    broken: Arc<Mutex<Option<String>>>,
}

impl StdioTransport {
    /// Starts `server`, its stderr appended to `log`.
    pub(crate) fn spawn(
        server: super::StdioCommand<'_>,
        log: Option<PathBuf>,
        inbox: Inbox,
    ) -> Result<Self, String> {
        let stderr = match log.as_deref().and_then(open_log) {
            Some(file) => StderrTo::File(file),
            None => StderrTo::Null,
        };
        let mut child = spawn_piped(PipedSpec {
            program: server.program.as_os_str().to_owned(),
            args: server.args.iter().map(OsString::from).collect(),
            cwd: server.cwd.to_path_buf(),
            env: server
                .env
                .iter()
                .map(|(k, v)| (OsString::from(k), OsString::from(v)))
                .collect(),
            stderr,
            sandbox: server.sandbox,
            ..PipedSpec::default()
        })
        .map_err(|e| e.to_string())?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let broken = Arc::new(Mutex::new(None));
        let reader = stdout.map(|stdout| tokio::spawn(read_lines(stdout, inbox, broken.clone())));
        Ok(Self {
            stdin: tokio::sync::Mutex::new(stdin),
            child: tokio::sync::Mutex::new(Some(child)),
            log,
            reader: Mutex::new(reader),
            broken,
        })
    }
}

/// Opens (truncates) a server's log for its stderr, for the user's eyes only: a server's
/// stderr can hold tokens and paths, like a session. Its folder is made (or made again) 0700
/// and the file 0600, whatever an earlier mm left; a FIFO in its place is not waited on.
fn open_log(path: &Path) -> Option<std::fs::File> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .ok()?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).ok()?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() {
        return None;
    }
    file.set_permissions(std::fs::Permissions::from_mode(0o600))
        .ok()?;
    Some(file)
}

/// One message a line; lines that are not JSON-RPC (a server printing a banner) are skipped,
/// except an answer that cannot be read, which answers its request with why. A line longer
/// than [`MAX_MESSAGE`] ends the connection: its rest cannot be told from the next messages,
/// and mm does not hold it. Dropping `inbox` at the end tells the client the server is gone;
/// `broken` then says why.
async fn read_lines(
    stdout: tokio::process::ChildStdout,
    inbox: Inbox,
    broken: Arc<Mutex<Option<String>>>,
) {
    let mut reader = BufReader::new(stdout);
    let mut line = Vec::new();
    loop {
        line.clear();
        let mut limited = (&mut reader).take(MAX_MESSAGE as u64 + 1);
        match limited.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if line.len() > MAX_MESSAGE {
            *broken.lock().unwrap_or_else(|e| e.into_inner()) = Some(format!(
                "the server sent a message larger than {}, more than mm reads",
                crate::regular::size(MAX_MESSAGE as u64)
            ));
            return;
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let message = match Incoming::parse(&line) {
            Ok(message) => message,
            Err(bad) => match unreadable_answer(&line, &bad.error.message) {
                Some(answer) => answer,
                None => continue,
            },
        };
        if inbox.send(message).is_err() {
            return;
        }
    }
}

#[async_trait]
impl Transport for StdioTransport {
    async fn send(
        &self,
        mut message: String,
        _request: Option<&RequestId>,
        _headers: &Headers,
    ) -> Result<(), CallError> {
        message.push('\n');
        let mut stdin = self.stdin.lock().await;
        let Some(pipe) = stdin.as_mut() else {
            return Err(CallError::Transport("the server's stdin is closed".into()));
        };
        let written = async {
            pipe.write_all(message.as_bytes()).await?;
            pipe.flush().await
        };
        written.await.map_err(|e| {
            CallError::Transport(match self.diagnostic() {
                Some(why) => format!("the server exited ({e}); its last words: {why}"),
                None => format!("the server exited ({e})"),
            })
        })
    }

    async fn close(&self) {
        // Closing stdin asks the server to exit (MCP lifecycle); it is killed if it does not.
        drop(self.stdin.lock().await.take());
        if let Some(mut child) = self.child.lock().await.take() {
            if tokio::time::timeout(EXIT_GRACE, child.wait())
                .await
                .is_err()
            {
                child.kill().await;
            }
        }
        if let Some(reader) = self.reader.lock().unwrap_or_else(|e| e.into_inner()).take() {
            reader.abort();
        }
    }

    fn diagnostic(&self) -> Option<String> {
        if let Some(why) = self
            .broken
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
        {
            return Some(why);
        }
        let text = std::fs::read(self.log.as_ref()?).ok()?;
        let text = String::from_utf8_lossy(&text);
        text.lines()
            .rev()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(|l| l.chars().take(300).collect())
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path)
            .map(|m| m.permissions().mode() & 0o777)
            .unwrap_or(0)
    }

    #[test]
    fn a_server_log_is_the_users_alone_even_when_an_earlier_one_was_not() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let fresh = dir.path().join("state/mm/mcp/fs.log");
        assert!(open_log(&fresh).is_some());
        assert_eq!(mode(&fresh), 0o600);
        assert_eq!(mode(fresh.parent().unwrap_or(dir.path())), 0o700);

        // What an earlier mm left: a 0755 folder and a 0644 log.
        let old = dir.path().join("old/mcp/gh.log");
        let folder = old.parent().unwrap_or(dir.path());
        std::fs::create_dir_all(folder).unwrap_or_else(|e| panic!("{e}"));
        std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o755))
            .unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(&old, "token=abc\n").unwrap_or_else(|e| panic!("{e}"));
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(open_log(&old).is_some());
        assert_eq!(mode(&old), 0o600);
        assert_eq!(mode(folder), 0o700);
        assert_eq!(std::fs::read(&old).map(|b| b.len()).ok(), Some(0));

        // A FIFO in the log's place is not waited on.
        let fifo = dir.path().join("state/mm/mcp/pipe.log");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(open_log(&fifo).is_none());
    }

    #[test]
    fn corpus_a_server_log_is_never_readable_by_others() {
        let mut corpus = mm_test_support::Corpus::new("MCP server logs (modes)");
        for (dir_mode, file_mode) in [
            (None, None),
            (Some(0o755), None),
            (Some(0o777), None),
            (Some(0o755), Some(0o644)),
            (Some(0o777), Some(0o666)),
            (Some(0o700), Some(0o644)),
            (Some(0o755), Some(0o600)),
            (Some(0o1777), Some(0o777)),
        ] {
            let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
            let folder = dir.path().join("state/mm/mcp");
            let log = folder.join("s.log");
            if let Some(mode) = dir_mode {
                std::fs::create_dir_all(&folder).unwrap_or_else(|e| panic!("{e}"));
                std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(mode))
                    .unwrap_or_else(|e| panic!("{e}"));
            }
            if let Some(mode) = file_mode {
                std::fs::write(&log, "old").unwrap_or_else(|e| panic!("{e}"));
                std::fs::set_permissions(&log, std::fs::Permissions::from_mode(mode))
                    .unwrap_or_else(|e| panic!("{e}"));
            }
            let opened = open_log(&log).is_some();
            let held = opened && mode(&log) == 0o600 && mode(&folder) & 0o077 == 0;
            corpus.check((dir_mode, file_mode), held, || {
                format!("file {:o}, folder {:o}", mode(&log), mode(&folder))
            });
        }
        corpus.finish();
    }
}
