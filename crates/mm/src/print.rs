//! Print mode (`mm -p`): one turn, the answer on stdout, everything else on stderr.

use std::io::Read;
use std::sync::Arc;
use std::time::Instant;

use mm_core::provider::Message;
use mm_core::{EventSink, StopReason, run_turn};
use tokio_util::sync::CancellationToken;

use crate::cli::{Cli, OutputFormat};
use crate::render::{human::Human, json};
use crate::setup::{Env, write_stdout};
use crate::{Failure, exit};

pub async fn run(cli: &Cli, env: Env, prompt: &str) -> Result<u8, Failure> {
    let prompt = if prompt == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| Failure::usage(format!("cannot read the prompt from stdin: {e}")))?;
        text
    } else {
        prompt.to_string()
    };
    if prompt.trim().is_empty() {
        return Err(Failure::usage("the prompt is empty"));
    }
    let provider = env.provider(!cli.no_stream)?;
    let cancel = CancellationToken::new();
    watch_interrupts(cancel.clone());

    let format = cli.output_format;
    let human = Arc::new(Human::new(false));
    let events: EventSink = Arc::new(move |event| {
        human.event(event);
        if format == OutputFormat::StreamJson {
            json::event_line(event);
        }
    });
    let opts = env.turn_options(events, cancel);
    let mut messages = vec![
        Message::System(env.instructions().to_string()),
        Message::User(prompt),
    ];
    let started = Instant::now();
    let outcome = run_turn(&provider, &env.registry, &mut messages, &opts).await;
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);

    let result = match outcome {
        Ok(result) => result,
        Err(error) => {
            let message = error.to_string();
            match format {
                OutputFormat::Text => {}
                OutputFormat::Json | OutputFormat::StreamJson => {
                    let line = serde_json::json!({
                        "type": "result", "result": "", "stop_reason": "error", "error": message,
                        "duration_ms": duration_ms,
                    });
                    write_stdout(&format!("{line}\n"))?;
                }
            }
            return Err(Failure::runtime(message));
        }
    };
    match format {
        OutputFormat::Text => {
            if result.stop_reason == StopReason::Done {
                let mut text = result.result.clone();
                if !text.ends_with('\n') {
                    text.push('\n');
                }
                write_stdout(&text)?;
            }
        }
        OutputFormat::Json => {
            write_stdout(&format!("{}\n", json::result_object(&result, duration_ms)))?;
        }
        OutputFormat::StreamJson => {
            let mut object = json::result_object(&result, duration_ms);
            if let Some(map) = object.as_object_mut() {
                map.insert("type".into(), "result".into());
            }
            write_stdout(&format!("{object}\n"))?;
        }
    }
    if let Some(message) = &result.message {
        eprintln!("mm: {message}");
    }
    Ok(match result.stop_reason {
        StopReason::Done => exit::OK,
        StopReason::MaxTurns | StopReason::Loop => exit::STOPPED,
        StopReason::Cancelled => exit::INTERRUPTED,
    })
}

/// The first Ctrl-C cancels the turn (the running tool's process group is killed and mm exits
/// 130); a second one exits at once.
pub fn watch_interrupts(cancel: CancellationToken) {
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_err() {
            return;
        }
        cancel.cancel();
        if tokio::signal::ctrl_c().await.is_ok() {
            std::process::exit(i32::from(exit::INTERRUPTED));
        }
    });
}
