//! Is this answer useless? The one judge of a model's final answer, used by `mm eval` (a run
//! whose answer is junk fails) and by the turn loop.
//!
//! Small models fail in ways a check of the tool calls alone does not see: they copy the prompt
//! back, print a tool's output or mm's own message instead of answering, write the call they
//! meant to make as text, dump the tool list, refuse after a call that worked, or stop at
//! `max_tokens`. [`judge`] names the first of these [`Junk`] classes an answer falls in, from the
//! answer and what the model saw ([`AnswerContext`]); `None` means the answer may be read as
//! one. False positives are as bad as misses: every rule below errs towards passing an answer.
//!
//! Texts are compared as **words**: lower-cased runs of letters and digits, where `.` `-` `_`
//! `/` `:` `'` between two of them stay inside the word (`1.4.2`, `T-1042`, `l'état` are one
//! word each); everything else (spaces, punctuation, case) is ignored. Two measures:
//!
//! - **in-order overlap** (prompts): the longest common subsequence of the two word lists, `L`;
//! - **3-word shingles** (tool outputs, mm's messages): a word of one text is *covered* by the
//!   other when it lies in a run of 3 consecutive words that also occurs, in the same order, in
//!   the other (the whole text when it is shorter than 3 words). Re-worded facts break the runs;
//!   a pasted block keeps them.
//!
//! The rules, checked in this order (docs/eval.md explains each with examples):
//!
//! 1. [`Junk::Empty`]: no letter or digit at all.
//! 2. [`Junk::ToolList`]: `<tools>` anywhere, or a JSON tool definition (OpenAI's
//!    `{"type":"function",…}`, `{"name","description","parameters":{schema}}`, lists of them)
//!    that names one of the agent's tools or is the whole reply, or a reply that is nothing but a
//!    JSON schema when no prompt mentions a schema.
//! 3. [`Junk::CallAsText`]: a call marker anywhere (`<tool_call>`, `<function=`, `[TOOL_CALLS]`,
//!    `<|python_tag|>`, `<function_call>`, `<tool_response>`…, or a tag `<NAME>` of a known
//!    tool), a JSON call (`name`/`tool` + `arguments`/`parameters`/`args`/`input`, OpenAI's
//!    `{"function":{…}}`, lists of them) to a known tool anywhere or to any tool as the whole
//!    reply, or a line that is nothing but `NAME(…)` or `NAME: {…}` for a known tool.
//!    [`Junk::CallDescribed`], when no call succeeded in the turn: a tool or skill named
//!    as something to use — a verb of use (use, call, utiliser, verwenden, usar, …) at most four
//!    words before its name (`-` and `_` alike), written as a tool's (an identifier with `_` or
//!    `-`, in backticks, or next to "function", "tool", "outil", …): "To close it, you can use
//!    the `close_ticket` function". The user cannot call it; the model meant to. ("Use this
//!    ticket number" does not name the tool `ticket`.) After a call succeeded, only when the
//!    answer's first sentence tells the user to use a tool ("To log it, you would call the
//!    `log_time` function with …"), not as the means ("using") or by the model ("I can call").
//! 4. [`Junk::CopiedMmMessage`]: one of mm's messages covers at least 80 % of an answer of 4
//!    words or more, or the answer holds at least 95 % of the message and that is at least half
//!    of the answer; or a line of the answer opens with one of mm's labels (a message of at
//!    most 5 words ending with `:`: the `Earlier in this conversation:` and `My message now:`
//!    that frame a folded conversation).
//! 5. [`Junk::CopiedToolOutput`]: an output of 8 words or more of which the answer holds at least
//!    95 %, making up at least half of the answer. (Shorter outputs — `Ticket T-1042 opened.` —
//!    are often the answer itself.)
//! 6. [`Junk::CopiedEarlierAnswer`]: an answer of 8 words or more of which at least 80 % lie in
//!    runs of an earlier answer of the conversation that was made from a tool's output (given
//!    by the turn loop without the turns that made one of this turn's calls again), unless a
//!    call worked and the answer holds a word of a tool's output that neither that answer nor
//!    the user wrote (`tells_something_new`). A follow-up answered so restates old results
//!    as if they were new: "And in Berlin?" got the earlier Oslo forecast with Berlin written
//!    in, "And PR-7720-4410?" the first parcel's state, "Close the second one" the earlier
//!    listing's last sentence (Qwen2.5-Coder 0.5B and 1.5B: 83 of the 820 recorded
//!    conversation runs, none of them right).
//! 7. [`Junk::CopiedPrompt`], for an answer of 2 words or more and any prompt: the whole prompt
//!    in order with words added that make up less than 20 % of the answer (when the prompt ends
//!    with `?`, the answer must too: `What is the capital of France? Paris.` is an answer); or
//!    the prompt in order with less than 20 % of its words left out and none added; or a *bare
//!    fragment*: 2 or 3 words, all from the prompt in its order, when the prompt does not offer
//!    its own answer (a yes/no question, a choice with "or", "whether"/"if": there `Billing
//!    running` may be a yes) and, unless it asks an open question (what, where, …), is less than
//!    half of the prompt (so `The VPN is up.` after `Check if the VPN is up.` passes); or a
//!    *collage*: a whole prompt of 6 words or more in order, and at least 90 % of the answer's
//!    words in runs of the prompts, the tools' outputs and mm's messages.
//! 8. [`Junk::Refusal`], only when a call succeeded in the turn: an answer of at most 40 words
//!    whose first sentence (the first two when the first apologises) says that the
//!    model cannot help, assist, comply, answer, do that… (English, French, German, Spanish).
//! 9. [`Junk::Promise`]: an answer of at most 40 words whose every sentence offers help ("Sure,
//!    I can help you with that."), says what the model is about to do ("To get the status of
//!    INC-40698, I need to look up the ticket.", "Let me check.", "I'll think about it."), or
//!    asks the user's question back (70 % of its words the prompt's, in order, and half the
//!    prompt) (English, French, German, Spanish). [`promises_a_call`] tells a promised look-up or action from promised words.
//! 10. [`Junk::Truncated`]: the reply was cut at `max_tokens`.
//!
//! ```
//! use mm_core::junk::{AnswerContext, Junk, judge};
//!
//! let prompts = ["The VPN is down for everyone. Open a high priority ticket."];
//! let outputs = ["Opened T-1042 (high): VPN down for everyone"];
//! let ctx = AnswerContext {
//!     prompts: &prompts,
//!     tool_outputs: &outputs,
//!     calls_succeeded: true,
//!     ..AnswerContext::default()
//! };
//! assert_eq!(judge("VPN down", &ctx), Some(Junk::CopiedPrompt));
//! assert_eq!(judge("I'm sorry, but I can't assist with that.", &ctx), Some(Junk::Refusal));
//! assert_eq!(judge("I opened T-1042, high priority.", &ctx), None);
//! ```

