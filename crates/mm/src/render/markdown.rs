//! The model's Markdown, styled for a terminal as it streams: headings and `**bold**` in
//! bold, `` `code` `` and fenced code blocks in colour, list bullets as `•`, quotes behind a
//! bar, rules as a line. Nothing is ever redrawn: a character is written once, in its style,
//! so wrapped lines and slow streams look the same as fast ones. The price is a small hold:
//! the start of a line waits until it is clear whether it is a marker (`#`, `-`, `` ``` ``,
//! …), and a `*` or `` ` `` waits for the next character.
//!
//! Everything the model wrote goes through [`escape::block`]; only mm's own SGR sequences
//! reach the terminal raw. Italics, links, tables and HTML are shown as written.

use super::escape;

const BOLD: &str = "\x1b[1m";
const DIM: &str = "\x1b[2m";
const CODE: &str = "\x1b[36m";
const HEADING: &str = "\x1b[1;35m";
const RESET: &str = "\x1b[0m";

/// A streaming Markdown styler; one per reply.
#[derive(Debug, Default)]
pub struct Markdown {
    /// Held at the start of a line: possibly a marker.
    head: Option<String>,
    /// A `*` or `` ` `` waiting for the next character.
    pending: Option<char>,
    in_fence: bool,
    /// Styles open on this line.
    heading: bool,
    bold: bool,
    code: bool,
    /// The line is a fence line (its text is shown dim, in full).
    fence_line: bool,
    started: bool,
    /// A `\r` that may be the start of a `\r\n`.
    cr: bool,
    /// An SGR style of ours is in force on the terminal.
    open: bool,
}

/// What the start of a line turned out to be.
enum Head {
    /// Could still be a marker: hold on.
    Undecided,
    /// Plain text: write it as it is.
    Text,
    /// A marker: replace it with this text; the rest of the line follows. `true`: the text
    /// leaves a style open for the rest of the line.
    Marker(String, bool),
}

impl Markdown {
    /// The styled text for `text`, a piece of the reply.
    pub fn push(&mut self, text: &str) -> String {
        let mut out = String::new();
        for c in text.chars() {
            self.char(c, &mut out);
        }
        out
    }

    /// What is still held, and the styles closed: the reply has ended.
    pub fn finish(&mut self) -> String {
        let mut out = String::new();
        if std::mem::take(&mut self.cr) {
            self.char_now('\r', &mut out);
        }
        if let Some(head) = self.head.take() {
            // A line that never ended: its start was not a marker after all (or a fence).
            self.literal(&head, &mut out);
        }
        if let Some(c) = self.pending.take() {
            self.literal(&c.to_string(), &mut out);
        }
        if self.open {
            out.push_str(RESET);
        }
        *self = Self::default();
        out
    }

    fn char(&mut self, c: char, out: &mut String) {
        if std::mem::take(&mut self.cr) && c != '\n' {
            self.char_now('\r', out);
        }
        if c == '\r' {
            self.cr = true;
            return;
        }
        self.char_now(c, out);
    }

    fn char_now(&mut self, c: char, out: &mut String) {
        if !self.started {
            self.started = true;
            self.head = Some(String::new());
        }
        if c == '\n' {
            self.end_line(out);
            return;
        }
        if let Some(head) = &mut self.head {
            head.push(c);
            let head = head.clone();
            match self.classify(&head) {
                Head::Undecided => {}
                Head::Text => {
                    self.head = None;
                    if self.in_fence {
                        self.style(CODE, out);
                        self.literal(&head, out);
                    } else {
                        for c in head.chars() {
                            self.inline(c, out);
                        }
                    }
                }
                Head::Marker(marker, opens) => {
                    self.head = None;
                    self.open |= opens;
                    out.push_str(&marker);
                }
            }
            return;
        }
        if self.in_fence || self.fence_line {
            self.literal(&c.to_string(), out);
        } else {
            self.inline(c, out);
        }
    }

    fn classify(&mut self, head: &str) -> Head {
        let trimmed = head.trim_start_matches(' ');
        let indent = &head[..head.len() - trimmed.len()];
        if trimmed.is_empty() {
            return Head::Undecided;
        }
        if "```".starts_with(trimmed) || "~~~".starts_with(trimmed) {
            return Head::Undecided;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            // A fence: the rest of the line (the language) is shown dim with it.
            self.in_fence = !self.in_fence;
            self.fence_line = true;
            return Head::Marker(format!("{DIM}{}", escape::block(head)), true);
        }
        if self.in_fence {
            return Head::Text;
        }
        let hashes = trimmed.chars().take_while(|&c| c == '#').count();
        if hashes == trimmed.len() && hashes <= 6 {
            return Head::Undecided;
        }
        if (1..=6).contains(&hashes) && trimmed[hashes..].starts_with(' ') {
            self.heading = true;
            return Head::Marker(format!("{indent}{HEADING}"), true);
        }
        if let Some(marker) = trimmed
            .chars()
            .next()
            .filter(|c| matches!(c, '-' | '*' | '+'))
        {
            let rest = &trimmed[1..];
            if rest.is_empty() {
                return Head::Undecided;
            }
            if rest.starts_with(' ') {
                return Head::Marker(format!("{indent}• "), false);
            }
            // `---`, `***`: a rule, once the line ends (held until then).
            if rest.chars().all(|c| c == marker || c == ' ') {
                return Head::Undecided;
            }
            return Head::Text;
        }
        match trimmed.strip_prefix('>') {
            Some("") => return Head::Undecided,
            Some(" ") => return Head::Marker(format!("{indent}{DIM}│{RESET} "), false),
            _ => {}
        }
        Head::Text
    }

