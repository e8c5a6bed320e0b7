use super::*;
use serde_json::json;

fn args(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

#[test]
fn glob() {
    assert!(glob_match("git status*", "git status --short"));
    assert!(glob_match("git status*", "git status"));
    assert!(!glob_match("git status*", "git push; git status"));
    assert!(glob_match("a?c", "abc"));
    assert!(!glob_match("a?c", "ac"));
    assert!(glob_match("*", ""));
    assert!(glob_match("*b*", "aaabaaa"));
}

fn decide(allow: &[&str], tool: &str, a: Value) -> Decision {
    let p = Permissions::new(false, allow.iter().map(|s| s.to_string()).collect());
    p.decide(tool, &args(a))
}

#[test]
fn bash_rules_allow_one_simple_command_only() {
    let rule = ["bash:git status*"];
    for line in [
        "git status",
        "git status --short",
        "git  status",
        "'git' \\status -s",
    ] {
        let got = decide(&rule, "bash", json!({"command": line}));
        assert_eq!(got, Decision::Allow, "{line:?}");
    }
    for line in [
        "git status; touch /tmp/x",
        "git status && touch x",
        "git statusx",
        "git statusx; touch x",
        "git status\ntouch x",
        "git status > x",
    ] {
        let got = decide(&rule, "bash", json!({"command": line}));
        assert_eq!(got, Decision::Ask, "{line:?}");
    }
    // The rule is about `command`; another tool, or no command string, never matches it.
    assert_eq!(
        decide(&rule, "git", json!({"command": "git status"})),
        Decision::Ask
    );
    assert_eq!(decide(&rule, "bash", json!({"command": 3})), Decision::Ask);
    // A rule that cannot be read allows nothing.
    for bad in [
        "bash:git status; *",
        "bash:ls *.txt",
        "bash:FOO=1 make*",
        "bash:",
    ] {
        assert_eq!(
            decide(&[bad], "bash", json!({"command": "ls a.txt"})),
            Decision::Ask,
            "{bad:?}"
        );
    }
    // A bare `bash` still allows every command line.
    assert_eq!(
        decide(&["bash"], "bash", json!({"command": "a; b"})),
        Decision::Allow
    );
}

#[test]
fn other_rules_glob_over_the_arguments_as_json() {
    let rule = [r#"release:{"version":"*","channel":"beta"}"#];
    let beta = json!({"version": "1.4.2", "channel": "beta"});
    let stable = json!({"version": "1.4.2", "channel": "stable"});
    assert_eq!(decide(&rule, "release", beta.clone()), Decision::Allow);
    assert_eq!(decide(&rule, "release", stable), Decision::Ask);
    assert_eq!(decide(&rule, "deploy", beta), Decision::Ask);
    // A value holding the pattern's quotes is escaped in the JSON, so it cannot fake a field.
    let fake = json!({"version": "1\",\"channel\":\"beta", "channel": "stable"});
    assert_eq!(decide(&rule, "release", fake), Decision::Ask);
}

#[test]
fn decisions() {
    let p = Permissions::new(false, vec!["status".into(), "bash:git status*".into()]);
    assert_eq!(
        p.decide("status", &args(json!({"service": "x"}))),
        Decision::Allow
    );
    assert_eq!(p.decide("release", &args(json!({}))), Decision::Ask);
    assert_eq!(
        p.decide("bash", &args(json!({"command": "git status -s"}))),
        Decision::Allow
    );
    assert_eq!(
        p.decide("bash", &args(json!({"command": "rm -rf /"}))),
        Decision::Ask
    );
    let yolo = Permissions::new(true, vec![]);
    assert_eq!(
        yolo.decide("bash", &args(json!({"command": "rm -rf /"}))),
        Decision::Allow
    );
}

/// A project folder with `.mm/permissions` holding `text`.
fn project(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = project_file(dir.path());
    std::fs::create_dir_all(dir.path().join(".mm")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
    (dir, path)
}

fn bash(line: &str) -> Map<String, Value> {
    args(json!({ "command": line }))
}

#[test]
fn deny_rules_win_over_allow_rules_and_yolo() {
    let (_dir, path) = project(
        "# project rules\nallow bash:git*\ndeny bash:git push*\n\ndeny release\nallow release\n",
    );
    for yolo in [false, true] {
        let (p, warnings) = Permissions::new(yolo, vec!["release".into()]).with_project_file(&path);
        assert_eq!(warnings, Vec::<String>::new());
        assert_eq!(p.decide("bash", &bash("git status")), Decision::Allow);
        assert_eq!(
            p.decide("bash", &bash("git push origin main")),
            Decision::Deny("bash:git push*".into())
        );
        assert_eq!(
            p.decide("release", &args(json!({"version": "1"}))),
            Decision::Deny("release".into())
        );
    }
}

#[test]
fn a_bash_deny_rule_also_matches_inside_a_line_of_several_commands() {
    let (_dir, path) = project("deny bash:git push\ndeny bash:rm*\n");
    let (p, _) = Permissions::new(true, vec![]).with_project_file(&path);
    let denied = [
        "git push",
        "git push --force",
        "cd x && git push",
        "cd x;git   push -f",
        "echo $(git push)",
        "rm -rf ~",
        "ls | xargs rm",
        "(rm x)",
        "bash -c 'rm x'",
        // Deny is textual on purpose: a false refusal costs a question, a miss runs it.
        "echo 'git push'",
    ];
    for line in denied {
        assert!(
            matches!(p.decide("bash", &bash(line)), Decision::Deny(_)),
            "{line:?}"
        );
    }
    for line in ["git pushx", "git status", "echo firm", "rmdir x", "farm -x"] {
        assert_eq!(p.decide("bash", &bash(line)), Decision::Allow, "{line:?}");
    }
}

#[test]
fn lines_that_cannot_be_read_are_warned_about_and_fail_closed() {
    let (_dir, path) =
        project("allow bash:ls *.txt\ndeny bash:rm; *\npermit status\nallow\ndeny status\n");
    let (p, warnings) = Permissions::new(false, vec![]).with_project_file(&path);
    let file = path.display().to_string();
    assert_eq!(warnings.len(), 4, "{warnings:?}");
    assert!(
        warnings[0].starts_with(&format!("{file}:1: ")),
        "{}",
        warnings[0]
    );
    assert!(
        warnings[1].starts_with(&format!("{file}:2: ")),
        "{}",
        warnings[1]
    );
    assert!(
        warnings[1].contains("denies every bash call"),
        "{}",
        warnings[1]
    );
    assert!(
        warnings[2].starts_with(&format!("{file}:3: ")),
        "{}",
        warnings[2]
    );
    assert!(
        warnings[3].starts_with(&format!("{file}:4: ")),
        "{}",
        warnings[3]
    );
    // The unreadable allow allows nothing; the unreadable bash deny denies all of bash.
    assert_eq!(
        p.decide("bash", &bash("ls a.txt")),
        Decision::Deny("bash:rm; *".into())
    );
    assert_eq!(
        p.decide("status", &args(json!({}))),
        Decision::Deny("status".into())
    );
    assert_eq!(p.decide("other", &args(json!({}))), Decision::Ask);
}

#[test]
fn a_missing_project_file_is_no_rules() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = project_file(dir.path());
    let (p, warnings) = Permissions::new(false, vec![]).with_project_file(&path);
    assert!(warnings.is_empty());
    assert_eq!(p.project_file(), Some(path.as_path()));
    assert_eq!(p.decide("bash", &bash("ls")), Decision::Ask);
}

#[test]
fn always_answers_are_shared_by_clones_and_can_be_saved() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = project_file(dir.path());
    let (p, _) = Permissions::new(false, vec![]).with_project_file(&path);
    let per_turn = p.clone();
    assert_eq!(per_turn.remember("bash:git status*", false), Ok(()));
    assert_eq!(p.decide("bash", &bash("git status -s")), Decision::Allow);
    assert_eq!(p.decide("bash", &bash("git push")), Decision::Ask);
    assert!(!path.exists(), "not saved");

    assert_eq!(p.remember("release", true), Ok(()));
    assert_eq!(p.remember("bash:cargo test*", true), Ok(()));
    let saved = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        saved.ends_with("allow release\nallow bash:cargo test*\n"),
        "{saved}"
    );
    assert!(
        saved.starts_with('#'),
        "a header says what the file is: {saved}"
    );
    // Read back at the next start-up.
    let (next, warnings) = Permissions::new(false, vec![]).with_project_file(&path);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(next.decide("release", &args(json!({}))), Decision::Allow);
    assert_eq!(next.decide("bash", &bash("cargo test -q")), Decision::Allow);
    assert_eq!(next.decide("bash", &bash("git status")), Decision::Ask);
}

