//! Interactive mode: a conversation on the terminal, one turn per line typed.

use std::io::{BufRead, Write};
use std::sync::Arc;

use mm_core::provider::Message;
use mm_core::{EventSink, StopReason, run_turn};

use crate::cli::Cli;
use crate::render::{escape, human::Human};
use crate::setup::Env;
use crate::signals::Watch;
use crate::{Failure, exit};

pub async fn run(cli: &Cli, env: Env, watch: &Watch) -> Result<u8, Failure> {
    watch.set_interactive();
    let provider = env.provider(!cli.no_stream)?;
    let human = Arc::new(Human::new(true));
    let events: EventSink = Arc::new(move |event| human.event(event));
    let mut messages = vec![Message::System(env.instructions())];
    let name = env.config.name.clone().unwrap_or_else(|| "mm".into());
    eprintln!(
        "{name} — {} at {} ({}). Ctrl-C cancels a turn, Ctrl-D quits.",
        env.config.model, env.config.base_url, env.source
    );
    loop {
        eprint!("\n> ");
        let _ = std::io::stderr().flush();
        let line = tokio::task::spawn_blocking(|| {
            let mut line = String::new();
            std::io::stdin()
                .lock()
                .read_line(&mut line)
                .map(|n| (n, line))
        })
        .await
        .map_err(|e| Failure::runtime(e.to_string()))?;
        let text = match line {
            Ok((0, _)) | Err(_) => return Ok(exit::OK),
            Ok((_, text)) => text,
        };
        if text.trim().is_empty() {
            continue;
        }
        messages.push(Message::User(text.trim().to_string()));
        // A fresh token per turn: Ctrl-C cancels this turn only; SIGTERM and SIGHUP end mm.
        let opts = env.turn_options(events.clone(), watch.start_turn());
        let outcome = run_turn(&provider, &env.registry, &mut messages, &opts).await;
        if let Some(signal) = watch.end_turn() {
            return Ok(signal.exit_code());
        }
        match outcome {
            Ok(result) if result.stop_reason == StopReason::Done => {}
            Ok(result) => eprintln!(
                "\nmm: {}",
                escape::line(result.message.as_deref().unwrap_or_default())
            ),
            Err(e) => eprintln!("\nmm: {}", escape::line(&e.to_string())),
        }
    }
}
