//! A peer process serving Streamable HTTP on a free loopback port, for tests that talk to a
//! real MCP server (picomcp's examples, the TypeScript SDK's): started with `--http ADDR`,
//! waited for until it listens, killed when dropped.

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a peer may take to listen.
const LISTEN_TIMEOUT: Duration = Duration::from_secs(20);

/// A running peer and the URL of its MCP endpoint (`http://127.0.0.1:PORT/mcp`).
pub struct HttpPeer {
    child: Child,
    pub url: String,
}

impl HttpPeer {
    /// Runs `command` with `--http 127.0.0.1:PORT` added (its output discarded) and waits until
    /// the port accepts connections. Panics, naming `what`, when it cannot start or listen.
    pub fn start(mut command: Command, what: &str) -> Self {
        let port = free_port();
        let child = command
            .args(["--http", &format!("127.0.0.1:{port}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("start {what}: {e}"));
        let deadline = Instant::now() + LISTEN_TIMEOUT;
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "{what} did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        Self {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for HttpPeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback port free at the time of asking.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("no free port: {e}"))
}
