//! What an eval prints and writes: the table (per model × mode: actions and no-tool questions
//! right with their 95 % Wilson intervals, mean seconds, the failures by class; then per case
//! and language), the JSON of every run, an SVG chart, and the comparison with an earlier JSON.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::judge::FailureClass;
use super::suite::Mode;

/// A tool call's result as the model read it (a `tool_result` event).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    pub name: String,
    pub ok: bool,
    #[serde(default)]
    pub exit_code: Option<i32>,
    pub content: String,
}

impl ToolResult {
    /// The result is what a program (or tool) that ran printed, not a text mm wrote instead of
    /// running it (an invalid or unknown call, a refusal). A program that failed counts as run:
    /// its result ends like mm's pipeline ends one (docs/tools.md), which is all an MCP
    /// client sees of it.
    pub fn ran(&self) -> bool {
        let last = self.content.lines().last().unwrap_or_default();
        self.ok
            || self.exit_code.is_some()
            || last.starts_with("exit code ")
            || last.starts_with("timed out after ")
            || last == "killed by a signal"
    }
}

/// A row of the first table (per model) and a column of the second: a mode, or declared mode
/// with the tools shown as a `--variants` variant.
#[derive(Debug, Clone, PartialEq)]
pub struct Arm {
    pub mode: Mode,
    pub variant: Option<String>,
}

impl Arm {
    /// The arm `run` belongs to.
    pub fn of(run: &RunRecord) -> Self {
        Self {
            mode: run.mode,
            variant: run.variant.clone(),
        }
    }

    /// `declared`, or `declared: VARIANT`.
    pub fn title(&self) -> String {
        match &self.variant {
            Some(name) => format!("{}: {name}", self.mode.title()),
            None => self.mode.title().to_string(),
        }
    }

    fn holds(&self, run: &RunRecord) -> bool {
        run.mode == self.mode && run.variant == self.variant
    }
}

/// One run, as written to the JSON file. Fields an older results.json lacks get their
/// defaults: such a run is *unjudged* (`judged: false`, its `ok` from the calls alone).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRecord {
    pub model: String,
    pub mode: Mode,
    /// The `--variants` row the run belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    #[serde(default)]
    pub suite: String,
    /// `SUITE/CASE` (older files: the case id alone).
    pub case: String,
    pub language: String,
    /// 1-based, per case and language.
    pub run: u32,
    pub prompt: String,
    /// The earlier turns of a `history` case, in order (their calls are not judged).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub earlier: Vec<EarlierTurn>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    pub ok: bool,
    /// Judged by the whole run (calls, answer checks, junk); older files judged calls only.
    #[serde(default)]
    pub judged: bool,
    /// The case expects a call (an action) rather than none (a question no tool answers).
    #[serde(default)]
    pub expects_call: Option<bool>,
    /// Why the run failed (`null` when it did not).
    #[serde(default)]
    pub failure: Option<FailureClass>,
    /// The junk class when `failure` is `junk`.
    #[serde(default)]
    pub junk: Option<String>,
    /// The junk class of the answer mm printed, when that was the model's useless reply,
    /// whatever `failure` says (a run with a wrong call may print junk too); not when mm
    /// showed a call's output in its place or gave no answer (the turn's own verdict).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub printed_junk: Option<String>,
    /// The `answer:` check that failed, when `failure` is `bad_answer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_check: Option<String>,
    /// Wall time of every turn of the run.
    pub seconds: f64,
    /// The tool calls mm reported in the judged turn.
    pub calls: Value,
    /// What the recording wrapper wrote in the judged turn: `{"program", "argv"}` per run.
    pub recorded: Vec<Value>,
    /// What the model read back from each call of the judged turn.
    #[serde(default)]
    pub tool_results: Vec<ToolResult>,
    pub tokens: Value,
    pub answer: String,
    /// The answer was cut at `max_tokens`.
    #[serde(default)]
    pub truncated: bool,
    pub stop_reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// An earlier turn of a `history` case.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EarlierTurn {
    pub prompt: String,
    pub answer: String,
    pub stop_reason: String,
    pub calls: Value,
    pub recorded: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The JSON file of an eval.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Results {
    /// The suite files, comma-separated.
    pub suite: String,
    /// The suites' names.
    #[serde(default)]
    pub suites: Vec<String>,
    pub date: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// The base seed (each run's is this plus its number), when seeds were sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Whether the eval was stopped before every run was done (Ctrl-C).
    pub interrupted: bool,
    pub runs: Vec<RunRecord>,
}

