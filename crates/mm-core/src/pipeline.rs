//! The one call pipeline: every tool call of every kind (built-in, declared, MCP) goes through
//! the same steps, in this order:
//!
//! ```text
//! look up → validate/coerce (args) → loop guard → sources (turns only) → consent → preToolCall hook → run
//!         → truncate + save full output → echo → postToolCall hook → result
//! ```
//!
//! Tools only *run* ([`crate::Tool::run`] writes to an [`Output`] and returns an
//! [`Outcome`]); everything else is here, once. Every step that refuses a call answers it in
//! text, as the tool's result, so the model can correct itself. The turn loop only hands calls
//! in and results out; `mm serve` uses the same pipeline without consent.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::args::{Arguments, ValidArgs};
use crate::config::Limits;
use crate::events::{Event, EventSink, ToolCallRecord};
use crate::hooks::Hooks;
use crate::loop_guard::LoopGuard;
use crate::output::Output;
use crate::permissions::{
    ConsentAnswer, ConsentAsker, ConsentRequest, Decision, Permissions, always_rule, subject,
};
use crate::provider::ToolCall;
use crate::registry::Registry;
use crate::sources::Sources;
use crate::tools::{Outcome, Progress, Tool, ToolCtx};

/// From the third identical call in a row on, the result tells the model it is repeating itself
/// (SPEC §7).
const WARN_REPEATS_FROM: u32 = 3;

/// Who decides whether a call may run.
#[derive(Clone)]
pub enum Consent {
    /// `yolo` and `allow:` rules; a call they do not allow is asked of `asker`, and refused
    /// when there is no one to ask.
    Rules {
        permissions: Permissions,
        asker: Option<Arc<dyn ConsentAsker>>,
    },
    /// Nothing asks: the caller already holds the user's consent (`mm serve`: the MCP client
    /// asks its own user).
    Granted,
}

/// What a call's result is, for the model and the reports.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CallResult {
    /// The text sent to the model as the tool's result.
    pub content: String,
    /// False when the call was refused or the tool failed (non-zero exit, timeout, …).
    pub ok: bool,
    pub exit_code: Option<i32>,
    /// The user interrupted the call.
    pub cancelled: bool,
    /// The tool was run (its arguments were valid, consent and hooks let it go); false when mm
    /// answered the call itself.
    pub ran: bool,
    /// How many times in a row this exact call has now been made.
    pub repeats: u32,
    /// Set when the loop detector stopped the turn at this call (it was not run): why.
    pub stopped: Option<String>,
    /// mm held the call back: an identifier in it comes from nowhere the model was shown
    /// ([`crate::sources`]). Its arguments were valid.
    pub held_back: bool,
    /// It was held back before in this turn: the model sent it again.
    pub held_again: bool,
    /// Where the full output was saved, when it was cut.
    pub full_output: Option<PathBuf>,
    /// How long the run took (hooks included), from the moment it was allowed; zero for a call
    /// mm answered itself.
    pub run_time: std::time::Duration,
}

/// The state the pipeline keeps across the calls of one turn.
#[derive(Debug, Default)]
pub struct CallState {
    guard: LoopGuard,
    /// What the model was shown, once the turn loop said ([`CallState::shown`]); `mm serve`
    /// has no conversation, and no such check.
    sources: Option<Sources>,
}

impl CallState {
    /// Sets what the model was shown before the calls that follow: from then on a call of a
    /// declared or MCP tool with an identifier that comes from none of it is held back once
    /// ([`crate::sources`]).
    pub fn shown<'t>(&mut self, texts: impl IntoIterator<Item = &'t str>) {
        self.sources.get_or_insert_default().show(texts);
    }
}

/// Takes calls through every step. Built once per turn (or per server, for `mm serve`).
pub struct CallPipeline<'a> {
    registry: &'a Registry,
    cwd: PathBuf,
    limits: Limits,
    consent: Consent,
    hooks: Hooks,
    events: EventSink,
}

/// A tool found in the registry and its validated, coerced arguments.
type Checked<'a> = (&'a Arc<dyn Tool>, ValidArgs);

impl<'a> CallPipeline<'a> {
    pub fn new(
        registry: &'a Registry,
        cwd: PathBuf,
        limits: Limits,
        consent: Consent,
        events: EventSink,
    ) -> Self {
        Self {
            registry,
            cwd,
            limits,
            consent,
            hooks: Hooks::default(),
            events,
        }
    }