mod language;
mod shapes;

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

/// Why an answer is useless.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Junk {
    /// Nothing but whitespace, punctuation or symbols.
    Empty,
    /// Cut at `max_tokens` (`finish_reason: length`).
    Truncated,
    /// (Nearly) the user's message, or a bare fragment of it.
    CopiedPrompt,
    /// (Nearly) the output of a tool, as the model read it.
    CopiedToolOutput,
    /// (Nearly) a text mm wrote to the model (the answer to an invalid call, …).
    CopiedMmMessage,
    /// (Nearly) an earlier answer of the conversation made from a tool's output: old results
    /// restated as the answer to a new message.
    CopiedEarlierAnswer,
    /// A tool call written as text instead of made.
    CallAsText,
    /// A tool named as something to use ("you can use the `close_ticket` function") instead
    /// of called.
    CallDescribed,
    /// Only an offer of help or a promise of what the model will do ("I need to look up the
    /// ticket.", "Sure, I can help you with that.") instead of doing it.
    Promise,
    /// The tool list, or a tool's schema, written out.
    ToolList,
    /// "I can't help with that" after a call that worked.
    Refusal,
}

impl Junk {
    /// What the answer was, for a person: "a copy of the prompt".
    pub fn describe(self) -> &'static str {
        match self {
            Junk::Empty => "an empty answer",
            Junk::Truncated => "an answer cut at max_tokens",
            Junk::CopiedPrompt => "a copy of the prompt",
            Junk::CopiedToolOutput => "a copy of a tool's output",
            Junk::CopiedMmMessage => "a copy of mm's own message to the model",
            Junk::CopiedEarlierAnswer => "a copy of an earlier answer",
            Junk::CallAsText => "a tool call written as text",
            Junk::CallDescribed => "a tool named as something to use instead of called",
            Junk::Promise => "a promise to act instead of an answer",
            Junk::ToolList => "the tool list written out",
            Junk::Refusal => "a refusal after a call that worked",
        }
    }

    /// The class's name as serialised: `copied_prompt`.
    pub fn as_str(self) -> &'static str {
        match self {
            Junk::Empty => "empty",
            Junk::Truncated => "truncated",
            Junk::CopiedPrompt => "copied_prompt",
            Junk::CopiedToolOutput => "copied_tool_output",
            Junk::CopiedMmMessage => "copied_mm_message",
            Junk::CopiedEarlierAnswer => "copied_earlier_answer",
            Junk::CallAsText => "call_as_text",
            Junk::CallDescribed => "call_described",
            Junk::Promise => "promise",
            Junk::ToolList => "tool_list",
            Junk::Refusal => "refusal",
        }
    }
}

