//! `sandbox: workspace` through the real binary: the model's `bash` calls and declared tools run
//! confined by the kernel (Landlock + seccomp, docs/sandbox.md). Every refusal test has a
//! control run without the sandbox, so that it can fail. On a kernel that cannot enforce the
//! sandbox the tests say so and skip.

use std::io::ErrorKind;
use std::net::{TcpListener, UdpSocket};
use std::path::Path;

use mm_test_support::{Corpus, Reply, ScriptedServer};
use serde_json::json;

use super::{Case, agent_with_tools, last_tool_message};

/// False (with the reason printed) where this kernel cannot enforce `workspace`.
fn enforced() -> bool {
    let support = mm_core::sandbox::support();
    if !support.enforces_workspace() {
        eprintln!(
            "skipped: this kernel cannot enforce sandbox: workspace ({}; missing: {})",
            support.summary(),
            support.missing().join("; ")
        );
        return false;
    }
    true
}

const SANDBOXED: &str = "---\nyolo: true\nsandbox: workspace\n---\nTest agent.\n";
const UNSANDBOXED: &str = "---\nyolo: true\n---\nTest agent.\n";

/// Runs one `bash` call in print mode with `flags`; the tool message and mm's stderr.
fn bash(case: &Case, command: &str, flags: &[&str]) -> (String, String) {
    let server = ScriptedServer::start(vec![
        Reply::tool_call("bash", json!({ "command": command }).to_string()),
        Reply::text("done"),
    ]);
    let out = case
        .mm(&server)
        .args(flags)
        .args(["-p", "go"])
        .output()
        .expect("mm");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    server.assert_every_tool_call_answered();
    (last_tool_message(&server), stderr)
}

const BLOCKED: &str = "mm: the sandbox (workspace) may have blocked this";

#[test]
fn writes_outside_the_folder_fail_and_nothing_is_written() {
    if !enforced() {
        return;
    }
    let outside = tempfile::tempdir().expect("tempdir");
    let target = outside.path().display().to_string();
    let case = Case::new(SANDBOXED);
    std::os::unix::fs::symlink(outside.path(), case.path().join("link")).expect("symlink");
    let parent = case.path().parent().expect("parent").to_path_buf();
    let escape = format!("mm-sandbox-escape-{}", std::process::id());
    let command = format!(
        "echo a > '{target}/abs'; echo b > '../{escape}'; echo c > link/through-link; \
         touch '{target}/touched'; mkdir '{target}/dir'; exit 1"
    );
    let (message, stderr) = bash(&case, &command, &[]);
    assert!(message.contains("Permission denied"), "{message}");
    assert!(message.ends_with(&format!("exit code 1\n{BLOCKED}: it allows writes only in the working folder and $TMPDIR, and no network.")), "{message}");
    let left: Vec<_> = std::fs::read_dir(outside.path())
        .expect("read")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "written outside: {left:?}");
    assert!(!parent.join(&escape).exists(), "`..` escaped");
    // The echo marks the run.
    assert!(stderr.contains("[sandboxed: workspace]"), "{stderr}");

    // Control: the same line without the sandbox writes all of it.
    let free = Case::new(UNSANDBOXED);
    std::os::unix::fs::symlink(outside.path(), free.path().join("link")).expect("symlink");
    let (message, stderr) = bash(&free, &command, &[]);
    assert!(!message.contains(BLOCKED), "{message}");
    assert!(!stderr.contains("sandboxed"), "{stderr}");
    assert!(outside.path().join("abs").exists() && outside.path().join("through-link").exists());
    assert!(parent.join(&escape).exists());
    let _ = std::fs::remove_file(parent.join(&escape));
}

