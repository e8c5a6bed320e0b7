//! Agent-file errors through the binary: exit 2 and `FILE:LINE: KEY: message` on stderr.

use super::Case;

fn check_fails(agent: &str) -> String {
    let case = Case::new(agent);
    let out = case.mm_offline().arg("check").assert().code(2);
    String::from_utf8_lossy(&out.get_output().stderr)
        .trim()
        .to_string()
}

#[test]
fn every_class_of_agent_file_error_names_file_line_and_key() {
    let cases: &[(&str, &[&str])] = &[
        (
            "---\nmodle: x\n---\n",
            &["mm.md:2:", "modle", "did you mean", "model"],
        ),
        (
            "---\ntools:\n  t:\n    descripton: x\n    command: [\"./rec\"]\n---\n",
            &["mm.md:4:", "tools.t.descripton", "description"],
        ),
        (
            "---\ntools:\n  t:\n    description: x\n    command: [\"{{p}}\"]\n    parameters:\n      p: {type: string}\n---\n",
            &["mm.md:5:", "tools.t.command[0]", "placeholder"],
        ),
        (
            "---\ntools:\n  bash:\n    description: x\n    command: [\"./rec\"]\n---\n",
            &["mm.md:3:", "tools.bash", "reserved"],
        ),
        (
            "---\ntools:\n  read_skill:\n    description: x\n    command: [\"./rec\"]\n---\n",
            &["mm.md:3:", "reserved"],
        ),
        (
            "---\ntools:\n  \"bad name\":\n    description: x\n    command: [\"./rec\"]\n---\n",
            &["mm.md:3:", "bad name"],
        ),
        (
            "---\ntools:\n  t:\n    description: x\n    command: [\"./rec\", \"{{vers}}\"]\n    parameters:\n      version: {type: string}\n---\n",
            &["mm.md:5:", "tools.t.command[1]", "vers", "version"],
        ),
        ("---\nyolo: maybe\n---\n", &["mm.md:2:", "yolo"]),
        ("---\nmodel: [unclosed\n---\n", &["mm.md:"]),
        ("---\nmodel: x\n", &["mm.md:1:"]),
        (
            "---\ntool_calls: sometimes\n---\n",
            &["mm.md:2:", "tool_calls"],
        ),
        (
            "---\ntools:\n  t:\n    description: x\n    command: [\"./rec\"]\n    parameters:\n      p: {type: strnig}\n---\n",
            &["mm.md:7:", "tools.t.parameters.p", "type"],
        ),
    ];
    for (agent, needles) in cases {
        let message = check_fails(agent);
        assert_eq!(message.lines().count(), 1, "one line: {message}");
        for needle in *needles {
            assert!(
                message.contains(needle),
                "{agent:?}\n→ {message}\nmissing {needle:?}"
            );
        }
    }
}

#[test]
fn a_valid_agent_file_checks_ok() {
    let case = Case::new(
        "---\ntools:\n  t:\n    description: x\n    command: [\"./rec\", \"{{p}}\"]\n    parameters:\n      p: {type: string}\n---\nHi.\n",
    );
    let out = case.mm_offline().arg("check").assert().success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(stdout.contains("ok") && stdout.contains('t'), "{stdout}");
}

#[test]
fn a_missing_agent_file_is_a_usage_error() {
    let case = Case::new("---\n---\n");
    let out = case
        .mm_offline()
        .args(["-a", "nope.md", "check"])
        .assert()
        .code(2);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("nope.md"));
}
