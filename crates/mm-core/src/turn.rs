//! The turn loop: send the conversation, hand the tool calls of the reply to the call pipeline
//! ([`crate::pipeline`]), send the results back, until the model answers without a call,
//! `max_turns` replies have been asked for, the loop detector stops it, or the user cancels.
//! It knows nothing of validation, consent, hooks, truncation or echo.
//!
//! What small models need from it (measured: docs/eval-results.md, docs/models.md):
//!
//! - **An answer step.** After calls written as text (a model that does not use its template's
//!   tool-call format: Qwen2.5-Coder 0.5B and 1.5B, every constrained-mode model) have all
//!   succeeded, the next request asks for the answer: the same conversation (so the server's
//!   prompt cache still holds it) closed by a short request for an answer in words, with no call
//!   allowed ([`ChatRequest::answer_only`]). Asked with the tools still callable, these models
//!   wrote the same call again (0 answers of 9 for the 0.5B); asked this way, they answered from
//!   the output (8 of 9). `read_skill` is exempt: a skill says what to call next.
//! - **A repair step.** After a round whose calls were all invalid (an unknown tool, arguments
//!   the validator refused), the next request asks once a turn for a call held to the tools'
//!   schemas ([`ChatRequest::call_only`]: on llama-server a grammar of the calls, in
//!   constrained mode the schema without `{"answer"}`). Told in text what was wrong, Qwen2.5-
//!   Coder-0.5B sent the same invalid call again; once the repaired call is valid, the invalid
//!   round is no longer sent (its error text was copied as the answer).
//! - **An answer passes on the references.** An answer that names none of the references the
//!   turn's calls gave back and the user does not have (`LV-2292 recorded`, a temporary
//!   password: [`references`]) is asked for once more, after that answer, with what it left out
//!   named ([`crate::provider::answer_with`]); if that reply is junk, the first answer
//!   stands. Qwen2.5-Coder-1.5B left them out after 4 of its 29 right calls on the project's
//!   suite.
//! - **A call described is asked for.** A reply that names a tool as something to use instead
//!   of calling it ("you can use the `close_ticket` function", [`Junk::CallDescribed`]) before
//!   any call worked gets the same one request for a call held to the schemas (seen on
//!   Qwen2.5-Coder 0.5B and 1.5B; the user cannot call a function); named again after it,
//!   the tool is junk like any other (the answer step, then the fallback), and so is an
//!   answer that opens by telling the user to call one after a call worked. So does a look-up
//!   promised and not made ("To get the status of INC-40698, I need to look up the ticket.",
//!   "Sure, I can help you with that. What's the forecast for Oslo …?": [`Junk::Promise`],
//!   [`crate::junk::promises_a_call`]), also when it comes in the answer step after a first
//!   useless reply (Qwen2.5-Coder-1.5B wrote the tool list out, then promised); promised words
//!   ("I'll think about it.") get the answer step like other junk.
//! - **A repeat is not run again.** A call that repeats one the previous round ran successfully
//!   (same tool, same valid arguments, whatever unknown parameters it adds) is not run and not
//!   answered as invalid: the next request is the answer step. A repeat with another call
//!   between (status → restart → status) runs as usual.
//! - **Junk is never the answer.** An answer that [`crate::junk::judge`] finds useless (empty,
//!   cut at `max_tokens`, a copy of the prompt, of a tool's output or of mm's own message, a call
//!   or the tool list written as text, a refusal after a call that worked) is not shown as the
//!   answer: mm asks once more — the answer step, or after an answer step, the question and the
//!   results in one fresh message without tools — then shows the output of the last call under
//!   a one-line notice (or, with no call, says there is no answer). While it streams, an
//!   answer is held until its beginning cannot be junk ([`hold`]), so junk never reaches the
//!   screen either.
//! - **An earlier answer told again is no answer.** A reply to a follow-up made of an earlier
//!   answer (one that came from a tool's output) told again ([`Junk::CopiedEarlierAnswer`]:
//!   "And in Berlin?" answered with the Oslo forecast, Berlin written in) gets, with no call in
//!   the turn, one request for a call held to the schemas, and after a call the answer step.
//!   An earlier turn that made one of this turn's calls again does not count ([`judging`]).
//! - **Earlier turns are folded into the new message.** The calls and results of earlier turns
//!   are not sent again as messages: a small model that sees an earlier tool result so answers
//!   a new question from it instead of calling (seen in interactive mode). Their questions and
//!   answers go in front of the new message, in the same user message, as a short transcript:
//!   sent as messages of their own, the earlier answer was imitated instead of a call
//!   (measured, see [`dialogue`]). The last turns' tool outputs are lines of it
//!   ([`transcript`]), so that a follow-up finds "the second one". The session keeps
//!   everything.
//! - **A call with an identifier from nowhere is not run.** Before a round runs, the pipeline is
//!   told what the model was shown ([`CallState::shown`]); a declared or MCP call with a code or
//!   a long number found in none of it is answered in text, not run ([`crate::sources`]), and
//!   no repair step follows (the model may answer in words). The same call sent again is not
//!   run either, and the next request is the answer step.
//! - **An answer about what nobody looked up gets the call step.** When the user's message
//!   names something by identifier that no output shows ("What's the status of INC-40698?") and
//!   the model answers before anything ran ("INC-40698 is currently open."), the answer is held
//!   whole and dropped, and the model is asked once for a call held to the schemas
//!   ([`not_looked_up`]). Both Qwen2.5-Coder models did this in four actions of 56.

use std::ops::Range;
use std::path::PathBuf;

use serde::Serialize;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::args::ValidArgs;
use crate::config::Limits;
use crate::events::{Event, EventSink, ToolCallRecord};
use crate::hooks::Hooks;
use crate::junk::{self, Junk};
use crate::language::Language;
use crate::pipeline::{CallPipeline, CallResult, CallState, Consent};
use crate::provider::{
    Asks, ChatRequest, ChatResponse, Message, Provider, ProviderError, StreamDelta, ToolCall, Usage,
};
use crate::registry::Registry;

mod hold;
mod references;

use hold::{Hold, Judging};

/// The tool whose result is never followed by the answer step: a skill tells the model what to
/// call next.
const READ_SKILL: &str = "read_skill";

/// Why a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model answered without a tool call.
    Done,
    /// `max_turns` replies were asked for and the model still called tools.
    MaxTurns,
    /// The loop detector stopped the turn.
    Loop,
    /// The model gave no usable answer, twice, and no call ran whose output could stand in.
    NoAnswer,
    /// The user interrupted.
    Cancelled,
    /// The turn failed (the model server, after its retries): no result, an error instead. Set
    /// by the front end, which gets the failure itself from [`run_turn`].
    Error,
}

