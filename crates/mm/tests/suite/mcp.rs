//! MCP servers in mm (SPEC §5), through the real binary and a real MCP server: the picomcp
//! server `mcp_recorder` (mm-test-support's example), which writes every call it receives and
//! every cancellation to a log, over Streamable HTTP and over stdio; and a server written with
//! the official TypeScript SDK (when `MM_NODE` names Node 22, as `scripts/test.sh` sets it).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use mm_test_support::{HttpPeer, Reply, ScriptedServer, free_port};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};

use super::{Case, last_tool_message, tool_messages};

/// The recorder binary: built by `cargo test --workspace` already, else (`cargo test -p mm`)
/// built here once.
pub(super) fn recorder() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let exe = std::env::current_exe().expect("test exe");
        // target/debug/deps/suite-… → target/debug
        let profile = exe.parent().and_then(Path::parent).expect("target dir");
        let target = profile.parent().expect("target root");
        let built = profile.join("examples/mcp_recorder");
        if built.is_file() {
            // `cargo test --workspace` builds every example; building it again here with one
            // package's features would rebuild half the dependencies.
            return built;
        }
        let status = Command::new(option_env!("CARGO").unwrap_or("cargo"))
            .args([
                "build",
                "-q",
                "-p",
                "mm-test-support",
                "--example",
                "mcp_recorder",
            ])
            .env("CARGO_TARGET_DIR", target)
            .status()
            .expect("cargo build");
        assert!(status.success(), "building mcp_recorder failed");
        profile.join("examples/mcp_recorder")
    })
}

/// A recorder serving Streamable HTTP on a free loopback port; killed when dropped.
fn http_recorder(log: &Path) -> HttpPeer {
    let mut command = Command::new(recorder());
    command.env("MCP_RECORD_LOG", log);
    HttpPeer::start(command, "the recorder")
}

/// What the recorder received: one JSON value per line.
fn received(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn http_agent(url: &str) -> String {
    format!("---\nbuiltins: []\nmcp:\n  rec: {{url: \"{url}\"}}\n---\nYou are a test agent.\n")
}

fn stdio_agent(program: &Path) -> String {
    format!(
        "---\nbuiltins: []\nmcp:\n  rec: {{command: [\"{}\"]}}\n---\nYou are a test agent.\n",
        program.display()
    )
}

fn call(name: &str, args: Value) -> Reply {
    Reply::tool_call(name, args.to_string())
}

/// A hostile text: it must reach the server as this one string.
const HOSTILE: &str = "hi; rm -rf ~ $(touch pwned) `id` \"quoted\" 'single'\n--flag";

/// The scripted model calls `rec_record` with a count as a string (coerced to 3) and a
/// hostile text; the server receives exactly that, the model reads the server's answer.
fn assert_record_round_trip(case: &Case, log: &Path) {
    let server = ScriptedServer::start(vec![
        call("rec_record", json!({"text": HOSTILE, "count": "3"})),
        Reply::text("done"),
    ]);
    case.mm(&server)
        .env("MCP_RECORD_LOG", log)
        .args(["-p", "go", "--yolo"])
        .assert()
        .success()
        .stdout("done\n");
    assert_eq!(
        received(log),
        vec![
            json!({"tool": "record", "arguments": {"text": HOSTILE, "count": 3, "tags": [], "mode": "append"}})
        ]
    );
    assert_eq!(last_tool_message(&server), format!("recorded {HOSTILE} x3"));
    assert!(!case.path().join("pwned").exists());
}

#[test]
fn a_tool_of_an_http_server_is_called_with_coerced_arguments_and_answered() {
    let case = Case::new("");
    let log = case.path().join("received.jsonl");
    let rec = http_recorder(&log);
    std::fs::write(case.path().join("mm.md"), http_agent(&rec.url)).expect("agent");
    assert_record_round_trip(&case, &log);
}

#[test]
fn a_tool_of_a_stdio_server_is_called_with_coerced_arguments_and_answered() {
    let case = Case::new(&stdio_agent(recorder()));
    let log = case.path().join("received.jsonl");
    assert_record_round_trip(&case, &log);
}

#[test]
fn mm_tools_shows_mcp_tools_exactly_as_sent_with_the_servers_description() {
    let case = Case::new(&stdio_agent(recorder()));
    let out = case.mm_offline().arg("tools").assert().success();
    let shown: Value = serde_json::from_slice(&out.get_output().stdout).expect("json");
    let record = shown
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["function"]["name"] == "rec_record"))
        .expect("rec_record listed");
    assert_eq!(
        record["function"]["description"],
        "Record a text some number of times. Give each parameter as its own field."
    );
    let properties = &record["function"]["parameters"]["properties"];
    assert_eq!(properties["text"]["type"], "string");
    assert_eq!(
        properties["text"]["description"],
        "The text to record. Required."
    );
    assert_eq!(properties["count"]["type"], "integer");
    assert_eq!(properties["tags"]["type"], "array");
    assert_eq!(properties["tags"]["items"], json!({"type": "string"}));
    // The enum comes from a `$ref` into `$defs`: read through, worded, no `$defs` sent.
    assert_eq!(
        properties["mode"]["description"],
        "How to record. Default append. Optional. One of: append, replace."
    );
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        !text.contains("$defs") && !text.contains("$schema") && !text.contains("\"required\""),
        "{text}"
    );

    // The first request carries the same tools.
    let server = ScriptedServer::start(vec![Reply::text("ok")]);
    case.mm(&server).args(["-p", "hi"]).assert().success();
    let sent = &server.requests()[0]["tools"];
    assert_eq!(sent, &shown);
}

