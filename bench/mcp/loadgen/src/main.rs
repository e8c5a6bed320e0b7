//! mcp-loadgen: drives `tools/call` of a trivial `echo` tool against an MCP
//! server and reports throughput and latency as one JSON line.
//!
//! ```text
//! mcp-loadgen http  --url http://127.0.0.1:PORT/mcp -c 50 [--warmup 2] [--duration 10] [--pid PID] [--label NAME]
//! mcp-loadgen stdio -c 50 [--warmup 2] [--duration 10] [--label NAME] -- CMD [ARGS...]
//! mcp-loadgen sessions --url URL --n 1000 --pid PID [--label NAME]
//! mcp-loadgen table FILE.jsonl           # render collected results as a markdown table
//! ```
//!
//! `--modern` (http and stdio): MCP 2026-07-28 instead of 2025-11-25: no initialize and no
//! session; every request carries the protocol version and client capabilities in `_meta`, and
//! over HTTP the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers.
//!
//! HTTP: one initialize (stateful session, `Mcp-Session-Id`), then `-c` tasks
//! each owning one keep-alive HTTP/1.1 connection with one request in flight.
//! The client accepts `application/json, text/event-stream` and parses either.
//! stdio: spawns the server, initializes, then keeps `-c` requests pipelined.
//! Every response is checked (result present, echoed text matches).
use std::collections::HashMap;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::net::TcpStream;
use tokio::process::Command;

type Error = Box<dyn std::error::Error + Send + Sync>;
type Result<T> = std::result::Result<T, Error>;

const PROTOCOL_VERSION: &str = "2025-11-25";
const MODERN_VERSION: &str = "2026-07-28";

/// Set once from `--modern` before any request is built.
static MODERN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn modern() -> bool {
    MODERN.load(Ordering::Relaxed)
}

struct Opts {
    url: String,
    concurrency: usize,
    warmup: f64,
    duration: f64,
    pid: Option<u32>,
    label: String,
    n: usize,
    cmd: Vec<String>,
    threads: usize,
}

fn parse_opts(args: &[String]) -> Result<Opts> {
    let mut o = Opts {
        url: String::new(),
        concurrency: 1,
        warmup: 2.0,
        duration: 10.0,
        pid: None,
        label: String::new(),
        n: 500,
        cmd: Vec::new(),
        threads: 1,
    };
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let mut val = || -> Result<String> {
            i += 1;
            args.get(i)
                .cloned()
                .ok_or_else(|| format!("{a} needs a value").into())
        };
        match a {
            "--url" => o.url = val()?,
            "-c" | "--concurrency" => o.concurrency = val()?.parse()?,
            "--warmup" => o.warmup = val()?.parse()?,
            "--duration" => o.duration = val()?.parse()?,
            "--pid" => o.pid = Some(val()?.parse()?),
            "--label" => o.label = val()?,
            "--n" => o.n = val()?.parse()?,
            "--threads" => o.threads = val()?.parse()?,
            "--modern" => MODERN.store(true, Ordering::Relaxed),
            "--" => {
                o.cmd = args[i + 1..].to_vec();
                break;
            }
            other => return Err(format!("unknown argument {other}").into()),
        }
        i += 1;
    }
    Ok(o)
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(mode) = args.first().cloned() else {
        return Err("usage: mcp-loadgen http|stdio|sessions|table ...".into());
    };
    if mode == "table" {
        let path = args.get(1).ok_or("table needs a file")?;
        return print_table(path);
    }
    let opts = parse_opts(&args[1..])?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(opts.threads.max(1))
        .enable_all()
        .build()?;
    let out = rt.block_on(async {
        match mode.as_str() {
            "http" => run_http(&opts).await,
            "stdio" => run_stdio(&opts).await,
            "sessions" => run_sessions(&opts).await,
            other => Err(format!("unknown mode {other}").into()),
        }
    })?;
    println!("{out}");
    Ok(())
}

// ---------------------------------------------------------------- helpers

fn proc_status_kb(pid: u32, key: &str) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
}

/// Sum of a process tree's VmHWM (the server may be a wrapper + child).
fn tree_kb(pid: u32, key: &str) -> Option<u64> {
    let mut total = proc_status_kb(pid, key)?;
    if let Ok(children) = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")) {
        for c in children
            .split_whitespace()
            .filter_map(|c| c.parse::<u32>().ok())
        {
            total += tree_kb(c, key).unwrap_or(0);
        }
    }
    Some(total)
}