#[test]
fn always_proposes_the_command_prefix_for_bash_and_the_name_otherwise() {
    let cases = [
        ("git status --short", Some("bash:git status*")),
        ("git status", Some("bash:git status*")),
        ("ls -la", Some("bash:ls*")),
        ("ls", Some("bash:ls*")),
        ("cargo test -p mm", Some("bash:cargo test*")),
        ("./build.sh --release", Some("bash:./build.sh*")),
        ("cat notes.txt", Some("bash:cat*")),
        ("npm run build", Some("bash:npm run*")),
        ("'my tool' x", Some("bash:'my tool'*")),
        ("echo one", Some("bash:echo*")),
        ("/usr/bin/git log -3", Some("bash:/usr/bin/git log*")),
        ("git -C x status", Some("bash:git*")),
        ("ls *.rs", Some("bash:ls*")),
        ("git status; rm x", None),
        ("FOO=1 make", None),
        ("echo $(id)", None),
        ("*", None),
    ];
    for (line, rule) in cases {
        let got = always_rule("bash", &bash(line));
        assert_eq!(got.as_deref(), rule, "{line:?}");
        // The proposal allows the line it was made for.
        if let Some(rule) = got {
            let p = Permissions::new(false, vec![rule.clone()]);
            assert_eq!(p.decide("bash", &bash(line)), Decision::Allow, "{rule}");
        }
    }
    assert_eq!(
        always_rule("release", &args(json!({"v": 1}))).as_deref(),
        Some("release")
    );
}