/// The 95 % Wilson score interval of `k` successes in `n` runs, as fractions. Unlike `k/n ±
/// 1.96·σ` it stays within [0, 1] and is honest at 0/n and n/n, which is where a handful of
/// runs per case lands.
pub fn wilson(k: u32, n: u32) -> (f64, f64) {
    const Z: f64 = 1.959_963_984_540_054;
    if n == 0 {
        return (0.0, 1.0);
    }
    let n = f64::from(n);
    let p = f64::from(k) / n;
    let z2 = Z * Z;
    let denominator = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denominator;
    let half = Z / denominator * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// `27/30 90% [74–97]`: successes, rate, 95 % Wilson interval in percent.
fn rate(k: u32, n: u32) -> String {
    if n == 0 {
        return "—".into();
    }
    let (low, high) = wilson(k, n);
    format!(
        "{k}/{n} {:.0}% [{:.0}–{:.0}]",
        100.0 * f64::from(k) / f64::from(n),
        100.0 * low,
        100.0 * high
    )
}

/// Counts over a set of runs.
#[derive(Default)]
struct Tally {
    runs: u32,
    ok: u32,
    actions: (u32, u32),
    questions: (u32, u32),
    /// No-tool questions answered without a call, whatever the answer's facts: no unwanted
    /// call, no loop or error, and no junk (only `bad_answer` or right).
    without_call: u32,
    seconds: f64,
    failures: Vec<(FailureClass, u32)>,
    junk: Vec<String>,
    /// Runs whose printed answer was junk ([`RunRecord::printed_junk`]).
    printed_junk: u32,
}

impl Tally {
    fn of<'a>(runs: impl Iterator<Item = &'a RunRecord>) -> Self {
        let mut t = Tally::default();
        for run in runs {
            t.runs += 1;
            t.ok += u32::from(run.ok);
            t.seconds += run.seconds;
            let kind = match run.expects_call {
                Some(true) => Some(&mut t.actions),
                Some(false) => Some(&mut t.questions),
                None => None,
            };
            if let Some((right, all)) = kind {
                *right += u32::from(run.ok);
                *all += 1;
            }
            if run.expects_call == Some(false)
                && matches!(run.failure, None | Some(FailureClass::BadAnswer))
            {
                t.without_call += 1;
            }
            if let Some(class) = run.failure {
                match t.failures.iter_mut().find(|(c, _)| *c == class) {
                    Some((_, n)) => *n += 1,
                    None => t.failures.push((class, 1)),
                }
            }
            t.junk.extend(run.junk.clone());
            t.printed_junk += u32::from(run.printed_junk.is_some());
        }
        t
    }

    fn failures(&self, class: FailureClass) -> u32 {
        self.failures
            .iter()
            .find(|(c, _)| *c == class)
            .map_or(0, |(_, n)| *n)
    }

    /// `3/5`, with the failures when there are some: `3/5 (1 no_call, 1 junk: refusal)`.
    fn cell(&self) -> String {
        if self.runs == 0 {
            return "—".into();
        }
        let mut why: Vec<String> = Vec::new();
        for class in FailureClass::ALL {
            let n = self.failures(class);
            if n == 0 {
                continue;
            }
            if class == FailureClass::Junk && !self.junk.is_empty() {
                why.push(format!("{n} junk: {}", self.junk.join(", ")));
            } else {
                why.push(format!("{n} {}", class.as_str()));
            }
        }
        let counts = format!("{}/{}", self.ok, self.runs);
        if why.is_empty() {
            counts
        } else {
            format!("{counts} ({})", why.join(", "))
        }
    }
}

/// In order of first appearance.
fn distinct<T: PartialEq + Clone>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// The two tables, in Markdown.
pub fn table(results: &Results, arms: &[Arm]) -> String {
    let runs = &results.runs;
    let models = distinct(runs.iter().map(|r| r.model.clone()));
    let mut text = String::new();
    let mut cols = vec![
        "model",
        "mode",
        "actions right",
        "no-tool questions right",
        "no-tool answered without a call",
        "mean s",
    ];
    cols.extend(FailureClass::ALL.iter().map(|c| c.as_str()));
    cols.push("junk printed");
    let _ = writeln!(text, "| {} |", cols.join(" | "));
    let _ = writeln!(text, "|{}", "---|".repeat(cols.len()));
    for model in &models {
        for arm in arms {
            let t = Tally::of(runs.iter().filter(|r| &r.model == model && arm.holds(r)));
            if t.runs == 0 {
                continue;
            }
            let mut cells = vec![
                model.clone(),
                arm.title(),
                rate(t.actions.0, t.actions.1),
                rate(t.questions.0, t.questions.1),
                rate(t.without_call, t.questions.1),
                format!("{:.1}", t.seconds / f64::from(t.runs)),
            ];
            cells.extend(FailureClass::ALL.iter().map(|c| t.failures(*c).to_string()));
            cells.push(t.printed_junk.to_string());
            let _ = writeln!(text, "| {} |", cells.join(" | "));
        }
    }
    text.push('\n');
    let mut cols = vec!["model".to_string(), "case".into(), "language".into()];
    cols.extend(arms.iter().map(Arm::title));
    let _ = writeln!(text, "| {} |", cols.join(" | "));
    let _ = writeln!(text, "|{}", "---|".repeat(cols.len()));
    for model in &models {
        let of_model = || runs.iter().filter(|r| &r.model == model);
        for case in &distinct(of_model().map(|r| r.case.clone())) {
            let languages = distinct(
                of_model()
                    .filter(|r| &r.case == case)
                    .map(|r| r.language.clone()),
            );
            for language in &languages {
                let cells: Vec<String> =
                    arms.iter()
                        .map(|arm| {
                            Tally::of(of_model().filter(|r| {
                                arm.holds(r) && &r.case == case && &r.language == language
                            }))
                            .cell()
                        })
                        .collect();
                let _ = writeln!(
                    text,
                    "| {model} | {case} | {language} | {} |",
                    cells.join(" | ")
                );
            }
        }
    }
    text
}

