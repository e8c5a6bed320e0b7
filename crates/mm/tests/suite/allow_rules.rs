//! `allow: ["bash:PREFIX*"]` allows one simple command with that prefix and nothing else: every
//! way of chaining a second command, substituting or redirecting asks — and in print mode,
//! with no one to ask, is refused. Each hostile line would create a file if it ran; on the old
//! glob matcher (`*` over the whole line) every one of them ran.

use std::path::Path;

use mm_test_support::{Reply, ScriptedServer};
use serde_json::json;

use super::{Case, tool_messages};

/// Said to the model when a call needs consent and mm has no terminal to ask on.
const REFUSED: &str =
    "The user did not allow this call: it needs consent and there is no one to ask";

/// Runs `mm -p` in `case`, the model calling `bash` once per reply with each of `lines`, then
/// answering `done` (with `path_first` put first on `PATH`); returns the tool messages the model got, one per line, in order.
fn answers_to(case: &Case, lines: &[String], path_first: Option<&Path>) -> Vec<String> {
    let mut replies: Vec<Reply> = lines
        .iter()
        .map(|line| Reply::tool_call("bash", json!({ "command": line }).to_string()))
        .collect();
    replies.push(Reply::text("done"));
    let server = ScriptedServer::start(replies);
    let mut mm = case.mm(&server);
    if let Some(dir) = path_first {
        let path = std::env::var("PATH").unwrap_or_default();
        mm.env("PATH", format!("{}:{path}", dir.display()));
    }
    mm.args(["-p", "go"]).assert().success().stdout("done\n");
    let requests = server.requests();
    let last = requests.last().expect("a request");
    let answers = tool_messages(last);
    assert_eq!(answers.len(), lines.len(), "{answers:#?}");
    answers
}

/// `(file, line)`: each template's `{f}` replaced by its own absolute file in the case folder,
/// so a line that ran is told apart from the others.
fn hostile(case: &Case, templates: &[(&str, &str)]) -> Vec<(String, String)> {
    let dir = case.path().display().to_string();
    templates
        .iter()
        .map(|(name, line)| {
            let file = format!("{dir}/PWNED-{name}");
            (file.clone(), line.replace("{f}", &file))
        })
        .collect()
}

/// No hostile line ran (its file does not exist) and the model was told each was refused.
fn assert_refused(hostile: &[(String, String)], answers: &[String]) {
    for ((file, line), answer) in hostile.iter().zip(answers) {
        assert!(
            !Path::new(file).exists(),
            "{line:?} ran without consent: {file} exists"
        );
        assert!(
            answer.starts_with(REFUSED),
            "{line:?} was not refused: {answer}"
        );
    }
}

#[test]
fn a_prefix_rule_never_allows_a_second_command_a_substitution_or_a_redirection() {
    let case = Case::new(
        "---\nallow: [\"bash:git status*\", \"bash:echo hi*\"]\n---\nYou are a test agent.\n",
    );
    // A `git` that always fails the same way, whether or not git is installed or the folder is
    // in a repository. It reads its file arguments, so a `<(…)` it is given has run before bash
    // exits (mm kills what is left of the process group then).
    std::fs::create_dir(case.path().join("bin")).expect("mkdir bin");
    case.script(
        "bin/git",
        "#!/bin/sh\necho \"fake git $*\"\nfor a in \"$@\"; do [ -r \"$a\" ] && cat \"$a\"; done\nexit 1\n",
    );
    let hostile = hostile(
        &case,
        &[
            ("semicolon", "git status; touch {f}"),
            // `&&` runs the second command after a success (`echo`), `||` after a failure
            // (the fake `git`): on the old matcher both ran it.
            ("and", "echo hi && touch {f}"),
            ("or", "git status || touch {f}"),
            ("pipe", "git status | touch {f}"),
            ("background", "git status & touch {f}"),
            ("newline", "git status\ntouch {f}"),
            ("dollar_paren", "git status $(touch {f})"),
            ("quoted_dollar_paren", "git status \"$(touch {f})\""),
            ("backticks", "git status `touch {f}`"),
            ("redirect", "git status > {f}"),
            ("append", "git status >> {f}"),
            ("stderr_redirect", "git status 2> {f}"),
            ("process_substitution", "git status <(touch {f})"),
            ("not_word_aligned", "git statusx; touch {f}"),
            ("echo_chained", "echo hi; touch {f}"),
        ],
    );
    let dir = case.path().display();
    let mut lines: Vec<String> = hostile.iter().map(|(_, line)| line.clone()).collect();
    // The positive controls: one simple command under a rule runs without asking — even with
    // an operator inside quotes, which bash passes as one argument.
    let quoted_file = format!("{dir}/PWNED-quoted");
    lines.push("echo hi there".into());
    lines.push(format!("echo hi 'a; touch {quoted_file}'"));
    lines.push("git status --short".into());
    let answers = answers_to(&case, &lines, Some(&case.path().join("bin")));

    assert_refused(&hostile, &answers);
    let [echo, quoted, git] = &answers[hostile.len()..] else {
        panic!("three positive answers: {answers:#?}");
    };
    assert_eq!(echo, "hi there\n");
    assert_eq!(quoted, &format!("hi a; touch {quoted_file}\n"));
    assert!(!Path::new(&quoted_file).exists(), "a quoted `;` ran touch");
    assert!(git.starts_with("fake git status --short\n"), "{git}");
}

