//! Interactive mode (`mm` without `-p`): a conversation on the terminal, one turn per input.
//!
//! The session (mm-core's [`Session`](mm_core::session::Session)) owns the conversation and
//! writes it as it happens; this module only reads input (interactive/input.rs), draws events
//! (render/live.rs) and answers consent requests (the dialog). Ctrl-C cancels the running
//! turn — the tool's process group is killed, the model's reply dropped — and returns to the
//! prompt; at the prompt, Ctrl-C twice or Ctrl-D ends mm.

mod commands;
mod input;

use std::io::IsTerminal;
use std::sync::Arc;

use async_trait::async_trait;
use mm_core::provider::{Message, Provider};
use mm_core::session::Session;
use mm_core::{ConsentAnswer, ConsentAsker, ConsentRequest, StopReason};
use nix::sys::termios::{LocalFlags, SetArg, Termios, tcgetattr, tcsetattr};

use self::commands::Command;
use self::input::{Input, Read};
use crate::cli::Cli;
use crate::consent;
use crate::render::escape;
use crate::render::live::Live;
use crate::sessions;
use crate::setup::Env;
use crate::signals::Watch;
use crate::{Failure, exit};

/// Messages of a resumed session shown again at start.
const RESUME_SHOWN: usize = 6;

pub async fn run(cli: &Cli, mut env: Env, watch: &Watch) -> Result<u8, Failure> {
    watch.set_interactive();
    let terminal = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    // Put back the terminal's mode however mm leaves (a dialog may be reading in raw mode
    // when a signal ends mm).
    let _restore = terminal.then(TerminalMode::save);
    let color = terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let live = Live::new(color, terminal);
    let input = Input::start(terminal, sessions::history_file(), commands::NAMES.to_vec());
    if terminal {
        env.asker = Some(Arc::new(Dialog {
            input: input.clone(),
            live: live.clone(),
            trust: env.trust.clone(),
        }));
    }
    let provider = env.provider(!cli.no_stream)?;
    let opened = sessions::open(cli, &env).await?;
    let mut chat = Chat {
        env,
        provider,
        session: opened.session,
        live,
        terminal,
        stream: !cli.no_stream,
    };
    banner(&chat.live, &chat.env, &chat.session);
    if opened.resumed {
        show_resumed(&chat.live, &chat.session, opened.interrupted);
    }

    let mut interrupted_at_prompt = false;
    loop {
        chat.env.refresh_mcp().await;
        let text = match input.prompt().await {
            Read::Line(text) => text,
            Read::Interrupted if interrupted_at_prompt => break,
            Read::Interrupted => {
                interrupted_at_prompt = true;
                chat.live
                    .say(&chat.live.dim("(Ctrl-C again or Ctrl-D to quit)\n"));
                continue;
            }
            Read::Eof => break,
        };
        interrupted_at_prompt = false;
        let text = input::joined(&text);
        if text.trim().is_empty() {
            continue;
        }
        match commands::parse(&text) {
            Some(Command::Exit) => break,
            Some(command) => chat.command(command),
            None => {
                // `//…` is a message starting with `/`.
                let text = match text.trim_start().strip_prefix("//") {
                    Some(rest) => format!("/{rest}"),
                    None => text,
                };
                if let Some(code) = chat.turn(&text, watch).await {
                    return Ok(code);
                }
            }
        }
    }
    let session = &chat.session;
    if session.is_saved() && session.user_turns() > 0 {
        chat.live.say(&chat.live.dim(&format!(
            "Session {id} saved; `mm --resume {id}` goes on with it.\n",
            id = session.id()
        )));
    }
    Ok(exit::OK)
}

/// What a conversation on the terminal holds between turns.
struct Chat {
    env: Env,
    provider: Provider,
    session: Session,
    live: Arc<Live>,
    terminal: bool,
    /// `--no-stream` not given.
    stream: bool,
}

