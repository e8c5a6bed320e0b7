//! Consent on the terminal: the rules a run starts with, the dialog, and the answer.
//!
//! The dialog shows exactly what will run (escaped: a control sequence in the call is shown,
//! never obeyed), then the choices:
//!
//! ```text
//! Allow bash: git status --short
//!   [y] yes, once  [a] always bash:git status* (this session)  [s] always, saved to .mm/permissions  [n] no
//! ```
//!
//! `n` may carry the reason for the model on the same line (`n not on main`); a bare `n`
//! asks for it. Interactive mode reads answers through its line editor (interactive/input.rs);
//! print mode reads a line from stdin, and only when stdin and stderr are both terminals.

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use mm_core::{AgentConfig, ConsentAnswer, ConsentAsker, ConsentRequest, Permissions};

use crate::render::escape::line;

/// The rules of this run: the agent's `yolo` and `allow:`, and the project's
/// `.mm/permissions` (its problems are warnings).
pub fn permissions(config: &AgentConfig, cwd: &Path) -> Permissions {
    let (permissions, warnings) = Permissions::new(config.yolo, config.allow.clone())
        .with_project_file(&mm_core::project_file(cwd));
    for warning in warnings {
        crate::render::warn(&warning);
    }
    permissions
}

/// Print mode's asker: stderr and stdin, when both are a terminal (`None`: piped stdin, CI,
/// `-p -`, and the call is refused).
pub fn terminal_asker() -> Option<Arc<dyn ConsentAsker>> {
    let terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    terminal.then(|| Arc::new(LineAsker) as Arc<dyn ConsentAsker>)
}

/// The dialog's text: the call on one line, then the choices (no trailing newline). Every
/// model-supplied part is escaped.
pub fn dialog(request: &ConsentRequest, color: bool) -> String {
    // The call's line carries no style of ours: what is on it is exactly what will run.
    let (dim, off) = if color {
        ("\x1b[2m", "\x1b[0m")
    } else {
        ("", "")
    };
    let mut text = format!(
        "Allow {}: {}\n",
        line(&request.tool),
        visible(&request.summary)
    );
    if let Some(note) = &request.note {
        text.push_str(&format!("  ({})\n", visible(note)));
    }
    if let Some(mode) = request.sandbox {
        let what = match mode {
            mm_core::SandboxMode::Workspace => {
                "it can write only in this folder and $TMPDIR, no network"
            }
            _ => "confined as far as this kernel allows; `mm check` says how far",
        };
        text.push_str(&format!("  {dim}(sandboxed: {mode}: {what}){off}\n"));
    }
    // Next to the choices, where nothing can push it off the screen: how long the call is,
    // and for a `bash` line of several commands, the programs it runs.
    let length = request.summary.chars().count();
    if length > LONG_CALL {
        text.push_str(&format!(
            "  {dim}(the call above is {length} characters long){off}\n"
        ));
    }
    if request.tool == "bash" {
        let programs = mm_core::bash_programs(&request.summary);
        if programs.len() > 1 {
            // At most three rows: 12 names of at most 40 characters, 200 in all.
            let short = |name: &str| -> String {
                let name = visible(name);
                match name.char_indices().nth(40) {
                    Some((at, _)) => format!("{}…", &name[..at]),
                    None => name,
                }
            };
            let mut names: Vec<String> = programs.iter().take(12).map(|p| short(p)).collect();
            if programs.len() > 12 {
                names.push(format!("… {} more", programs.len() - 12));
            }
            let names: String = names.join(", ").chars().take(200).collect();
            text.push_str(&format!(
                "  {dim}(it runs {} commands: {names}){off}\n",
                programs.len()
            ));
        }
    }
    text.push_str("  [y] yes, once");
    match &request.always {
        Some(rule) => text.push_str(&format!(
            "  [a] always {} {dim}(this session){off}  [s] always, saved to .mm/permissions",
            line(rule)
        )),
        None => text.push_str(&format!(
            "  {dim}(no \"always\" for a line of several commands){off}"
        )),
    }
    text.push_str("  [n] no");
    text
}

/// Runs of more blanks than this are shown as a count (`⟨2000 blanks⟩`).
const MAX_BLANKS: usize = 8;

/// A call longer than this (in characters) has its length said next to the choices.
const LONG_CALL: usize = 300;

/// The most characters of a call the dialog draws (13 rows of 80): its first [`HEAD`] and last
/// [`TAIL`], with how many were left out between. Past that, no call could push its own start
/// off a 24-row screen.
const MAX_SHOWN: usize = 1000;
const HEAD: usize = 700;
const TAIL: usize = 260;