#[test]
fn an_allow_glob_on_a_path_sees_the_path_resolved() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let cwd = dir.path().join("project");
    std::fs::create_dir_all(cwd.join("notes")).unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink("/etc", cwd.join("notes/etc")).unwrap_or_else(|e| panic!("{e}"));
    let p = Permissions::new(
        false,
        vec![r#"write_file:{"path":"notes/*","content":"*"}"#.into()],
    );
    let decide = |path: &str| {
        let a = args(json!({"path": path, "content": "x"}));
        p.decide_at("write_file", &a, Some(&Target::resolve(&cwd, path)))
    };
    assert_eq!(decide("notes/a.txt"), Decision::Allow);
    assert_eq!(decide("./notes/a.txt"), Decision::Allow);
    assert_eq!(decide("notes/sub/../b.txt"), Decision::Allow);
    for escape in [
        "notes/../../ESCAPED.txt",
        "notes/../x.txt",
        "notes/etc/passwd",
        "notes/nowhere/../../../x.txt",
    ] {
        assert_eq!(decide(escape), Decision::Ask, "{escape}");
    }
    let abs = cwd.join("notes/c.txt").to_string_lossy().into_owned();
    assert_eq!(decide(&abs), Decision::Allow);
}

#[test]
fn deny_rules_catch_paths_patterns_and_options_before_the_subcommand() {
    let (_dir, path) = project("deny bash:rm*\ndeny bash:git push*\n");
    let (p, _) = Permissions::new(true, vec![]).with_project_file(&path);
    let denied = [
        "/bin/rm -f x",
        "/usr/bin/rm x",
        "/bin/r[m] x",
        "/bin/r? x",
        "r''m x",
        "\\rm x",
        "./rm x",
        "command rm x",
        "env FOO=1 rm x",
        "sudo -u root /bin/rm x",
        "xargs /bin/rm",
        "git -C . push",
        "git --no-pager push",
        "git -c k=v push origin main",
        "/usr/bin/git push",
        "git -C . --no-pager -c a=b push --force",
        "cd x && /usr/bin/git -C . push",
        "bash -c '/bin/rm x'",
        "sh -c \"git -C . push\"",
        "echo \"$(/bin/rm x)\"",
        "$(printf rm) x",
    ];
    for line in denied {
        assert!(
            matches!(p.decide("bash", &bash(line)), Decision::Deny(_)),
            "{line:?}"
        );
    }
    for line in [
        "git pushx",
        "git status",
        "git log --oneline",
        "rmdir x",
        "farm -x",
        "ls /tmp/rmx",
        "git commit -m 'push it'",
    ] {
        assert_eq!(p.decide("bash", &bash(line)), Decision::Allow, "{line:?}");
    }
}

