//! A real llama.cpp server for end-to-end tests.
//!
//! [`LlamaServer::start`] runs `llama-server --jinja` with a real GGUF model on a free loopback
//! port and waits for `/health`. The binary comes from `MM_LLAMA_SERVER`, the model from the
//! variable its [`Model`] names (`MM_TEST_MODEL`, `MM_TEST_QWEN`, `MM_TEST_SMOLLM`), all set by
//! `scripts/test.sh`, which builds and fetches them into `~/.cache/mm-dev/` (see `docs/models.md`).
//! The server is started under a small shell guard that kills it when the test process's end of a
//! pipe closes, so no server outlives the tests, even when they are killed.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running llama-server; stopped when dropped (or when the test process dies).
pub struct LlamaServer {
    port: u16,
    guard: Child,
}

/// The real models the tests can run (docs/models.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Model {
    /// Gemma 3 270M, a pre-trained base model with no chat template of its own (llama-server
    /// falls back to ChatML, without tools): constrained mode. `MM_TEST_MODEL`.
    Gemma,
    /// Qwen2.5-Coder-0.5B-Instruct: its own Qwen2.5 template with tools, native tool calls.
    /// `MM_TEST_QWEN`.
    Qwen,
    /// SmolLM2-135M-Instruct: its own ChatML template without tools, constrained mode.
    /// `MM_TEST_SMOLLM`.
    SmolLm2,
}

impl Model {
    /// The environment variable that holds the model file's path.
    pub fn env_var(self) -> &'static str {
        match self {
            Model::Gemma => "MM_TEST_MODEL",
            Model::Qwen => "MM_TEST_QWEN",
            Model::SmolLm2 => "MM_TEST_SMOLLM",
        }
    }

    /// Arguments this model is always served with. Qwen and SmolLM2 are run without llama-server's
    /// prompt cache: with it, a request's greedy reply depends on what earlier requests (other
    /// tests sharing the server) left in the cache, and their tests check the reply's words.
    fn args(self) -> &'static [&'static str] {
        match self {
            Model::Gemma => &[],
            Model::Qwen | Model::SmolLm2 => &["--no-cache-prompt"],
        }
    }
}

/// Settings of a test server.
#[derive(Debug, Clone)]
pub struct LlamaOptions {
    /// The model to serve.
    pub model: Model,
    /// Context size in tokens (`-c`).
    pub ctx: u32,
    /// Extra arguments for llama-server.
    pub extra: Vec<String>,
}

impl Default for LlamaOptions {
    fn default() -> Self {
        Self::model(Model::Gemma)
    }
}

impl LlamaOptions {
    /// The default settings for `model`: a 4096-token context and greedy sampling.
    pub fn model(model: Model) -> Self {
        // Temperature 0 as the server's default: the tests do not depend on sampling luck.
        Self {
            model,
            ctx: 4096,
            extra: vec!["--temp".into(), "0".into()],
        }
    }
}

impl LlamaServer {
    /// Starts a server; an error says what is missing (run `scripts/setup.sh`).
    pub fn start(options: &LlamaOptions) -> Result<Self, String> {
        let binary = std::env::var("MM_LLAMA_SERVER")
            .map_err(|_| "MM_LLAMA_SERVER is not set (scripts/test.sh sets it)".to_string())?;
        let var = options.model.env_var();
        let model = std::env::var(var)
            .map_err(|_| format!("{var} is not set (scripts/test.sh sets it)"))?;
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .map_err(|e| format!("no free port: {e}"))?;
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2);
        let mut args: Vec<String> = vec![
            "--jinja".into(),
            "-m".into(),
            model,
            "--host".into(),
            "127.0.0.1".into(),
            "--port".into(),
            port.to_string(),
            "-c".into(),
            options.ctx.to_string(),
            "-np".into(),
            "1".into(),
            "-t".into(),
            threads.to_string(),
        ];
        args.extend(options.model.args().iter().map(|a| (*a).to_string()));
        args.extend(options.extra.iter().cloned());
        // The guard: runs the server in the background, and kills it when its stdin (our pipe)
        // reaches EOF, which happens when this struct is dropped or the test process dies.
        let script = r#"bin="$1"; shift; "$bin" "$@" >"${MM_LLAMA_LOG:-/dev/null}" 2>&1 </dev/null & pid=$!; read -r _; kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null"#;
        #[expect(
            clippy::disallowed_methods,
            reason = "test support: the guard ends the server on its stdin EOF, even when a test crashes"
        )]
        let guard = Command::new("sh")
            .arg("-c")
            .arg(script)
            .arg("llama-guard")
            .arg(&binary)
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start {binary}: {e}"))?;
        let mut server = Self { port, guard };
        server.wait_healthy(Duration::from_secs(180))?;
        Ok(server)
    }

    /// `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    fn wait_healthy(&mut self, limit: Duration) -> Result<(), String> {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.guard.try_wait() {
                return Err(format!(
                    "llama-server exited at start ({status}); set MM_LLAMA_LOG=FILE to see why"
                ));
            }
            if get_status(self.port, "/health") == Some(200) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        Err(format!(
            "llama-server did not become healthy within {limit:?}"
        ))
    }
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        // Closing the guard's stdin makes it kill the server.
        drop(self.guard.stdin.take());
        let _ = self.guard.wait();
    }
}

/// The status code of a plain HTTP GET, or `None` when nothing answers.
fn get_status(port: u16, path: &str) -> Option<u16> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut head = [0u8; 64];
    let n = stream.read(&mut head).ok()?;
    let text = String::from_utf8_lossy(&head[..n]);
    text.split_whitespace().nth(1)?.parse().ok()
}