impl Chat {
    /// One turn; `Some(code)` when a signal came during it and mm must end.
    async fn turn(&mut self, text: &str, watch: &Watch) -> Option<u8> {
        let live = &self.live;
        // Keys typed while the turn runs are kept for the prompt, not echoed into the output.
        let _quiet = self.terminal.then(TerminalMode::without_echo);
        // A fresh token per turn: Ctrl-C cancels this turn only; SIGTERM and SIGHUP end mm.
        let opts = self.env.turn_options(live.sink(), watch.start_turn());
        live.begin_turn(&self.env.config.model);
        let ticker = live.spawn_ticker();
        let instructions = self.env.instructions();
        let outcome = self
            .session
            .turn(
                &self.provider,
                &self.env.registry,
                &instructions,
                text,
                &opts,
            )
            .await;
        ticker.abort();
        let tokens = outcome.as_ref().ok().map(|r| r.usage.completion_tokens);
        let note = match &outcome {
            Ok(result) if result.stop_reason == StopReason::Done => None,
            Ok(result) if result.stop_reason == StopReason::Cancelled => {
                Some(live.dim("Interrupted."))
            }
            Ok(result) => Some(format!(
                "mm: {}",
                escape::line(result.message.as_deref().unwrap_or_default())
            )),
            Err(e) => Some(format!("mm: {}", escape::line(&e.to_string()))),
        };
        live.end_turn(tokens, note.as_deref());
        if let Some(signal) = watch.end_turn() {
            return Some(signal.exit_code());
        }
        if let Some(e) = self.session.take_error() {
            crate::render::warn(&format!(
                "the session file {}: {e}",
                self.session.path().display()
            ));
        }
        None
    }

    /// A `/` command other than `/exit`.
    fn command(&mut self, command: Command) {
        let live = &self.live;
        match command {
            Command::Clear => {
                self.session = sessions::new_session(&self.env);
                let clear = if self.terminal { "\x1b[H\x1b[2J" } else { "" };
                live.say(&format!(
                    "{clear}{}\n",
                    live.dim(&format!("A new conversation{}.", saved_as(&self.session)))
                ));
            }
            Command::Model(None) => live.say(&format!(
                "model {} at {}\n",
                escape::line(&self.env.config.model),
                escape::line(&self.env.config.base_url)
            )),
            Command::Model(Some(name)) => {
                let before = std::mem::replace(&mut self.env.config.model, name);
                match self.env.provider(self.stream) {
                    Ok(provider) => {
                        self.provider = provider;
                        let model = &self.env.config.model;
                        self.session
                            .note(&serde_json::json!({"type": "model", "model": model}));
                        live.say(&format!("Model: {}\n", escape::line(model)));
                    }
                    Err(e) => {
                        self.env.config.model = before;
                        live.say(&format!("mm: {}\n", escape::line(&e.message)));
                    }
                }
            }
            other => live.say(&commands::show(&other, &self.env, &self.session, live)),
        }
    }
}

fn banner(live: &Live, env: &Env, session: &Session) {
    let name = env.config.name.clone().unwrap_or_else(|| "mm".into());
    live.say(&format!(
        "{} {}\n{}\n",
        live.paint("\x1b[1m", &escape::line(&name)),
        live.dim(&format!(
            "· {} at {} · {}{}",
            escape::line(&env.config.model),
            escape::line(&env.config.base_url),
            escape::line(&env.source),
            saved_as(session)
        )),
        live.dim("/help for commands · Alt-Enter or a final \\ for a new line · Ctrl-C cancels · Ctrl-D quits"),
    ));
}

fn saved_as(session: &Session) -> String {
    if session.is_saved() {
        format!(" · session {}", session.id())
    } else {
        " · not saved".to_string()
    }
}