fn project_bytes(bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = project_file(dir.path());
    std::fs::create_dir_all(dir.path().join(".mm")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("{e}"));
    (dir, path)
}

fn denied(p: &Permissions, tool: &str, a: Value) -> bool {
    matches!(p.decide(tool, &args(a)), Decision::Deny(_))
}

#[test]
fn the_project_file_fails_closed_on_a_bom_bad_bytes_odd_case_and_an_unreadable_file() {
    // A byte-order mark is not part of the first rule.
    let (_d, path) = project_bytes(b"\xef\xbb\xbfdeny bash:rm*\r\nallow status\r\n");
    let (p, warnings) = Permissions::new(true, vec![]).with_project_file(&path);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert!(denied(&p, "bash", json!({"command": "rm -rf x"})));

    // One byte that is not UTF-8, in a comment: every other rule still holds.
    let (_d, path) = project_bytes(b"# caf\xe9\ndeny bash:rm*\n");
    let (p, warnings) = Permissions::new(true, vec![]).with_project_file(&path);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert!(denied(&p, "bash", json!({"command": "rm x"})));

    // In a deny rule: that tool is denied whole, and the other rules hold.
    let (_d, path) = project_bytes(b"deny bash:r\xffm*\ndeny release\nallow status\n");
    let (p, warnings) = Permissions::new(false, vec![]).with_project_file(&path);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains(":1: the line is not UTF-8; it denies every bash call"));
    assert!(denied(&p, "bash", json!({"command": "ls"})));
    assert!(denied(&p, "release", json!({})));
    assert_eq!(p.decide("status", &args(json!({}))), Decision::Allow);

    // The verb in any case, with a colon; the tool in any case.
    let (_d, path) = project("DENY bash:git push*\nDeny: release\ndeny Bash:rm*\n");
    let (p, warnings) = Permissions::new(true, vec![]).with_project_file(&path);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert!(denied(&p, "bash", json!({"command": "git push"})));
    assert!(denied(&p, "release", json!({})));
    assert!(denied(&p, "bash", json!({"command": "rm x"})));
    let unknown = p.unknown_tools(&["bash", "release", "status"]);
    assert_eq!(unknown.len(), 1, "{unknown:?}");
    assert!(
        unknown[0].contains("`deny Bash:rm*` names `Bash`; it is applied to `bash`"),
        "{}",
        unknown[0]
    );
    let (_d, path) = project("deny relase\nallow Status\n");
    let (p, _) = Permissions::new(false, vec![]).with_project_file(&path);
    let unknown = p.unknown_tools(&["bash", "release", "status"]);
    assert_eq!(unknown.len(), 2, "{unknown:?}");
    assert!(unknown[0].contains("`deny relase` names `relase`, which is no tool mm offers"));
    assert!(unknown[1].contains("did you mean `status`? (it allows nothing)"));

    // A file that exists but cannot be read (here: a folder) refuses every call.
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = project_file(dir.path());
    std::fs::create_dir_all(&path).unwrap_or_else(|e| panic!("{e}"));
    let (p, warnings) = Permissions::new(true, vec!["status".into()]).with_project_file(&path);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("every call is refused"),
        "{}",
        warnings[0]
    );
    assert!(denied(&p, "status", json!({})));
    assert!(denied(&p, "read_file", json!({"path": "x"})));
}

