//! Interactive mode's screen (stdout): the model's reply as it streams (Markdown styled), each
//! tool call with its output (long output collapsed to its head and tail), and a status line
//! while mm waits — for the model (elapsed time, tokens and tokens/s) or for a tool.
//!
//! The status line is drawn only where it cannot damage anything: at the start of an empty
//! line, and it is erased (`\r` + clear line) before anything else is written. Nothing else is
//! ever redrawn. Everything the model, a tool or a server wrote goes through [`escape`].

use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use mm_core::{Event, EventSink};
use serde_json::Value;

use super::escape;
use super::markdown::Markdown;

/// Lines of a tool's output shown as they come; the rest is counted and only its last
/// [`TAIL_LINES`] are shown once the tool has ended.
const HEAD_LINES: usize = 12;
const TAIL_LINES: usize = 4;
/// A call's arguments are cut to this many characters on its line.
const CALL_WIDTH: usize = 300;
const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const TICK: Duration = Duration::from_millis(100);

const DIM: &str = "\x1b[2m";
const BOLD: &str = "\x1b[1m";
const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const YELLOW: &str = "\x1b[33m";
const CYAN: &str = "\x1b[36m";
const RESET: &str = "\x1b[0m";

/// The screen of an interactive session.
pub struct Live {
    color: bool,
    /// Draw the status line (stdout is a terminal).
    status: bool,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    at_line_start: bool,
    status_drawn: bool,
    /// A consent dialog is up: no status line.
    paused: bool,
    phase: Phase,
    frame: usize,
    model: String,
    markdown: Markdown,
    /// Text deltas of the current reply were shown.
    streamed: bool,
    clock: Clock,
    tools: HashMap<String, ToolView>,
}

#[derive(Default, Clone)]
enum Phase {
    #[default]
    Idle,
    /// The request is out; nothing came back yet.
    Waiting(Instant),
    /// Reasoning tokens are coming (not shown, counted).
    Thinking(Instant),
    /// The reply's text is coming.
    Writing(Instant),
    /// A tool runs; with its last progress report (MCP), as shown.
    Tool(String, Instant, Option<String>),
}

/// The turn's timing, for tokens/s.
#[derive(Default)]
struct Clock {
    started: Option<Instant>,
    /// Since when a reply is awaited (request out, or the last tool result sent).
    reply_since: Option<Instant>,
    /// Time spent waiting for and receiving replies.
    model_time: Duration,
    /// The first delta of the running reply.
    first_delta: Option<Instant>,
    /// Time from each reply's first delta to its end: generating, not reading the prompt.
    generating: Duration,
    /// Deltas received (a server sends about one token each).
    tokens: u64,
}

impl Clock {
    fn delta(&mut self) {
        self.tokens += 1;
        self.first_delta.get_or_insert_with(Instant::now);
    }

    fn reply_ended(&mut self) {
        if let Some(since) = self.reply_since.take() {
            self.model_time += since.elapsed();
        }
        if let Some(first) = self.first_delta.take() {
            self.generating += first.elapsed();
        }
    }

    /// Tokens per second of generation so far (the running reply included), from the deltas
    /// and the time from each reply's first delta to its end: reading a long prompt does not
    /// make a model look slow. Replies that came whole (no stream) give `tokens` over the
    /// time waited for them.
    fn rate(&self, tokens: u64) -> f64 {
        let running = self.first_delta.map_or(Duration::ZERO, |s| s.elapsed());
        let generating = (self.generating + running).as_secs_f64();
        if generating >= 0.05 && self.tokens > 0 {
            return self.tokens as f64 / generating;
        }
        let waiting = self.reply_since.map_or(Duration::ZERO, |s| s.elapsed());
        let secs = (self.model_time + waiting).as_secs_f64();
        if secs > 0.0 {
            tokens as f64 / secs
        } else {
            0.0
        }
    }
}

/// A running call's output on screen.
#[derive(Default)]
struct ToolView {
    stream: escape::Stream,
    partial: String,
    shown: usize,
    hidden: usize,
    tail: VecDeque<String>,
    echoed: bool,
}

