//! Hooks (SPEC §6) around every kind of tool through the real binary: a declared tool, a
//! built-in file tool and an MCP tool all get the same JSON on stdin with their coerced
//! arguments; a preToolCall hook that times out blocks (fail closed); postToolCall sees the
//! output and the exit code. (Exit 1, exit 2 and a crash: hardening.rs; the hook runner
//! itself: mm-core's hooks_tests.rs.)

use mm_test_support::{Reply, ScriptedServer};
use serde_json::{Value, json};

use super::mcp::recorder;
use super::{Case, tool_messages};

fn lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn hooks_run_around_declared_file_and_mcp_tools_and_a_slow_pre_hook_blocks() {
    let agent = format!(
        r#"---
yolo: true
builtins: [write_file]
tools:
  rec:
    description: Record.
    parameters:
      value: {{type: string}}
    command: ["./rec", "{{{{value}}}}"]
mcp:
  srv: {{command: ["{}"]}}
hooks:
  preToolCall:
    - {{command: ["./log.sh", "pre.log"]}}
    - {{match: "^srv_record$", command: ["./slow.sh"], timeout: 500ms}}
  postToolCall:
    - {{command: ["./log.sh", "post.log"]}}
---
Test agent.
"#,
        recorder().display()
    );
    let case = Case::new(&agent);
    case.script("log.sh", "#!/bin/sh\ncat >> \"$1\"\n");
    case.script("slow.sh", "#!/bin/sh\nsleep 30\n");
    let log = case.path().join("mcp.log");
    let server = ScriptedServer::start(vec![
        Reply::tool_call("rec", r#"{"value": 5}"#),
        Reply::tool_call("write_file", r#"{"path": "a.txt", "content": "hi"}"#),
        Reply::tool_call("srv_record", r#"{"text": "x", "count": "2"}"#),
        Reply::text("done"),
    ]);
    case.mm(&server)
        .env("MCP_RECORD_LOG", &log)
        .args(["-p", "go"])
        .assert()
        .success()
        .stdout("done\n");

    let pre = lines(&case.path().join("pre.log"));
    let tools: Vec<&str> = pre.iter().filter_map(|l| l["tool"].as_str()).collect();
    assert_eq!(tools, ["rec", "write_file", "srv_record"]);
    // The arguments the tool runs with: coerced (5 → "5", "2" → 2).
    assert_eq!(pre[0]["arguments"], json!({"value": "5"}));
    assert_eq!(pre[1]["arguments"]["path"], "a.txt");
    assert_eq!(pre[2]["arguments"]["count"], 2);
    assert!(pre.iter().all(|l| l["event"] == "preToolCall"));

    // The slow hook blocked the MCP call: the server never got it, the model was told why.
    assert!(
        std::fs::read_to_string(&log).unwrap_or_default().is_empty(),
        "the server was called"
    );
    let answers = tool_messages(server.requests().last().expect("request"));
    assert_eq!(
        answers[2],
        "The call to srv_record was not run: the preToolCall hook ./slow.sh blocked it (it did not finish within 0.5s)."
    );

    // postToolCall saw the two calls that ran, with what the model was sent.
    let post = lines(&case.path().join("post.log"));
    let seen: Vec<(&str, &Value, &Value)> = post
        .iter()
        .map(|l| {
            (
                l["tool"].as_str().unwrap_or_default(),
                &l["output"],
                &l["exit_code"],
            )
        })
        .collect();
    assert_eq!(seen.len(), 2, "{post:?}");
    assert_eq!(seen[0], ("rec", &json!("recorded 1 args\n"), &json!(0)));
    assert_eq!(seen[1].0, "write_file");
    assert_eq!(seen[1].1, &json!(answers[1]));
    assert_eq!(
        std::fs::read_to_string(case.path().join("a.txt")).unwrap_or_default(),
        "hi"
    );
}