#[test]
fn invalid_arguments_are_answered_in_text_and_never_reach_the_server() {
    let case = Case::new(&stdio_agent(recorder()));
    let log = case.path().join("received.jsonl");
    let server = ScriptedServer::start(vec![
        call("rec_record", json!({"text": "x", "count": "three"})),
        call("rec_record", json!({"text": "x"})),
        call("rec_record", json!({"text": "x", "count": 1, "tags": "a"})),
        call(
            "rec_record",
            json!({"text": "x", "count": 1, "mode": "sideways"}),
        ),
        call(
            "rec_record",
            json!({"text": "x", "count": 1, "colour": "red"}),
        ),
        Reply::text("gave up"),
    ]);
    case.mm(&server)
        .env("MCP_RECORD_LOG", &log)
        .args(["-p", "go", "--yolo"])
        .assert()
        .success()
        .stdout("gave up\n");
    assert_eq!(
        received(&log),
        Vec::<Value>::new(),
        "nothing reached the server"
    );
    let answers = tool_messages(server.requests().last().expect("request"));
    assert_eq!(answers.len(), 5);
    for answer in &answers {
        assert!(
            answer.starts_with("The call to rec_record was not run: its arguments are invalid."),
            "{answer}"
        );
        assert!(answer.contains("- count (integer, required)"), "{answer}");
    }
    assert!(
        answers[0].contains("count: \"three\" is not an integer"),
        "{}",
        answers[0]
    );
    assert!(
        answers[1].contains("count: missing (required)"),
        "{}",
        answers[1]
    );
    assert!(answers[2].contains("tags:"), "{}", answers[2]);
    assert!(
        answers[3].contains("mode: \"sideways\" is not one of: append, replace"),
        "{}",
        answers[3]
    );
    assert!(
        answers[4].contains("colour: unknown parameter"),
        "{}",
        answers[4]
    );
}