#[test]
fn writes_inside_the_folder_and_in_the_private_tmpdir_work() {
    if !enforced() {
        return;
    }
    let case = Case::new(SANDBOXED);
    let command = "mkdir -p sub && echo inside > sub/file && echo t > \"$TMPDIR/t\" \
                   && cat \"$TMPDIR/t\" && echo \"tmp=$TMPDIR\" && echo fine > /dev/null \
                   && echo to-stderr > /dev/stderr";
    let (message, _) = bash(&case, command, &[]);
    assert!(!message.contains(BLOCKED), "{message}");
    assert_eq!(
        std::fs::read_to_string(case.path().join("sub/file")).expect("written"),
        "inside\n"
    );
    let tmp = message
        .lines()
        .find_map(|l| l.strip_prefix("tmp="))
        .unwrap_or_else(|| panic!("{message}"));
    assert!(
        message.starts_with("t\n") && message.contains("to-stderr"),
        "{message}"
    );
    assert!(tmp.contains("mm-sandbox-"), "{tmp}");
    assert!(
        !Path::new(tmp).exists(),
        "the private temp folder outlived the run"
    );
}

#[test]
fn tcp_and_udp_to_localhost_fail() {
    if !enforced() {
        return;
    }
    let tcp = TcpListener::bind("127.0.0.1:0").expect("tcp");
    tcp.set_nonblocking(true).expect("nonblocking");
    let udp = UdpSocket::bind("127.0.0.1:0").expect("udp");
    udp.set_nonblocking(true).expect("nonblocking");
    let (tcp_port, udp_port) = (
        tcp.local_addr().expect("addr").port(),
        udp.local_addr().expect("addr").port(),
    );
    // bash's own /dev/tcp and /dev/udp: socket() then connect().
    let command = format!(
        "(exec 3<>/dev/tcp/127.0.0.1/{tcp_port}) && echo tcp-open; \
         echo datagram > /dev/udp/127.0.0.1/{udp_port} && echo udp-sent; exit 0"
    );
    let case = Case::new(SANDBOXED);
    let (message, _) = bash(&case, &command, &[]);
    assert!(
        !message.contains("tcp-open") && !message.contains("udp-sent"),
        "{message}"
    );
    assert!(message.contains("Operation not permitted"), "{message}");
    assert_eq!(
        tcp.accept().map(|_| ()).map_err(|e| e.kind()),
        Err(ErrorKind::WouldBlock)
    );
    let mut buf = [0u8; 64];
    assert_eq!(
        udp.recv(&mut buf).map(|_| ()).map_err(|e| e.kind()),
        Err(ErrorKind::WouldBlock)
    );

    // Control: without the sandbox both go through.
    let (message, _) = bash(&Case::new(UNSANDBOXED), &command, &[]);
    assert!(
        message.contains("tcp-open") && message.contains("udp-sent"),
        "{message}"
    );
    assert!(tcp.accept().is_ok());
    assert_eq!(udp.recv(&mut buf).ok(), Some(9));
}

#[test]
fn no_signal_reaches_a_process_outside_the_run() {
    if !enforced() {
        return;
    }
    // $PPID is mm itself; the run's own children can still be signalled.
    let command = "kill -0 $PPID && echo parent-reached; sleep 30 & kill $! && echo child-killed";
    let (message, _) = bash(&Case::new(SANDBOXED), command, &[]);
    assert!(!message.contains("parent-reached"), "{message}");
    assert!(message.contains("Operation not permitted"), "{message}");
    assert!(message.contains("child-killed"), "{message}");
    let (message, _) = bash(&Case::new(UNSANDBOXED), command, &[]);
    assert!(message.contains("parent-reached"), "{message}");
}