fn percentile(sorted: &[u32], p: f64) -> u32 {
    if sorted.is_empty() {
        return 0;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

fn call_request(id: u64) -> Value {
    if modern() {
        return json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
           "params":{"name":"echo","arguments":{"text":format!("m{id}")},"_meta":{
               "io.modelcontextprotocol/protocolVersion":MODERN_VERSION,
               "io.modelcontextprotocol/clientCapabilities":{},
               "io.modelcontextprotocol/clientInfo":{"name":"mcp-loadgen","version":"0.0.0"}}}});
    }
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
           "params":{"name":"echo","arguments":{"text":format!("m{id}")}}})
}

fn check_call_response(v: &Value, id: u64) -> bool {
    v.get("id").and_then(Value::as_u64) == Some(id)
        && v["result"]["content"][0]["text"].as_str() == Some(&format!("m{id}"))
        && v["result"]["isError"].as_bool() != Some(true)
}

fn initialize_request(id: u64) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"initialize","params":{
        "protocolVersion":PROTOCOL_VERSION,"capabilities":{},
        "clientInfo":{"name":"mcp-loadgen","version":"0.0.0"}}})
}

struct Stats {
    label: String,
    transport: &'static str,
    concurrency: usize,
    ok: u64,
    errors: u64,
    secs: f64,
    lat_us: Vec<u32>,
    content_types: HashMap<String, u64>,
    hwm_kb: Option<u64>,
    first_error: Option<String>,
}

impl Stats {
    fn into_json(mut self) -> String {
        self.lat_us.sort_unstable();
        let rps = self.ok as f64 / self.secs;
        json!({
            "label": self.label,
            "transport": self.transport,
            "era": if modern() { MODERN_VERSION } else { PROTOCOL_VERSION },
            "concurrency": self.concurrency,
            "ok": self.ok,
            "errors": self.errors,
            "secs": self.secs,
            "rps": rps.round(),
            "p50_us": percentile(&self.lat_us, 0.50),
            "p99_us": percentile(&self.lat_us, 0.99),
            "content_types": self.content_types,
            "vmhwm_kb": self.hwm_kb,
            "first_error": self.first_error,
        })
        .to_string()
    }
}

// ---------------------------------------------------------------- HTTP

struct HttpTarget {
    addr: String,
    authority: String,
    path: String,
}

fn parse_url(url: &str) -> Result<HttpTarget> {
    let rest = url.strip_prefix("http://").ok_or("only http:// URLs")?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let addr = if authority.contains(':') {
        authority.to_string()
    } else {
        format!("{authority}:80")
    };
    Ok(HttpTarget {
        addr,
        authority: authority.to_string(),
        path: path.to_string(),
    })
}

struct Conn {
    sender: http1::SendRequest<Full<Bytes>>,
}

impl Conn {
    async fn open(t: &HttpTarget) -> Result<Conn> {
        let stream = TcpStream::connect(&t.addr).await?;
        stream.set_nodelay(true)?;
        let (sender, conn) = http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(Conn { sender })
    }

    /// POSTs `body`; returns (status, content-type, session id, body bytes).
    async fn post(
        &mut self,
        t: &HttpTarget,
        session: Option<&str>,
        body: Vec<u8>,
    ) -> Result<(u16, String, Option<String>, Bytes)> {
        self.sender.ready().await?;
        let mut req = Request::builder()
            .method("POST")
            .uri(&t.path)
            .header("host", &t.authority)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        req = if modern() {
            req.header("mcp-protocol-version", MODERN_VERSION)
                .header("mcp-method", "tools/call")
                .header("mcp-name", "echo")
        } else {
            req.header("mcp-protocol-version", PROTOCOL_VERSION)
        };
        if let Some(s) = session {
            req = req.header("mcp-session-id", s);
        }
        let res = self
            .sender
            .send_request(req.body(Full::new(Bytes::from(body)))?)
            .await?;
        let status = res.status().as_u16();
        let ct = res
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let sid = res
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(String::from);
        let bytes = res.into_body().collect().await?.to_bytes();
        Ok((status, ct, sid, bytes))
    }
}

