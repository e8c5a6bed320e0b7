use super::NotSimple::*;
use super::*;

fn values(line: &str) -> Result<Vec<String>, NotSimple> {
    split(line).map(|words| words.into_iter().map(|w| w.value).collect())
}

#[test]
fn words_honour_quotes_and_escapes() {
    let table: &[(&str, &[&str])] = &[
        ("git status", &["git", "status"]),
        ("  git \t  status  ", &["git", "status"]),
        (r#"echo 'a b' "c d" e\ f"#, &["echo", "a b", "c d", "e f"]),
        ("echo 'it''s' x'y'z", &["echo", "its", "xyz"]),
        ("echo '' \"\"", &["echo", "", ""]),
        (
            r#"echo "a\"b" "\$x" "\`" "\\" "\n""#,
            &["echo", "a\"b", "$x", "`", "\\", "\\n"],
        ),
        (
            r#"echo \' \" \\ \$ \` \; \& \| \> \< \( \)"#,
            &[
                "echo", "'", "\"", "\\", "$", "`", ";", "&", "|", ">", "<", "(", ")",
            ],
        ),
        // Operators inside quotes are just text of an argument.
        (
            r##"echo ';' "&&" '|' '>' '$(touch x)' '`id`' "#""##,
            &["echo", ";", "&&", "|", ">", "$(touch x)", "`id`", "#"],
        ),
        // `#` starts a comment only at the start of a word.
        ("echo a#b ''#c \\#d", &["echo", "a#b", "#c", "#d"]),
        // `!` is literal: `bash -c` has no history expansion.
        ("echo hi! \"x!\"", &["echo", "hi!", "x!"]),
        // An `=` after the first word is an argument; a quoted one in the first word, a name.
        ("make CC=clang 'A=1'", &["make", "CC=clang", "A=1"]),
        ("'A=1' x", &["A=1", "x"]),
        ("grüß 'dich' ✓", &["grüß", "dich", "✓"]),
    ];
    for (line, want) in table {
        assert_eq!(
            values(line),
            Ok(want.iter().map(|s| s.to_string()).collect()),
            "{line:?}"
        );
    }
}

#[test]
fn unquoted_pattern_characters_are_counted() {
    let words = split(r"ls *.rs '*' \? {a,b} ~ x[1] plain").unwrap_or_default();
    let patterns: Vec<usize> = words.iter().map(|w| w.patterns).collect();
    assert_eq!(patterns, [0, 1, 0, 0, 2, 1, 2, 0]);
}

#[test]
fn anything_but_one_simple_command_is_refused() {
    let table: &[(NotSimple, &[&str])] = &[
        (Empty, &["", "   ", "\t"]),
        (
            Operator,
            &[
                "a; b",
                "a;b",
                "a ;",
                "a && b",
                "a || b",
                "a | b",
                "a|b",
                "a |& b",
                "a & b",
                "a &",
                "a > f",
                "a>f",
                "a >> f",
                "a 2> f",
                "a 2>&1",
                "a &> f",
                "a >| f",
                "a < f",
                "a <<EOF",
                "a <<- EOF",
                "a <<< x",
                "a <(b)",
                "a >(b)",
                "(a)",
                "a (b)",
                "((1))",
                "a\"b\";c",
                "a 'b'|c",
            ],
        ),
        (
            Control,
            &[
                "a\nb",
                "a\n",
                "a\rb",
                "a \\\nb",
                "'a\nb'",
                "\"a\nb\"",
                "a \u{1b}[2J",
                "a\0b",
                "a\u{7f}",
                "a\u{85}b",
                "a\u{9b}1m",
            ],
        ),
        (Substitution, &["a `b`", "a`b`", "a \"`b`\"", "`a`"]),
        (
            Expansion,
            &[
                "a $(b)",
                "a$(b)",
                "a \"$(b)\"",
                "a \"x$(b)y\"",
                "a ${x}",
                "a \"${x}\"",
                "a ${x:-$(b)}",
                "a $x",
                "a \"$x\"",
                "a $'x'",
                "a $\"x\"",
                "a $((1))",
                "a $",
                "a \"$\"",
                "$a",
            ],
        ),
        (Comment, &["# a", "a #b", "a # b; c", "#"]),
        (Unterminated, &["a 'b", "a \"b", "a \"b\\\"", "'", "a \"\\"]),
        (TrailingBackslash, &["a \\", "\\"]),
        (
            Assignment,
            &[
                "FOO=bar a",
                "FOO=bar",
                "a=1",
                "A+=1 x",
                "PATH=. ls",
                "x[0]=1 a",
                "F\"O\"O=1 a",
            ],
        ),
        (
            Keyword,
            &[
                "if true",
                "time a",
                "! a",
                "{ a",
                "}",
                "[[ -f x ]]",
                "while x",
                "until x",
                "for x",
                "case x",
                "function f",
                "coproc x",
                "select x",
                "then",
                "do",
            ],
        ),
    ];
    for (want, lines) in table {
        for line in *lines {
            assert_eq!(values(line), Err(*want), "{line:?}");
        }
    }
}

#[test]
fn rules_are_read_with_the_same_tokenizer() {
    let rule = |prefix: &[&str], more| BashRule {
        prefix: prefix.iter().map(|s| s.to_string()).collect(),
        more,
    };
    let table = [
        ("git status*", Some(rule(&["git", "status"], true))),
        ("git status *", Some(rule(&["git", "status"], true))),
        ("  git   status*  ", Some(rule(&["git", "status"], true))),
        ("git status", Some(rule(&["git", "status"], false))),
        ("*", Some(rule(&[], true))),
        ("''*", Some(rule(&[""], true))),
        ("echo '*'", Some(rule(&["echo", "*"], false))),
        (r"echo \*", Some(rule(&["echo", "*"], false))),
        ("cat 'my file'*", Some(rule(&["cat", "my file"], true))),
        ("make CC=clang*", Some(rule(&["make", "CC=clang"], true))),
        // Not one simple command, or a pattern character other than the final `*`: no rule.
        ("", None),
        ("   ", None),
        ("git status; *", None),
        ("git status && *", None),
        ("ls *.txt", None),
        ("ls a?", None),
        ("ls [ab]*", None),
        ("ls {a,b}*", None),
        ("ls ~/x*", None),
        ("a**", None),
        ("status*''", None),
        ("FOO=1 make*", None),
        ("time make*", None),
        ("# x", None),
        ("a 'b*", None),
        ("echo $HOME*", None),
    ];
    for (pattern, want) in table {
        assert_eq!(BashRule::parse(pattern), want, "{pattern:?}");
    }
}

#[test]
fn rules_match_word_aligned_prefixes() {
    let table: &[(&str, &[&str], &[&str])] = &[
        (
            "git status*",
            &[
                "git status",
                "git status --short",
                "git  status",
                " git status ",
                "git\tstatus",
                "git \"status\" -s",
                "'git' st\\atus",
                "git status ';'",
                "git status 'a; touch x'",
                "git status *.rs",
                "git status -- {a,b} ~",
            ],
            &[
                "git statusx",
                "git statusx;",
                "git status; touch x",
                "git status;touch x",
                "git status && x",
                "git status || x",
                "git status | x",
                "git status & x",
                "git status\ntouch x",
                "git status $(touch x)",
                "git status `touch x`",
                "git status > x",
                "git status < x",
                "git status >> x",
                "git status 2> x",
                "git status <<EOF",
                "git status <(x)",
                "git status #",
                "gitstatus",
                "git",
                "git stat",
                "git sta*",
                "git s?atus",
                "git {status,x}",
                "xgit status",
                "GIT_PAGER=x git status",
                "time git status",
                "",
            ],
        ),
        (
            "git status",
            &["git status", "git  status "],
            &["git status -s", "git status ''"],
        ),
        ("git stat*", &["git stat", "git stat -x"], &["git status"]),
        (
            "echo '*'",
            &["echo '*'", "echo \\*", "echo \"*\""],
            &["echo *", "echo '*' x"],
        ),
        (
            "cat 'my file'*",
            &["cat \"my file\" x", "cat my\\ file"],
            &["cat my file"],
        ),
        ("''*", &["'' x", "\"\""], &["x"]),
        (
            "*",
            &["anything at all", "rm -rf ~", "x *"],
            &["a; b", "FOO=1 a", "a > b", "if x", ""],
        ),
    ];
    for (pattern, yes, no) in table {
        let Some(rule) = BashRule::parse(pattern) else {
            panic!("{pattern:?} is a rule");
        };
        for line in *yes {
            assert!(rule.matches(line), "{pattern:?} should allow {line:?}");
        }
        for line in *no {
            assert!(!rule.matches(line), "{pattern:?} should not allow {line:?}");
        }
    }
}

/// Differential check against the real bash: every generated line this module accepts (without
/// pattern characters, which bash would expand) must be run by bash as one command receiving
/// exactly our words. A misread operator or quote shows up as extra output, a missing `END`, or
/// an error, and fails the test.
#[test]
fn accepted_lines_are_one_command_with_the_same_words_for_bash() {
    const ALPHABET: &[&str] = &[
        "a", "b", "x", " ", " ", "\t", "'", "'", "\"", "\"", "\\", "\\", ";", "&", "|", "<", ">",
        "(", ")", "$", "`", "#", "=", "!", "*", "{", "}", "~", "\n", "%", "^", ",", ".", "-", ":",
        "@", "é", "/", "+",
    ];
    // A fixed linear congruential generator: the same lines on every run.
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |n: usize| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as usize % n
    };
    let mut script =
        String::from("p() { for a in \"$@\"; do printf '%s\\0' \"$a\"; done; printf 'END\\n'; }\n");
    let mut expected = Vec::new();
    let mut accepted = 0;
    for _ in 0..200_000 {
        let len = next(14);
        let line: String = (0..len).map(|_| ALPHABET[next(ALPHABET.len())]).collect();
        // Lines are placed after `p `, so their first word is an argument (no keyword or
        // assignment rules apply); those rules are checked by the table tests.
        let Ok(words) = split(&format!("p {line}")) else {
            continue;
        };
        if words.iter().any(|w| w.patterns > 0) {
            continue;
        }
        accepted += 1;
        script.push_str(&format!("p {line}\n"));
        for word in &words[1..] {
            expected.extend_from_slice(word.value.as_bytes());
            expected.push(0);
        }
        expected.extend_from_slice(b"END\n");
    }
    assert!(accepted > 1000, "only {accepted} lines accepted");
    // The script goes through a file: piping 200 000 lines into bash while its output fills the
    // other pipe would deadlock.
    let Ok(dir) = tempfile::tempdir() else {
        panic!("tempdir");
    };
    let file = dir.path().join("lines.sh");
    assert!(std::fs::write(&file, &script).is_ok());
    #[expect(
        clippy::disallowed_methods,
        reason = "a test that runs bash on a script file and reads its whole output"
    )]
    let Ok(out) = std::process::Command::new("bash")
        .arg("--norc")
        .arg("--noprofile")
        .arg(&file)
        .current_dir(dir.path())
        .stdin(std::process::Stdio::null())
        .output()
    else {
        panic!("bash runs");
    };
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    if out.stdout != expected {
        // Find the first line where bash and this module disagree.
        let got = String::from_utf8_lossy(&out.stdout);
        let want = String::from_utf8_lossy(&expected);
        let (got, want): (Vec<&str>, Vec<&str>) =
            (got.split("END\n").collect(), want.split("END\n").collect());
        let at = got.iter().zip(&want).position(|(g, w)| g != w).unwrap_or(0);
        let line = script.lines().nth(at + 1).unwrap_or_default();
        panic!(
            "bash read {line:?} as {:?}, we as {:?}",
            got.get(at),
            want.get(at)
        );
    }
}