    /// Runs `hooks` around every call.
    pub fn with_hooks(mut self, hooks: Hooks) -> Self {
        self.hooks = hooks;
        self
    }

    /// Handles one call: reports it ([`Event::ToolCall`], output chunks, [`Event::ToolResult`])
    /// and returns its result with the record for the final report. A call the loop detector
    /// stops is not run and not reported as a result.
    pub async fn handle(
        &self,
        call: &ToolCall,
        state: &mut CallState,
        cancel: &CancellationToken,
    ) -> (CallResult, Option<ToolCallRecord>) {
        let sandbox = self
            .registry
            .get(&call.name)
            .map(|tool| tool.sandbox())
            .filter(|mode| mode.is_on());
        (self.events)(&Event::ToolCall {
            id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
            sandbox: sandbox.map(|mode| mode.to_string()),
        });
        let arguments = Arguments::decode(&call.arguments);
        let checked = self.check(call, &arguments);
        let repeats = state.guard.observe(&call.name, &arguments);
        if repeats >= self.limits.loop_threshold {
            let why = format!(
                "The call {}({}) was made {repeats} times in a row; it was not run and the turn was stopped.",
                call.name, call.arguments
            );
            let result = CallResult {
                content: why.clone(),
                repeats,
                stopped: Some(why),
                ..CallResult::default()
            };
            return (result, None);
        }
        let mut result = match checked {
            Err(answer) => refused(answer),
            Ok((tool, args)) => match state
                .sources
                .as_mut()
                .and_then(|sources| sources.hold_back(&call.name, tool.as_ref(), &args))
            {
                Some(held) => CallResult {
                    held_back: true,
                    held_again: held.again,
                    ..refused(held.answer)
                },
                None => self.consent_and_run(call, tool, &args, cancel).await,
            },
        };
        result.repeats = repeats;
        if repeats >= WARN_REPEATS_FROM {
            result.content.push_str(&format!(
                "\n\nNote: you have made this exact call {repeats} times in a row. \
                 Do not repeat it: change the arguments or answer the user."
            ));
        }
        let duration_ms = crate::millis(result.run_time);
        (self.events)(&Event::ToolResult {
            id: call.id.clone(),
            name: call.name.clone(),
            ok: result.ok,
            exit_code: result.exit_code,
            duration_ms,
            content: result.content.clone(),
        });
        let record = ToolCallRecord {
            name: call.name.clone(),
            arguments: arguments.value(),
            ok: result.ok,
            exit_code: result.exit_code,
            duration_ms,
        };
        (result, Some(record))
    }