/// What a turn needs besides the provider, the tools and the conversation.
#[derive(Clone)]
pub struct TurnOptions {
    /// mm's working directory: where tools run.
    pub cwd: PathBuf,
    pub limits: Limits,
    /// Who decides whether a call may run (the pipeline's consent step).
    pub consent: Consent,
    /// `hooks:` of the agent file, run around every call.
    pub hooks: Hooks,
    pub events: EventSink,
    pub cancel: CancellationToken,
}

/// How a turn went.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnResult {
    /// The model's final answer (empty when stopped before one).
    pub result: String,
    pub stop_reason: StopReason,
    /// Replies asked of the model.
    pub turns: u32,
    pub tool_calls: Vec<ToolCallRecord>,
    pub usage: Usage,
    /// Why the turn stopped, for the user, when it did not end with an answer.
    pub message: Option<String>,
    /// When the model gave no usable answer (twice) and `result` is the output of its last call
    /// or empty ([`StopReason::NoAnswer`]): what its last reply was instead.
    pub junk: Option<Junk>,
}

/// At most this many tokens for the answer step (fewer if `limits.max_tokens` is lower).
pub const ANSWER_MAX_TOKENS: u32 = 512;

/// What the next request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ask {
    /// The model may call or answer.
    Any,
    /// An answer, in the conversation as it is (no call allowed).
    Answer,
    /// An answer to the question and the results in one fresh message, without tools.
    FreshAnswer,
    /// A call whose arguments the tool's schema holds (the repair step), after a round whose
    /// calls were all invalid.
    Call,
    /// The answer again, after one that left out every reference the calls gave back: the
    /// conversation, that answer, and a request naming what it left out.
    Reference,
}

impl Ask {
    /// The request after a reply that was not an answer: the answer step, then the question
    /// and the results in one fresh message.
    fn again(self) -> Self {
        match self {
            Ask::Any | Ask::Call => Ask::Answer,
            Ask::Answer | Ask::FreshAnswer | Ask::Reference => Ask::FreshAnswer,
        }
    }

    /// The request's `max_tokens`. An answer from results already in front of the model is
    /// short; a small model that rambles there (seen: Gemma 3 270M writing until an 8000-token
    /// limit, minutes on a CPU) is cut and judged like any cut answer.
    fn max_tokens(self, limits: &Limits) -> u32 {
        match self {
            Ask::Any => limits.max_tokens,
            Ask::Answer | Ask::FreshAnswer | Ask::Call | Ask::Reference => {
                limits.max_tokens.min(ANSWER_MAX_TOKENS)
            }
        }
    }
}

/// A call that ran, for the answer step and the fallback.
#[derive(Debug, Clone)]
struct Ran {
    name: String,
    /// The call's arguments as validated (for telling a repeat), when they were valid.
    arguments: Option<Map<String, Value>>,
    output: String,
    ok: bool,
}

/// What a turn has seen so far.
#[derive(Default)]
struct Seen {
    /// Every call that ran in this turn, in order.
    ran: Vec<Ran>,
    /// How many calls of `ran` the previous round made (the ones a repeat is compared with).
    last_round: usize,
    /// What mm itself told the model (answers to calls it did not run).
    mm_messages: Vec<String>,
    /// Requests for an answer made after junk, or after an answer that left out every reference
    /// the calls gave back.
    retries: u32,
    /// That answer, while the one asked for instead is awaited: it stands if that one is junk.
    left_out: Option<String>,
    /// The messages (indices into the conversation) of the invalid round the repair step was
    /// asked after (at most once a turn: see [`Seen::repaired`]).
    repaired_round: Option<Range<usize>>,
    /// Messages of this turn not sent any more: the invalid round, once a later call was
    /// valid (its error, in front of the model, was copied as the answer — measured).
    hidden: Option<Range<usize>>,
    /// The previous round's calls (name and arguments as JSON, or the raw text) when none of
    /// them worked: a model that writes calls as text and sends the same ones again is stuck.
    failed_round: Option<Vec<(String, Value)>>,
}

impl Seen {
    /// Whether this turn asked for the repair step already.
    fn repaired(&self) -> bool {
        self.repaired_round.is_some() || self.hidden.is_some()
    }

    /// A turn's start, after `earlier` (the conversation before its user message): what mm
    /// wrote to the model in earlier turns is no answer either (seen: an invalid call's answer
    /// from the turn before, copied as the answer to a follow-up).
    fn after(earlier: &[Message]) -> Self {
        Self {
            mm_messages: earlier
                .iter()
                .filter_map(|m| match m {
                    Message::Tool { content, .. } if crate::pipeline::written_by_mm(content) => {
                        Some(content.clone())
                    }
                    _ => None,
                })
                .collect(),
            ..Self::default()
        }
    }
}

/// How a round of calls ended the turn, when it did.
enum Ended {
    /// The loop detector stopped it: why.
    Loop(String),
    Cancelled,
}

