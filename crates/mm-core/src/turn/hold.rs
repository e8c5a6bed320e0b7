//! What a turn's answers are judged against, and the hold that keeps a streamed answer off the
//! screen until it cannot be junk: a refusal, a copy of the prompt or of a tool's output is
//! judged when complete ([`crate::junk::judge`]), but its first words would already be shown.

use super::references;
use crate::junk::{self, AnswerContext};

/// What the model saw in this turn, owned (the stream's callback outlives no borrow of the
/// conversation).
#[derive(Debug, Default)]
pub(super) struct Judging {
    pub prompts: Vec<String>,
    pub outputs: Vec<String>,
    pub mm_messages: Vec<String>,
    /// The earlier answers a new answer may not restate ([`crate::junk::AnswerContext`]).
    pub earlier_answers: Vec<String>,
    pub names: Vec<String>,
    pub parameters: Vec<String>,
    pub calls_succeeded: bool,
    /// The references the turn's calls gave back that are new to the user
    /// ([`super::references`]): a streamed answer is held until it names one.
    pub references: Vec<String>,
    /// The identifiers the user's message gives that no call has looked up, while the turn may
    /// still ask for that call ([`super::not_looked_up`]): an answer is then held whole.
    pub unlooked: Vec<String>,
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

impl Judging {
    /// Calls `f` with the [`AnswerContext`] of these texts.
    pub fn with<R>(&self, truncated: bool, f: impl FnOnce(&AnswerContext<'_>) -> R) -> R {
        let prompts = strs(&self.prompts);
        let outputs = strs(&self.outputs);
        let mm_messages = strs(&self.mm_messages);
        let earlier_answers = strs(&self.earlier_answers);
        let names = strs(&self.names);
        let parameters = strs(&self.parameters);
        f(&AnswerContext {
            prompts: &prompts,
            tool_outputs: &outputs,
            mm_messages: &mm_messages,
            earlier_answers: &earlier_answers,
            names: &names,
            parameters: &parameters,
            truncated,
            calls_succeeded: self.calls_succeeded,
        })
    }
}

/// Past this many bytes an answer still held is judged only when complete (each look at it
/// reads it whole).
const LOOK_UNTIL: usize = 4096;

/// The text of one streamed reply: held until [`junk::may_show`] lets it through, then passed
/// on as it comes.
pub(super) struct Hold<'j> {
    judging: &'j Judging,
    held: String,
    showing: bool,
}

impl<'j> Hold<'j> {
    pub fn new(judging: &'j Judging) -> Self {
        Self {
            judging,
            held: String::new(),
            showing: false,
        }
    }

    /// What of `text` (the next piece) may be shown now: nothing while held, then everything
    /// held so far at once, then each piece as it comes.
    pub fn push(&mut self, text: String) -> Option<String> {
        if self.showing {
            return Some(text);
        }
        self.held.push_str(&text);
        if self.held.len() > LOOK_UNTIL || !self.judging.unlooked.is_empty() {
            return None;
        }
        self.showing = self
            .judging
            .with(false, |ctx| junk::may_show(&self.held, ctx))
            && !references::left_out(&self.held, &self.judging.references);
        self.showing.then(|| std::mem::take(&mut self.held))
    }

    /// The text still held once the reply is complete (shown if it is no junk, else never).
    pub fn rest(self) -> String {
        self.held
    }
}