#[test]
fn corpus_allow_globs_never_let_a_path_out_of_what_they_name() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let cwd = dir.path().join("project");
    for sub in ["notes/sub", "other", "notes-evil"] {
        std::fs::create_dir_all(cwd.join(sub)).unwrap_or_else(|e| panic!("{e}"));
    }
    let link = |target: &str, at: &str| {
        std::os::unix::fs::symlink(target, cwd.join(at)).unwrap_or_else(|e| panic!("{e}"));
    };
    link("/etc", "notes/etc");
    link("..", "notes/up");
    link("../other", "notes/side");
    link("/", "notes/root");
    link("notes/up", "chain");
    let rule = r#"write_file:{"path":"notes/*","content":"*"}"#;
    let p = Permissions::new(
        false,
        vec![rule.into(), "read_file:{\"path\":\"notes/*\"}".into()],
    );
    let abs = cwd.to_string_lossy().into_owned();
    let mut corpus = mm_test_support::Corpus::new("allow globs on file paths");
    let escaping = [
        "notes/../../ESCAPED.txt".to_string(),
        "notes/../x.txt".into(),
        "notes/../other/x".into(),
        "notes/./../x".into(),
        "notes//../x".into(),
        "notes/sub/../../x".into(),
        "notes/sub/../../../x".into(),
        "notes/nowhere/../../x".into(),
        "notes/nowhere/../../../x".into(),
        "notes/etc/passwd".into(),
        "notes/etc/shadow".into(),
        "notes/up/x".into(),
        "notes/up/notes-evil/x".into(),
        "notes/side/x".into(),
        "notes/root/etc/passwd".into(),
        "notes/root/tmp/x".into(),
        "notes/up/../x".into(),
        "notes/..".into(),
        "notes/../".into(),
        "notes/../notes-evil/x".into(),
        "notes-evil/x".into(),
        "./notes/../x".into(),
        "/etc/notes/x".into(),
        "/notes/x".into(),
        format!("{abs}/notes/../x"),
        format!("{abs}/../project/notes/../x"),
        format!("{abs}/notes/etc/passwd"),
        "notes/\u{0}../x".into(),
        "notes/../../../../../../../../../../etc/passwd".into(),
        "notes/sub/../../../project-evil/x".into(),
    ];
    for tool in ["write_file", "read_file"] {
        for path in &escaping {
            let mut a = args(json!({"path": path, "content": "x"}));
            if tool == "read_file" {
                a.remove("content");
            }
            let target = Target::resolve(&cwd, path);
            let got = p.decide_at(tool, &a, Some(&target));
            corpus.check((tool, path), got == Decision::Ask, || {
                format!("{got:?} as {target:?}")
            });
        }
    }
    let inside = [
        "notes/a.txt".to_string(),
        "./notes/a.txt".into(),
        "notes/./a.txt".into(),
        "notes//a.txt".into(),
        "notes/sub/../a.txt".into(),
        "notes/sub/deep/../../a.txt".into(),
        "notes/nowhere/../a.txt".into(),
        format!("{abs}/notes/a.txt"),
        format!("{abs}/other/../notes/a.txt"),
        "other/../notes/a.txt".into(),
    ];
    for path in &inside {
        let a = args(json!({"path": path, "content": "x"}));
        let target = Target::resolve(&cwd, path);
        let got = p.decide_at("write_file", &a, Some(&target));
        corpus.check(("write_file", path), got == Decision::Allow, || {
            format!("{got:?} as {target:?}")
        });
    }
    corpus.finish();
}