/// Runs one user turn over `messages` (which must already hold the system prompt and the user's
/// message) and appends every reply and tool result to it.
pub async fn run_turn(
    provider: &Provider,
    registry: &Registry,
    messages: &mut Vec<Message>,
    opts: &TurnOptions,
) -> Result<TurnResult, ProviderError> {
    let specs = registry.specs();
    let strict = registry.strict_schemas();
    // What the model may name: a reply naming one of these is judged with them in mind.
    let names: Vec<String> = specs
        .iter()
        .map(|s| s.name.clone())
        .chain(registry.skill_names().iter().cloned())
        .collect();
    let parameters = registry.parameter_names();
    let pipeline = pipeline_of(registry, opts);
    // What the agent's own tools (not the built-in ones) could look up: an answer about such an
    // identifier that nobody looked up then asks for the call.
    let takes = crate::sources::Takes::of(
        registry.iter().map(|t| t.as_ref()),
        !registry.skill_names().is_empty(),
    );
    // This turn's user message: what came before it is sent as a dialogue.
    let start = messages
        .iter()
        .rposition(|m| matches!(m, Message::User(_)))
        .unwrap_or(messages.len());
    let mut calls_state = CallState::default();
    let mut ask = Ask::Any;
    let mut seen = Seen::after(&messages[..start]);
    // What the model is shown of the earlier turns: it does not change during the turn.
    let earlier_transcript = transcript(&messages[..start]);
    let earlier_outputs = folded_outputs(&messages[..start]);
    let earlier_answers = earlier_answers(&messages[..start]);
    // mm's own requests for an answer are written in the user's language.
    let language = Language::of_user(&user_texts(messages.get(..=start).unwrap_or(messages)));
    let asks = Asks::of(language);
    let mut result = TurnResult::started();

    while result.turns < opts.limits.max_turns {
        result.turns += 1;
        let unlooked = not_looked_up(messages, start, &seen, takes, &result, opts);
        let judging = judging(
            messages,
            start,
            (&earlier_outputs, &earlier_answers),
            &seen,
            (&names, &parameters),
            unlooked,
        );
        let sent = match ask {
            Ask::FreshAnswer => fresh_answer(messages, start, &seen.ran, asks),
            Ask::Any | Ask::Answer | Ask::Call => dialogue(messages, start, seen.hidden.clone()),
            Ask::Reference => {
                let mut sent = dialogue(messages, start, seen.hidden.clone());
                if let Some(first) = &seen.left_out {
                    sent.push(Message::Assistant {
                        content: Some(first.clone()),
                        tool_calls: vec![],
                    });
                    sent.push(Message::User(asks.answer_with(&judging.references)));
                }
                sent
            }
        };
        let max_tokens = ask.max_tokens(&opts.limits);
        let request = ChatRequest {
            messages: &sent,
            tools: if ask == Ask::FreshAnswer { &[] } else { &specs },
            max_tokens,
            answer_only: matches!(ask, Ask::Answer | Ask::FreshAnswer | Ask::Reference),
            language,
            call_only: ask == Ask::Call,
        };
        let mut hold = Hold::new(&judging);
        let reply = match ask_model(provider, &request, &strict, opts, &mut hold).await {
            Ok(reply) => reply,
            Err(ProviderError::Cancelled) => return Ok(cancelled(result)),
            Err(e) => return Err(e),
        };
        let held = hold.rest();
        let show_held = |events: &crate::events::EventSink| {
            if !held.is_empty() {
                events(&Event::TextDelta { text: held.clone() });
            }
        };
        add_usage(&mut result.usage, &reply);
        let truncated = warn_about(&reply, max_tokens, ask, opts);

        if !reply.tool_calls.is_empty() && matches!(ask, Ask::Any | Ask::Call) {
            // Words before a call: shown as they were before the hold.
            show_held(&opts.events);
            let (fresh, round_key) = match to_run(&reply, &seen, registry, opts) {
                Ok(round) => round,
                Err(next) => {
                    ask = next;
                    continue;
                }
            };
            calls_state.shown(shown(messages, &earlier_transcript));
            let round = Round {
                pipeline: &pipeline,
                registry,
                opts,
                start,
            };
            match round
                .run(
                    &reply,
                    fresh,
                    round_key,
                    messages,
                    &mut seen,
                    &mut calls_state,
                    &mut result,
                )
                .await
            {
                Ok(next) => ask = next,
                Err(Ended::Loop(why)) => {
                    result.stop_reason = StopReason::Loop;
                    result.message = Some(why);
                    return Ok(result);
                }
                Err(Ended::Cancelled) => return Ok(cancelled(result)),
            }
            continue;
        }

        if !judging.unlooked.is_empty() && matches!(ask, Ask::Any | Ask::Answer) {
            // "INC-40698 is currently open." with nothing looked up: the model answered from
            // imagination about the thing the user named. It is asked once for a call held to
            // the tools' schemas, as after an invalid round; its reply is never shown.
            ask = ask_for_the_call(
                &mut seen,
                messages,
                opts,
                &format!(
                    "the model answered about {} without looking it up",
                    judging.unlooked.join(", ")
                ),
            );
            continue;
        }
        // A text reply (or, in an answer step, a call anyway: the model did not answer).
        // Words naming a tool after the call step are still no answer: the answer step
        // follows, with no tool to name (a question no tool answers got "use the forecast
        // function" twice; printed, the user read about a function they cannot call).
        let junk = judge_reply(&reply, &judging, truncated);
        let Some(junk) = junk else {
            if references::left_out(&reply.content, &judging.references)
                && may_ask_again(&seen, &result, opts)
            {
                // "Your leave is recorded." after `LV-2292 recorded`: asked once more, told what
                // it left out (asked only for "an answer from the results" again, the 1.5B
                // left the number out again: 0 of 3).
                seen.retries += 1;
                (opts.events)(&Event::Warning {
                    message: format!(
                        "the model's answer left out {} from the tool's output; asking it once more",
                        judging.references.join(", ")
                    ),
                });
                seen.left_out = Some(reply.content);
                ask = Ask::Reference;
                continue;
            }
            show_held(&opts.events);
            let answer = with_references(reply.content, (&judging, asks), &seen, opts);
            return Ok(answered(result, answer, messages, opts));
        };
        if let Some(first) = seen.left_out.take() {
            // Asked again after an answer that left out the references, the model gave junk:
            // the first answer stands (never shown yet: it was held for want of a reference).
            (opts.events)(&Event::TextDelta {
                text: first.clone(),
            });
            let answer = with_references(first, (&judging, asks), &seen, opts);
            return Ok(answered(result, answer, messages, opts));
        }
        // Junk still held is never shown.
        let meant_to_call = junk == Junk::CallDescribed
            || (junk == Junk::CopiedEarlierAnswer && seen.ran.is_empty())
            || (junk == Junk::Promise
                && !judging.calls_succeeded
                && judging.with(false, |ctx| junk::promises_a_call(&reply.content, ctx)));
        if meant_to_call
            && matches!(ask, Ask::Any | Ask::Answer)
            && !judging.calls_succeeded
            && !seen.repaired()
            && !specs.is_empty()
        {
            // "You can use the `close_ticket` function", "I need to look up the ticket": the
            // model meant to call. It is asked once for a call held to the tools' schemas, as
            // after an invalid round.
            ask = ask_for_the_call(
                &mut seen,
                messages,
                opts,
                &format!("the model's reply was not an answer ({})", junk.describe()),
            );
            continue;
        }
        if may_ask_again(&seen, &result, opts) {
            seen.retries += 1;
            (opts.events)(&Event::Warning {
                message: format!(
                    "the model's reply was not an answer ({}); asking it for one",
                    junk.describe()
                ),
            });
            ask = ask.again();
            continue;
        }
        return Ok(fall_back(result, messages, &seen, junk, opts));
    }
    Ok(out_of_turns(result, opts))
}

/// The call step after a reply that was no call (nothing of it is kept): once a turn, like the
/// repair step after an invalid round, with no round to leave out; the user is told `why`.
fn ask_for_the_call(seen: &mut Seen, messages: &[Message], opts: &TurnOptions, why: &str) -> Ask {
    let start_of_nothing = messages.len();
    seen.repaired_round = Some(start_of_nothing..start_of_nothing);
    (opts.events)(&Event::Warning {
        message: format!("{why}; asking it for the call"),
    });
    Ask::Call
}