impl std::fmt::Display for Junk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the model saw in the turn that ended with the answer.
#[derive(Debug, Clone, Copy, Default)]
pub struct AnswerContext<'a> {
    /// The user's message(s) of the conversation.
    pub prompts: &'a [&'a str],
    /// What tools returned to the model in this turn (calls that ran).
    pub tool_outputs: &'a [&'a str],
    /// Texts mm itself wrote to the model (answers to invalid, unknown or refused calls,
    /// notices).
    pub mm_messages: &'a [&'a str],
    /// The answers that ended earlier turns of the conversation in which a tool's output was
    /// read (not of a turn that made one of this turn's calls too: the same result may be told
    /// the same way).
    pub earlier_answers: &'a [&'a str],
    /// The names of the agent's tools and skills.
    pub names: &'a [&'a str],
    /// The names of the parameters of the agent's tools (of any of them).
    pub parameters: &'a [&'a str],
    /// The reply was cut at `max_tokens` (`finish_reason: "length"`).
    pub truncated: bool,
    /// At least one tool call ran successfully in this turn.
    pub calls_succeeded: bool,
}

/// Words per shingle (see the module's documentation).
const SHINGLE: usize = 3;
/// A copied output or message: the share of it the answer holds, in percent.
const SOURCE_HELD: usize = 95;
/// … and the share of the answer it makes up, in percent.
const ANSWER_MADE_OF_SOURCE: usize = 50;
/// An answer made (in percent) of one of mm's messages, whatever the message's length…
const ANSWER_FROM_MESSAGE: usize = 80;
/// … when it has at least this many words.
const MIN_MESSAGE_COPY: usize = 4;
/// Outputs shorter than this are never "copied": repeating them is often the answer.
const MIN_OUTPUT_WORDS: usize = 8;
/// An answer made (in percent) of an earlier answer (see [`copied_earlier_answer`])…
const ANSWER_FROM_EARLIER: usize = 80;
/// … when it has at least this many words (a short answer may rightly say again what an
/// earlier one said: "INC-40733 is still open.").
const MIN_EARLIER_COPY: usize = 8;
/// A near copy of a prompt: words added or left out, in percent.
const PROMPT_CHANGE: usize = 20;
/// A collage (see [`collage`]): the shortest prompt it holds whole…
const MIN_COLLAGE_PROMPT: usize = 6;
/// … and the share of its words, in percent, found in runs of what the model was sent.
const COLLAGE_COVERED: usize = 90;
/// The longest bare fragment of a prompt.
const MAX_FRAGMENT: usize = 3;
/// The most words one of mm's labels has (`Earlier in this conversation:`).
const MAX_LABEL: usize = 5;