/// Extracts the JSON-RPC message with `id` from a JSON or SSE body.
fn extract_response(ct: &str, body: &[u8], id: u64) -> Option<Value> {
    if ct.starts_with("text/event-stream") {
        let text = std::str::from_utf8(body).ok()?;
        // An SSE event's data may span several `data:` lines.
        let mut data = String::new();
        for line in text.split('\n').chain(std::iter::once("")) {
            let line = line.strip_suffix('\r').unwrap_or(line);
            if let Some(d) = line.strip_prefix("data:") {
                if !data.is_empty() {
                    data.push('\n');
                }
                data.push_str(d.strip_prefix(' ').unwrap_or(d));
            } else if line.is_empty() && !data.is_empty() {
                if let Ok(v) = serde_json::from_str::<Value>(&data)
                    && v.get("id").and_then(Value::as_u64) == Some(id)
                {
                    return Some(v);
                }
                data.clear();
            }
        }
        None
    } else {
        serde_json::from_slice(body).ok()
    }
}

fn ct_kind(ct: &str) -> String {
    ct.split(';').next().unwrap_or("").trim().to_string()
}

/// initialize + notifications/initialized on `conn`; returns the session id.
async fn http_initialize(conn: &mut Conn, t: &HttpTarget) -> Result<Option<String>> {
    let (status, ct, sid, body) = conn
        .post(t, None, serde_json::to_vec(&initialize_request(0))?)
        .await?;
    let v = extract_response(&ct, &body, 0).ok_or_else(|| {
        format!(
            "initialize: HTTP {status} {ct}: {}",
            String::from_utf8_lossy(&body)
        )
    })?;
    if v.get("result").is_none() {
        return Err(format!("initialize failed: {v}").into());
    }
    let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    let (status, _, _, body) = conn
        .post(t, sid.as_deref(), serde_json::to_vec(&note)?)
        .await?;
    if !(200..300).contains(&status) {
        return Err(format!(
            "initialized: HTTP {status}: {}",
            String::from_utf8_lossy(&body)
        )
        .into());
    }
    Ok(sid)
}

async fn run_http(o: &Opts) -> Result<String> {
    let target = Arc::new(parse_url(&o.url)?);
    let mut c0 = Conn::open(&target).await?;
    let session = Arc::new(if modern() {
        None
    } else {
        http_initialize(&mut c0, &target).await?
    });
    drop(c0);

    let start = Instant::now();
    let measure_from = start + Duration::from_secs_f64(o.warmup);
    let end = measure_from + Duration::from_secs_f64(o.duration);
    let next_id = Arc::new(AtomicU64::new(1));
    let mut tasks = Vec::new();
    for _ in 0..o.concurrency {
        let target = target.clone();
        let session = session.clone();
        let next_id = next_id.clone();
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::with_capacity(1 << 16);
            let (mut ok, mut errors) = (0u64, 0u64);
            let mut cts: HashMap<String, u64> = HashMap::new();
            let mut first_error = None;
            let mut conn = match Conn::open(&target).await {
                Ok(c) => c,
                Err(e) => return (lat, 0, 1, cts, Some(e.to_string())),
            };
            loop {
                let now = Instant::now();
                if now >= end {
                    break;
                }
                let id = next_id.fetch_add(1, Ordering::Relaxed);
                let body = serde_json::to_vec(&call_request(id)).unwrap_or_default();
                let t0 = Instant::now();
                let res = conn.post(&target, session.as_deref(), body).await;
                let dt = t0.elapsed();
                let measured = t0 >= measure_from && t0 < end;
                match res {
                    Ok((status, ct, _, bytes)) => {
                        let good = status == 200
                            && extract_response(&ct, &bytes, id)
                                .is_some_and(|v| check_call_response(&v, id));
                        if measured {
                            *cts.entry(ct_kind(&ct)).or_default() += 1;
                            if good {
                                ok += 1;
                                lat.push(dt.as_micros().min(u32::MAX as u128) as u32);
                            } else {
                                errors += 1;
                                first_error.get_or_insert_with(|| {
                                    format!(
                                        "HTTP {status} {ct}: {}",
                                        String::from_utf8_lossy(&bytes)
                                    )
                                });
                            }
                        }
                    }
                    Err(e) => {
                        errors += 1;
                        first_error.get_or_insert_with(|| e.to_string());
                        // Reconnect after a transport error.
                        match Conn::open(&target).await {
                            Ok(c) => conn = c,
                            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
                        }
                    }
                }
            }
            (lat, ok, errors, cts, first_error)
        }));
    }
    let mut stats = Stats {
        label: o.label.clone(),
        transport: "http",
        concurrency: o.concurrency,
        ok: 0,
        errors: 0,
        secs: o.duration,
        lat_us: Vec::new(),
        content_types: HashMap::new(),
        hwm_kb: None,
        first_error: None,
    };
    for t in tasks {
        let (lat, ok, errors, cts, fe) = t.await?;
        stats.lat_us.extend(lat);
        stats.ok += ok;
        stats.errors += errors;
        for (k, v) in cts {
            *stats.content_types.entry(k).or_default() += v;
        }
        if stats.first_error.is_none() {
            stats.first_error = fe;
        }
    }
    stats.hwm_kb = o.pid.and_then(|p| tree_kb(p, "VmHWM:"));
    Ok(stats.into_json())
}

