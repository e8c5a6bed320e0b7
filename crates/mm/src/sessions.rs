//! Where mm keeps its data (sessions, the prompt history), the session of a run (new, or the
//! one `--continue` / `--resume ID` names), and `mm sessions`.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use mm_core::session::{Resumed, Session, SessionMeta, SessionStore};

use crate::Failure;
use crate::cli::Cli;
use crate::render::{escape, warn};
use crate::setup::{Env, write_stdout};

/// The prompt history of interactive mode.
pub fn history_file() -> Option<PathBuf> {
    crate::dirs::data_dir().map(|d| d.join("history"))
}

fn store() -> SessionStore {
    // Without a home there is nowhere to keep sessions but the temporary folder.
    let dir = crate::dirs::data_dir().unwrap_or_else(|| std::env::temp_dir().join("mm"));
    SessionStore::new(dir.join("sessions"))
}

/// The session of this run: the one `--resume ID` names, the latest of this folder with
/// `--continue`, else a new one. The files are read on the blocking pool, so that a slow file
/// system never holds the runtime's thread (and with it the signal handling).
pub async fn open(cli: &Cli, env: &Env) -> Result<Opened, Failure> {
    let resume = cli.resume.clone();
    let latest = cli.resume_latest;
    let meta = meta(env);
    tokio::task::spawn_blocking(move || open_blocking(resume, latest, &meta))
        .await
        .map_err(|e| Failure::runtime(e.to_string()))?
}

fn open_blocking(
    resume: Option<String>,
    latest: bool,
    meta: &SessionMeta,
) -> Result<Opened, Failure> {
    let store = store();
    let id = match (resume, latest) {
        (Some(id), _) => Some(id),
        (None, true) => Some(store.latest_in(&meta.cwd).ok_or_else(|| {
            Failure::usage(format!(
                "no session to continue in {} (mm sessions --all lists every session)",
                meta.cwd.display()
            ))
        })?),
        (None, false) => None,
    };
    match id {
        Some(id) => {
            let Resumed {
                session,
                warnings,
                interrupted,
            } = store
                .resume(&id)
                .map_err(|e| Failure::usage(e.to_string()))?;
            for warning in warnings {
                warn(&format!("{}: {warning}", session.path().display()));
            }
            Ok(Opened {
                session,
                resumed: true,
                interrupted,
            })
        }
        None => Ok(Opened {
            session: create(&store, meta),
            resumed: false,
            interrupted: false,
        }),
    }
}

/// A new session (for `/clear` too). When its file cannot be created, the session is kept in
/// memory only, with a warning.
pub fn new_session(env: &Env) -> Session {
    create(&store(), &meta(env))
}

fn meta(env: &Env) -> SessionMeta {
    SessionMeta {
        cwd: env.cwd.clone(),
        agent: env.source.clone(),
        model: env.config.model.clone(),
    }
}

fn create(store: &SessionStore, meta: &SessionMeta) -> Session {
    store.create(meta).unwrap_or_else(|e| {
        warn(&format!("the session is not saved: {e}"));
        Session::unsaved()
    })
}

/// The session of a run and how it was found.
pub struct Opened {
    pub session: Session,
    pub resumed: bool,
    /// The last turn of a resumed session was cut short (mm was killed during it).
    pub interrupted: bool,
}

/// `mm sessions`: this folder's sessions (every folder's with `--all`), oldest first. Read on
/// the blocking pool (see [`open`]).
pub async fn list(cwd: &Path, all: bool) -> Result<u8, Failure> {
    let store = store();
    let reader = store.clone();
    let listed = tokio::task::spawn_blocking(move || reader.list())
        .await
        .map_err(|e| Failure::runtime(e.to_string()))?;
    let sessions: Vec<_> = listed.into_iter().filter(|s| all || s.cwd == cwd).collect();
    if sessions.is_empty() {
        let where_ = if all {
            String::new()
        } else {
            format!(" in {} (--all lists every folder's)", cwd.display())
        };
        eprintln!("mm: no sessions{where_}");
        return Ok(crate::exit::OK);
    }
    let now = now_ms();
    let mut out = String::new();
    for s in &sessions {
        let title = escape::line(&s.title);
        let title: String = if title.chars().count() > 60 {
            title.chars().take(59).chain(['…']).collect()
        } else {
            title.into_owned()
        };
        let turns = if s.turns == 1 { "turn" } else { "turns" };
        out.push_str(&format!(
            "{}  {:>9}  {:>3} {turns:<5}  {title}",
            escape::line(&s.id),
            age(now.saturating_sub(s.updated_ms)),
            s.turns
        ));
        if all {
            out.push_str(&format!("  ({})", escape::line(&s.cwd.to_string_lossy())));
        }
        out.push('\n');
    }
    out.push_str(&format!(
        "{} session(s) in {}; mm --resume ID goes on with one, mm --continue with the latest here.\n",
        sessions.len(),
        store.dir().display()
    ));
    write_stdout(&out)
}

/// `5 s ago`, `3 min ago`, `2 h ago`, `4 days ago`.
fn age(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0..60 => format!("{s} s ago"),
        60..3600 => format!("{} min ago", s / 60),
        3600..86_400 => format!("{} h ago", s / 3600),
        _ => format!("{} days ago", s / 86_400),
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, mm_core::millis)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages() {
        assert_eq!(age(0), "0 s ago");
        assert_eq!(age(59_999), "59 s ago");
        assert_eq!(age(60_000), "1 min ago");
        assert_eq!(age(7_200_000), "2 h ago");
        assert_eq!(age(3 * 86_400_000), "3 days ago");
    }
}