/// The examples of docs/permissions.md, as written there: `(rule, line, allowed)`.
#[test]
fn the_examples_of_the_docs_hold() {
    let table: &[(&str, &str, bool)] = &[
        ("git status*", "git status", true),
        ("git status*", "git status --short", true),
        ("git status*", "git  \"status\" -s", true),
        ("git status*", "git status 'a; touch x'", true),
        ("git status*", "git status *.rs", true),
        ("git status *", "git status -s", true),
        ("git status*", "git statusx", false),
        ("git status*", "git status; touch x", false),
        ("git status*", "git status && touch x", false),
        ("git status*", "git status || touch x", false),
        ("git status*", "git status | touch x", false),
        ("git status*", "git status & touch x", false),
        ("git status*", "git status\ntouch x", false),
        ("git status*", "git status $(touch x)", false),
        ("git status*", "git status \"$(touch x)\"", false),
        ("git status*", "git status `touch x`", false),
        ("git status*", "git status > x", false),
        ("git status*", "git status >> x", false),
        ("git status*", "git status 2> x", false),
        ("git status*", "git status < x", false),
        ("git status*", "git status <<EOF", false),
        ("git status*", "git status <(touch x)", false),
        ("git status*", "git status $HOME", false),
        ("git status*", "GIT_PAGER=x git status", false),
        ("git status*", "time git status", false),
        ("git status*", "git stat", false),
        ("git status*", "git sta*", false),
        ("git status", "git status -s", false),
        ("echo '*'", "echo \\*", true),
        ("echo '*'", "echo *", false),
        ("*", "rm -rf ~", true),
        ("*", "a; b", false),
        ("*", "PATH=. git status", false),
        ("find*", "find . -delete", true),
        ("find*", "find . -exec rm {} \\;", true),
        ("find*", "find . -exec rm {} ;", false),
    ];
    for (pattern, line, allowed) in table {
        let Some(rule) = BashRule::parse(pattern) else {
            panic!("{pattern:?} is a rule");
        };
        assert_eq!(rule.matches(line), *allowed, "{pattern:?} on {line:?}");
    }
    for pattern in ["git status; *", "ls *.txt", "FOO=1 make*", ""] {
        assert_eq!(BashRule::parse(pattern), None, "{pattern:?}");
    }
}