// ---------------------------------------------------------------- stdio

async fn run_stdio(o: &Opts) -> Result<String> {
    let (prog, rest) = o.cmd.split_first().ok_or("stdio needs -- CMD ARGS")?;
    let mut child = Command::new(prog)
        .args(rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let pid = child.id().ok_or("no child pid")?;
    let mut stdin = BufWriter::with_capacity(1 << 16, child.stdin.take().ok_or("stdin")?);
    let mut stdout = BufReader::with_capacity(1 << 16, child.stdout.take().ok_or("stdout")?);

    // Handshake (none in the modern era).
    let mut line = String::new();
    if !modern() {
        let mut init = serde_json::to_vec(&initialize_request(0))?;
        init.push(b'\n');
        stdin.write_all(&init).await?;
        stdin.flush().await?;
        loop {
            line.clear();
            if stdout.read_line(&mut line).await? == 0 {
                return Err("server closed stdout during initialize".into());
            }
            let v: Value = serde_json::from_str(line.trim())?;
            if v.get("id").and_then(Value::as_u64) == Some(0) {
                if v.get("result").is_none() {
                    return Err(format!("initialize failed: {v}").into());
                }
                break;
            }
        }
        stdin
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
            .await?;
        stdin.flush().await?;
    }

    let start = Instant::now();
    let measure_from = start + Duration::from_secs_f64(o.warmup);
    let end = measure_from + Duration::from_secs_f64(o.duration);
    let inflight: Arc<Mutex<HashMap<u64, Instant>>> = Arc::new(Mutex::new(HashMap::new()));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let concurrency = o.concurrency;

    // The reader alone decides when to stop: it hands the writer one permit per
    // response received before `end`; the writer sends one request per permit.
    let writer_inflight = inflight.clone();
    let writer = tokio::spawn(async move {
        let mut id = 1u64;
        let mut want = concurrency;
        let mut buf = Vec::with_capacity(1 << 16);
        loop {
            buf.clear();
            {
                let now = Instant::now();
                let mut map = writer_inflight.lock().unwrap_or_else(|e| e.into_inner());
                for _ in 0..want {
                    map.insert(id, now);
                    serde_json::to_writer(&mut buf, &call_request(id)).ok();
                    buf.push(b'\n');
                    id += 1;
                }
            }
            if stdin.write_all(&buf).await.is_err() || stdin.flush().await.is_err() {
                break;
            }
            // Wait for at least one permit, then take all that are ready.
            if rx.recv().await.is_none() {
                break;
            }
            want = 1;
            while rx.try_recv().is_ok() {
                want += 1;
            }
        }
        stdin
    });

    let mut lat = Vec::with_capacity(1 << 20);
    let (mut ok, mut errors) = (0u64, 0u64);
    let mut first_error = None;
    // Requests sent or about to be sent (permits handed out) and not yet answered.
    let mut outstanding = concurrency as u64;
    loop {
        line.clear();
        let n = tokio::select! {
            r = stdout.read_line(&mut line) => r?,
            _ = tokio::time::sleep_until((end + Duration::from_secs(10)).into()) => {
                return Err("timed out waiting for stdio responses".into());
            }
        };
        if n == 0 {
            first_error.get_or_insert_with(|| "server closed stdout".to_string());
            break;
        }
        let now = Instant::now();
        let v: Value = match serde_json::from_str(line.trim()) {
            Ok(v) => v,
            Err(e) => {
                errors += 1;
                first_error.get_or_insert_with(|| format!("bad line {e}: {line}"));
                continue;
            }
        };
        let Some(id) = v.get("id").and_then(Value::as_u64) else {
            continue;
        };
        let t0 = inflight
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id);
        if let Some(t0) = t0 {
            if t0 >= measure_from && t0 < end {
                if check_call_response(&v, id) {
                    ok += 1;
                    lat.push((now - t0).as_micros().min(u32::MAX as u128) as u32);
                } else {
                    errors += 1;
                    first_error.get_or_insert_with(|| v.to_string());
                }
            }
            outstanding -= 1;
            if now < end {
                outstanding += 1;
                let _ = tx.send(());
            } else if outstanding == 0 {
                break;
            }
        }
    }
    let hwm_kb = tree_kb(pid, "VmHWM:");
    drop(tx);
    let stdin = writer.await?;
    drop(stdin);
    let _ = tokio::time::timeout(Duration::from_secs(3), child.wait()).await;
    let _ = child.kill().await;
    Ok(Stats {
        label: o.label.clone(),
        transport: "stdio",
        concurrency: o.concurrency,
        ok,
        errors,
        secs: o.duration,
        lat_us: lat,
        content_types: HashMap::new(),
        hwm_kb,
        first_error,
    }
    .into_json())
}