impl Live {
    pub fn new(color: bool, status: bool) -> Arc<Self> {
        Arc::new(Self {
            color,
            status,
            state: Mutex::new(State {
                at_line_start: true,
                ..State::default()
            }),
        })
    }

    pub fn color(&self) -> bool {
        self.color
    }

    /// The event sink that draws on this screen.
    pub fn sink(self: &Arc<Self>) -> EventSink {
        let live = self.clone();
        Arc::new(move |event: &Event| live.event(event))
    }

    /// A turn starts: the request to `model` is out.
    pub fn begin_turn(&self, model: &str) {
        let mut st = self.lock();
        let now = Instant::now();
        st.model = model.to_string();
        st.phase = Phase::Waiting(now);
        st.clock = Clock {
            started: Some(now),
            reply_since: Some(now),
            ..Clock::default()
        };
        st.tools.clear();
    }

    /// The turn ended: what is held is written, then `note` (why it stopped, when it did not
    /// end with an answer), then a line with the time and the speed (`tokens`: what the
    /// server counted, when it did).
    pub fn end_turn(&self, tokens: Option<u64>, note: Option<&str>) {
        let mut st = self.lock();
        let rest = st.markdown.finish();
        self.write(&mut st, &rest);
        self.line_start(&mut st);
        if let Some(note) = note {
            self.write(&mut st, &format!("{note}\n"));
        }
        st.clock.reply_ended();
        st.phase = Phase::Idle;
        let Some(started) = st.clock.started.take() else {
            return;
        };
        let tokens = tokens.filter(|&t| t > 0).unwrap_or(st.clock.tokens);
        let mut summary = format!("{:.1}s", started.elapsed().as_secs_f64());
        if tokens > 0 {
            summary.push_str(&format!(
                " · {tokens} tokens · {:.1} tok/s",
                st.clock.rate(tokens)
            ));
        }
        let text = self.paint(DIM, &summary);
        self.write(&mut st, &format!("{text}\n"));
    }