/// The first junk class `answer` falls in, or `None` when it may be read as an answer.
pub fn judge(answer: &str, ctx: &AnswerContext<'_>) -> Option<Junk> {
    if !answer.chars().any(char::is_alphanumeric) {
        return Some(Junk::Empty);
    }
    if shapes::tool_list(answer, ctx.names, ctx.prompts) {
        return Some(Junk::ToolList);
    }
    if shapes::call_as_text(answer, ctx.names, ctx.parameters) {
        return Some(Junk::CallAsText);
    }
    let words = words(answer);
    let described = if ctx.calls_succeeded {
        language::tells_to_use_a_tool(answer, ctx.names)
    } else {
        language::names_a_tool_to_use(answer, &words, ctx.names).is_some()
    };
    if described {
        return Some(Junk::CallDescribed);
    }
    if ctx.mm_messages.iter().any(|m| match label(m) {
        Some(label) => opens_a_line(answer, label),
        None => copied_message(&words, &self::words(m)),
    }) {
        return Some(Junk::CopiedMmMessage);
    }
    if ctx
        .tool_outputs
        .iter()
        .any(|o| copied_output(&words, &self::words(o)))
    {
        return Some(Junk::CopiedToolOutput);
    }
    if ctx.earlier_answers.iter().any(|a| {
        let earlier = self::words(a);
        copied_earlier_answer(&words, &earlier) && !tells_something_new(&words, &earlier, ctx)
    }) {
        return Some(Junk::CopiedEarlierAnswer);
    }
    if ctx.prompts.iter().any(|p| copied_prompt(answer, &words, p)) || collage(&words, ctx) {
        return Some(Junk::CopiedPrompt);
    }
    if ctx.calls_succeeded && language::refusal(answer) {
        return Some(Junk::Refusal);
    }
    if language::promise(answer, ctx.prompts).is_some() {
        return Some(Junk::Promise);
    }
    ctx.truncated.then_some(Junk::Truncated)
}

/// The answer (judged [`Junk::Promise`]) announces a look-up or an action — "I need to look up
/// the ticket.", "Sure, I can help you with that. What's the forecast for Oslo?" — rather than
/// words ("I'll think about it."): the model meant to call.
pub fn promises_a_call(answer: &str, ctx: &AnswerContext<'_>) -> bool {
    language::promise(answer, ctx.prompts) == Some(language::Promised::Call)
}

/// Words an answer's beginning needs before it may be shown while the rest still streams.
const SHOW_AFTER: usize = 12;

/// Whether the beginning of a streamed answer may be shown before the answer is complete and
/// judged: it has [`SHOW_AFTER`] words, is no junk so far (a refusal says so in its first
/// sentence, a call or a tool list shows in its shape), and is not on its way to a copy — at
/// most half of its words lie in runs of a tool's output, of mm's message or of an earlier
/// answer, and less than 80 % of them are a prompt's words in order, and it may not still
/// become a promise ("Sure, I can help you with that. I need to …"). A beginning that fails is
/// held; the answer is judged whole when it ends, and shown only if it passes. (An answer that
/// turns to junk after its first words were shown is still not the answer: the warning that
/// follows says so.)
pub fn may_show(start: &str, ctx: &AnswerContext<'_>) -> bool {
    let words = words(start);
    if words.len() < SHOW_AFTER {
        return false;
    }
    let so_far = AnswerContext {
        truncated: false,
        ..*ctx
    };
    if judge(start, &so_far).is_some() {
        return false;
    }
    let pasting = ctx
        .tool_outputs
        .iter()
        .chain(ctx.mm_messages)
        .chain(ctx.earlier_answers)
        .any(|source| {
            at_least(
                covered(&words, &self::words(source)),
                words.len(),
                ANSWER_MADE_OF_SOURCE,
            )
        });
    let echoing = ctx.prompts.iter().any(|p| {
        at_least(
            in_order(&words, &self::words(p)),
            words.len(),
            100 - PROMPT_CHANGE,
        )
    });
    !pasting && !echoing && !language::may_become_promise(start)
}

/// Characters that stay inside a word between two letters or digits.
const JOINERS: [char; 6] = ['.', '-', '_', '/', ':', '\''];

