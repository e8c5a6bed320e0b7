//! The real `mm` on a real pseudo-terminal, typed at like a person would: `script` (util-linux)
//! gives mm a terminal on stdin and stdout; what we write to script's stdin reaches mm as keys
//! (`\r` Enter, `\x03` Ctrl-C, `\x04` Ctrl-D, `\x1b[A` Up), and everything mm draws comes back
//! on script's stdout.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mm_test_support::ScriptedServer;

use super::Case;

pub const ENTER: &str = "\r";
pub const CTRL_C: &str = "\x03";
pub const CTRL_D: &str = "\x04";
pub const UP: &str = "\x1b[A";

/// How long any expected text may take to show.
const PATIENCE: Duration = Duration::from_secs(30);

/// A running `mm` on a terminal.
pub struct Pty {
    child: Child,
    keys: Option<ChildStdin>,
    screen: Arc<Mutex<Vec<u8>>>,
    /// Where the next [`Pty::expect`] starts looking.
    seen: usize,
}

impl Pty {
    /// `mm ARGS` in the case's folder against `server`, its data (sessions, history) under
    /// `data`, without colours (`NO_COLOR`), on a 120×40 terminal. The case's `mm.md` is named
    /// with `-a` (the user's choice, trusted); see [`Pty::in_folder`] for a folder's own.
    pub fn mm(case: &Case, server: &ScriptedServer, data: &Path, args: &[&str]) -> Self {
        Self::mm_with(case, server, data, args, &[("NO_COLOR", "1")])
    }

    pub fn mm_with(
        case: &Case,
        server: &ScriptedServer,
        data: &Path,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Self {
        let mut with_agent = vec!["--agent", "mm.md"];
        with_agent.extend_from_slice(args);
        let named = args.iter().any(|a| matches!(*a, "-a" | "--agent"));
        let args = if named || !case.path().join("mm.md").exists() {
            args
        } else {
            &with_agent[..]
        };
        Self::start(case, server, data, args, env)
    }

    /// `mm ARGS` as a user runs it in a folder: its `./mm.md` found by default, so that what
    /// the folder grants needs trust (SPEC §1).
    pub fn in_folder(case: &Case, server: &ScriptedServer, data: &Path, args: &[&str]) -> Self {
        Self::start(case, server, data, args, &[("NO_COLOR", "1")])
    }

    fn start(
        case: &Case,
        server: &ScriptedServer,
        data: &Path,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Self {
        let mm = assert_cmd::cargo::cargo_bin("mm");
        let mut line = format!(
            "stty cols 120 rows 40; exec '{}' --base-url '{}'",
            mm.display(),
            server.base_url()
        );
        for arg in args {
            line.push_str(&format!(" '{arg}'"));
        }
        let mut command = Command::new("script");
        command
            .args(["-qefc", &line, "/dev/null"])
            .current_dir(case.path())
            .env_remove("MM_AGENT")
            .env_remove("MM_MODEL")
            .env_remove("MM_BASE_URL")
            .env_remove("NO_COLOR")
            .env("SHELL", "/bin/sh")
            .env("TERM", "xterm-256color")
            .env("HOME", case.path())
            .env("TMPDIR", case.path())
            .env("XDG_DATA_HOME", data)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("script");
        let keys = child.stdin.take();
        let screen = Arc::new(Mutex::new(Vec::new()));
        for mut from in [
            Box::new(child.stdout.take().expect("stdout")) as Box<dyn Read + Send>,
            Box::new(child.stderr.take().expect("stderr")),
        ] {
            let screen = screen.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n @ 1..) = from.read(&mut buf) {
                    screen.lock().expect("screen").extend_from_slice(&buf[..n]);
                }
            });
        }
        Self {
            child,
            keys,
            screen,
            seen: 0,
        }
    }

    /// Everything shown so far.
    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.screen.lock().expect("screen")).into_owned()
    }

    /// Waits until `text` shows after what was already expected; returns the screen up to
    /// and including it. Panics with the screen after 30 s.
    pub fn expect(&mut self, text: &str) -> String {
        self.expect_within(text, PATIENCE)
    }

    pub fn expect_within(&mut self, text: &str, patience: Duration) -> String {
        let deadline = Instant::now() + patience;
        loop {
            let screen = self.screen();
            if let Some(at) = screen.get(self.seen..).and_then(|rest| rest.find(text)) {
                let end = self.seen + at + text.len();
                let shown = screen[self.seen..end].to_string();
                self.seen = end;
                return shown;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!(
                    "{text:?} did not show within {patience:?}; the screen after what was seen:\n{}",
                    screen.get(self.seen..).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Types `keys`.
    pub fn send(&mut self, keys: &str) {
        let stdin = self.keys.as_mut().expect("keys");
        stdin.write_all(keys.as_bytes()).expect("type");
        stdin.flush().expect("type");
    }

    /// Waits for the prompt, then types `line` and Enter.
    pub fn say(&mut self, line: &str) {
        self.expect("> ");
        self.send(line);
        self.send(ENTER);
    }

    /// Waits for mm to exit (kills it after 30 s).
    pub fn wait(mut self) -> ExitStatus {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("mm did not exit; screen:\n{}", self.screen());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
