//! `allow: ["bash:PREFIX*"]` allows one simple command with that prefix and nothing else: every
//! way of chaining a second command, substituting or redirecting asks — and in print mode,
//! with no one to ask, is refused. Each hostile line would create a file if it ran.

use mm_test_support::{Reply, ScriptedServer};
use serde_json::json;

use super::{Case, tool_messages};

const AGENT: &str =
    "---\nallow: [\"bash:git status*\", \"bash:echo hi*\"]\n---\nYou are a test agent.\n";

/// Said to the model when a call needs consent and mm has no terminal to ask on.
const REFUSED: &str = "The user did not allow this call";

#[test]
fn a_prefix_rule_never_allows_a_second_command_a_substitution_or_a_redirection() {
    let case = Case::new(AGENT);
    let dir = case.path().display().to_string();
    // Every line names its own file, so a line that ran is told apart from the others.
    let hostile: Vec<(String, String)> = [
        ("semicolon", "git status; touch {f}"),
        ("and", "echo hi && touch {f}"),
        ("or", "git status || touch {f}"),
        ("pipe", "git status | touch {f}"),
        ("background", "git status & touch {f}"),
        ("newline", "git status\ntouch {f}"),
        ("dollar_paren", "git status $(touch {f})"),
        ("backticks", "git status `touch {f}`"),
        ("redirect", "git status > {f}"),
        ("append", "git status >> {f}"),
        ("stderr_redirect", "git status 2> {f}"),
        ("process_substitution", "git status <(touch {f})"),
        ("not_word_aligned", "git statusx; touch {f}"),
        ("assignment", "GIT_DIR=$(touch {f}) git status"),
        ("echo_chained", "echo hi; touch {f}"),
    ]
    .iter()
    .map(|(name, line)| {
        let file = format!("{dir}/PWNED-{name}");
        (file.clone(), line.replace("{f}", &file))
    })
    .collect();
    let mut replies: Vec<Reply> = hostile
        .iter()
        .map(|(_, line)| Reply::tool_call("bash", json!({ "command": line }).to_string()))
        .collect();
    // The positive control: one simple command under `bash:echo hi*` runs without asking.
    replies.push(Reply::tool_call(
        "bash",
        json!({"command": "echo hi there"}).to_string(),
    ));
    replies.push(Reply::text("done"));
    let server = ScriptedServer::start(replies);
    case.mm(&server)
        .args(["-p", "go"])
        .assert()
        .success()
        .stdout("done\n");

    for (file, line) in &hostile {
        assert!(
            !std::path::Path::new(file).exists(),
            "{line:?} ran without consent: {file} exists"
        );
    }
    let requests = server.requests();
    let last = requests.last().expect("a request");
    let answers = tool_messages(last);
    assert_eq!(answers.len(), hostile.len() + 1, "{answers:#?}");
    for ((_, line), answer) in hostile.iter().zip(&answers) {
        assert!(
            answer.starts_with(REFUSED),
            "{line:?} was not refused: {answer}"
        );
    }
    let echo = answers.last().expect("the echo call's answer");
    assert!(echo.contains("hi there"), "{echo}");
    assert!(!echo.contains(REFUSED), "{echo}");
}