// ---------------------------------------------------------------- sessions

async fn run_sessions(o: &Opts) -> Result<String> {
    let pid = o.pid.ok_or("sessions needs --pid")?;
    let target = parse_url(&o.url)?;
    let mut conn = Conn::open(&target).await?;
    // Warm up: one session, so lazily allocated state is not attributed to N.
    let mut sessions = vec![http_initialize(&mut conn, &target).await?];
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = tree_kb(pid, "VmRSS:").ok_or("cannot read VmRSS")?;
    for _ in 0..o.n {
        sessions.push(http_initialize(&mut conn, &target).await?);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = tree_kb(pid, "VmRSS:").ok_or("cannot read VmRSS")?;
    let distinct: std::collections::HashSet<_> = sessions.iter().flatten().collect();
    Ok(json!({
        "label": o.label,
        "transport": "sessions",
        "sessions": o.n,
        "distinct_session_ids": distinct.len(),
        "rss_before_kb": before,
        "rss_after_kb": after,
        "bytes_per_session": ((after as f64 - before as f64) * 1024.0 / o.n as f64).round(),
    })
    .to_string())
}

// ---------------------------------------------------------------- table

fn print_table(path: &str) -> Result<()> {
    let text = std::fs::read_to_string(path)?;
    let rows: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    println!(
        "| server | transport | in flight | req/s | p50 (ms) | p99 (ms) | errors | response type | peak RSS (MiB) |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---|---:|");
    let ms = |v: &Value| format!("{:.2}", v.as_f64().unwrap_or(0.0) / 1000.0);
    for r in rows.iter().filter(|r| r["transport"] != "sessions") {
        let cts = r["content_types"]
            .as_object()
            .map(|m| m.keys().cloned().collect::<Vec<_>>().join("+"))
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "-".into());
        let hwm = r["vmhwm_kb"]
            .as_f64()
            .map(|k| format!("{:.1}", k / 1024.0))
            .unwrap_or("-".into());
        let rps = r["rps"].as_f64().unwrap_or(0.0);
        let transport = match r["era"].as_str() {
            Some(MODERN_VERSION) => format!(
                "{} (2026-07-28, no session)",
                r["transport"].as_str().unwrap_or("")
            ),
            _ => r["transport"].as_str().unwrap_or("").to_string(),
        };
        println!(
            "| {} | {} | {} | {rps:.0} | {} | {} | {} | {} | {} |",
            r["label"].as_str().unwrap_or(""),
            transport,
            r["concurrency"],
            ms(&r["p50_us"]),
            ms(&r["p99_us"]),
            r["errors"],
            cts,
            hwm
        );
    }
    let mut first = true;
    for r in rows.iter().filter(|r| r["transport"] == "sessions") {
        if std::mem::take(&mut first) {
            println!();
        }
        println!(
            "- {}: {} idle HTTP sessions (initialize + initialized, {} distinct ids): RSS {} KiB -> {} KiB, {:.1} KiB per session",
            r["label"].as_str().unwrap_or(""),
            r["sessions"],
            r["distinct_session_ids"],
            r["rss_before_kb"],
            r["rss_after_kb"],
            r["bytes_per_session"].as_f64().unwrap_or(0.0) / 1024.0
        );
    }
    for r in rows.iter().filter(|r| r["first_error"].is_string()) {
        println!(
            "- note: {} {} c={}: first error: {}",
            r["label"].as_str().unwrap_or(""),
            r["transport"].as_str().unwrap_or(""),
            r["concurrency"],
            r["first_error"].as_str().unwrap_or("")
        );
    }
    Ok(())
}
