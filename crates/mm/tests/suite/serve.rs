//! `mm serve` over stdio, driven by hand-written JSON-RPC: the declared tools are listed with
//! their schemas, a call runs the script with exactly the expected argv (an injection string
//! stays one argument), and an invalid call is a tool error that runs nothing.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use super::Case;

const AGENT: &str = "---\nname: ops\ntools:\n  release:\n    description: Publish a release.\n    parameters:\n      version: {type: string, description: \"The version, like 1.4.2.\"}\n      channel: {type: string, enum: [stable, beta]}\n      count: {type: integer, default: 1}\n    command: [./rec, \"{{version}}\", \"--channel={{channel}}\", \"-n\", \"{{count}}\"]\n---\nServed.\n";

/// `mm serve` over stdio in the case's folder, stdin and stdout piped.
fn spawn_serve(case: &Case) -> std::process::Child {
    Command::new(assert_cmd::cargo::cargo_bin("mm"))
        .arg("serve")
        .current_dir(case.path())
        .env("HOME", case.path())
        .env_remove("MM_AGENT")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("mm serve")
}

/// Sends `requests` (one JSON-RPC message a line) to `mm serve` and returns the answers by id.
fn exchange(case: &Case, requests: &[Value]) -> Vec<Value> {
    let mut child = spawn_serve(case);
    let mut stdin = child.stdin.take().expect("stdin");
    for request in requests {
        writeln!(stdin, "{request}").expect("send");
    }
    drop(stdin);
    let stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut answers: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(&line.expect("line")).expect("JSON"))
        .collect();
    assert!(child.wait().expect("mm ends").success());
    answers.sort_by_key(|a| a["id"].as_i64());
    answers
}

#[test]
fn mm_serve_lists_the_declared_tools_and_runs_them_with_the_exact_argv() {
    let case = Case::new(AGENT);
    let hostile = "1.4.2; touch PWNED $(id)";
    let answers = exchange(
        &case,
        &[
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
                "name": "release", "arguments": {"version": hostile, "channel": "beta"}}}),
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
                "name": "release", "arguments": {"version": "2.0", "channel": "alpha"}}}),
        ],
    );
    assert_eq!(answers.len(), 4, "{answers:#?}");
    assert_eq!(answers[0]["result"]["serverInfo"]["name"], "ops");
    assert_eq!(
        answers[1]["result"]["tools"],
        json!([{
            "name": "release",
            "description": "Publish a release.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "version": {"type": "string", "description": "The version, like 1.4.2."},
                    "channel": {"type": "string", "enum": ["stable", "beta"]},
                    "count": {"type": "integer", "default": 1},
                },
                "required": ["version", "channel"],
                "additionalProperties": false,
            },
        }])
    );
    let ran = &answers[2]["result"];
    assert_eq!(ran["isError"], Value::Null, "{ran}");
    assert_eq!(ran["content"][0]["text"], "recorded 4 args\n");
    let invalid = &answers[3]["result"];
    assert_eq!(invalid["isError"], true, "{invalid}");
    let text = invalid["content"][0]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("channel: \"alpha\" is not one of: stable, beta"),
        "{text}"
    );
    // Exactly one run, with the hostile value as one argument; the invalid call ran nothing.
    assert_eq!(case.calls(), [vec![hostile, "--channel=beta", "-n", "1"]]);
    assert!(!case.path().join("PWNED").exists());
}

#[test]
fn mm_serve_without_declared_tools_is_a_usage_error() {
    let case = Case::new("---\nmodel: m\n---\n");
    let out = case.mm_offline().arg("serve").output().expect("mm");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no declared tools to serve"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Whether `pid` is gone or a zombie (read from the process table, not guessed from time).
fn ended(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| matches!(state, "Z" | "X")),
    }
}

#[test]
fn a_cancelled_call_kills_the_tool() {
    let case = Case::new(
        "---\ntools:\n  slow:\n    description: Sleeps.\n    command: [./slow]\n---\nServed.\n",
    );
    case.script("slow", "#!/bin/sh\necho $$ > pid\nexec sleep 100\n");
    let mut child = spawn_serve(&case);
    let mut stdin = child.stdin.take().expect("stdin");
    for request in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "slow", "arguments": {}}}),
    ] {
        writeln!(stdin, "{request}").expect("send");
    }
    let pid_file = case.path().join("pid");
    let started = std::time::Instant::now();
    let pid = loop {
        if let Ok(pid) = std::fs::read_to_string(&pid_file)
            && !pid.trim().is_empty()
        {
            break pid.trim().to_string();
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "the tool did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert!(!ended(&pid), "the tool is running");
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 2, "reason": "the user pressed Ctrl-C"}});
    writeln!(stdin, "{cancel}").expect("send");
    let cancelled = std::time::Instant::now();
    while !ended(&pid) {
        assert!(
            cancelled.elapsed() < std::time::Duration::from_secs(10),
            "the tool {pid} still runs after notifications/cancelled"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    drop(stdin);
    assert!(child.wait().expect("mm ends").success());
}