#[test]
fn corpus_deny_rules_refuse_every_plain_form() {
    let (_dir, path) = project("deny bash:rm*\ndeny bash:git push*\ndeny bash:curl*\n");
    let (p, _) = Permissions::new(true, vec![]).with_project_file(&path);
    let denied = [
        "rm x",
        "rm -rf /",
        "/bin/rm x",
        "/usr/bin/rm x",
        "/usr/local/bin/rm x",
        "./rm x",
        "../bin/rm x",
        "~/bin/rm x",
        "/bin/r[m] x",
        "/bin/r? x",
        "/bin/r* x",
        "/bin/[r]m x",
        "r[m] x",
        "r? x",
        "{rm,mv} x",
        "/bin/{rm,x} x",
        "r''m x",
        "r\"\"m x",
        "\\rm x",
        "'rm' x",
        "\"rm\" x",
        "r\\m x",
        "command rm x",
        "builtin rm x",
        "exec rm x",
        "env rm x",
        "env -i rm x",
        "env A=1 B=2 rm x",
        "A=1 rm x",
        "nice rm x",
        "nice -n 5 rm x",
        "nohup rm x",
        "time rm x",
        "timeout 5 rm x",
        "sudo rm x",
        "sudo -u root rm x",
        "doas rm x",
        "xargs rm",
        "xargs -0 /bin/rm",
        "find . -exec rm {} \\;",
        "cd x && rm y",
        "cd x; rm y",
        "true || rm y",
        "ls | rm",
        "ls & rm x",
        "(rm x)",
        "{ rm x; }",
        "$(rm x)",
        "`rm x`",
        "echo \"$(rm x)\"",
        "echo `/bin/rm x`",
        "bash -c 'rm x'",
        "sh -c \"/bin/rm x\"",
        "bash -c \"sh -c 'rm x'\"",
        "eval 'rm x'",
        "eval \"/usr/bin/rm x\"",
        "if true; then rm x; fi",
        "for f in *; do rm $f; done",
        "while true; do rm x; done",
        "rm\tx",
        "rm\nx",
        "echo ok\nrm x",
        "echo; rm x",
        "$(printf rm) x",
        "git push",
        "git push origin main",
        "git -C . push",
        "git --no-pager push",
        "git -c k=v push",
        "git -c a=b -c c=d push",
        "git --git-dir=.git push",
        "git --git-dir .git push",
        "git -C /tmp --no-pager push",
        "/usr/bin/git push",
        "/usr/bin/git -C . push",
        "g[i]t push",
        "gi? push",
        "'git' 'push'",
        "git 'push'",
        "git \"push\"",
        "git p\\ush",
        "cd x && git push",
        "sh -c 'git -C . push'",
        "GIT_DIR=x git push",
        "command git push",
        "env git push",
        "curl http://x",
        "/usr/bin/curl x",
        "c[u]rl x",
        "wget x && curl y",
        "echo x | /usr/bin/curl -d @- y",
        "bash -c 'curl x | sh'",
    ];
    let mut corpus = mm_test_support::Corpus::new("bash deny rules (rm, git push, curl)");
    for line in denied {
        let got = p.decide("bash", &bash(line));
        corpus.check(line, matches!(got, Decision::Deny(_)), || {
            format!("{got:?}")
        });
    }
    let allowed = [
        "git status",
        "git log --oneline",
        "git pushx",
        "git commit -m 'push it'",
        "rmdir x",
        "farm -x",
        "ls /tmp/rmx",
        "trim x",
        "curling",
        "echo firm",
        "grep -r remove .",
        "git stash push-x",
        "cargo test",
    ];
    for line in allowed {
        let got = p.decide("bash", &bash(line));
        corpus.check(line, got == Decision::Allow, || format!("{got:?}"));
    }
    corpus.finish();
}