/// Whether a reply that was no (good) answer may be asked for once more: once a turn, and not
/// past `max_turns`.
fn may_ask_again(seen: &Seen, result: &TurnResult, opts: &TurnOptions) -> bool {
    seen.retries < 1 && result.turns < opts.limits.max_turns
}

/// The call pipeline of one turn: its working folder, limits, consent, events and hooks.
fn pipeline_of<'r>(registry: &'r Registry, opts: &TurnOptions) -> CallPipeline<'r> {
    CallPipeline::new(
        registry,
        opts.cwd.clone(),
        opts.limits,
        opts.consent.clone(),
        opts.events.clone(),
    )
    .with_hooks(opts.hooks.clone())
}

/// `max_turns` replies and the model still calls tools.
fn out_of_turns(mut result: TurnResult, opts: &TurnOptions) -> TurnResult {
    result.stop_reason = StopReason::MaxTurns;
    result.message = Some(format!(
        "The turn was stopped after {} model replies (max_turns) while the model was still calling tools.",
        opts.limits.max_turns
    ));
    result
}

impl TurnResult {
    /// A turn that has not asked anything yet.
    fn started() -> Self {
        Self {
            result: String::new(),
            stop_reason: StopReason::Done,
            turns: 0,
            tool_calls: Vec::new(),
            usage: Usage::default(),
            message: None,
            junk: None,
        }
    }
}

/// An answer that still leaves out every reference the calls gave back, after it was asked for
/// them once, is followed by the lines of the outputs that hold them, as the tool wrote them:
/// the user gets the number to quote. Measured on Qwen2.5-Coder-1.5B on the held-out agents
/// (docs/eval-results.md): asked again, naming the reference, the model still left it out in 7
/// of its 59 runs ("The transfer of 42.50 € … was made on December 7" without `VIR-50111`).
/// When the answer and those lines would together be a copy of the output (a short answer and
/// a one-line output), the references alone follow, labelled (`Reference: INC-40733`, in the
/// user's language).
fn with_references(
    answer: String,
    (judging, asks): (&Judging, &Asks),
    seen: &Seen,
    opts: &TurnOptions,
) -> String {
    let references = &judging.references;
    if !references::left_out(&answer, references) {
        return answer;
    }
    let outputs = seen.ran.iter().filter(|r| r.ok).map(|r| r.output.as_str());
    let lines = references::lines_holding(outputs, references);
    // The lines first, then the label: the first that does not make the answer junk.
    let candidates = [
        (!lines.is_empty()).then(|| lines.join("\n")),
        Some(format!("{}{}", asks.reference, references.join(", "))),
    ];
    let Some(whole) = candidates
        .into_iter()
        .flatten()
        .map(|added| format!("{answer}\n\n{added}"))
        .find(|whole| judging.with(false, |ctx| junk::judge(whole, ctx)).is_none())
    else {
        return answer;
    };
    (opts.events)(&Event::Warning {
        message: format!(
            "the model's answer left out {} again; mm adds it under the answer",
            references.join(", ")
        ),
    });
    (opts.events)(&Event::TextDelta {
        text: whole[answer.len()..].to_string(),
    });
    whole
}

/// The model answered: its text ends the turn.
fn answered(
    mut result: TurnResult,
    text: String,
    messages: &mut Vec<Message>,
    opts: &TurnOptions,
) -> TurnResult {
    (opts.events)(&Event::AssistantMessage {
        text: text.clone(),
        is_final: true,
    });
    messages.push(Message::Assistant {
        content: Some(text.clone()),
        tool_calls: vec![],
    });
    result.result = text;
    result
}

/// Tells the user what was odd about a reply; returns whether it was cut at `max_tokens`.
fn warn_about(reply: &ChatResponse, max_tokens: u32, ask: Ask, opts: &TurnOptions) -> bool {
    for message in &reply.warnings {
        (opts.events)(&Event::Warning {
            message: message.clone(),
        });
    }
    let truncated = reply.finish_reason.as_deref() == Some("length");
    if truncated {
        (opts.events)(&Event::Warning {
            message: format!(
                "the model's reply was cut at {max_tokens} tokens ({})",
                if ask == Ask::Any {
                    "limits.max_tokens"
                } else {
                    "the answer step's limit"
                }
            ),
        });
    }
    truncated
}

/// The calls of a reply that are to run, with the round's key; or, when none is, the next
/// step: every call repeats one that just worked (its result is in front of the model), or a
/// model writing calls as text sends again calls that did not work (it is stuck).
fn to_run(
    reply: &ChatResponse,
    seen: &Seen,
    registry: &Registry,
    opts: &TurnOptions,
) -> Result<(Vec<ToolCall>, RoundKey), Ask> {
    let fresh = not_repeats(&reply.tool_calls, seen, registry);
    if fresh.is_empty() {
        return Err(Ask::Answer);
    }
    let round_key: RoundKey = fresh.iter().map(call_key).collect();
    if reply.calls_as_text && seen.failed_round.as_ref() == Some(&round_key) {
        // Measured: Qwen2.5-Coder-0.5B repeats an invalid call until the loop detector stops
        // the turn, with no answer. It is asked to answer with what it has.
        (opts.events)(&Event::Warning {
            message: "the model repeated a call that did not work; asking it for an answer".into(),
        });
        return Err(Ask::Answer);
    }
    Ok((fresh, round_key))
}

/// A round's calls: name and arguments (as JSON, or the raw text).
type RoundKey = Vec<(String, Value)>;

/// What a round of calls needs that does not change during the turn.
struct Round<'r, 'p> {
    pipeline: &'r CallPipeline<'p>,
    registry: &'r Registry,
    opts: &'r TurnOptions,
    /// The turn's user message (an index into the conversation).
    start: usize,
}