    fn inline(&mut self, c: char, out: &mut String) {
        match (self.pending.take(), c) {
            (Some('*'), '*') if !self.code => {
                self.bold = !self.bold;
                if self.bold {
                    self.style(BOLD, out);
                } else {
                    self.reset(out);
                    self.restyle(out);
                }
            }
            (Some(p), c) => {
                self.literal(&p.to_string(), out);
                self.inline(c, out);
            }
            (None, '*') if !self.code => self.pending = Some('*'),
            (None, '`') => {
                self.code = !self.code;
                if self.code {
                    self.style(CODE, out);
                } else {
                    self.reset(out);
                    self.restyle(out);
                }
            }
            (None, c) => self.literal(&c.to_string(), out),
        }
    }

    /// After a reset inside a line: the styles still open.
    fn restyle(&mut self, out: &mut String) {
        if self.heading {
            self.style(HEADING, out);
        }
        if self.bold {
            self.style(BOLD, out);
        }
    }

    fn style(&mut self, sgr: &str, out: &mut String) {
        out.push_str(sgr);
        self.open = true;
    }

    fn reset(&mut self, out: &mut String) {
        out.push_str(RESET);
        self.open = false;
    }

    fn end_line(&mut self, out: &mut String) {
        if let Some(head) = self.head.take() {
            let trimmed = head.trim();
            let marks: String = trimmed.chars().filter(|c| *c != ' ').collect();
            let is_rule = marks.len() >= 3
                && ['-', '*', '_']
                    .iter()
                    .any(|m| marks.chars().all(|c| c == *m));
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                // A fence alone on its line (the classifier waits for more than three).
                self.in_fence = !self.in_fence;
                self.style(DIM, out);
                self.literal(&head, out);
            } else if is_rule && !self.in_fence {
                self.style(DIM, out);
                out.push_str(&"─".repeat(40));
            } else if self.in_fence && !head.is_empty() {
                self.style(CODE, out);
                self.literal(&head, out);
            } else {
                for c in head.chars() {
                    self.inline(c, out);
                }
            }
        }
        if let Some(c) = self.pending.take() {
            self.literal(&c.to_string(), out);
        }
        // Styles end with the line: a stray `**` does not bold the rest of the reply.
        self.heading = false;
        self.bold = false;
        self.code = false;
        self.fence_line = false;
        if self.open {
            self.reset(out);
        }
        out.push('\n');
        self.head = Some(String::new());
    }

    fn literal(&self, text: &str, out: &mut String) {
        out.push_str(&escape::block(text));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Renders `text` streamed one character at a time, and all at once: both the same.
    fn render(text: &str) -> String {
        let mut md = Markdown::default();
        let mut one = String::new();
        for c in text.chars() {
            one.push_str(&md.push(&c.to_string()));
        }
        one.push_str(&md.finish());
        let mut whole = md.push(text);
        whole.push_str(&md.finish());
        assert_eq!(one, whole, "streamed and whole differ for {text:?}");
        one
    }

    /// SGR sequences shown as tags, for readable expectations.
    fn tags(styled: &str) -> String {
        styled
            .replace(HEADING, "<h>")
            .replace(BOLD, "<b>")
            .replace(DIM, "<d>")
            .replace(CODE, "<c>")
            .replace(RESET, "</>")
    }

    #[test]
    fn markdown_is_styled() {
        let cases = [
            ("plain text\n", "plain text\n"),
            ("# Title\nbody\n", "<h>Title</>\nbody\n"),
            ("## A **b**\n", "<h>A <b>b</><h></>\n"),
            ("a **bold** word\n", "a <b>bold</> word\n"),
            ("use `ls -la` here\n", "use <c>ls -la</> here\n"),
            ("- one\n- two\n", "• one\n• two\n"),
            ("  * nested\n", "  • nested\n"),
            ("1. first\n", "1. first\n"),
            ("> quoted\n", "<d>│</> quoted\n"),
            ("a\r\nb\rc\n", "a\nb\\rc\n"),
            ("---\n", "<d>────────────────────────────────────────</>\n"),
            ("2 * 3 = 6\n", "2 * 3 = 6\n"),
            ("-x\n", "-x\n"),
            ("#hashtag\n", "#hashtag\n"),
            (
                "```rust\nlet x = 1;\n```\nafter\n",
                "<d>```rust</>\n<c>let x = 1;</>\n<d>```</>\nafter\n",
            ),
            // Inside a fence nothing is Markdown.
            (
                "```\n# not **a** heading\n```\n",
                "<d>```</>\n<c># not **a** heading</>\n<d>```</>\n",
            ),
            // A stray `**` ends with its line.
            ("a **b\nc\n", "a <b>b</>\nc\n"),
            // No final newline: held text is written at the end.
            ("-", "-"),
            ("end *", "end *"),
        ];
        for (text, want) in cases {
            assert_eq!(tags(&render(text)), want, "{text:?}");
        }
    }

    #[test]
    fn model_text_is_escaped_and_mm_styles_are_not() {
        let out = render("**x\x1b[2J**\n# \x1b]0;title\x07\n");
        assert_eq!(tags(&out), "<b>x\\x1b[2J</>\n<h>\\x1b]0;title\\x07</>\n");
    }
}
