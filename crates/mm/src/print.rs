//! Print mode (`mm -p`): one turn, the answer on stdout, everything else on stderr.

use std::io::{IsTerminal, Read};
use std::sync::Arc;
use std::time::Instant;

use mm_core::{EventSink, StopReason, TurnResult};

use crate::cli::{Cli, OutputFormat};
use crate::render::{escape, human::Human, json};
use crate::sessions;
use crate::setup::{Env, write_stdout};
use crate::signals::Watch;
use crate::{Failure, exit};

pub async fn run(cli: &Cli, env: Env, prompt: &str, watch: &Watch) -> Result<u8, Failure> {
    let prompt = read_prompt(prompt).await?;
    let provider = env.provider(!cli.no_stream)?;
    // Print mode keeps its conversation too: `mm -c -p …` goes on with it.
    let mut session = sessions::open(cli, &env).await?.session;

    let format = cli.output_format;
    let cancel = watch.start_turn();
    let (events, stream) = events(format, &cancel);
    let opts = env.turn_options(events, cancel);
    let started = Instant::now();
    let outcome = session
        .turn(
            &provider,
            &env.registry,
            &env.instructions(),
            &prompt,
            &opts,
        )
        .await;
    let ending = watch.end_turn();
    if let Some(e) = session.take_error() {
        crate::render::warn(&format!(
            "the session file {}: {e}",
            session.path().display()
        ));
    }
    let duration_ms = mm_core::millis(started.elapsed());

    if stream.as_ref().is_some_and(|s| s.closed()) {
        // Nobody reads the rest: the turn was cancelled and its tools killed.
        return Ok(signal_or(ending, exit::PIPE));
    }
    let session_id = session.is_saved().then(|| session.id());
    let result = match outcome {
        Ok(result) => result,
        Err(error) => {
            let message = error.to_string();
            write_failure(format, &message, duration_ms, session_id)?;
            return Err(Failure::runtime(message));
        }
    };
    // The answer is the turn's last reply: cut when that reply was.
    let truncated = result.stop_reason == StopReason::Done
        && provider.last_finish_reason().as_deref() == Some("length");
    write_result(format, &result, duration_ms, session.id(), truncated)?;
    if let Some(message) = &result.message {
        eprintln!("mm: {}", escape::line(message));
    }
    // A signal decides the code even when the turn ended before it saw the cancellation.
    Ok(signal_or(ending, exit_code(result.stop_reason)))
}

/// The prompt: as given, or read from stdin for `-`; an empty one is a usage error.
async fn read_prompt(prompt: &str) -> Result<String, Failure> {
    let prompt = if prompt == "-" {
        // Off the runtime's thread: a signal must end mm while it waits for stdin.
        tokio::task::spawn_blocking(|| {
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text).map(|_| text)
        })
        .await
        .map_err(|e| Failure::runtime(e.to_string()))?
        .map_err(|e| Failure::usage(format!("cannot read the prompt from stdin: {e}")))?
    } else {
        prompt.to_string()
    };
    if prompt.trim().is_empty() {
        return Err(Failure::usage("the prompt is empty"));
    }
    Ok(prompt)
}

/// Where the turn's events go: the echo on stderr, and with stream-json one line each on stdout
/// (a closed stdout cancels the turn through `cancel`).
fn events(
    format: OutputFormat,
    cancel: &tokio_util::sync::CancellationToken,
) -> (EventSink, Option<Arc<json::StreamJson>>) {
    let human = Arc::new(Human::new());
    let stream = (format == OutputFormat::StreamJson).then(|| {
        let stream = Arc::new(json::StreamJson::new(cancel.clone()));
        let watcher = stream.clone();
        json::watch_stdout(move || watcher.close());
        stream
    });
    let sink = stream.clone();
    let events: EventSink = Arc::new(move |event| {
        human.event(event);
        if let Some(stream) = &sink {
            stream.event(event);
        }
    });
    (events, stream)
}

/// A turn that failed: nothing on stdout in text mode (the error goes to stderr), else a result
/// object with `stop_reason: error`.
fn write_failure(
    format: OutputFormat,
    message: &str,
    duration_ms: u64,
    session_id: Option<&str>,
) -> Result<u8, Failure> {
    if format == OutputFormat::Text {
        return Ok(exit::OK);
    }
    let mut line = serde_json::json!({
        "type": "result", "result": "", "stop_reason": StopReason::Error, "error": message,
        "duration_ms": duration_ms,
    });
    if let (Some(id), Some(map)) = (session_id, line.as_object_mut()) {
        map.insert("session_id".into(), id.into());
    }
    write_stdout(&format!("{line}\n"))
}

/// The turn's result on stdout, in the chosen format.
fn write_result(
    format: OutputFormat,
    result: &TurnResult,
    duration_ms: u64,
    session_id: &str,
    truncated: bool,
) -> Result<u8, Failure> {
    match format {
        OutputFormat::Text if result.stop_reason == StopReason::Done => {
            // Raw for a pipe or a file (scripts get the answer as the model wrote it); on a
            // terminal, drawn with control characters escaped like everything else.
            let mut text = if std::io::stdout().is_terminal() {
                escape::block(&result.result).into_owned()
            } else {
                result.result.clone()
            };
            if !text.ends_with('\n') {
                text.push('\n');
            }
            write_stdout(&text)
        }
        OutputFormat::Text => Ok(exit::OK),
        OutputFormat::Json => {
            let object = json::result_object(result, duration_ms, session_id, truncated);
            write_stdout(&format!("{object}\n"))
        }
        OutputFormat::StreamJson => {
            let mut object = json::result_object(result, duration_ms, session_id, truncated);
            if let Some(map) = object.as_object_mut() {
                map.insert("type".into(), "result".into());
            }
            write_stdout(&format!("{object}\n"))
        }
    }
}

/// The exit code of a turn that ended by itself.
fn exit_code(stop: StopReason) -> u8 {
    match stop {
        StopReason::Done => exit::OK,
        StopReason::MaxTurns | StopReason::Loop | StopReason::NoAnswer => exit::STOPPED,
        StopReason::Cancelled => exit::INTERRUPTED,
        StopReason::Error => exit::RUNTIME,
    }
}

/// The code of the signal that ended mm, if one did, else `code`.
fn signal_or(ending: Option<crate::signals::Signal>, code: u8) -> u8 {
    ending.map_or(code, |signal| signal.exit_code())
}