    /// Look-up and validation: the tool and its coerced arguments, or the answer to the model.
    fn check(&self, call: &ToolCall, arguments: &Arguments) -> Result<Checked<'a>, String> {
        let Some(tool) = self.registry.get(&call.name) else {
            let names: Vec<String> = self
                .registry
                .iter()
                .map(|t| t.spec().name.clone())
                .collect();
            if let Some(skill) = self.registry.skill_named(&call.name) {
                return Err(format!(
                    "{skill:?} is a skill, not a tool: read it with read_skill \
                     ({{\"name\": {skill:?}}}) and then do what it says with the tools. \
                     The tools are: {}.",
                    names.join(", ")
                ));
            }
            return Err(format!(
                "There is no tool named {:?}. The tools are: {}.",
                call.name,
                names.join(", ")
            ));
        };
        let params = tool.params();
        match params.validate_arguments(arguments) {
            Ok(args) => Ok((tool, args)),
            Err(invalid) => {
                let mut answer = invalid.render(&call.name, params);
                if let Some(line) = self
                    .taker_of(&invalid.off_enum, &call.name)
                    .and_then(|other| invalid.taken_by(&other))
                {
                    answer.push('\n');
                    answer.push_str(&line);
                }
                Err(answer)
            }
        }
    }

    /// The one other tool whose enums take all of `values`, the values `tool`'s enums refused:
    /// a small model sends a currency to the weight converter (Qwen2.5-Coder-0.5B, "How much is
    /// 250 euros in US dollars?"), and told only that `"EUR"` is not a weight it sends a weight.
    fn taker_of(&self, values: &[Value], tool: &str) -> Option<String> {
        let mut takers = self
            .registry
            .iter()
            .filter(|t| t.spec().name != tool && t.params().enum_takes_all(values));
        let first = takers.next()?;
        takers.next().is_none().then(|| first.spec().name.clone())
    }

    async fn consent_and_run(
        &self,
        call: &ToolCall,
        tool: &Arc<dyn Tool>,
        args: &ValidArgs,
        cancel: &CancellationToken,
    ) -> CallResult {
        match self.consent(tool, args, cancel).await {
            Ok(()) => {}
            Err(Refusal::Answer(answer)) => return refused(answer),
            Err(Refusal::Interrupted) => {
                return CallResult {
                    content: "Not run: the user interrupted.".into(),
                    cancelled: true,
                    ..CallResult::default()
                };
            }
        }
        // The call's time counts from here: the run (hooks included), not the dialog.
        let started = Instant::now();
        if let Err(answer) = self.hooks.before(&call.name, args, &self.cwd, cancel).await {
            return refused(answer);
        }
        let mut result = self.run(call, tool, args, cancel).await;
        result.run_time = started.elapsed();
        let warnings = self
            .hooks
            .after(
                &call.name,
                args,
                &result.content,
                result.exit_code,
                &self.cwd,
                cancel,
            )
            .await;
        for message in warnings {
            (self.events)(&Event::Warning { message });
        }
        result
    }

    /// Whether the call may run. The user is shown the tool's [`preview`](Tool::preview) of
    /// the call (a declared tool's command line), else its arguments. A deny rule refuses any
    /// call; a reading tool that no rule denies never asks. Cancelling the turn (Ctrl-C, a
    /// signal) while the user is being asked withdraws the question.
    async fn consent(
        &self,
        tool: &Arc<dyn Tool>,
        args: &ValidArgs,
        cancel: &CancellationToken,
    ) -> Result<(), Refusal> {
        let name = tool.spec().name.as_str();
        let sandbox = self.registry.sandbox();
        // The file tools write from inside mm, where the kernel's sandbox does not reach: under
        // `sandbox:` a write outside the working folder (after `..` and symlinks) is refused
        // here, whoever consents.
        if sandbox.is_on()
            && !tool.read_only()
            && let Some(path) = tool.path(args)
        {
            let target = crate::permissions::Target::resolve(&self.cwd, path);
            if !target.inside {
                return Err(Refusal::Answer(format!(
                    "Not run: the sandbox ({sandbox}) allows writes only in the working folder; \
                     {} is outside it.",
                    target.shown
                )));
            }
        }
        let Consent::Rules { permissions, asker } = &self.consent else {
            return Ok(());
        };
        let target = tool
            .path(args)
            .map(|path| crate::permissions::Target::resolve(&self.cwd, path));
        // A path outside the working folder (after `..` and symlinks) asks even for a tool
        // that only reads (SPEC §3): `/etc/shadow`, `../../x`, a link out of the folder.
        let outside = target.as_ref().filter(|t| !t.inside).map(|t| {
            let verb = if tool.read_only() { "reads" } else { "writes" };
            format!("it {verb} {}, outside the working folder", t.shown)
        });
        match permissions.decide_at(name, args, target.as_ref()) {
            Decision::Allow => return Ok(()),
            Decision::Deny(rule) => {
                let file = permissions.project_file().map_or_else(
                    || "the project's permissions".into(),
                    |p| p.display().to_string(),
                );
                return Err(Refusal::Answer(format!(
                    "The user did not allow this call: the rule `deny {rule}` in {file} refuses it."
                )));
            }
            Decision::Ask if tool.read_only() && outside.is_none() => return Ok(()),
            Decision::Ask => {}
        }
        let request = ConsentRequest {
            tool: name.to_string(),
            summary: tool.preview(args).unwrap_or_else(|| subject(name, args)),
            always: always_rule(name, args),
            note: outside.clone(),
            sandbox: Some(tool.sandbox()).filter(|mode| mode.is_on()),
        };
        let answer = match asker {
            Some(asker) => tokio::select! {
                biased;
                () = cancel.cancelled() => Some(ConsentAnswer::Interrupt),
                answer = asker.ask(&request) => answer,
            },
            None => None,
        };
        match answer {
            Some(ConsentAnswer::Once) => Ok(()),
            Some(ConsentAnswer::Always { save }) => {
                if let Some(rule) = &request.always
                    && let Err(why) = permissions.remember(rule, save)
                {
                    (self.events)(&Event::Warning {
                        message: format!("`allow {rule}` was not saved: {why}"),
                    });
                }
                Ok(())
            }
            Some(ConsentAnswer::Deny {
                reason: Some(reason),
            }) if !reason.trim().is_empty() => Err(Refusal::Answer(format!(
                "The user did not allow this call. Their reason: {}",
                reason.trim()
            ))),
            Some(ConsentAnswer::Deny { .. }) => {
                Err(Refusal::Answer("The user did not allow this call.".into()))
            }
            Some(ConsentAnswer::Interrupt) => Err(Refusal::Interrupted),
            None => Err(Refusal::Answer(format!(
                "The user did not allow this call: {}it needs consent and there is no one to ask \
                 (mm runs without a terminal; the user can allow it with `allow:` or --yolo).",
                outside.map(|o| format!("{o}; ")).unwrap_or_default()
            ))),
        }
    }

    /// Runs the tool with its output capped, saved and echoed, then words how it ended.
    async fn run(
        &self,
        call: &ToolCall,
        tool: &Arc<dyn Tool>,
        args: &ValidArgs,
        cancel: &CancellationToken,
    ) -> CallResult {
        let progress_events = self.events.clone();
        let progress_id = call.id.clone();
        let ctx = ToolCtx {
            cwd: self.cwd.clone(),
            cancel: cancel.clone(),
            progress: Some(Arc::new(move |progress: Progress| {
                progress_events(&Event::ToolProgress {
                    id: progress_id.clone(),
                    progress,
                });
            })),
        };
        let events = self.events.clone();
        let id = call.id.clone();
        let mut out = Output::with_echo(
            self.limits.max_output,
            Box::new(move |chunk: &[u8]| {
                events(&Event::ToolOutput {
                    id: id.clone(),
                    chunk: chunk.to_vec(),
                });
            }),
        );
        let outcome = tool.run(args, &ctx, &mut out).await;
        let captured = out.finish();
        // The program's own error reaches the model as it wrote it; mm adds one line when it
        // reads like the sandbox refused a write or a connection.
        let blocked = crate::sandbox::blocked_note(
            tool.sandbox(),
            outcome != Outcome::Success,
            &captured.text,
        );
        let mut content = words(captured.text, outcome);
        if let Some(note) = blocked {
            content.push('\n');
            content.push_str(&note);
        }
        CallResult {
            content,
            ok: outcome == Outcome::Success,
            exit_code: outcome.exit_code(),
            cancelled: outcome == Outcome::Cancelled,
            ran: true,
            full_output: captured.full_output,
            ..CallResult::default()
        }
    }
}