/// The call as the dialog shows it: control characters escaped (see `render::escape`), and
/// every blank that could hide a part of it made visible. A run of more than [`MAX_BLANKS`]
/// blanks (`touch x;` + 2000 spaces + `git status` would scroll the `touch` off an 80×24
/// screen; tabs, newlines and invisible characters count) is shown as `⟨2000 blanks⟩`; a blank
/// that is not a plain space (a no-break space, an ideographic space, a zero-width or filler
/// character: bash reads none of them as a separator) is shown as `\u{a0}`; and a call longer
/// than [`MAX_SHOWN`] characters once drawn is shown as its head and tail.
pub fn visible(call: &str) -> String {
    let mut out = String::with_capacity(call.len());
    let mut run: Vec<char> = Vec::new();
    let flush = |out: &mut String, run: &mut Vec<char>| {
        if run.len() > MAX_BLANKS {
            out.push_str(&format!("⟨{} blanks⟩", run.len()));
        } else {
            for &c in run.iter() {
                match c {
                    ' ' => out.push(' '),
                    '\t' | '\n' | '\r' => out.push_str(&line(&c.to_string())),
                    c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
                }
            }
        }
        run.clear();
    };
    let mut buf = [0u8; 4];
    for c in call.chars() {
        if is_blank(c) {
            run.push(c);
        } else {
            flush(&mut out, &mut run);
            out.push_str(&line(c.encode_utf8(&mut buf)));
        }
    }
    flush(&mut out, &mut run);
    let shown = out.chars().count();
    if shown <= MAX_SHOWN {
        return out;
    }
    let head: String = out.chars().take(HEAD).collect();
    let tail: String = out.chars().skip(shown - TAIL).collect();
    format!(
        "{head}⟨… {} characters not shown …⟩{tail}",
        shown - HEAD - TAIL
    )
}

/// A character that draws as nothing or as blank space.
fn is_blank(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{034F}'
                | '\u{115F}'
                | '\u{1160}'
                | '\u{17B4}'
                | '\u{17B5}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200D}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2800}'
                | '\u{3164}'
                | '\u{FEFF}'
                | '\u{FFA0}'
        )
}

/// What a typed answer means: `None` when it is none of the choices (ask again). `Some(Deny
/// { reason: None })` for a bare `n`: the caller asks for the reason.
pub fn parse_answer(answer: &str, request: &ConsentRequest) -> Option<ConsentAnswer> {
    let answer = answer.trim();
    let mut chars = answer.chars();
    let first = chars.next()?.to_ascii_lowercase();
    let rest = chars.as_str();
    // `yes`, `no`, `always`, `save`, or the letter alone; `n REASON` / `n: REASON` for a reason.
    let word = |w: &str| rest.is_empty() || w.eq_ignore_ascii_case(answer);
    match first {
        'y' | '1' if word("yes") => Some(ConsentAnswer::Once),
        'a' | '2' if word("always") && request.always.is_some() => {
            Some(ConsentAnswer::Always { save: false })
        }
        's' | '3' if word("save") && request.always.is_some() => {
            Some(ConsentAnswer::Always { save: true })
        }
        'n' | '4' => {
            let reason = if word("no") {
                ""
            } else if rest.starts_with([' ', ':', ',', '\t']) {
                rest.trim_start_matches([' ', ':', ',', '\t'])
            } else {
                return None;
            };
            Some(ConsentAnswer::Deny {
                reason: Some(reason.trim().to_string()).filter(|r| !r.is_empty()),
            })
        }
        _ => None,
    }
}

/// What to say to an answer that is none of the choices.
pub fn again(request: &ConsentRequest) -> &'static str {
    if request.always.is_some() {
        "  Answer y, a, s or n."
    } else {
        "  Answer y or n."
    }
}

/// The prompt of the reason line after a bare `n`.
pub const REASON_PROMPT: &str = "  Why not? (sent to the model; Enter for no reason) ";

/// The prompt of the answer line.
pub const ANSWER_PROMPT: &str = "  > ";

/// Asks on stderr and reads the answer from stdin (print mode with a terminal). The read is
/// blocking, on a thread of its own; when the turn is cancelled the question is abandoned
/// and mm ends.
struct LineAsker;

#[async_trait]
impl ConsentAsker for LineAsker {
    async fn ask(&self, request: &ConsentRequest) -> Option<ConsentAnswer> {
        let request = request.clone();
        tokio::task::spawn_blocking(move || ask_on_lines(&request))
            .await
            .unwrap_or(None)
    }
}

fn ask_on_lines(request: &ConsentRequest) -> Option<ConsentAnswer> {
    let color = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let say = |text: &str| {
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "{text}");
        let _ = err.flush();
    };
    let read = |prompt: &str| {
        say(prompt);
        let mut answer = String::new();
        std::future::ready(match std::io::stdin().lock().read_line(&mut answer) {
            Ok(0) | Err(_) => Typed::Eof,
            Ok(_) => Typed::Line(answer),
        })
    };
    say(&format!("\n{}\n", dialog(request, color)));
    // On a thread of its own: the reads block, the loop's futures are all ready.
    futures::executor::block_on(answer(request, read, say))
}

