//! Whether a run went right and, when not, why: one failure class per failed run, the first
//! that applies in the order of [`FailureClass::ALL`] (docs/eval.md).

use std::path::Path;

use mm_core::junk::{self, AnswerContext, Junk};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::suite::{AnswerCheck, Expect};

/// Why a run failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureClass {
    /// mm failed, timed out, or printed no result.
    Error,
    /// The loop detector or `max_turns` stopped the turn.
    Loop,
    /// A `no_call` case ran one of the agent's programs.
    UnwantedCall,
    /// A call case ran none of the agent's programs.
    NoCall,
    /// Another of the agent's programs ran, never the expected one.
    WrongTool,
    /// The expected program ran, never with an expected argv.
    WrongArgs,
    /// The answer is junk ([`mm_core::junk`]).
    Junk,
    /// The answer failed the case's `answer:` checks.
    BadAnswer,
}

impl FailureClass {
    /// Every class, in the order they are decided (and the table's columns).
    pub const ALL: [FailureClass; 8] = [
        FailureClass::Error,
        FailureClass::Loop,
        FailureClass::UnwantedCall,
        FailureClass::NoCall,
        FailureClass::WrongTool,
        FailureClass::WrongArgs,
        FailureClass::Junk,
        FailureClass::BadAnswer,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FailureClass::Error => "error",
            FailureClass::Loop => "loop",
            FailureClass::UnwantedCall => "unwanted_call",
            FailureClass::NoCall => "no_call",
            FailureClass::WrongTool => "wrong_tool",
            FailureClass::WrongArgs => "wrong_args",
            FailureClass::Junk => "junk",
            FailureClass::BadAnswer => "bad_answer",
        }
    }
}

/// What the judged turn of a run showed.
pub struct Judged<'a> {
    pub expect: &'a Expect,
    pub check: &'a AnswerCheck,
    /// mm failed (or an earlier turn did), timed out, or printed no result line.
    pub failed: bool,
    pub stop_reason: &'a str,
    /// What the recording wrapper wrote in the judged turn.
    pub recorded: &'a [Value],
    pub answer: &'a str,
    /// mm's own verdict: the model's last reply was useless, so mm showed a call's output in its
    /// place or gave no answer (the result line's `junk`).
    pub mm_junk: Option<Junk>,
    /// What the model saw, for [`junk::judge`].
    pub context: AnswerContext<'a>,
}

/// The judgement of a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Verdict {
    pub failure: Option<FailureClass>,
    pub junk: Option<Junk>,
    /// The `answer:` check that failed, said for a person.
    pub check_failed: Option<String>,
    /// The junk class of the answer mm printed as the model's, whatever `failure` is (a run
    /// with a wrong call may print junk too); never a call's output mm showed in its place.
    pub printed_junk: Option<Junk>,
}

pub fn verdict(run: &Judged<'_>) -> Verdict {
    // The model's last reply, judged once, whatever the calls were: unless mm replaced it (then
    // mm said so, and the output it showed is no junk of the model's). What mm printed when
    // the turn ended with an answer (`done`).
    let ended = !run.failed && matches!(run.stop_reason, "done" | "no_answer");
    let model_junk = if ended && run.mm_junk.is_none() {
        junk::judge(run.answer, &run.context)
    } else {
        None
    };
    let printed_junk = model_junk.filter(|_| run.stop_reason == "done");
    let fail = |class| Verdict {
        failure: Some(class),
        printed_junk,
        ..Verdict::default()
    };
    if run.failed || !matches!(run.stop_reason, "done" | "no_answer" | "loop" | "max_turns") {
        return fail(FailureClass::Error);
    }
    if matches!(run.stop_reason, "loop" | "max_turns") {
        return fail(FailureClass::Loop);
    }
    if let Some(class) = calls(run.expect, run.recorded) {
        return fail(class);
    }
    if let Some(junk) = run.mm_junk.or(model_junk) {
        return Verdict {
            junk: Some(junk),
            ..fail(FailureClass::Junk)
        };
    }
    match run.check.failed(run.answer) {
        Some(why) => Verdict {
            check_failed: Some(why),
            ..fail(FailureClass::BadAnswer)
        },
        None => Verdict::default(),
    }
}

