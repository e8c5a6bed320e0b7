//! Reasoning written inline: a reply that opens with `<think>…</think>` (Qwen3, DeepSeek-R1 and
//! their distillations, when the server does not split it into `reasoning_content`). The block is
//! routed to reasoning and kept out of the reply's text; what follows it is the text.

const OPEN: &str = "<think>";
const CLOSE: &str = "</think>";

/// Splits streamed content into reasoning and text.
#[derive(Debug, Default)]
pub(crate) struct ThinkSplitter {
    state: State,
    /// Content not yet routed: the start of the reply, or the possible start of `</think>`.
    pending: String,
    /// Some reasoning was routed (until then, newlines after `<think>` are dropped).
    reasoned: bool,
    /// Right after `</think>`: whitespace before the text is dropped.
    after_close: bool,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Nothing but whitespace seen yet.
    #[default]
    Start,
    Thinking,
    Text,
}

/// Where a piece of content goes.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Routed {
    pub reasoning: String,
    pub text: String,
}

impl ThinkSplitter {
    pub fn push(&mut self, piece: &str) -> Routed {
        let mut routed = Routed::default();
        if self.state == State::Text {
            let piece = if self.after_close {
                piece.trim_start()
            } else {
                piece
            };
            self.after_close &= piece.is_empty();
            routed.text.push_str(piece);
            return routed;
        }
        self.pending.push_str(piece);
        if self.state == State::Start {
            let start = self.pending.trim_start();
            if let Some(rest) = start.strip_prefix(OPEN) {
                self.pending = rest.to_owned();
                self.state = State::Thinking;
            } else if start.is_empty() || OPEN.starts_with(start) {
                return routed;
            } else {
                self.state = State::Text;
                routed.text = std::mem::take(&mut self.pending);
                return routed;
            }
        }
        // Thinking: everything up to `</think>` is reasoning; a possible partial tag waits.
        if !self.reasoned {
            self.pending = self.pending.trim_start_matches(['\r', '\n']).to_owned();
        }
        if let Some(at) = self.pending.find(CLOSE) {
            routed.reasoning = self.pending[..at].to_owned();
            routed.text = self.pending[at + CLOSE.len()..].trim_start().to_owned();
            self.after_close = routed.text.is_empty();
            self.pending.clear();
            self.state = State::Text;
            return routed;
        }
        let keep = (1..CLOSE.len())
            .rev()
            .find(|&n| self.pending.ends_with(&CLOSE[..n]))
            .unwrap_or(0);
        let cut = self.pending.len() - keep;
        routed.reasoning = self.pending[..cut].to_owned();
        self.pending.drain(..cut);
        self.reasoned |= !routed.reasoning.is_empty();
        routed
    }

    /// The end of the reply: whatever is still pending.
    pub fn finish(&mut self) -> Routed {
        let pending = std::mem::take(&mut self.pending);
        match self.state {
            // A reply cut inside its thinking (out of tokens) has no text.
            State::Thinking => Routed {
                reasoning: pending,
                text: String::new(),
            },
            _ => Routed {
                reasoning: String::new(),
                text: pending,
            },
        }
    }
}

/// Drops a leading reasoning block whose `<think>` was in the prompt (some templates open it
/// for the model): text before a lone `</think>`.
pub(crate) fn strip_unopened(text: &str) -> &str {
    match text.find(CLOSE) {
        Some(at) if !text[..at].contains(OPEN) => text[at + CLOSE.len()..].trim_start(),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(chunks: &[&str]) -> (String, String) {
        let mut splitter = ThinkSplitter::default();
        let (mut reasoning, mut text) = (String::new(), String::new());
        for chunk in chunks.iter().copied() {
            let routed = splitter.push(chunk);
            reasoning.push_str(&routed.reasoning);
            text.push_str(&routed.text);
        }
        let routed = splitter.finish();
        reasoning.push_str(&routed.reasoning);
        text.push_str(&routed.text);
        (reasoning, text)
    }

    #[test]
    fn splits_a_leading_think_block_at_any_chunking() {
        let whole = "<think>\nI should list.\n</think>\n\nHere it is.";
        for cut in 0..=whole.len() {
            let (a, b) = whole.split_at(cut);
            assert_eq!(
                split(&[a, b]),
                ("I should list.\n".into(), "Here it is.".into()),
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn text_without_think_is_untouched() {
        assert_eq!(
            split(&["Hello", " <think> is a tag"]),
            (String::new(), "Hello <think> is a tag".into())
        );
        assert_eq!(split(&["<th", "ing>"]), (String::new(), "<thing>".into()));
        assert_eq!(split(&["  "]), (String::new(), "  ".into()));
    }

    #[test]
    fn a_reply_cut_while_thinking_has_no_text() {
        assert_eq!(
            split(&["<think>hmm", " </thi"]),
            ("hmm </thi".into(), String::new())
        );
    }

    #[test]
    fn unopened_block_is_dropped_from_the_final_text() {
        assert_eq!(strip_unopened("reasoning here</think>\nAnswer"), "Answer");
        assert_eq!(strip_unopened("Answer"), "Answer");
        assert_eq!(strip_unopened("<think>a</think>b"), "<think>a</think>b");
    }
}