impl Round<'_, '_> {
    /// Shows the reply's text, records the calls, hands them to the pipeline in order (each
    /// answered in `messages`) and returns the next step; stops at the loop detector or a
    /// cancellation (the calls left are answered as not run).
    #[expect(
        clippy::too_many_arguments,
        reason = "the turn's state, each part its own"
    )]
    async fn run(
        &self,
        reply: &ChatResponse,
        fresh: Vec<ToolCall>,
        round_key: RoundKey,
        messages: &mut Vec<Message>,
        seen: &mut Seen,
        calls_state: &mut CallState,
        result: &mut TurnResult,
    ) -> Result<Ask, Ended> {
        let opts = self.opts;
        if !reply.content.is_empty() {
            (opts.events)(&Event::AssistantMessage {
                text: reply.content.clone(),
                is_final: false,
            });
        }
        let first_message = messages.len();
        messages.push(Message::Assistant {
            content: (!reply.content.is_empty()).then(|| reply.content.clone()),
            tool_calls: fresh.clone(),
        });
        let round_start = seen.ran.len();
        let mut invalid = 0;
        let mut held_back = 0;
        let mut held_again = 0;
        let mut calls = fresh.iter();
        while let Some(call) = calls.next() {
            let (outcome, record) = self.pipeline.handle(call, calls_state, &opts.cancel).await;
            let ran = record.is_some() && outcome.stopped.is_none();
            held_back += usize::from(outcome.held_back);
            held_again += usize::from(outcome.held_again);
            result.tool_calls.extend(record);
            invalid += usize::from(!note(seen, self.registry, call, &outcome, ran));
            answer(messages, call, outcome.content);
            if let Some(why) = outcome.stopped {
                for rest in calls.by_ref() {
                    answer(messages, rest, "Not run: the turn was stopped.".into());
                }
                return Err(Ended::Loop(why));
            }
            if outcome.cancelled || opts.cancel.is_cancelled() {
                for rest in calls.by_ref() {
                    answer(messages, rest, "Not run: the user interrupted.".into());
                }
                return Err(Ended::Cancelled);
            }
        }
        seen.last_round = seen.ran.len() - round_start;
        let round = &seen.ran[round_start..];
        // A call held back for an identifier from nowhere did not fail (nothing ran).
        seen.failed_round = (held_back == 0 && round.iter().all(|r| !r.ok)).then_some(round_key);
        if held_again > 0 && !round.iter().any(|r| r.ok) {
            // The same call with a value nobody gave, sent again: every one the models sent
            // again was wrong (an invented ISBN, a flight status for "3 nights at 95 euros",
            // the description's tracking number for "21 % of 80 euros"). It is not run; the
            // model is asked for its answer in words. When nothing worked in this turn, its
            // calls are not sent with that request: Qwen2.5-Coder-0.5B copied mm's "was not
            // run" as its answer.
            if !seen.ran.iter().any(|r| r.ok) {
                seen.hidden = Some(self.start + 1..messages.len());
            }
            (opts.events)(&Event::Warning {
                message:
                    "the model sent again a call with a value nobody gave; asking it for an answer"
                        .into(),
            });
            return Ok(Ask::Answer);
        }
        let all_ran_ok = !round.is_empty()
            && round.len() == fresh.len()
            && round.iter().all(|r| r.ok && r.name != READ_SKILL);
        // Calls that were all invalid (an unknown tool, arguments the validator refused): the
        // model is asked once for a call held to the tools' schemas. Measured on Qwen2.5-Coder
        // 0.5B: told what was wrong in text, it sent the same invalid call again (an invented
        // parameter, `"libras"` for `lb`, a currency to the weight converter).
        if invalid == fresh.len() && !seen.repaired() {
            seen.repaired_round = Some(first_message..messages.len());
            return Ok(Ask::Call);
        }
        if invalid < fresh.len() && seen.repaired_round.is_some() {
            seen.hidden = seen.repaired_round.take();
        }
        // Calls written as text that all worked: the model is asked for its answer (it would
        // otherwise write the same calls again).
        Ok(if reply.calls_as_text && all_ran_ok {
            Ask::Answer
        } else {
            Ask::Any
        })
    }
}

/// What this turn put in front of the model, for judging its replies.
/// `earlier_outputs` are the earlier turns' outputs as the transcript shows them
/// ([`folded_outputs`]); `earlier_answers` the answers made from them ([`earlier_answers`]).
fn judging(
    messages: &[Message],
    start: usize,
    (earlier_outputs, earlier_answers): (&[String], &[EarlierAnswer]),
    seen: &Seen,
    (names, parameters): (&[String], &[String]),
    unlooked: Vec<String>,
) -> Judging {
    let mut mm_messages = seen.mm_messages.clone();
    mm_messages.extend(own_texts().map(str::to_owned));
    // The fresh answer step's framing of each result (see `fresh_answer`).
    mm_messages.extend(
        seen.ran
            .iter()
            .map(|r| format!("My question: The tool {} answered:", r.name)),
    );
    let prompts = user_texts(messages);
    let outputs: Vec<String> = seen
        .ran
        .iter()
        .filter(|r| r.ok)
        .map(|r| r.output.clone())
        .collect();
    // What the user already has: their messages and the agent's instructions.
    let known: Vec<&str> = prompts
        .iter()
        .copied()
        .chain(messages.iter().filter_map(|m| match m {
            Message::System(text) => Some(text.as_str()),
            _ => None,
        }))
        .collect();
    let references = references::new_references(&outputs, &known);
    // What failed calls printed is no answer either, though it brings no reference (seen:
    // Qwen2.5-Coder-0.5B answered "cancel the 11 o'clock meeting" with the booking tool's
    // refusal, `… belegt: 11:00–12:00 … exit code 1`). And the earlier outputs the transcript
    // shows, as it shows them (seen: the 0.5B answered a follow-up with the earlier search's
    // line); they bring no new reference: the user had them in that turn.
    let mut outputs = outputs;
    outputs.extend(seen.ran.iter().filter(|r| !r.ok).map(|r| r.output.clone()));
    outputs.extend_from_slice(earlier_outputs);
    // An earlier answer told again is no answer, unless this turn made one of that turn's
    // calls again: the same result may be told the same way ("still open").
    let calls_now = calls_of(&messages[start.min(messages.len())..]);
    let earlier_answers = earlier_answers
        .iter()
        .filter(|a| !a.calls.iter().any(|c| calls_now.contains(c)))
        .map(|a| a.text.clone())
        .collect();
    Judging {
        earlier_answers,
        references,
        prompts: prompts.into_iter().map(str::to_owned).collect(),
        outputs,
        mm_messages,
        names: names.to_vec(),
        parameters: parameters.to_vec(),
        calls_succeeded: seen.ran.iter().any(|r| r.ok),
        unlooked,
    }
}