#[test]
fn cancelling_a_call_sends_notifications_cancelled_to_the_server() {
    let case = Case::new("");
    let log = case.path().join("received.jsonl");
    let rec = http_recorder(&log);
    std::fs::write(case.path().join("mm.md"), http_agent(&rec.url)).expect("agent");
    let server = ScriptedServer::start(vec![
        call("rec_wait", json!({"seconds": 60})),
        Reply::text("never"),
    ]);
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("mm"))
        .current_dir(case.path())
        .env("HOME", case.path())
        .env_remove("MM_AGENT")
        .args(["--base-url", &server.base_url(), "-p", "go", "--yolo"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mm");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !received(&log).iter().any(|e| e["tool"] == "wait") {
        assert!(
            Instant::now() < deadline,
            "the call never reached the server"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = Pid::from_raw(i32::try_from(child.id()).expect("pid"));
    kill(pid, Signal::SIGINT).expect("SIGINT");
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(130));
    let deadline = Instant::now() + Duration::from_secs(5);
    while !received(&log).iter().any(|e| e["cancelled"] == "wait") {
        assert!(
            Instant::now() < deadline,
            "the server saw no cancellation: {:?}",
            received(&log)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn progress_is_shown_as_events_and_images_are_described_not_dumped() {
    let case = Case::new(&stdio_agent(recorder()));
    let server = ScriptedServer::start(vec![
        call("rec_wait", json!({"seconds": 0.5})),
        call("rec_picture", json!({})),
        Reply::text("done"),
    ]);
    let out = case
        .mm(&server)
        .args(["-p", "go", "--yolo", "--output-format", "stream-json"])
        .assert()
        .success();
    let events: Vec<Value> = String::from_utf8_lossy(&out.get_output().stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let progress: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_progress")
        .collect();
    assert!(progress.len() >= 3, "{events:#?}");
    assert_eq!(progress[0]["total"], 5.0);
    assert_eq!(progress[0]["message"], "waiting");
    let answers = tool_messages(server.requests().last().expect("request"));
    assert_eq!(answers[0], "waited 0.5s");
    assert_eq!(answers[1], "a 1x1 PNG:\n[image image/png, 70 bytes]");
    // The model never sees progress.
    let sent = serde_json::to_string(&server.requests()).expect("json");
    assert!(!sent.contains("waiting"), "{sent}");
}

#[test]
fn a_server_that_is_down_at_start_up_is_a_warning_and_mm_goes_on() {
    let port = free_port();
    let missing = "/nonexistent/mcp-server";
    let case = Case::new(&format!(
        "---\nmcp:\n  down: {{url: \"http://127.0.0.1:{port}/mcp\"}}\n  gone: {{command: [\"{missing}\"]}}\n---\nYou are a test agent.\n"
    ));
    let server = ScriptedServer::start(vec![Reply::text("still here")]);
    let out = case
        .mm(&server)
        .args(["-p", "hi"])
        .assert()
        .success()
        .stdout("still here\n");
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(stderr.contains("MCP server down:"), "{stderr}");
    assert!(stderr.contains("MCP server gone:"), "{stderr}");
    assert_eq!(stderr.matches("going on without it").count(), 2, "{stderr}");
    // Its tools are simply not offered.
    let tools = serde_json::to_string(&server.requests()[0]["tools"]).expect("json");
    assert!(
        !tools.contains("down_") && !tools.contains("gone_"),
        "{tools}"
    );
}

#[test]
fn a_name_clash_keeps_the_declared_tool_and_skips_mcp_tools_named_like_built_ins() {
    let case = Case::new(&format!(
        "---\nbuiltins: []\ntools:\n  status:\n    description: Our status.\n    parameters: {{}}\n    command: [\"./rec\", \"declared\"]\nmcp:\n  rec: {{command: [\"{}\"], prefix: \"\"}}\n---\nYou are a test agent.\n",
        recorder().display()
    ));
    let server = ScriptedServer::start(vec![call("status", json!({})), Reply::text("ok")]);
    let out = case
        .mm(&server)
        .args(["-p", "go", "--yolo"])
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("its tool status is not offered as `status`: the declared tool of that name keeps the name"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "its tool grep is not offered as `grep`: the built-in of that name keeps the name"
        ),
        "{stderr}"
    );
    assert_eq!(case.calls(), vec![vec!["declared".to_string()]]);
    let names: Vec<String> = server.requests()[0]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| {
            t["function"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(names, ["status", "record", "wait", "picture"]);
}

#[test]
fn mcp_calls_ask_for_consent_like_any_tool() {
    let case = Case::new(&stdio_agent(recorder()));
    let log = case.path().join("received.jsonl");
    let server = ScriptedServer::start(vec![
        call("rec_record", json!({"text": "x", "count": 1})),
        Reply::text("ok"),
    ]);
    // No terminal and no yolo: refused, never sent.
    case.mm(&server)
        .env("MCP_RECORD_LOG", &log)
        .args(["-p", "go"])
        .assert()
        .success();
    assert!(received(&log).is_empty());
    assert!(
        last_tool_message(&server).starts_with("The user did not allow this call"),
        "{}",
        last_tool_message(&server)
    );
}

/// A server written with the official TypeScript SDK (interop/reference/ts-servers.mjs) over
/// stdio; its zod default (`limit` 10) is applied by mm's validator.
#[test]
fn a_tool_of_a_typescript_sdk_server_is_called() {
    let Some(node) = std::env::var_os("MM_NODE") else {
        eprintln!("skipped: MM_NODE (Node 22) is not set; scripts/test.sh sets it");
        return;
    };
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../interop/reference/ts-servers.mjs");
    let case = Case::new(&format!(
        "---\nbuiltins: []\nmcp:\n  ts: {{command: [\"{}\", \"{}\", \"search_issues\"]}}\n---\nYou are a test agent.\n",
        Path::new(&node).display(),
        script.display()
    ));
    let server = ScriptedServer::start(vec![
        call(
            "ts_search_issues",
            json!({"repo": "acme/app", "query": "crash"}),
        ),
        call("ts_search_issues", json!({"repo": "acme/app"})),
        Reply::text("done"),
    ]);
    case.mm(&server)
        .args(["-p", "go", "--yolo"])
        .assert()
        .success()
        .stdout("done\n");
    let answers = tool_messages(server.requests().last().expect("request"));
    assert_eq!(answers[0], "10 issues in acme/app matching crash");
    assert!(
        answers[1].contains("query: missing (required)"),
        "{}",
        answers[1]
    );
}

/// A server written with the official TypeScript SDK 2.x (interop/reference/ts2-server.mjs),
/// which serves both eras; killed when dropped. Its `era` tool says which era the SDK served the
/// call in and the protocol version of the call's `_meta`.
fn ts2_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../interop/reference/ts2-server.mjs")
}

fn ts2_http(node: &Path) -> HttpPeer {
    let mut command = Command::new(node);
    command.arg(ts2_script());
    HttpPeer::start(command, "ts2-server.mjs")
}

/// The scripted model asks the TS 2.x server which era it is spoken to in, adds (an integer
/// given as a string, coerced by mm) and echoes; returns what the model read of each call.
fn ts2_round_trip(case: &Case) -> Vec<String> {
    let server = ScriptedServer::start(vec![
        call("ts_era", json!({})),
        call("ts_add", json!({"a": 2, "b": "40"})),
        call("ts_echo", json!({"text": HOSTILE})),
        Reply::text("done"),
    ]);
    case.mm(&server)
        .args(["-p", "go", "--yolo"])
        .assert()
        .success()
        .stdout("done\n");
    tool_messages(server.requests().last().expect("request"))
}

fn ts2_agent(entry: &str) -> String {
    format!("---\nbuiltins: []\nmcp:\n  ts: {{{entry}}}\n---\nYou are a test agent.\n")
}

/// mm against a TS SDK 2.x server, stdio and Streamable HTTP: mm discovers the 2026-07-28 era
/// (the server serves every call as modern, each carrying `_meta` 2026-07-28), and the results,
/// structured content included, reach the model. `protocol: legacy` pins 2025-11-25 against
/// the same server.
#[test]
fn a_typescript_sdk_2_server_is_spoken_to_in_the_modern_era_unless_pinned_legacy() {
    let Some(node) = std::env::var_os("MM_NODE") else {
        eprintln!("skipped: MM_NODE (Node 22) is not set; scripts/test.sh sets it");
        return;
    };
    let node = PathBuf::from(node);
    let stdio = format!(
        "command: [\"{}\", \"{}\"]",
        node.display(),
        ts2_script().display()
    );
    let http = ts2_http(&node);
    let url = format!("url: \"{}\"", http.url);
    for (entry, era) in [
        (stdio.clone(), "era=modern version=2026-07-28"),
        (url.clone(), "era=modern version=2026-07-28"),
        (
            format!("{stdio}, protocol: legacy"),
            "era=legacy version=none",
        ),
        (
            format!("{url}, protocol: legacy"),
            "era=legacy version=none",
        ),
    ] {
        let case = Case::new(&ts2_agent(&entry));
        let answers = ts2_round_trip(&case);
        assert_eq!(answers.len(), 3, "{entry}: {answers:?}");
        assert_eq!(answers[0], era, "{entry}");
        assert_eq!(answers[1], "2 + 40 = 42\n{\"sum\":42}", "{entry}");
        assert_eq!(answers[2], HOSTILE, "{entry}");
    }
}

/// A stdio MCP server (Python) whose one tool has a parameter schema no validator accepts (a
/// pattern that is not a regex).
const BROKEN_SCHEMA_SERVER: &str = r#"import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method = msg["method"]
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "broken", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "find", "description": "Finds.", "inputSchema": {
            "type": "object", "properties": {"q": {"type": "string", "pattern": "(["}}}}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "found " + msg["params"]["arguments"]["q"]}]}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"#;

#[test]
fn a_schema_mm_cannot_compile_is_a_start_up_warning_and_its_values_go_unchecked() {
    let case = Case::new(
        "---\nbuiltins: []\nmcp:\n  b: {command: [\"python3\", \"./server.py\"]}\n---\nYou are a test agent.\n",
    );
    std::fs::write(case.path().join("server.py"), BROKEN_SCHEMA_SERVER).expect("server.py");
    let server =
        ScriptedServer::start(vec![call("b_find", json!({"q": "x"})), Reply::text("done")]);
    let out = case
        .mm(&server)
        .args(["-p", "go", "--yolo"])
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("MCP server b: tool find: the schema of `q` cannot be used ("),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("cannot be used").count(),
        1,
        "said once: {stderr}"
    );
    let result = serde_json::to_string(&server.requests()[1]["messages"]).expect("json");
    assert!(result.contains("found x"), "{result}");
}