/// A line the user typed at a prompt, or why there is none.
pub enum Typed {
    Line(String),
    /// Ctrl-C (interactive mode).
    Interrupted,
    /// The end of the input.
    Eof,
}

/// The dialog's answer, whoever reads the lines (print mode's blocking reads, interactive
/// mode's line editor): the answer prompt until an answer is understood, then, after a bare
/// `n`, the reason prompt. `None` when the input ended before any answer.
pub async fn answer<F, R>(
    request: &ConsentRequest,
    mut read: R,
    say: impl Fn(&str),
) -> Option<ConsentAnswer>
where
    R: FnMut(&'static str) -> F,
    F: std::future::Future<Output = Typed>,
{
    loop {
        let typed = match read(ANSWER_PROMPT).await {
            Typed::Line(typed) => typed,
            Typed::Interrupted => return Some(ConsentAnswer::Interrupt),
            Typed::Eof => return None,
        };
        match parse_answer(&typed, request) {
            Some(ConsentAnswer::Deny { reason: None }) => {
                return Some(match read(REASON_PROMPT).await {
                    Typed::Line(reason) => ConsentAnswer::Deny {
                        reason: Some(reason.trim().to_string()).filter(|r| !r.is_empty()),
                    },
                    Typed::Interrupted => ConsentAnswer::Interrupt,
                    Typed::Eof => ConsentAnswer::Deny { reason: None },
                });
            }
            Some(answer) => return Some(answer),
            None => say(&format!("{}\n", again(request))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(always: Option<&str>) -> ConsentRequest {
        ConsentRequest {
            tool: "bash".into(),
            summary: "git status\x1b[2K".into(),
            always: always.map(Into::into),
            note: None,
            sandbox: None,
        }
    }

    #[test]
    fn the_dialog_says_when_the_call_runs_sandboxed() {
        let plain = dialog(&request(None), false);
        assert!(!plain.contains("sandboxed"), "{plain}");
        let r = ConsentRequest {
            sandbox: Some(mm_core::SandboxMode::Workspace),
            ..request(None)
        };
        let text = dialog(&r, false);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[1],
            "  (sandboxed: workspace: it can write only in this folder and $TMPDIR, no network)"
        );
        let r = ConsentRequest {
            sandbox: Some(mm_core::SandboxMode::BestEffort),
            ..request(None)
        };
        assert!(dialog(&r, false).contains("(sandboxed: best-effort: confined as far as"));
    }

    #[test]
    fn answers() {
        let r = request(Some("bash:git status*"));
        let deny = |reason: Option<&str>| {
            Some(ConsentAnswer::Deny {
                reason: reason.map(Into::into),
            })
        };
        let cases = [
            ("y", Some(ConsentAnswer::Once)),
            (" Yes \n", Some(ConsentAnswer::Once)),
            ("1", Some(ConsentAnswer::Once)),
            ("a", Some(ConsentAnswer::Always { save: false })),
            ("always", Some(ConsentAnswer::Always { save: false })),
            ("s", Some(ConsentAnswer::Always { save: true })),
            ("n", deny(None)),
            ("no", deny(None)),
            ("n not on main", deny(Some("not on main"))),
            ("n: use the script", deny(Some("use the script"))),
            ("nope", None),
            ("yolo", None),
            ("", None),
            ("x", None),
        ];
        for (typed, want) in cases {
            assert_eq!(parse_answer(typed, &r), want, "{typed:?}");
        }
        // No "always" for a line of several commands.
        let r = request(None);
        assert_eq!(parse_answer("a", &r), None);
        assert_eq!(parse_answer("s", &r), None);
    }

    #[test]
    fn blanks_cannot_push_a_part_of_the_call_off_the_screen() {
        let spoof = format!("touch PWNED;{}git status", " ".repeat(2000));
        let r = ConsentRequest {
            tool: "bash".into(),
            summary: spoof,
            always: None,
            note: None,
            sandbox: None,
        };
        let text = dialog(&r, false);
        let first = text.lines().next().unwrap_or_default();
        assert_eq!(first, "Allow bash: touch PWNED;⟨2000 blanks⟩git status");
        // The whole dialog fits an 80×24 screen with room to spare.
        assert!(text.lines().all(|l| l.chars().count() <= 120), "{text}");
        assert!(text.lines().count() <= 4, "{text}");
        assert!(text.contains("(it runs 2 commands: touch, git)"), "{text}");
        // Other blanks: shown by their code, one by one or counted.
        assert_eq!(visible("rm\u{a0}-rf x"), "rm\\u{a0}-rf x");
        assert_eq!(visible("a\u{3000}b\u{200b}c"), "a\\u{3000}b\\u{200b}c");
        assert_eq!(
            visible(&format!("a{}b", "\u{2800}".repeat(50))),
            "a⟨50 blanks⟩b"
        );
        assert_eq!(visible("git  status"), "git  status");
        // A long call says how long it is next to the choices.
        let long = ConsentRequest {
            tool: "bash".into(),
            summary: format!("touch PWNED; echo {}", "a".repeat(3000)),
            always: None,
            note: None,
            sandbox: None,
        };
        let text = dialog(&long, false);
        assert!(
            text.contains(
                "(the call above is 3018 characters long)\n  (it runs 2 commands: touch, echo)\n  [y] yes, once"
            ) && text.contains("⟨… 2058 characters not shown …⟩"),
            "{}",
            &text[text.len() - 200..]
        );
    }

    #[test]
    fn corpus_nothing_in_a_call_hides_another_part_of_it() {
        let mut corpus = mm_test_support::Corpus::new("consent dialog spoofs (80×24 screen)");
        let hiders: Vec<(&str, String)> = vec![
            ("2000 spaces", " ".repeat(2000)),
            ("200 spaces", " ".repeat(200)),
            ("81 spaces", " ".repeat(81)),
            ("10000 spaces", " ".repeat(10_000)),
            ("tabs", "\t".repeat(300)),
            ("newlines", "\n".repeat(30)),
            ("carriage return", "\r".to_string()),
            ("crlf", "\r\n".repeat(30)),
            ("no-break spaces", "\u{a0}".repeat(500)),
            ("ideographic spaces", "\u{3000}".repeat(500)),
            ("em spaces", "\u{2003}".repeat(500)),
            ("braille blanks", "\u{2800}".repeat(500)),
            ("hangul fillers", "\u{3164}".repeat(500)),
            ("zero-width spaces", "\u{200b}".repeat(500)),
            ("line separators", "\u{2028}".repeat(30)),
            ("paragraph separators", "\u{2029}".repeat(30)),
            ("mixed blanks", " \u{a0}\t\u{3000}".repeat(300)),
            ("erase line", "\x1b[2K\r".into()),
            ("cursor up", "\x1b[10A".into()),
            ("clear screen", "\x1b[2J\x1b[H".into()),
            ("backspaces", "\x08".repeat(20)),
            ("bidi override", "\u{202e}".into()),
            ("bidi isolate", "\u{2066}".into()),
            ("c1 csi", "\u{9b}2K".into()),
            ("delete", "\x7f".repeat(20)),
            ("spaces then escape", format!("{}\x1b[1A", " ".repeat(500))),
            ("5000 letters", "a".repeat(5000)),
            (
                "a long quoted argument",
                format!(" '{}' ", "b64+".repeat(2000)),
            ),
            ("2000 backspaces", "\x08".repeat(2000)),
            ("500 cursor moves", "\x1b[1A".repeat(500)),
            ("many short commands", "; true".repeat(400)),
        ];
        for (what, hider) in &hiders {
            for shape in ["before", "between"] {
                let summary = match shape {
                    "before" => format!("touch PWNED;{hider}git status"),
                    _ => format!("git status{hider}; touch PWNED"),
                };
                let request = ConsentRequest {
                    tool: "bash".into(),
                    summary,
                    always: None,
                    note: None,
                    sandbox: None,
                };
                let text = dialog(&request, false);
                let lines: Vec<&str> = text.lines().collect();
                // On an 80×24 screen the last 24 rows show: every part of the call must be in
                // them, with no control character left to move the cursor.
                let rows: usize = lines
                    .iter()
                    .map(|l| l.chars().count().div_ceil(80).max(1))
                    .sum();
                let held = rows <= 20
                    && text.contains("touch PWNED")
                    && text.contains("git status")
                    && !text.chars().any(|c| c.is_control() && c != '\n');
                corpus.check((what, shape), held, || format!("{rows} rows: {text:?}"));
            }
        }
        corpus.finish();
    }

    #[test]
    fn the_dialog_shows_the_call_escaped_and_the_rule_of_always() {
        let text = dialog(&request(Some("bash:git status*")), false);
        assert_eq!(
            text,
            "Allow bash: git status\\x1b[2K\n  [y] yes, once  [a] always bash:git status* (this session)  [s] always, saved to .mm/permissions  [n] no"
        );
        let text = dialog(&request(None), false);
        assert!(text.contains("(no \"always\" for a line of several commands)"));
        assert!(!text.contains("[a]"));
    }
}