    /// Draws the status line every tick while a turn runs; abort the task to stop.
    pub fn spawn_ticker(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let live = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(TICK);
            loop {
                tick.tick().await;
                live.draw_status();
            }
        })
    }

    /// A dialog takes the screen: the status line goes, the cursor is at a line's start.
    pub fn pause(&self) {
        let mut st = self.lock();
        st.paused = true;
        let rest = st.markdown.finish();
        self.write(&mut st, &rest);
        self.line_start(&mut st);
    }

    pub fn resume(&self) {
        let mut st = self.lock();
        st.paused = false;
        // A tool's time on screen is its run's, not the user's thinking in the dialog.
        if let Phase::Tool(_, since, _) = &mut st.phase {
            *since = Instant::now();
        }
    }

    /// Writes mm's own text (already escaped where it needs to be) on a line of its own.
    pub fn say(&self, text: &str) {
        let mut st = self.lock();
        self.line_start(&mut st);
        self.write(&mut st, text);
        self.line_start(&mut st);
    }

    /// `text` dim, when there are colours.
    pub fn paint(&self, style: &str, text: &str) -> String {
        if self.color {
            format!("{style}{text}{RESET}")
        } else {
            text.to_string()
        }
    }

    pub fn dim(&self, text: &str) -> String {
        self.paint(DIM, text)
    }

    pub fn event(&self, event: &Event) {
        let mut st = self.lock();
        match event {
            Event::TextDelta { text } => {
                st.clock.delta();
                if !matches!(st.phase, Phase::Writing(_)) {
                    st.phase = Phase::Writing(Instant::now());
                }
                st.streamed = true;
                let shown = self.prose(&mut st, text);
                self.write(&mut st, &shown);
            }
            Event::ReasoningDelta { .. } => {
                st.clock.delta();
                if !matches!(st.phase, Phase::Thinking(_)) {
                    st.phase = Phase::Thinking(Instant::now());
                }
            }
            Event::AssistantMessage { text, is_final } => {
                let mut shown = if st.streamed {
                    String::new()
                } else {
                    self.prose(&mut st, text)
                };
                shown.push_str(&st.markdown.finish());
                self.write(&mut st, &shown);
                self.line_start(&mut st);
                st.streamed = false;
                st.clock.reply_ended();
                st.phase = if *is_final {
                    Phase::Idle
                } else {
                    Phase::Waiting(Instant::now())
                };
            }
            Event::ToolCall {
                id,
                name,
                arguments,
                sandbox,
            } => self.tool_call(&mut st, id, name, arguments, sandbox.as_deref()),
            Event::ToolOutput { id, chunk } => {
                let lines = match st.tools.get_mut(id) {
                    Some(view) => view.push(chunk),
                    None => return,
                };
                let text = self.output_lines(&lines);
                self.write(&mut st, &text);
            }
            Event::ToolResult {
                id,
                ok,
                exit_code,
                content,
                duration_ms,
                ..
            } => self.tool_result(&mut st, id, *ok, *exit_code, content, *duration_ms),
            Event::ToolProgress { progress, .. } => {
                if let Phase::Tool(_, _, shown) = &mut st.phase {
                    let mut text = match progress.total.filter(|t| *t > 0.0) {
                        Some(total) => format!("{:.0}%", 100.0 * progress.progress / total),
                        None => format!("{}", progress.progress),
                    };
                    if let Some(message) = &progress.message {
                        text.push(' ');
                        text.push_str(&escape::line(message));
                    }
                    *shown = Some(text);
                }
            }
            Event::Warning { message } => {
                // A reply streamed so far and then not taken as the answer (the turn loop warns
                // when it asks again): it ends here, so the next message is drawn in full.
                if st.streamed {
                    let rest = st.markdown.finish();
                    self.write(&mut st, &rest);
                    st.streamed = false;
                }
                self.line_start(&mut st);
                let text = format!(
                    "{} {}\n",
                    self.paint(YELLOW, "mm: warning:"),
                    escape::line(message)
                );
                self.write(&mut st, &text);
            }
            Event::Retry {
                attempt,
                delay_ms,
                error,
            } => {
                self.line_start(&mut st);
                let text = format!(
                    "{}\n",
                    self.paint(
                        YELLOW,
                        &format!(
                            "mm: {} (retry {attempt} in {:.1}s)",
                            escape::line(error),
                            *delay_ms as f64 / 1000.0
                        )
                    )
                );
                self.write(&mut st, &text);
            }
            _ => {}
        }
    }

    /// A call: the reply so far ends, and the call's line is drawn (with the sandbox's marker).
    fn tool_call(
        &self,
        st: &mut State,
        id: &str,
        name: &str,
        arguments: &str,
        sandbox: Option<&str>,
    ) {
        let rest = st.markdown.finish();
        self.write(st, &rest);
        self.line_start(st);
        st.streamed = false;
        st.clock.reply_ended();
        let marker = sandbox
            .map(|mode| {
                let text = format!("[sandboxed: {}]", escape::line(mode));
                format!("  {}", self.paint(DIM, &text))
            })
            .unwrap_or_default();
        let line = format!(
            "{} {} {}{marker}\n",
            self.paint(CYAN, "●"),
            self.paint(BOLD, &escape::line(name)),
            call_summary(name, arguments)
        );
        self.write(st, &line);
        st.tools.insert(id.to_string(), ToolView::default());
        st.phase = Phase::Tool(name.to_string(), Instant::now(), None);
    }

    /// A call's end: the rest of its output (head, an elision, the tail) and how it ended.
    fn tool_result(
        &self,
        st: &mut State,
        id: &str,
        ok: bool,
        exit_code: Option<i32>,
        content: &str,
        duration_ms: u64,
    ) {
        // The pipeline's time: the run's, not the dialog's.
        let took = Duration::from_millis(duration_ms);
        let mut view = st.tools.remove(id).unwrap_or_default();
        let mut lines = view.finish();
        if !view.echoed && !content.is_empty() {
            // Not a process (a file tool, a refusal): its result is what it said.
            for line in escape::block(content.trim_end()).lines() {
                lines.extend(view.line(line.to_string()));
            }
        }
        let mut text = self.output_lines(&lines);
        if view.hidden > 0 {
            let elided = view.hidden - view.tail.len();
            if elided > 0 {
                let note = format!("… {elided} more lines …");
                text.push_str(&self.output_lines(&[note]));
            }
            let tail: Vec<String> = view.tail.drain(..).collect();
            text.push_str(&self.output_lines(&tail));
        }
        let how = match (ok, exit_code) {
            (true, _) => self.paint(GREEN, "ok"),
            (false, Some(code)) => self.paint(RED, &format!("exit code {code}")),
            (false, None) => self.paint(RED, "not ok"),
        };
        let took = self.dim(&format!("· {}", duration(took)));
        text.push_str(&format!("  {} {how} {took}\n", self.dim("└")));
        self.write(st, &text);
        st.clock.reply_since = Some(Instant::now());
        st.phase = Phase::Waiting(Instant::now());
    }

    /// The model's prose: Markdown styled with colours, else as written (escaped).
    fn prose(&self, st: &mut State, text: &str) -> String {
        if self.color {
            st.markdown.push(text)
        } else {
            escape::block(text).into_owned()
        }
    }

    fn output_lines(&self, lines: &[String]) -> String {
        let bar = self.dim("│");
        lines.iter().map(|l| format!("  {bar} {l}\n")).collect()
    }

    fn draw_status(&self) {
        if !self.status {
            return;
        }
        let mut st = self.lock();
        if st.paused || !st.at_line_start {
            return;
        }
        let label = match &st.phase {
            Phase::Idle => return,
            Phase::Waiting(since) => {
                format!("waiting for {} · {}", escape::line(&st.model), secs(*since))
            }
            Phase::Thinking(since) | Phase::Writing(since) => {
                let what = if matches!(st.phase, Phase::Thinking(_)) {
                    "thinking"
                } else {
                    "writing"
                };
                format!(
                    "{what} · {} · {} tokens · {:.1} tok/s",
                    secs(*since),
                    st.clock.tokens,
                    st.clock.rate(st.clock.tokens)
                )
            }
            Phase::Tool(name, since, progress) => {
                let progress = progress
                    .as_deref()
                    .map(|p| format!(" · {p}"))
                    .unwrap_or_default();
                format!(
                    "running {} · {}{progress} · Ctrl-C cancels",
                    escape::line(name),
                    secs(*since)
                )
            }
        };
        st.frame = (st.frame + 1) % SPINNER.len();
        let text = format!(
            "\r\x1b[2K{}",
            self.dim(&format!("{} {label}", SPINNER[st.frame]))
        );
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
        st.status_drawn = true;
    }

    /// Writes `text`, erasing the status line first.
    fn write(&self, st: &mut State, text: &str) {
        if text.is_empty() {
            return;
        }
        let mut out = std::io::stdout().lock();
        if std::mem::take(&mut st.status_drawn) {
            let _ = out.write_all(b"\r\x1b[2K");
        }
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
        st.at_line_start = ends_a_line(text);
    }

    /// Ends the current line if something is on it.
    fn line_start(&self, st: &mut State) {
        if !st.at_line_start {
            self.write(st, "\n");
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl ToolView {
    /// The lines to show now for a chunk of output.
    fn push(&mut self, chunk: &[u8]) -> Vec<String> {
        self.echoed = true;
        let text = self.stream.push(chunk);
        self.partial.push_str(&text);
        let mut shown = Vec::new();
        while let Some(at) = self.partial.find('\n') {
            let line: String = self.partial.drain(..=at).collect();
            let line = line.trim_end_matches(['\n', '\r']).to_string();
            shown.extend(self.line(line));
        }
        shown
    }

    /// The last, unfinished line.
    fn finish(&mut self) -> Vec<String> {
        let rest = self.stream.finish();
        self.partial.push_str(&rest);
        let line = std::mem::take(&mut self.partial);
        if line.is_empty() {
            Vec::new()
        } else {
            self.line(line).into_iter().collect()
        }
    }

    /// A complete line: shown while within the head, else kept for the tail.
    fn line(&mut self, line: String) -> Option<String> {
        if self.shown < HEAD_LINES {
            self.shown += 1;
            return Some(line);
        }
        self.hidden += 1;
        self.tail.push_back(line);
        if self.tail.len() > TAIL_LINES {
            self.tail.pop_front();
        }
        None
    }
}

/// Whether `text` leaves the cursor at the start of a line: it ends in a newline, maybe
/// followed by SGR sequences (`\x1b[…m`, which move nothing).
fn ends_a_line(text: &str) -> bool {
    let mut rest = text;
    while let Some(cut) = rest.strip_suffix('m') {
        match cut.rfind("\x1b[") {
            Some(at)
                if cut[at + 2..]
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == ';') =>
            {
                rest = &cut[..at];
            }
            _ => break,
        }
    }
    rest.ends_with('\n')
}

/// What a call line shows after the tool's name: a `bash` command line as it is, other
/// arguments as compact JSON; escaped and cut to [`CALL_WIDTH`] characters.
fn call_summary(name: &str, arguments: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(arguments).ok();
    let text = match (name, &parsed) {
        ("bash", Some(Value::Object(map))) => match map.get("command") {
            Some(Value::String(command)) => command.clone(),
            _ => arguments.to_string(),
        },
        (_, Some(value)) => value.to_string(),
        (_, None) => arguments.to_string(),
    };
    let text = escape::line(&text);
    if text.chars().count() > CALL_WIDTH {
        let cut: String = text.chars().take(CALL_WIDTH - 1).collect();
        format!("{cut}…")
    } else {
        text.into_owned()
    }
}

fn secs(since: Instant) -> String {
    format!("{:.1}s", since.elapsed().as_secs_f64())
}

fn duration(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{} ms", d.as_millis())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_output_keeps_its_head_and_tail() {
        let mut view = ToolView::default();
        let mut shown = Vec::new();
        let text: String = (1..=30).map(|n| format!("line {n}\n")).collect();
        // Split inside a line: held until it is complete.
        let (a, b) = text.as_bytes().split_at(17);
        shown.extend(view.push(a));
        shown.extend(view.push(b));
        shown.extend(view.finish());
        assert_eq!(shown.len(), HEAD_LINES);
        assert_eq!(shown[0], "line 1");
        assert_eq!(shown[HEAD_LINES - 1], "line 12");
        assert_eq!(view.hidden, 18);
        assert_eq!(
            view.tail.iter().cloned().collect::<Vec<_>>(),
            ["line 27", "line 28", "line 29", "line 30"]
        );
    }

    #[test]
    fn styles_after_a_newline_still_end_the_line() {
        assert!(ends_a_line("x\n"));
        assert!(ends_a_line("\x1b[2mx\n\x1b[0m"));
        assert!(ends_a_line("x\n\x1b[1;35m\x1b[0m"));
        assert!(!ends_a_line("x\x1b[0m"));
        assert!(!ends_a_line("x\nsum"));
        assert!(!ends_a_line(""));
    }

    #[test]
    fn output_is_escaped() {
        let mut view = ToolView::default();
        let shown = view.push(b"red\x1b[31m\r\nok\n");
        assert_eq!(shown, ["red\\x1b[31m", "ok"]);
    }

    #[test]
    fn calls_show_the_command_line_or_the_arguments() {
        assert_eq!(
            call_summary("bash", r#"{"command":"git status\u001b[2K","timeout":5}"#),
            "git status\\x1b[2K"
        );
        assert_eq!(
            call_summary("read_file", r#"{ "path": "a.txt" }"#),
            r#"{"path":"a.txt"}"#
        );
        assert_eq!(call_summary("x", "not json\n"), "not json\\n");
        let long = format!(r#"{{"command":"{}"}}"#, "a".repeat(400));
        assert_eq!(call_summary("bash", &long).chars().count(), CALL_WIDTH);
    }
}