/// What changed since `old`: per model and mode, actions and no-tool questions right, before
/// and now. An older results.json's runs are unjudged (their calls alone were judged) and
/// marked `*`; they are split into actions and questions by the case of the same id now.
pub fn compare(old: &Results, new: &Results, arms: &[Arm]) -> String {
    let mut text = String::from(
        "| model | mode | actions before | actions now | no-tool questions before | no-tool questions now |\n|---|---|---|---|---|---|\n",
    );
    let kind_now = |run: &RunRecord| {
        run.expects_call.or_else(|| {
            new.runs
                .iter()
                .find(|r| r.case == run.case || r.case.ends_with(&format!("/{}", run.case)))
                .and_then(|r| r.expects_call)
        })
    };
    let mut unjudged = false;
    let models = distinct(new.runs.iter().chain(&old.runs).map(|r| r.model.clone()));
    for model in &models {
        for arm in arms {
            let mut cells = Vec::new();
            let mut any = false;
            for want in [true, false] {
                for results in [old, new] {
                    let runs: Vec<&RunRecord> = results
                        .runs
                        .iter()
                        .filter(|r| &r.model == model && arm.holds(r) && kind_now(r) == Some(want))
                        .collect();
                    any |= !runs.is_empty();
                    let ok = runs.iter().filter(|r| r.ok).count();
                    let mark = if runs.iter().any(|r| !r.judged) {
                        unjudged = true;
                        "*"
                    } else {
                        ""
                    };
                    cells.push(if runs.is_empty() {
                        "—".to_string()
                    } else {
                        format!("{ok}/{}{mark}", runs.len())
                    });
                }
            }
            if any {
                let _ = writeln!(
                    text,
                    "| {model} | {} | {} |",
                    arm.title(),
                    cells.join(" | ")
                );
            }
        }
    }
    if unjudged {
        text.push_str(
            "\n\\* unjudged: an older results.json, whose runs were judged by their calls alone\n",
        );
    }
    text
}