/// The words of `text`, lower-cased (see the module's documentation).
pub(crate) fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut chars = text.chars().map(straight).peekable();
    while let Some(c) = chars.next() {
        if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        } else if !word.is_empty()
            && JOINERS.contains(&c)
            && chars.peek().is_some_and(|n| n.is_alphanumeric())
        {
            word.push(c);
        } else if !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// Typographic apostrophes as the plain one.
fn straight(c: char) -> char {
    if matches!(c, '\u{2019}' | '\u{2018}' | '\u{02bc}') {
        '\''
    } else {
        c
    }
}

/// `part` is at least `percent` % of `whole` (`whole` > 0).
fn at_least(part: usize, whole: usize, percent: usize) -> bool {
    whole > 0 && part * 100 >= whole * percent
}

/// `part` is more than `percent` % of `whole`.
fn more_than(part: usize, whole: usize, percent: usize) -> bool {
    part * 100 > whole * percent
}

/// The length of the longest common subsequence of two word lists.
fn in_order(a: &[String], b: &[String]) -> usize {
    let mut row = vec![0usize; b.len() + 1];
    for x in a {
        let mut diagonal = 0;
        for (j, y) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if x == y {
                diagonal + 1
            } else {
                above.max(row[j])
            };
            diagonal = above;
        }
    }
    row[b.len()]
}

/// How many words of `of` lie in a shingle that also occurs in `other` (the whole of `of` as
/// one shingle when it is shorter than [`SHINGLE`]).
fn covered(of: &[String], other: &[String]) -> usize {
    let mut marked = vec![false; of.len()];
    mark_covered(of, other, &mut marked);
    marked.iter().filter(|m| **m).count()
}

/// Marks the words of `of` that lie in a shingle also in `other` (see [`covered`]).
fn mark_covered(of: &[String], other: &[String], marked: &mut [bool]) {
    let n = SHINGLE.min(of.len());
    if n == 0 || other.len() < n {
        return;
    }
    let shingles: HashSet<&[String]> = other.windows(n).collect();
    for (i, window) in of.windows(n).enumerate() {
        if shingles.contains(window) {
            marked[i..i + n].iter_mut().for_each(|m| *m = true);
        }
    }
}

/// The answer is mostly `source`, pasted: it holds nearly all of it, and it is at least half
/// of the answer.
fn pasted(answer: &[String], source: &[String]) -> bool {
    at_least(covered(source, answer), source.len(), SOURCE_HELD)
        && at_least(covered(answer, source), answer.len(), ANSWER_MADE_OF_SOURCE)
}

fn copied_output(answer: &[String], output: &[String]) -> bool {
    output.len() >= MIN_OUTPUT_WORDS && pasted(answer, output)
}

/// Old results restated: at least [`ANSWER_FROM_EARLIER`] % of an answer of
/// [`MIN_EARLIER_COPY`] words or more lies in runs of an earlier answer (one word changed keeps
/// most runs: "The weather in Berlin will be very mild …" after "The weather in Oslo will be
/// very mild …").
fn copied_earlier_answer(answer: &[String], earlier: &[String]) -> bool {
    made_of(answer, earlier, MIN_EARLIER_COPY, ANSWER_FROM_EARLIER)
}

/// An answer of `min_words` words or more, at least `percent` % of which lie in runs of
/// `source`.
fn made_of(answer: &[String], source: &[String], min_words: usize, percent: usize) -> bool {
    answer.len() >= min_words && at_least(covered(answer, source), answer.len(), percent)
}

/// An answer cast in an earlier answer's words still tells this turn's result when, after a
/// call that worked, it holds a word of a tool's output — one with a digit, or of 4 characters
/// or more — that neither that earlier answer nor the user wrote: "98.6°F is equivalent to
/// 310.15 K in Phoenix today." after "98.6°F is equivalent to 37 °C in Phoenix today.", the
/// recipe for 2 after the recipe for 4, "… the current state is closed" after "… in progress".
fn tells_something_new(answer: &[String], earlier: &[String], ctx: &AnswerContext<'_>) -> bool {
    if !ctx.calls_succeeded {
        return false;
    }
    let known: HashSet<String> = earlier
        .iter()
        .cloned()
        .chain(ctx.prompts.iter().flat_map(|p| words(p)))
        .collect();
    let outputs: HashSet<String> = ctx.tool_outputs.iter().flat_map(|o| words(o)).collect();
    answer.iter().any(|w| {
        (w.chars().count() >= 4 || w.chars().any(|c| c.is_ascii_digit()))
            && !known.contains(w)
            && outputs.contains(w)
    })
}