/// How the programs that ran (compared by file name) fail the expectation, if they do: for a
/// call case, the expected program must have run with exactly one of the expected argv lists
/// (other calls do not matter: a model may retry after an invalid call); for `no_call`, none
/// of the agent's programs may have run.
pub fn calls(expect: &Expect, recorded: &[Value]) -> Option<FailureClass> {
    let Expect::Call { program, argv } = expect else {
        return (!recorded.is_empty()).then_some(FailureClass::UnwantedCall);
    };
    if recorded.is_empty() {
        return Some(FailureClass::NoCall);
    }
    let name = Path::new(program)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut ran = recorded
        .iter()
        .filter(|r| r["program"].as_str() == Some(name.as_str()))
        .peekable();
    if ran.peek().is_none() {
        return Some(FailureClass::WrongTool);
    }
    let right = ran.any(|r| {
        r["argv"].as_array().is_some_and(|got| {
            argv.iter().any(|want| {
                got.len() == want.len() && got.iter().zip(want).all(|(g, w)| g.as_str() == Some(w))
            })
        })
    });
    (!right).then_some(FailureClass::WrongArgs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Judged whatever the calls were, and only what the model's reply put on the screen.
    #[test]
    fn printed_junk_is_the_models_reply_shown_as_the_answer() {
        let prompts = ["Please cancel the 11 o'clock meeting."];
        let outputs = ["Alster is booked at 11:00 by someone else, ask the organiser\nexit code 1"];
        let expect = Expect::Call {
            program: "cancel.sh".into(),
            argv: vec![vec!["11:00".into()]],
        };
        let check = AnswerCheck::default();
        let copy = outputs[0];
        // A wrong call: the printed answer is judged all the same.
        let recorded = [json!({"program": "cancel.sh", "argv": ["12:00"]})];
        let printed = |failed, stop_reason, answer, mm_junk| {
            verdict(&Judged {
                expect: &expect,
                check: &check,
                failed,
                stop_reason,
                recorded: &recorded,
                answer,
                mm_junk,
                context: AnswerContext {
                    prompts: &prompts,
                    tool_outputs: &outputs,
                    ..AnswerContext::default()
                },
            })
            .printed_junk
        };
        assert_eq!(
            printed(false, "done", copy, None),
            Some(Junk::CopiedToolOutput)
        );
        assert_eq!(printed(false, "done", "", None), Some(Junk::Empty));
        assert_eq!(
            printed(
                false,
                "done",
                "I could not cancel it: Alster is someone else's.",
                None
            ),
            None
        );
        // mm showed the output under its notice, or gave no answer, or failed: nothing printed
        // was the model's.
        assert_eq!(
            printed(false, "done", copy, Some(Junk::CopiedToolOutput)),
            None
        );
        assert_eq!(printed(false, "no_answer", "", None), None);
        assert_eq!(printed(true, "done", copy, None), None);
        assert_eq!(printed(false, "max_turns", copy, None), None);
    }

    #[test]
    fn success_needs_exactly_the_expected_argv() {
        let expect = Expect::Call {
            program: "./scripts/release.sh".into(),
            argv: vec![
                vec!["1.4.2".into(), "--channel=beta".into()],
                vec![
                    "1.4.2".into(),
                    "--channel=beta".into(),
                    "--dry-run=false".into(),
                ],
            ],
        };
        let explicit = json!({"program": "release.sh", "argv": ["1.4.2", "--channel=beta", "--dry-run=false"]});
        assert_eq!(calls(&expect, &[explicit]), None);
        let right = json!({"program": "release.sh", "argv": ["1.4.2", "--channel=beta"]});
        let extra = json!({"program": "release.sh", "argv": ["1.4.2", "--channel=beta", "x"]});
        let other = json!({"program": "status.sh", "argv": ["1.4.2", "--channel=beta"]});
        assert_eq!(calls(&expect, &[other.clone(), right]), None);
        assert_eq!(
            calls(&expect, &[extra, other.clone()]),
            Some(FailureClass::WrongArgs)
        );
        assert_eq!(
            calls(&expect, std::slice::from_ref(&other)),
            Some(FailureClass::WrongTool)
        );
        assert_eq!(calls(&expect, &[]), Some(FailureClass::NoCall));
        assert_eq!(calls(&Expect::NoCall, &[]), None);
        assert_eq!(
            calls(&Expect::NoCall, &[other]),
            Some(FailureClass::UnwantedCall)
        );
    }

    #[test]
    fn the_first_class_that_applies() {
        let expect = Expect::Call {
            program: "status.sh".into(),
            argv: vec![vec!["billing".into()]],
        };
        let ran = [json!({"program": "status.sh", "argv": ["billing"]})];
        let check = AnswerCheck::default();
        let prompts = ["What is the status of billing?"];
        let outputs = ["billing: running, version 2.3.1"];
        let judged = |failed, stop_reason, recorded: &'static [Value], answer| {
            verdict(&Judged {
                expect: &expect,
                check: &check,
                failed,
                stop_reason,
                recorded,
                answer,
                mm_junk: None,
                context: AnswerContext {
                    prompts: &prompts,
                    tool_outputs: &outputs,
                    calls_succeeded: true,
                    ..AnswerContext::default()
                },
            })
            .failure
        };
        let ran: &'static [Value] = Box::leak(Box::new(ran));
        assert_eq!(
            judged(true, "done", ran, "Running."),
            Some(FailureClass::Error)
        );
        assert_eq!(judged(false, "error", ran, ""), Some(FailureClass::Error));
        assert_eq!(
            judged(false, "cancelled", ran, ""),
            Some(FailureClass::Error)
        );
        assert_eq!(judged(false, "loop", ran, ""), Some(FailureClass::Loop));
        assert_eq!(
            judged(false, "max_turns", &[], ""),
            Some(FailureClass::Loop)
        );
        assert_eq!(
            judged(false, "done", &[], "Running."),
            Some(FailureClass::NoCall)
        );
        assert_eq!(judged(false, "done", ran, ""), Some(FailureClass::Junk));
        assert_eq!(judged(false, "done", ran, "Billing is running."), None);
    }
}