#[test]
fn the_command_line_wins_over_the_agent_file() {
    if !enforced() {
        return;
    }
    let outside = tempfile::tempdir().expect("tempdir");
    let command = format!("echo x > '{}/f'", outside.path().display());
    // The file asks for the sandbox, the user turns it off.
    let (message, _) = bash(&Case::new(SANDBOXED), &command, &["--sandbox", "off"]);
    assert!(!message.contains(BLOCKED), "{message}");
    assert!(outside.path().join("f").exists());
    std::fs::remove_file(outside.path().join("f")).expect("rm");
    // The file says nothing, the user turns it on.
    let (message, _) = bash(
        &Case::new(UNSANDBOXED),
        &command,
        &["--sandbox", "workspace"],
    );
    assert!(message.contains(BLOCKED), "{message}");
    assert!(!outside.path().join("f").exists());
}

const ECHO_TOOL: &str = r#"  echoargs:
    description: Record the value.
    parameters:
      value: {type: string, description: "Any text."}
    command: ["./rec", "{{value}}", "--flag={{value}}"]
"#;

#[test]
fn corpus_hostile_arguments_reach_a_sandboxed_program_unchanged() {
    if !enforced() {
        return;
    }
    let hostile = [
        "1.4.2; rm -rf ~",
        "$(id)",
        "`id`",
        "a | cat /etc/passwd",
        "line one\nline two",
        "-rf",
        "--",
        "--help",
        "'quoted' \"double\" \\ back",
        "> /tmp/redirected",
        "",
        " leading and trailing ",
        "workspace",
        "mm-sandbox",
        "\u{1b}[2J\u{7}",
        "ünïcödé ✓ 🚀",
        "*",
        "~",
    ];
    let agent =
        agent_with_tools(ECHO_TOOL).replace("yolo: true\n", "yolo: true\nsandbox: workspace\n");
    let mut corpus = Corpus::new("hostile arguments through the sandbox helper");
    for value in hostile {
        let case = Case::new(&agent);
        let server = ScriptedServer::start(vec![
            Reply::tool_call("echoargs", json!({ "value": value }).to_string()),
            Reply::text("done"),
        ]);
        let out = case.mm(&server).args(["-p", "go"]).output().expect("mm");
        let calls = case.calls();
        let expected = vec![vec![value.to_string(), format!("--flag={value}")]];
        corpus.check(value, out.status.success() && calls == expected, || {
            format!(
                "got {calls:?}; stderr {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    }
    corpus.finish();
}

#[test]
fn mm_check_says_what_this_kernel_enforces() {
    let case = Case::new(SANDBOXED);
    let out = case.mm_offline().arg("check").assert().success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let line = stdout
        .lines()
        .find(|l| l.starts_with("sandbox: workspace; this kernel: "))
        .unwrap_or_else(|| panic!("{stdout}"));
    let support = mm_core::sandbox::support();
    assert!(line.contains(&support.summary()), "{line}");
    if support.enforces_workspace() {
        assert!(line.ends_with("workspace is fully enforced here"), "{line}");
        assert!(line.contains("Landlock ABI"), "{line}");
    }
}

#[test]
fn a_bad_sandbox_value_names_file_line_and_key() {
    let case = Case::new("---\nyolo: true\nsandbox: yes-please\n---\n");
    let out = case.mm_offline().arg("check").assert().code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert_eq!(
        stderr,
        "mm: mm.md:3: sandbox: unknown sandbox mode `yes-please`; sandbox modes are: workspace, off, best-effort\n"
    );
    let case = Case::new(UNSANDBOXED);
    let out = case
        .mm_offline()
        .args(["--sandbox", "strict", "check"])
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains("invalid value 'strict' for '--sandbox <MODE>'"),
        "{stderr}"
    );
    assert!(stderr.contains("workspace, off, best-effort"), "{stderr}");
}

#[test]
fn hooks_run_outside_the_sandbox() {
    if !enforced() {
        return;
    }
    let outside = tempfile::tempdir().expect("tempdir");
    let mark = outside.path().join("hook-ran");
    let agent = "---\nyolo: true\nsandbox: workspace\nhooks:\n  preToolCall: [{command: [\"./hook.sh\"]}]\n---\nTest agent.\n";
    let case = Case::new(agent);
    case.script(
        "hook.sh",
        &format!("#!/bin/sh\ncat > /dev/null\ntouch '{}'\n", mark.display()),
    );
    let (message, _) = bash(&case, "echo ran", &[]);
    assert_eq!(message, "ran\n");
    assert!(mark.exists(), "the hook could not write outside the folder");
}

#[test]
fn an_mcp_stdio_server_with_its_own_sandbox_key_runs_confined() {
    if !enforced() {
        return;
    }
    let outside = tempfile::tempdir().expect("tempdir");
    let mark = outside.path().join("server-wrote");
    for (key, confined) in [("sandbox: workspace", true), ("sandbox: off", false)] {
        let agent = format!(
            "---\nbuiltins: []\nmcp:\n  rec: {{command: [\"./server.sh\"], {key}}}\n---\nTest agent.\n"
        );
        let case = Case::new(&agent);
        // The server tries to write outside the folder, then serves as usual.
        case.script(
            "server.sh",
            &format!(
                "#!/bin/sh\ntouch '{}' 2>/dev/null\nexec '{}'\n",
                mark.display(),
                super::mcp::recorder().display()
            ),
        );
        let out = case.mm_offline().arg("tools").assert().success();
        let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
        assert!(stdout.contains("rec_record"), "{key}: {stdout}");
        assert_eq!(mark.exists(), !confined, "{key}");
    }
}

#[test]
fn the_file_tools_write_only_in_the_folder_under_the_sandbox() {
    // Checked by mm itself (the file tools run inside mm), so on any kernel.
    let outside = tempfile::tempdir().expect("tempdir");
    let escape = outside.path().join("f.txt").display().to_string();
    for (agent, confined) in [(SANDBOXED, true), (UNSANDBOXED, false)] {
        let case = Case::new(agent);
        std::os::unix::fs::symlink(outside.path(), case.path().join("link")).expect("symlink");
        for path in [escape.as_str(), "link/g.txt"] {
            let server = ScriptedServer::start(vec![
                Reply::tool_call(
                    "write_file",
                    json!({"path": path, "content": "x"}).to_string(),
                ),
                Reply::tool_call(
                    "write_file",
                    json!({"path": "in.txt", "content": "y"}).to_string(),
                ),
                Reply::text("done"),
            ]);
            // `--sandbox best-effort`: runs on every kernel; the check is mm's own.
            let flags: &[&str] = if confined {
                &["--sandbox", "best-effort"]
            } else {
                &[]
            };
            let out = case
                .mm(&server)
                .args(flags)
                .args(["-p", "go"])
                .output()
                .expect("mm");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let messages = super::tool_messages(server.requests().last().expect("request"));
            let refused = messages[0].starts_with(
                "Not run: the sandbox (best-effort) allows writes only in the working folder;",
            );
            assert_eq!(refused, confined, "{path}: {messages:?}");
            assert!(case.path().join("in.txt").exists());
        }
        let written =
            outside.path().join("f.txt").exists() && outside.path().join("g.txt").exists();
        assert_eq!(written, !confined);
    }
}

#[test]
fn stream_json_marks_a_sandboxed_call() {
    if !enforced() {
        return;
    }
    for (agent, marked) in [(SANDBOXED, true), (UNSANDBOXED, false)] {
        let case = Case::new(agent);
        let server = ScriptedServer::start(vec![
            Reply::tool_call("bash", json!({"command": "true"}).to_string()),
            Reply::text("done"),
        ]);
        let out = case
            .mm(&server)
            .args(["--output-format", "stream-json", "-p", "go"])
            .output()
            .expect("mm");
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let call: serde_json::Value = stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find(|e| e["type"] == "tool_call")
            .unwrap_or_else(|| panic!("{stdout}"));
        let expected = if marked {
            json!("workspace")
        } else {
            serde_json::Value::Null
        };
        assert_eq!(call["sandbox"], expected, "{call}");
    }
}