/// The identifiers this turn's user message gives that no tool output of the conversation shows
/// and the agent's own tools could be given (`takes`; [`crate::sources::not_looked_up`]), while
/// an answer given now would be one made up about them: nothing has run in this turn, the call
/// was not asked for already, and one more request fits in `max_turns`. Measured on the project's
/// suite: Qwen2.5-Coder 0.5B and 1.5B answered "The status of INC-40698 is open." or "LH2034 is
/// on time today." with no call, four actions of 56 each (docs/eval-results.md).
fn not_looked_up(
    messages: &[Message],
    start: usize,
    seen: &Seen,
    takes: crate::sources::Takes,
    result: &TurnResult,
    opts: &TurnOptions,
) -> Vec<String> {
    let Some(Message::User(message)) = messages.get(start) else {
        return Vec::new();
    };
    if !seen.ran.is_empty() || seen.repaired() || result.turns >= opts.limits.max_turns {
        return Vec::new();
    }
    let outputs: Vec<&str> = tool_outputs(messages).collect();
    crate::sources::not_looked_up(message, &outputs, takes)
        .into_iter()
        .map(str::to_owned)
        .collect()
}

/// What the model was shown as said, for [`crate::sources`]: the system prompt, the user's
/// messages and the answers, the earlier turns' transcript (with the outputs it folds in:
/// [`transcript`]), and the tool outputs of the conversation (earlier turns' too: after a turn
/// that ended without an answer they are sent as messages, [`as_dialogue`]). Not mm's own
/// answers to calls (they quote the call back).
fn shown<'m>(messages: &'m [Message], transcript: &'m str) -> Vec<&'m str> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::System(text) | Message::User(text) => Some(text.as_str()),
            Message::Assistant {
                content: Some(text),
                tool_calls,
            } if tool_calls.is_empty() => Some(text.as_str()),
            _ => None,
        })
        .chain(tool_outputs(messages))
        .chain([transcript])
        .collect()
}

/// What the tools printed in the whole conversation (not mm's own answers to calls).
fn tool_outputs(messages: &[Message]) -> impl Iterator<Item = &str> {
    messages.iter().filter_map(|m| match m {
        Message::Tool { content, .. } if !crate::pipeline::written_by_mm(content) => {
            Some(content.as_str())
        }
        _ => None,
    })
}

/// Whether a text reply is junk (a call in an answer step always is).
fn judge_reply(reply: &ChatResponse, judging: &Judging, truncated: bool) -> Option<Junk> {
    if !reply.tool_calls.is_empty() {
        return Some(Junk::CallAsText);
    }
    judging.with(truncated, |ctx| junk::judge(&reply.content, ctx))
}

/// Sends one request, turning stream pieces into events; the reply's text goes through `hold`
/// (what it still holds at the end is the caller's to show or not).
async fn ask_model(
    provider: &Provider,
    request: &ChatRequest<'_>,
    strict: &[Value],
    opts: &TurnOptions,
    hold: &mut Hold<'_>,
) -> Result<ChatResponse, ProviderError> {
    let events = opts.events.clone();
    let mut on_delta = |delta: StreamDelta| {
        let event = match delta {
            StreamDelta::Text(text) => match hold.push(text) {
                Some(text) => Event::TextDelta { text },
                None => return,
            },
            StreamDelta::Reasoning(text) => Event::ReasoningDelta { text },
            StreamDelta::Retry {
                attempt,
                delay,
                error,
            } => Event::Retry {
                attempt,
                delay_ms: crate::millis(delay),
                error,
            },
        };
        events(&event);
    };
    let strict = if request.tools.is_empty() {
        &[]
    } else {
        strict
    };
    provider
        .chat_with_schemas(request, strict, &mut on_delta, &opts.cancel)
        .await
}

fn add_usage(total: &mut Usage, reply: &ChatResponse) {
    if let Some(usage) = reply.usage {
        total.prompt_tokens += usage.prompt_tokens;
        total.completion_tokens += usage.completion_tokens;
        total.total_tokens += usage.total_tokens;
    }
}

/// The calls of a reply that do not repeat a call the previous round ran successfully.
fn not_repeats(calls: &[ToolCall], seen: &Seen, registry: &Registry) -> Vec<ToolCall> {
    let previous = &seen.ran[seen.ran.len() - seen.last_round..];
    calls
        .iter()
        .filter(|call| {
            !previous.iter().any(|ran| {
                ran.ok
                    && ran.name == call.name
                    && ran.arguments.is_some()
                    && known_arguments(registry, call).as_ref() == ran.arguments.as_ref()
            })
        })
        .cloned()
        .collect()
}

/// What makes two calls the same for [`Seen::failed_round`]: the name, and the arguments as a
/// JSON value (key order does not matter) or, when they are not JSON, as text.
fn call_key(call: &ToolCall) -> (String, Value) {
    let arguments = serde_json::from_str(&call.arguments)
        .unwrap_or_else(|_| Value::String(call.arguments.trim().to_owned()));
    (call.name.clone(), arguments)
}

/// A call's arguments as the validator reads them once the parameters the tool does not have
/// are left out (a repeat may bring invented ones); `None` when they are not valid even so.
fn known_arguments(registry: &Registry, call: &ToolCall) -> Option<Map<String, Value>> {
    let tool = registry.get(&call.name)?;
    let params = tool.params();
    let raw = match serde_json::from_str::<Value>(&call.arguments) {
        Ok(Value::Object(mut object)) => {
            object.retain(|key, _| params.params.iter().any(|p| &p.name == key));
            Value::Object(object).to_string()
        }
        _ => call.arguments.clone(),
    };
    params.validate(&raw).ok().map(ValidArgs::into_map)
}

/// Remembers what a handled call did; returns whether it was valid (a known tool, arguments
/// the validator takes).
fn note(
    seen: &mut Seen,
    registry: &Registry,
    call: &ToolCall,
    outcome: &CallResult,
    ran: bool,
) -> bool {
    let valid = registry
        .get(&call.name)
        .and_then(|tool| tool.params().validate(&call.arguments).ok())
        .map(ValidArgs::into_map);
    let is_valid = valid.is_some();
    if ran && outcome.ran {
        seen.ran.push(Ran {
            name: call.name.clone(),
            arguments: valid,
            output: outcome.content.clone(),
            ok: outcome.ok,
        });
    } else {
        seen.mm_messages.push(outcome.content.clone());
    }
    is_valid
}

