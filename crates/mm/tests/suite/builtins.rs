//! The built-in file tools and skills through the real binary: consent for writes, reads that
//! never ask, the catalogue in the system prompt, `read_skill`, and the first request's size.

use std::path::PathBuf;

use mm_test_support::{Reply, ScriptedServer};
use serde_json::{Value, json};

use super::{Case, tool_messages};

/// Said to the model when a call needs consent and mm has no terminal to ask on.
const REFUSED: &str = "The user did not allow this call";

fn answers(server: &ScriptedServer) -> Vec<String> {
    let requests = server.requests();
    tool_messages(requests.last().expect("a request"))
}

fn call(name: &str, args: Value) -> Reply {
    Reply::tool_call(name, args.to_string())
}

#[test]
fn writes_ask_and_are_refused_without_a_terminal_while_reads_never_ask() {
    let case = Case::new("---\nyolo: false\n---\nYou are a test agent.\n");
    std::fs::write(case.path().join("notes.txt"), "alpha\nbeta\n").expect("write");
    let server = ScriptedServer::start(vec![
        call("write_file", json!({"path": "new.txt", "content": "x"})),
        call(
            "edit_file",
            json!({"path": "notes.txt", "old_text": "beta", "new_text": "gamma"}),
        ),
        call("read_file", json!({"path": "notes.txt"})),
        call("list_files", json!({"pattern": "*.txt"})),
        call("grep", json!({"pattern": "bet."})),
        Reply::text("done"),
    ]);
    case.mm(&server)
        .args(["-p", "go"])
        .assert()
        .success()
        .stdout("done\n");
    let answers = answers(&server);
    assert_eq!(answers.len(), 5, "{answers:#?}");
    assert!(answers[0].starts_with(REFUSED), "{}", answers[0]);
    assert!(answers[1].starts_with(REFUSED), "{}", answers[1]);
    assert!(!case.path().join("new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(case.path().join("notes.txt")).expect("read"),
        "alpha\nbeta\n"
    );
    for answer in &answers[2..] {
        assert!(!answer.contains(REFUSED), "{answer}");
    }
    assert!(answers[2].contains("beta"), "{}", answers[2]);
    assert!(answers[3].contains("notes.txt"), "{}", answers[3]);
    assert!(answers[4].contains("notes.txt:2"), "{}", answers[4]);
}

#[test]
fn with_yolo_writes_and_edits_happen() {
    let case = Case::new("---\nyolo: true\n---\nYou are a test agent.\n");
    let server = ScriptedServer::start(vec![
        call(
            "write_file",
            json!({"path": "deep/er/new.txt", "content": "one two\n"}),
        ),
        call(
            "edit_file",
            json!({"path": "deep/er/new.txt", "old_text": "two", "new_text": "three"}),
        ),
        Reply::text("done"),
    ]);
    case.mm(&server).args(["-p", "go"]).assert().success();
    assert_eq!(
        std::fs::read_to_string(case.path().join("deep/er/new.txt")).expect("read"),
        "one three\n"
    );
}

#[test]
fn builtins_choose_what_is_offered_and_mm_tools_shows_it() {
    let names = |agent: &str| -> Vec<String> {
        let case = Case::new(agent);
        let out = case.mm_offline().arg("tools").output().expect("mm");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let tools: Vec<Value> = serde_json::from_slice(&out.stdout).expect("JSON");
        tools
            .iter()
            .map(|t| {
                t["function"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect()
    };
    assert_eq!(
        names("---\nmodel: m\n---\n"),
        [
            "bash",
            "read_file",
            "write_file",
            "edit_file",
            "list_files",
            "grep"
        ]
    );
    assert_eq!(
        names("---\nbuiltins: [grep, read_file]\n---\n"),
        ["read_file", "grep"]
    );
    assert!(names("---\nbuiltins: []\n---\n").is_empty());
}

fn ops_agent() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/ops/mm.md")
}

#[test]
fn the_example_agent_offers_its_skill_in_the_system_prompt_and_read_skill_returns_it() {
    let case = Case::new("---\nmodel: m\n---\n");
    let server = ScriptedServer::start(vec![
        call("read_skill", json!({"name": "health-check"})),
        call("read_skill", json!({"name": "helth"})),
        Reply::text("done"),
    ]);
    let out = case
        .mm(&server)
        .arg("--agent")
        .arg(ops_agent())
        .args(["-p", "go"])
        .output()
        .expect("mm");
    assert!(out.status.success());
    // Far within the start-up budget: no warning.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("the first request is about"), "{stderr}");
    let requests = server.requests();
    let first = &requests[0];
    let system = first["messages"][0]["content"].as_str().unwrap_or_default();
    assert!(
        system.ends_with(
            "\n\nSkills:\n- health-check: Check how a service is doing. (status, down, slow)\n"
        ),
        "{system}"
    );
    let answers = answers(&server);
    assert!(
        answers[0].contains("Call the `status` tool"),
        "{}",
        answers[0]
    );
    assert!(!answers[0].contains("name: health-check"), "{}", answers[0]);
    assert!(
        answers[1].starts_with("No skill named \"helth\". Skills: health-check"),
        "{}",
        answers[1]
    );
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .map(|t| t["function"]["name"].as_str().unwrap_or_default())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        tools,
        [
            "release",
            "pkgtest",
            "status",
            "bash",
            "read_file",
            "write_file",
            "edit_file",
            "list_files",
            "grep",
            "read_skill"
        ]
    );
    // The budget of the issue: the example agent's first request with every built-in on.
    let bytes = serde_json::to_string(first).expect("JSON").len();
    assert!(bytes <= 3000, "the first request is {bytes} bytes");
}

#[test]
fn project_skills_load_and_a_malformed_one_is_a_warning_naming_file_and_line() {
    let case = Case::new("---\nmodel: m\n---\n");
    let put = |path: &str, text: &str| {
        let path = case.path().join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    put(
        ".mm/skills/deploy/SKILL.md",
        "---\nname: deploy\ndescription: Ship it.\n---\nRun the release tool.\n",
    );
    put(
        ".mm/skills/broken/SKILL.md",
        "---\nname: broken\n---\nNo description.\n",
    );
    let out = case.mm_offline().arg("check").output().expect("mm");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("1 skill: deploy"), "{stdout}");
    assert!(
        stderr.contains("broken/SKILL.md:3: description"),
        "{stderr}"
    );
}

#[test]
fn a_first_request_over_the_budget_is_a_start_up_warning_naming_what_made_it_big() {
    let mut tools = String::new();
    for n in 0..60 {
        tools.push_str(&format!(
            "  tool{n}:\n    description: {}\n    parameters: {{}}\n    command: [\"./rec\"]\n",
            "Describes at length. ".repeat(15)
        ));
    }
    let case = Case::new(&super::agent_with_tools(&tools));
    let server = ScriptedServer::start(vec![Reply::text("done")]);
    let out = case.mm(&server).args(["-p", "go"]).output().expect("mm");
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let warning = stderr
        .lines()
        .find(|l| l.starts_with("mm: warning: the first request is about "))
        .unwrap_or_else(|| panic!("no budget warning: {stderr}"));
    assert!(
        warning.contains("over the 16.0 KiB budget a small model can afford: 60 declared tools "),
        "{warning}"
    );
    // The warning's figure is the request's size, within its envelope's few hundred bytes.
    let sent = server.requests()[0].to_string().len();
    assert!(sent > 16 * 1024, "{sent}");
}
