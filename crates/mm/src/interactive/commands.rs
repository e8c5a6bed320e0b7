//! The `/` commands of interactive mode.

use mm_core::session::Session;

use crate::render::escape;
use crate::render::live::Live;
use crate::setup::Env;

/// Completed after a `/`.
pub const NAMES: &[&str] = &[
    "/help", "/tools", "/clear", "/model", "/session", "/exit", "/quit",
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Help,
    Tools,
    /// A new conversation (and session).
    Clear,
    /// Switch models; `None` shows the current one.
    Model(Option<String>),
    Session,
    Exit,
    /// Not a command: said so, not sent to the model.
    Unknown(String),
}

/// The command `line` is, if it is one: a line starting with `/` and a name. A line starting
/// with `//` is none (the caller sends it as `/…`).
pub fn parse(line: &str) -> Option<Command> {
    let line = line.trim();
    let rest = line.strip_prefix('/')?;
    if rest.starts_with('/') || rest.is_empty() {
        return None;
    }
    let (name, arg) = match rest.split_once(char::is_whitespace) {
        Some((name, arg)) => (name, arg.trim()),
        None => (rest, ""),
    };
    // `/etc/hosts is odd` is a message about a path, not a command.
    if name.contains('/') {
        return None;
    }
    Some(match name {
        "help" | "?" => Command::Help,
        "tools" => Command::Tools,
        "clear" | "new" => Command::Clear,
        "model" => Command::Model(Some(arg.to_string()).filter(|a| !a.is_empty())),
        "session" => Command::Session,
        "exit" | "quit" | "q" => Command::Exit,
        other => Command::Unknown(other.to_string()),
    })
}

/// What a command that only shows something shows.
pub fn show(command: &Command, env: &Env, session: &Session, live: &Live) -> String {
    match command {
        Command::Help => help(live),
        Command::Tools => tools(env, live),
        Command::Session if session.is_saved() => format!(
            "session {} ({} turn(s)), saved in {}\n",
            session.id(),
            session.user_turns(),
            session.path().display()
        ),
        Command::Session => "this session is not saved\n".to_string(),
        Command::Unknown(name) => format!(
            "mm: no command /{}; /help lists them (start a line with // to send one starting with /)\n",
            escape::line(name)
        ),
        _ => String::new(),
    }
}

fn help(live: &Live) -> String {
    let rows = [
        ("/help", "this help"),
        ("/tools", "the tools the model can call"),
        ("/clear", "start a new conversation (a new session)"),
        (
            "/model NAME",
            "talk to another model from now on (/model alone: which one)",
        ),
        ("/session", "this session's id and file"),
        ("/exit", "quit (also Ctrl-D, or Ctrl-C twice)"),
    ];
    let keys = [
        ("Enter", "send"),
        ("Alt-Enter, or \\ at the end", "a new line"),
        ("Up / Down", "earlier inputs (kept across sessions)"),
        (
            "Ctrl-C",
            "cancel the running tool or reply; at the prompt, twice to quit",
        ),
        ("Tab", "complete a /command"),
    ];
    let mut text = String::new();
    for (name, what) in rows {
        text.push_str(&format!("  {:<14} {}\n", live.paint("\x1b[1m", name), what));
    }
    text.push('\n');
    for (key, what) in keys {
        text.push_str(&format!("  {:<28} {}\n", key, live.dim(what)));
    }
    text
}

fn tools(env: &Env, live: &Live) -> String {
    let mut text = String::new();
    for tool in env.registry.iter() {
        let spec = tool.spec();
        let description = spec.description.lines().next().unwrap_or_default();
        let needs = if tool.read_only() { "" } else { " (asks)" };
        text.push_str(&format!(
            "  {}{} {}\n",
            live.paint("\x1b[1m", &escape::line(&spec.name)),
            live.dim(needs),
            live.dim(&escape::line(description))
        ));
    }
    if text.is_empty() {
        text.push_str("no tools\n");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands() {
        let cases = [
            ("/help", Some(Command::Help)),
            ("  /tools  ", Some(Command::Tools)),
            ("/clear", Some(Command::Clear)),
            (
                "/model qwen3-4b",
                Some(Command::Model(Some("qwen3-4b".into()))),
            ),
            ("/model", Some(Command::Model(None))),
            ("/exit", Some(Command::Exit)),
            ("/quit", Some(Command::Exit)),
            ("/frob x", Some(Command::Unknown("frob".into()))),
            ("/etc/hosts is odd", None),
            ("//help", None),
            ("/", None),
            ("hello /help", None),
        ];
        for (line, want) in cases {
            assert_eq!(parse(line), want, "{line:?}");
        }
    }
}