/// The messages to send: the system prompt, then this turn's user message with the earlier
/// turns folded in front of it as a short transcript (each turn's question and answer, no
/// calls or results; [`fold`]), then the rest of this turn as it is. `hidden` messages of this
/// turn are left out (an invalid round the repair step made good). After a turn that ended
/// without an answer, [`as_dialogue`] instead.
///
/// Measured (Qwen2.5-Coder-1.5B, the 11 follow-up actions of the project's suite in English):
/// sent as a dialogue (earlier questions and answers as their own messages), the model made the
/// follow-up's call 0 times of 11 — it answered from the earlier answer ("I have closed
/// INC-40721." with nothing run) — and 0 of 11 with the earlier calls and results sent too;
/// folded, it called in 8 of 11, 6 with the right arguments.
fn dialogue(messages: &[Message], start: usize, hidden: Option<Range<usize>>) -> Vec<Message> {
    let start = start.min(messages.len());
    let earlier = &messages[..start];
    let hidden = hidden.unwrap_or_default();
    if turns_of(earlier).any(|turn| !ended_with_answer(turn)) {
        return as_dialogue(messages, start, &hidden);
    }
    let transcript = transcript(earlier);
    let mut sent: Vec<Message> = earlier
        .iter()
        .filter(|m| matches!(m, Message::System(_)))
        .cloned()
        .collect();
    for (i, message) in messages.iter().enumerate().skip(start) {
        if hidden.contains(&i) {
            continue;
        }
        sent.push(match message {
            Message::User(text) if i == start && !transcript.is_empty() => {
                Message::User(fold(&transcript, text))
            }
            _ => message.clone(),
        });
    }
    sent
}

/// The turns of `earlier`: from each user message to the next (what comes before the first
/// user message, the system prompt, is no turn).
fn turns_of(earlier: &[Message]) -> impl Iterator<Item = &[Message]> {
    let starts: Vec<usize> = earlier
        .iter()
        .enumerate()
        .filter(|(_, m)| matches!(m, Message::User(_)))
        .map(|(i, _)| i)
        .collect();
    let ends: Vec<usize> = starts
        .iter()
        .skip(1)
        .copied()
        .chain([earlier.len()])
        .collect();
    starts
        .into_iter()
        .zip(ends)
        .map(move |(from, to)| &earlier[from..to])
}

/// The turn ended with an answer (not stopped, interrupted or cut by a crash).
fn ended_with_answer(turn: &[Message]) -> bool {
    matches!(
        turn.last(),
        Some(Message::Assistant { tool_calls, .. }) if tool_calls.is_empty()
    )
}

/// After a turn that ended without an answer (stopped, interrupted, cut by a crash), the
/// conversation goes as messages: earlier turns as a dialogue (the question and the answer of
/// each answered turn, without its calls and results), the unanswered turn whole — its calls
/// and what became of them are what the next message ("go on") is about; dropping them would
/// also leave two user messages in a row, which strict chat templates refuse.
fn as_dialogue(messages: &[Message], start: usize, hidden: &Range<usize>) -> Vec<Message> {
    let mut sent = Vec::with_capacity(messages.len());
    let mut turn_start = 0;
    for i in 0..=start {
        let boundary = i == start || matches!(messages.get(i), Some(Message::User(_)));
        if !boundary {
            continue;
        }
        let turn = &messages[turn_start..i];
        let answered = ended_with_answer(turn);
        for message in turn {
            let call_or_result = match message {
                Message::Tool { .. } => true,
                Message::Assistant { tool_calls, .. } => !tool_calls.is_empty(),
                _ => false,
            };
            if !(answered && call_or_result) {
                sent.push(message.clone());
            }
        }
        turn_start = i;
    }
    sent.extend(
        messages
            .iter()
            .enumerate()
            .skip(start)
            .filter(|(i, _)| !hidden.contains(i))
            .map(|(_, m)| m.clone()),
    );
    sent
}

/// What comes before the transcript of earlier turns, and before the new message.
const EARLIER_TURNS: &str = "Earlier in this conversation:";
const MESSAGE_NOW: &str = "My message now:";
/// What mm itself writes around the conversation, whatever the turn: its requests for an
/// answer (in every language it writes them in) and the labels of a folded conversation. An
/// answer that copies one (or writes a label out, [`crate::junk`]) is no answer.
pub fn own_texts() -> impl Iterator<Item = &'static str> {
    crate::provider::asks::all().chain([EARLIER_TURNS, MESSAGE_NOW])
}

/// How many of the last earlier turns bring their tools' outputs into the transcript, and how
/// many characters of each output.
const FOLDED_OUTPUT_TURNS: usize = 3;
const FOLDED_OUTPUT_CHARS: usize = 500;

/// The earlier turns as lines `Me: …` and `You: …` (the answers that ended them; calls and
/// words written before a call left out), with the last [`FOLDED_OUTPUT_TURNS`] turns' tool
/// outputs between them as `(The tool NAME answered: …)`, each on one line and cut to
/// [`FOLDED_OUTPUT_CHARS`] characters; or nothing when no user spoke.
///
/// Measured (Qwen2.5-Coder-1.5B, the 12 follow-ups of the project's suite in English): without
/// the outputs, "Is the second one in stock at Part-Dieu?" got an ISBN made up (the earlier
/// answer named the books, not their numbers) and "And in the bedroom?" an answer with no call;
/// with them, the right ISBN from the earlier search and a call of the sensor.
fn transcript(earlier: &[Message]) -> String {
    let folds = folds_output(earlier);
    let mut lines = Vec::new();
    for (i, message) in earlier.iter().enumerate() {
        match message {
            Message::User(text) => lines.push(format!("Me: {}", text.trim())),
            Message::Tool { name, content, .. } if folds(i) => {
                lines.push(format!("(The tool {name} answered: {})", one_line(content)));
            }
            Message::Assistant {
                content: Some(text),
                tool_calls,
            } if tool_calls.is_empty() && !text.trim().is_empty() => {
                lines.push(format!("You: {}", text.trim()));
            }
            _ => {}
        }
    }
    if lines.iter().any(|l| l.starts_with("Me: ")) {
        lines.join("\n")
    } else {
        String::new()
    }
}

/// Whether the message at an index of `earlier` is a tool output that [`transcript`] shows:
/// one of the last [`FOLDED_OUTPUT_TURNS`] turns', not empty, not written by mm.
fn folds_output(earlier: &[Message]) -> impl Fn(usize) -> bool + '_ {
    // Where the last turns start: the FOLDED_OUTPUT_TURNS-th user message from the end.
    let from = earlier
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, m)| matches!(m, Message::User(_)))
        .nth(FOLDED_OUTPUT_TURNS - 1)
        .map_or(0, |(i, _)| i);
    move |i| {
        i >= from
            && matches!(&earlier[i], Message::Tool { content, .. }
                if !content.trim().is_empty() && !crate::pipeline::written_by_mm(content))
    }
}

/// An earlier turn in which a tool's output was read: the answer that ended it, and the calls
/// it made.
struct EarlierAnswer {
    text: String,
    calls: Vec<(String, Value)>,
}