/// The end of a resumed conversation, so that the user sees where they are.
fn show_resumed(live: &Live, session: &Session, interrupted: bool) {
    let messages = session.messages();
    let shown = &messages[messages.len().saturating_sub(RESUME_SHOWN)..];
    let mut text = live.dim(&format!(
        "Resumed: {} earlier message(s){}.\n",
        messages.len(),
        if interrupted {
            "; the last turn was cut short (its unfinished calls are marked unknown)"
        } else {
            ""
        }
    ));
    for message in shown {
        let line = match message {
            Message::User(t) => format!("> {}", first_line(t)),
            Message::Assistant {
                content,
                tool_calls,
            } => {
                let calls: Vec<String> = tool_calls
                    .iter()
                    .map(|c| escape::line(&c.name).into_owned())
                    .collect();
                match (
                    content.as_deref().filter(|c| !c.is_empty()),
                    calls.is_empty(),
                ) {
                    (Some(c), true) => first_line(c),
                    (Some(c), false) => format!("{} ● {}", first_line(c), calls.join(", ")),
                    (None, _) => format!("● {}", calls.join(", ")),
                }
            }
            Message::Tool { name, content, .. } => {
                format!("  └ {}: {}", escape::line(name), first_line(content))
            }
            Message::System(_) => continue,
        };
        text.push_str(&live.dim(&line));
        text.push('\n');
    }
    live.say(&text);
}

/// The first line of `text`, escaped and cut to 100 characters.
fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    let shown: String = escape::line(line).chars().take(100).collect();
    if shown.len() < line.len() || text.lines().nth(1).is_some() {
        format!("{shown} …")
    } else {
        shown
    }
}

/// The consent dialog of interactive mode: drawn on the screen, answered through the one
/// keyboard reader. Ctrl-C in the dialog interrupts the turn.
struct Dialog {
    input: Input,
    live: Arc<Live>,
    /// Told about a rule saved to `.mm/permissions` (the user's own grant; trust.rs).
    trust: Option<Arc<crate::trust::Settled>>,
}

/// Lets the status line be drawn again however the dialog ends (it is dropped when the turn
/// is cancelled while asking).
struct Paused<'a>(&'a Live);

impl Drop for Paused<'_> {
    fn drop(&mut self) {
        self.0.resume();
    }
}

#[async_trait]
impl ConsentAsker for Dialog {
    async fn ask(&self, request: &ConsentRequest) -> Option<ConsentAnswer> {
        self.live.pause();
        let _paused = Paused(&self.live);
        self.live.say(&format!(
            "{}\n",
            consent::dialog(request, self.live.color())
        ));
        let read = |prompt: &'static str| async move {
            match self.input.answer(prompt).await {
                Read::Line(typed) => consent::Typed::Line(typed),
                Read::Interrupted => consent::Typed::Interrupted,
                Read::Eof => consent::Typed::Eof,
            }
        };
        let say = |text: &str| self.live.say(text);
        let answer = consent::answer(request, read, say)
            .await
            .unwrap_or(ConsentAnswer::Deny { reason: None });
        if let (ConsentAnswer::Always { save: true }, Some(rule), Some(trust)) =
            (&answer, &request.always, &self.trust)
        {
            trust.saved(rule);
        }
        let said = match &answer {
            ConsentAnswer::Once => "allowed once".to_string(),
            ConsentAnswer::Always { save } => format!(
                "always allowed: {}{}",
                escape::line(request.always.as_deref().unwrap_or_default()),
                if *save {
                    " (saved to .mm/permissions)"
                } else {
                    " (this session)"
                }
            ),
            ConsentAnswer::Deny { .. } => "denied".to_string(),
            _ => "interrupted".to_string(),
        };
        self.live.say(&self.live.dim(&format!("  {said}\n")));
        Some(answer)
    }
}

/// The terminal's mode when mm started, put back when dropped.
struct TerminalMode(Option<Termios>);

impl TerminalMode {
    fn save() -> Self {
        Self(tcgetattr(std::io::stdin()).ok())
    }

    /// Turns the terminal's echo off until the returned mode is dropped. Line editing and
    /// signals stay: Ctrl-C is still a SIGINT.
    fn without_echo() -> Self {
        let saved = Self::save();
        if let Some(mode) = &saved.0 {
            let mut quiet = mode.clone();
            quiet.local_flags.remove(LocalFlags::ECHO);
            let _ = tcsetattr(std::io::stdin(), SetArg::TCSANOW, &quiet);
        }
        saved
    }
}

impl Drop for TerminalMode {
    fn drop(&mut self) {
        if let Some(mode) = &self.0 {
            let _ = tcsetattr(std::io::stdin(), SetArg::TCSANOW, mode);
        }
    }
}