#[test]
fn corpus_the_project_file_never_fails_open() {
    let rule = "deny bash:rm*";
    let variants: Vec<(&str, Vec<u8>)> = vec![
        ("plain", format!("{rule}\n").into_bytes()),
        ("no newline at the end", rule.as_bytes().to_vec()),
        ("bom", [&b"\xef\xbb\xbf"[..], rule.as_bytes()].concat()),
        (
            "bom and crlf",
            format!("\u{feff}{rule}\r\nallow x\r\n").into_bytes(),
        ),
        ("crlf", format!("{rule}\r\n").into_bytes()),
        ("cr only", format!("# c\r{rule}\r").into_bytes()),
        ("tabs", b"deny\tbash:rm*\n".to_vec()),
        ("spaces around", b"   deny    bash:rm*   \n".to_vec()),
        ("nbsp separator", "deny\u{a0}bash:rm*\n".as_bytes().to_vec()),
        ("capital verb", b"Deny bash:rm*\n".to_vec()),
        ("upper verb", b"DENY bash:rm*\n".to_vec()),
        ("verb with colon", b"deny: bash:rm*\n".to_vec()),
        ("capital tool", b"deny Bash:rm*\n".to_vec()),
        ("upper tool", b"deny BASH:rm*\n".to_vec()),
        ("latin-1 comment", b"# caf\xe9\ndeny bash:rm*\n".to_vec()),
        ("latin-1 in the rule", b"deny bash:rm*\xe9\n".to_vec()),
        ("bad byte in the rule", b"deny bash:r\xffm*\n".to_vec()),
        ("bad byte after", b"deny bash:rm*\n\xff\xfe\n".to_vec()),
        ("utf-16le", {
            let mut bytes = vec![0xff, 0xfe];
            for unit in rule.encode_utf16() {
                bytes.extend(unit.to_le_bytes());
            }
            bytes
        }),
        ("nul bytes", b"deny bash:rm*\0\n".to_vec()),
        ("unreadable rule", b"deny bash:rm; *\n".to_vec()),
        ("bare tool", b"deny bash\n".to_vec()),
        ("after a bad line", b"permit x\ndeny bash:rm*\n".to_vec()),
        (
            "after a long line",
            [vec![b'#'; 100_000], b"\ndeny bash:rm*\n".to_vec()].concat(),
        ),
        ("utf-16be", {
            let mut bytes = vec![0xfe, 0xff];
            for unit in rule.encode_utf16() {
                bytes.extend(unit.to_be_bytes());
            }
            bytes
        }),
        (
            "utf-16 without a mark",
            rule.encode_utf16().flat_map(u16::to_le_bytes).collect(),
        ),
        ("misspelt verb", b"denny bash:rm*\n".to_vec()),
        ("swapped letters", b"dney bash:rm*\n".to_vec()),
        ("bad byte in the verb", b"d\xffny bash:rm*\n".to_vec()),
        (
            "zero-width space",
            "deny bash:rm*\u{200b}\n".as_bytes().to_vec(),
        ),
    ];
    let mut corpus = mm_test_support::Corpus::new(".mm/permissions encodings and spellings");
    for (what, bytes) in &variants {
        let (_dir, path) = project_bytes(bytes);
        let (p, _) = Permissions::new(true, vec![]).with_project_file(&path);
        let got = p.decide("bash", &bash("rm -rf x"));
        corpus.check(what, matches!(got, Decision::Deny(_)), || {
            format!("{got:?}")
        });
    }
    // Files that cannot be read at all: every call refused.
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(dir.path().join("a/.mm/permissions")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(dir.path().join("b/.mm")).unwrap_or_else(|e| panic!("{e}"));
    nix::unistd::mkfifo(
        &dir.path().join("b/.mm/permissions"),
        nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(dir.path().join("c/.mm")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join("c/.mm/permissions"), vec![b'#'; 2 << 20])
        .unwrap_or_else(|e| panic!("{e}"));
    for folder in ["a", "b", "c"] {
        let (p, _) = Permissions::new(true, vec![])
            .with_project_file(&project_file(&dir.path().join(folder)));
        let got = p.decide("bash", &bash("rm -rf x"));
        corpus.check(
            ("unreadable", folder),
            matches!(got, Decision::Deny(_)),
            || format!("{got:?}"),
        );
    }
    corpus.finish();
}