/// The calls made in `messages`: each tool's name and its arguments as the model sent them
/// (the raw text when they are no JSON).
fn calls_of(messages: &[Message]) -> Vec<(String, Value)> {
    messages
        .iter()
        .flat_map(|m| match m {
            Message::Assistant { tool_calls, .. } => tool_calls.as_slice(),
            _ => &[],
        })
        .map(|c| {
            let arguments = serde_json::from_str(&c.arguments)
                .unwrap_or_else(|_| Value::String(c.arguments.clone()));
            (c.name.clone(), arguments)
        })
        .collect()
}

/// The answers that ended the earlier turns in which a program's output was read (not only
/// mm's answers to calls it did not run), with those turns' calls: a new answer made of one of
/// them restates old results ([`Junk::CopiedEarlierAnswer`]).
fn earlier_answers(earlier: &[Message]) -> Vec<EarlierAnswer> {
    // Each turn's replies and results lie between two user messages.
    earlier
        .split(|m| matches!(m, Message::User(_)))
        .filter(|turn| {
            turn.iter().any(|m| {
                matches!(m, Message::Tool { content, .. } if !crate::pipeline::written_by_mm(content))
            })
        })
        .filter_map(|turn| {
            let text = turn.iter().rev().find_map(|m| match m {
                Message::Assistant {
                    content: Some(text),
                    tool_calls,
                } if tool_calls.is_empty() && !text.trim().is_empty() => Some(text.clone()),
                _ => None,
            })?;
            Some(EarlierAnswer {
                text,
                calls: calls_of(turn),
            })
        })
        .collect()
}

/// The earlier outputs [`transcript`] shows, as it shows them.
fn folded_outputs(earlier: &[Message]) -> Vec<String> {
    let folds = folds_output(earlier);
    earlier
        .iter()
        .enumerate()
        .filter_map(|(i, m)| match m {
            Message::Tool { content, .. } if folds(i) => Some(one_line(content)),
            _ => None,
        })
        .collect()
}

/// A tool's output on one line (` / ` between its lines), cut to [`FOLDED_OUTPUT_CHARS`].
fn one_line(output: &str) -> String {
    let flat = output
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" / ");
    match flat.char_indices().nth(FOLDED_OUTPUT_CHARS) {
        Some((at, _)) => format!("{}…", &flat[..at]),
        None => flat,
    }
}

/// This turn's user message with the earlier turns in front of it.
fn fold(transcript: &str, text: &str) -> String {
    format!("{EARLIER_TURNS}\n{transcript}\n\n{MESSAGE_NOW} {text}")
}

/// The answer step after an answer step gave junk: the system prompt, then one user message
/// with the question and each result, asking for the answer. No tools: nothing to call.
fn fresh_answer(messages: &[Message], start: usize, ran: &[Ran], asks: &Asks) -> Vec<Message> {
    let system = messages
        .first()
        .and_then(|m| match m {
            Message::System(text) => Some(text.clone()),
            _ => None,
        })
        .unwrap_or_default();
    let question = match messages.get(start) {
        Some(Message::User(text)) => text.as_str(),
        _ => "",
    };
    let outputs = ran.iter().map(|r| (r.name.as_str(), r.output.as_str()));
    let text = asks.fresh(question, outputs);
    vec![Message::System(system), Message::User(text)]
}

/// The user's messages of the whole conversation.
fn user_texts(messages: &[Message]) -> Vec<&str> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::User(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// No usable answer came twice: the output of the last call that ran stands in for it, under a
/// notice; with no call, there is no answer.
fn fall_back(
    mut result: TurnResult,
    messages: &mut Vec<Message>,
    seen: &Seen,
    junk: Junk,
    opts: &TurnOptions,
) -> TurnResult {
    result.junk = Some(junk);
    let last = seen
        .ran
        .iter()
        .rev()
        .find(|r| r.ok)
        .or_else(|| seen.ran.last());
    match last {
        Some(ran) => {
            (opts.events)(&Event::Warning {
                message: format!(
                    "the model gave no usable answer ({}); the output of its last call ({}) follows",
                    junk.describe(),
                    ran.name
                ),
            });
            let text = ran.output.trim_end().to_string();
            (opts.events)(&Event::AssistantMessage {
                text: text.clone(),
                is_final: true,
            });
            messages.push(Message::Assistant {
                content: Some(text.clone()),
                tool_calls: vec![],
            });
            result.result = text;
        }
        None => {
            result.stop_reason = StopReason::NoAnswer;
            result.message = Some(format!(
                "The model gave no usable answer ({}), twice.",
                junk.describe()
            ));
        }
    }
    result
}

fn cancelled(mut result: TurnResult) -> TurnResult {
    result.stop_reason = StopReason::Cancelled;
    result.message = Some("Interrupted.".into());
    result
}

fn answer(messages: &mut Vec<Message>, call: &ToolCall, content: String) {
    messages.push(Message::Tool {
        tool_call_id: call.id.clone(),
        name: call.name.clone(),
        content,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, content: &str) -> Message {
        Message::Tool {
            tool_call_id: "1".into(),
            name: name.into(),
            content: content.into(),
        }
    }

    fn answer(text: &str) -> Message {
        Message::Assistant {
            content: Some(text.into()),
            tool_calls: vec![],
        }
    }

    /// The last three turns bring their outputs, each on one line and cut; older turns, mm's
    /// own answers to calls and empty outputs do not.
    #[test]
    fn the_transcript_folds_in_the_outputs_of_the_last_turns() {
        let long = "x".repeat(FOLDED_OUTPUT_CHARS + 20);
        let earlier = vec![
            Message::System("Be brief.".into()),
            Message::User("first".into()),
            tool("list", "INC-1 old"),
            answer("One."),
            Message::User("second".into()),
            tool("list", "INC-40722 printer jam\n\nINC-40730 Excel crash\n"),
            tool(
                "status",
                "The call to status was not run: its arguments are invalid.",
            ),
            answer("Two tickets."),
            Message::User("third".into()),
            tool("read", &long),
            tool("noop", "  \n"),
            answer("Long."),
            Message::User("fourth".into()),
            answer("Nothing to look up."),
        ];
        let cut = format!("{}…", "x".repeat(FOLDED_OUTPUT_CHARS));
        assert_eq!(
            transcript(&earlier),
            format!(
                "Me: first\nYou: One.\n\
                 Me: second\n(The tool list answered: INC-40722 printer jam / INC-40730 Excel crash)\nYou: Two tickets.\n\
                 Me: third\n(The tool read answered: {cut})\nYou: Long.\n\
                 Me: fourth\nYou: Nothing to look up."
            )
        );
    }
}