#[test]
fn bash_star_allows_any_single_command_but_no_chain_and_no_leading_assignment() {
    let case = Case::new("---\nallow: [\"bash:*\"]\n---\nYou are a test agent.\n");
    let hostile = hostile(
        &case,
        &[
            ("semicolon", "./rec a; touch {f}"),
            ("newline", "./rec a\ntouch {f}"),
            ("redirect", "./rec a > {f}"),
            ("substitution", "./rec $(touch {f})"),
            // A leading assignment changes what runs: `PATH=.` makes `git` the script below.
            ("path", "PATH=. git status"),
        ],
    );
    let path_file = &hostile[4].0;
    case.script("git", &format!("#!/bin/sh\n: > '{path_file}'\n"));
    let mut lines: Vec<String> = hostile.iter().map(|(_, line)| line.clone()).collect();
    lines.push("./rec one 'two; three' \"four five\"".into());
    let answers = answers_to(&case, &lines, None);

    assert_refused(&hostile, &answers);
    assert_eq!(answers[hostile.len()], "recorded 3 args\n");
    assert_eq!(case.calls(), [["one", "two; three", "four five"]]);
}

#[test]
fn a_rule_that_cannot_be_read_is_an_agent_file_error_and_runs_nothing() {
    // An operator in the rule, a pattern character before the final `*`, an assignment: each
    // would allow nothing, so the agent file is refused before anything runs.
    for (rule, line) in [
        ("bash:git status; *", "git status; touch {f}"),
        ("bash:touch *.txt", "touch {f}"),
        ("bash:FOO=1 touch*", "FOO=1 touch {f}"),
    ] {
        let case = Case::new(&format!(
            "---\nallow: [status, {rule:?}]\n---\nYou are a test agent.\n"
        ));
        let hostile = hostile(&case, &[("rule", line)]);
        let server = ScriptedServer::start(vec![Reply::tool_call(
            "bash",
            json!({ "command": hostile[0].1 }).to_string(),
        )]);
        let out = case.mm(&server).args(["-p", "go"]).output().expect("mm");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{rule}: {err}");
        assert!(
            err.contains("mm.md:2: allow[1]:") && err.contains("would allow nothing"),
            "{rule}: {err}"
        );
        assert_eq!(server.request_count(), 0, "{rule}");
        assert!(!std::path::Path::new(&hostile[0].0).exists(), "{rule}");
    }
}

#[test]
fn an_allow_glob_on_a_file_path_does_not_let_dot_dot_out() {
    let case = Case::new(
        "---\nallow: ['write_file:{\"path\":\"notes/*\",\"content\":\"*\"}']\n---\nYou are a test agent.\n",
    );
    let project = case.path().join("project");
    std::fs::create_dir_all(project.join("notes")).expect("mkdir");
    std::fs::rename(case.path().join("mm.md"), project.join("mm.md")).expect("move mm.md");
    let calls = [
        json!({"path": "notes/ok.txt", "content": "x"}),
        json!({"path": "notes/../../ESCAPED.txt", "content": "x"}),
        json!({"path": "notes/../x.txt", "content": "x"}),
    ];
    let mut replies: Vec<Reply> = calls
        .iter()
        .map(|c| Reply::tool_call("write_file", c.to_string()))
        .collect();
    replies.push(Reply::text("done"));
    let server = ScriptedServer::start(replies);
    case.mm(&server)
        .current_dir(&project)
        .args(["-p", "go"])
        .assert()
        .success();
    let requests = server.requests();
    let answers = tool_messages(requests.last().expect("a request"));
    assert!(answers[0].starts_with("Wrote 1 bytes"), "{answers:#?}");
    assert!(project.join("notes/ok.txt").exists());
    for (answer, file) in answers[1..]
        .iter()
        .zip([case.path().join("ESCAPED.txt"), project.join("x.txt")])
    {
        // Outside the folder it says so; inside it (project/x.txt), it only needs consent.
        assert!(
            answer.starts_with("The user did not allow this call: ")
                && answer.contains("it needs consent and there is no one to ask"),
            "{answer}"
        );
        assert!(!file.exists(), "{} was written", file.display());
    }
}
