//! What an eval prints and writes: the seed-style table (successes/runs and mean seconds per
//! model × mode, then per case and language), the JSON of every run, an SVG chart, and the
//! comparison with an earlier JSON.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::suite::Mode;

/// One run, as written to the JSON file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRecord {
    pub model: String,
    pub mode: Mode,
    pub case: String,
    pub language: String,
    /// 1-based, per case and language.
    pub run: u32,
    pub prompt: String,
    pub ok: bool,
    pub seconds: f64,
    /// The tool calls mm reported (`--output-format json`).
    pub calls: Value,
    /// What the recording wrapper wrote: `{"program", "argv"}` per program run.
    pub recorded: Vec<Value>,
    pub tokens: Value,
    pub answer: String,
    pub stop_reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The JSON file of an eval.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Results {
    pub suite: String,
    pub date: String,
    /// Whether the eval was stopped before every run was done (Ctrl-C).
    pub interrupted: bool,
    pub runs: Vec<RunRecord>,
}

#[derive(Default, Clone, Copy)]
struct Tally {
    ok: u32,
    runs: u32,
    seconds: f64,
}

impl Tally {
    fn add(&mut self, run: &RunRecord) {
        self.runs += 1;
        self.ok += u32::from(run.ok);
        self.seconds += run.seconds;
    }
    fn cell(self) -> String {
        if self.runs == 0 {
            return "—".into();
        }
        format!(
            "{}/{} ({:.1} s)",
            self.ok,
            self.runs,
            self.seconds / f64::from(self.runs)
        )
    }
}

fn tally<'a>(runs: impl Iterator<Item = &'a RunRecord>) -> Tally {
    let mut t = Tally::default();
    for run in runs {
        t.add(run);
    }
    t
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
pub fn table(results: &Results, modes: &[Mode]) -> String {
    let runs = &results.runs;
    let models = distinct(runs.iter().map(|r| r.model.clone()));
    let mut text = String::new();
    let header = |text: &mut String, first: &[&str]| {
        let mut cols: Vec<&str> = first.to_vec();
        cols.extend(modes.iter().map(|m| m.title()));
        let _ = writeln!(text, "| {} |", cols.join(" | "));
        let _ = writeln!(text, "|{}", "---|".repeat(cols.len()));
    };
    header(&mut text, &["model"]);
    for model in &models {
        let cells: Vec<String> = modes
            .iter()
            .map(|mode| tally(runs.iter().filter(|r| &r.model == model && r.mode == *mode)).cell())
            .collect();
        let _ = writeln!(text, "| {model} | {} |", cells.join(" | "));
    }
    text.push('\n');
    header(&mut text, &["model", "case", "language"]);
    for model in &models {
        let cases = distinct(
            runs.iter()
                .filter(|r| &r.model == model)
                .map(|r| r.case.clone()),
        );
        for case in &cases {
            let languages = distinct(
                runs.iter()
                    .filter(|r| &r.model == model && &r.case == case)
                    .map(|r| r.language.clone()),
            );
            for language in &languages {
                let cells: Vec<String> = modes
                    .iter()
                    .map(|mode| {
                        tally(runs.iter().filter(|r| {
                            &r.model == model
                                && r.mode == *mode
                                && &r.case == case
                                && &r.language == language
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

/// What changed since `old`: per model and mode, successes and mean seconds before and now.
pub fn compare(old: &Results, new: &Results, modes: &[Mode]) -> String {
    let mut text = String::from("| model | mode | before | now |\n|---|---|---|---|\n");
    let models = distinct(new.runs.iter().chain(&old.runs).map(|r| r.model.clone()));
    for model in &models {
        for mode in modes {
            let pick = |results: &Results| {
                tally(
                    results
                        .runs
                        .iter()
                        .filter(|r| &r.model == model && r.mode == *mode),
                )
            };
            let (before, now) = (pick(old), pick(new));
            if before.runs == 0 && now.runs == 0 {
                continue;
            }
            let _ = writeln!(
                text,
                "| {model} | {} | {} | {} |",
                mode.title(),
                before.cell(),
                now.cell()
            );
        }
    }
    text
}

/// A bar chart of the success rate per model and mode.
pub fn svg(results: &Results, modes: &[Mode]) -> String {
    const BAR: f64 = 36.0;
    const GAP: f64 = 28.0;
    const HEIGHT: f64 = 200.0;
    const TOP: f64 = 40.0;
    const COLOURS: [&str; 3] = ["#4e79a7", "#f28e2b", "#59a14f"];
    let models = distinct(results.runs.iter().map(|r| r.model.clone()));
    let group = BAR * modes.len() as f64 + GAP;
    let width = 60.0 + group * models.len().max(1) as f64;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{:.0}\" font-family=\"sans-serif\" font-size=\"11\">\n",
        TOP + HEIGHT + 60.0
    );
    let _ = writeln!(
        svg,
        "<text x=\"10\" y=\"20\" font-size=\"13\">{}: calls with exactly the expected arguments</text>",
        escape(&results.suite)
    );
    for (i, mode) in modes.iter().enumerate() {
        let x = 10.0 + 110.0 * i as f64;
        let _ = writeln!(
            svg,
            "<rect x=\"{x:.0}\" y=\"{:.0}\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{:.0}\" y=\"{:.0}\">{}</text>",
            TOP + HEIGHT + 40.0,
            COLOURS[i % COLOURS.len()],
            x + 14.0,
            TOP + HEIGHT + 49.0,
            escape(mode.title())
        );
    }
    for (g, model) in models.iter().enumerate() {
        let x0 = 40.0 + group * g as f64;
        for (i, mode) in modes.iter().enumerate() {
            let t = tally(
                results
                    .runs
                    .iter()
                    .filter(|r| &r.model == model && r.mode == *mode),
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
            x0 + BAR * modes.len() as f64 / 2.0,
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