/// Whether a tool message is one of mm's own answers to a call it did not run (invalid, unknown,
/// a skill's name, refused, stopped, interrupted) rather than a tool's output: for telling an
/// answer that copies one (`junk`) in a later turn, where only the text is left.
pub fn written_by_mm(content: &str) -> bool {
    let first = content.lines().next().unwrap_or_default();
    (first.starts_with("The call to ") && first.contains(" was not run"))
        || first.starts_with("There is no tool named ")
        || first.contains(" is a skill, not a tool: ")
        || first.starts_with("The user did not allow this call")
        || first.starts_with("Not run: ")
        || (first.starts_with("The call ") && first.contains(" times in a row"))
}

/// Why the consent step did not let a call run.
enum Refusal {
    /// The answer to the model.
    Answer(String),
    /// The user interrupted while being asked: the turn ends.
    Interrupted,
}

fn refused(content: String) -> CallResult {
    CallResult {
        content,
        ..CallResult::default()
    }
}

/// The output, then one line saying how it ended when that was not a success (SPEC §2: `exit
/// code N`, `timed out after Ns`, `cancelled`).
fn words(mut content: String, outcome: Outcome) -> String {
    let ending = match outcome {
        Outcome::Success | Outcome::Failed => None,
        Outcome::Exit(code) => Some(format!("exit code {code}")),
        Outcome::Killed => Some("killed by a signal".to_string()),
        Outcome::TimedOut(after) => Some(format!("timed out after {}s", after.as_secs_f64())),
        Outcome::Cancelled => Some("cancelled".to_string()),
    };
    match ending {
        Some(line) => {
            if !content.is_empty() && !content.ends_with('\n') {
                content.push('\n');
            }
            content.push_str(&line);
        }
        // An empty result reads to a small model as if nothing happened.
        None if content.is_empty() => content.push_str("(no output)"),
        None => {}
    }
    content
}

#[cfg(test)]
#[path = "pipeline_tests.rs"]
mod tests;