/// mm's messages are never an answer: a piece of one is enough.
fn copied_message(answer: &[String], message: &[String]) -> bool {
    if message.is_empty() {
        return false;
    }
    made_of(answer, message, MIN_MESSAGE_COPY, ANSWER_FROM_MESSAGE) || pasted(answer, message)
}

/// One of mm's labels: a message of at most [`MAX_LABEL`] words that ends with `:`, such as
/// the `My message now:` of a folded conversation. A label is no text to copy from: it counts
/// only where it opens a line ([`opens_a_line`]).
fn label(message: &str) -> Option<&str> {
    let label = message.trim();
    (label.ends_with(':') && words(label).len() <= MAX_LABEL).then_some(label)
}

/// A line of the answer opens with `label` (after Markdown's `*` and `>`): the model wrote out
/// the framing mm put around the conversation (measured: Qwen2.5-Coder-0.5B answered a
/// follow-up with the whole transcript, `Me: … You: … My message now: …`).
fn opens_a_line(answer: &str, label: &str) -> bool {
    answer.lines().any(|line| {
        let line = line.trim_start_matches(|c: char| c.is_whitespace() || matches!(c, '*' | '>'));
        line.get(..label.len())
            .is_some_and(|start| start.eq_ignore_ascii_case(label))
    })
}

fn copied_prompt(answer: &str, words: &[String], prompt: &str) -> bool {
    let prompt_words = self::words(prompt);
    if words.len() < 2 || prompt_words.is_empty() {
        return false;
    }
    let common = in_order(words, &prompt_words);
    // The whole prompt, with a few words around it; a question copied is still a question.
    let with_additions = common == prompt_words.len()
        && more_than(common, words.len(), 100 - PROMPT_CHANGE)
        && (!ends_as_question(prompt) || ends_as_question(answer));
    // The prompt with a few of its words left out, nothing added.
    let with_omissions =
        common == words.len() && more_than(common, prompt_words.len(), 100 - PROMPT_CHANGE);
    if with_additions || with_omissions {
        return true;
    }
    if common != words.len() || words.len() > MAX_FRAGMENT {
        return false;
    }
    let shape = language::prompt_shape(prompt);
    !shape.offers_answer && (shape.open_question || common * 2 < prompt_words.len())
}

/// The whole of a prompt of [`MIN_COLLAGE_PROMPT`] words or more, in order, with the rest of
/// the answer pasted too: at least [`COLLAGE_COVERED`] % of its words lie in runs of the
/// prompts, the tools' outputs or mm's messages ("I feel awful. Put me down as off sick … The
/// tool request_leave answered: sick leave, 0.5 days …", the fresh answer step's message
/// copied back).
fn collage(words: &[String], ctx: &AnswerContext<'_>) -> bool {
    let whole_prompt = ctx.prompts.iter().any(|p| {
        let prompt = self::words(p);
        prompt.len() >= MIN_COLLAGE_PROMPT
            && words.len() > prompt.len()
            && in_order(words, &prompt) == prompt.len()
    });
    if !whole_prompt {
        return false;
    }
    let mut marked = vec![false; words.len()];
    for source in ctx
        .prompts
        .iter()
        .chain(ctx.tool_outputs)
        .chain(ctx.mm_messages)
    {
        mark_covered(words, &self::words(source), &mut marked);
    }
    at_least(
        marked.iter().filter(|m| **m).count(),
        words.len(),
        COLLAGE_COVERED,
    )
}

fn ends_as_question(text: &str) -> bool {
    text.trim_end()
        .trim_end_matches(['"', '\'', ')', '*', '`'])
        .ends_with(['?', '？'])
}

#[cfg(test)]
#[path = "junk_tests.rs"]
mod tests;