/// A bar chart of the runs judged right per model and mode.
pub fn svg(results: &Results, arms: &[Arm]) -> String {
    const BAR: f64 = 36.0;
    const GAP: f64 = 28.0;
    const HEIGHT: f64 = 200.0;
    const TOP: f64 = 40.0;
    const COLOURS: [&str; 3] = ["#4e79a7", "#f28e2b", "#59a14f"];
    let models = distinct(results.runs.iter().map(|r| r.model.clone()));
    let group = BAR * arms.len() as f64 + GAP;
    let width = 60.0 + group * models.len().max(1) as f64;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{:.0}\" font-family=\"sans-serif\" font-size=\"11\">\n",
        TOP + HEIGHT + 60.0
    );
    let _ = writeln!(
        svg,
        "<text x=\"10\" y=\"20\" font-size=\"13\">{}: runs right (the expected call, a real answer)</text>",
        escape(&results.suite)
    );
    for (i, arm) in arms.iter().enumerate() {
        let x = 10.0 + 110.0 * i as f64;
        let _ = writeln!(
            svg,
            "<rect x=\"{x:.0}\" y=\"{:.0}\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{:.0}\" y=\"{:.0}\">{}</text>",
            TOP + HEIGHT + 40.0,
            COLOURS[i % COLOURS.len()],
            x + 14.0,
            TOP + HEIGHT + 49.0,
            escape(&arm.title())
        );
    }
    for (g, model) in models.iter().enumerate() {
        let x0 = 40.0 + group * g as f64;
        for (i, arm) in arms.iter().enumerate() {
            let t = Tally::of(
                results
                    .runs
                    .iter()
                    .filter(|r| &r.model == model && arm.holds(r)),
            );
            let rate = if t.runs == 0 {
                0.0
            } else {
                f64::from(t.ok) / f64::from(t.runs)
            };
            let h = HEIGHT * rate;
            let x = x0 + BAR * i as f64;
            let _ = writeln!(
                svg,
                "<rect x=\"{x:.0}\" y=\"{:.1}\" width=\"{:.0}\" height=\"{h:.1}\" fill=\"{}\"/><text x=\"{:.0}\" y=\"{:.1}\" text-anchor=\"middle\">{}/{}</text>",
                TOP + HEIGHT - h,
                BAR - 4.0,
                COLOURS[i % COLOURS.len()],
                x + (BAR - 4.0) / 2.0,
                TOP + HEIGHT - h - 4.0,
                t.ok,
                t.runs
            );
        }
        let _ = writeln!(
            svg,
            "<text x=\"{:.0}\" y=\"{:.0}\" text-anchor=\"middle\">{}</text>",
            x0 + BAR * arms.len() as f64 / 2.0,
            TOP + HEIGHT + 18.0,
            escape(model)
        );
    }
    svg.push_str("</svg>\n");
    svg
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_intervals_match_known_values() {
        // Reference values: Wilson (1927), as computed by statsmodels' proportion_confint(k, n,
        // method="wilson") and R's prop.test(correct = FALSE).
        let close = |(low, high): (f64, f64), want: (f64, f64)| {
            assert!(
                (low - want.0).abs() < 5e-4 && (high - want.1).abs() < 5e-4,
                "got ({low:.4}, {high:.4}), want {want:?}"
            );
        };
        close(wilson(5, 10), (0.2366, 0.7634));
        close(wilson(27, 30), (0.7438, 0.9654));
        close(wilson(0, 10), (0.0, 0.2775));
        close(wilson(10, 10), (0.7225, 1.0));
        close(wilson(1, 1), (0.2065, 1.0));
        close(wilson(81, 263), (0.2553, 0.3662));
        assert_eq!(wilson(0, 0), (0.0, 1.0));
        assert_eq!(rate(27, 30), "27/30 90% [74–97]");
        assert_eq!(rate(0, 5), "0/5 0% [0–43]");
        assert_eq!(rate(0, 0), "—");
    }

    #[test]
    fn an_old_results_file_loads_as_unjudged() {
        let old = r#"{"suite": "eval/seed.yaml", "date": "2026-01-01", "interrupted": false, "runs": [
            {"model": "m", "mode": "declared", "case": "release", "language": "en", "run": 1,
             "prompt": "p", "ok": true, "seconds": 1.0, "calls": [], "recorded": [], "tokens": null,
             "answer": "done", "stop_reason": "done"}]}"#;
        let old: Results = serde_json::from_str(old).expect("an old file loads");
        assert!(!old.runs[0].judged);
        assert_eq!(old.runs[0].expects_call, None);
        let mut now = old.clone();
        now.runs[0].case = "seed/release".into();
        now.runs[0].judged = true;
        now.runs[0].expects_call = Some(true);
        now.runs[0].ok = false;
        let declared = Arm {
            mode: Mode::Declared,
            variant: None,
        };
        let text = compare(&old, &now, &[declared]);
        assert!(
            text.contains("| m | declared | 1/1* | 0/1 | — | — |"),
            "{text}"
        );
        assert!(text.contains("unjudged"), "{text}");
    }

    /// The `junk printed` column counts the runs whose printed answer was junk, whatever
    /// their failure class.
    #[test]
    fn junk_printed_counts_every_run_that_printed_junk() {
        let run = r#"{"model": "m", "mode": "declared", "case": "a/b", "language": "en", "run": 1,
             "prompt": "p", "ok": false, "judged": true, "expects_call": true,
             "failure": "wrong_args", "seconds": 1.0, "calls": [], "recorded": [],
             "tokens": null, "answer": "x", "stop_reason": "done"}"#;
        let run: RunRecord = serde_json::from_str(run).expect("a run loads");
        let mut printed = run.clone();
        printed.printed_junk = Some("copied_tool_output".into());
        let mut right = run.clone();
        right.ok = true;
        right.failure = None;
        let results = Results {
            runs: vec![run, printed, right],
            ..serde_json::from_str(
                r#"{"suite": "s", "date": "d", "interrupted": false, "runs": []}"#,
            )
            .expect("results load")
        };
        let declared = Arm {
            mode: Mode::Declared,
            variant: None,
        };
        let text = table(&results, &[declared]);
        let row = text
            .lines()
            .find(|l| l.starts_with("| m | declared |"))
            .unwrap_or_default();
        assert!(row.ends_with("| 0 | 2 | 0 | 0 | 1 |"), "{row}");
    }
}
