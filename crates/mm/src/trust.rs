//! Folder trust (SPEC §1): in interactive mode, what a folder's own files grant or start
//! (`./mm.md` found by default, `.mm/permissions`) is applied only once the user trusts the
//! folder. The first time, mm shows what the folder would grant and asks; the answer is
//! remembered per folder ([`mm_core::trust::TrustStore`]) and asked again when what the folder
//! grants changes. Print mode, `-a FILE` (for the agent file; the folder's `.mm/permissions`
//! still needs trust), `mm serve`, `mm check`, and a run with no terminal to ask on are trusted:
//! the user, or their script, chose them.
//!
//! ```text
//! This folder's files would:
//!   - starts the MCP server fs: mcp-server-fs .
//!   - turns consent off (yolo: true): every tool call runs without asking
//! Trust /home/me/cloned? [y] yes, apply them  [n] no, run without them
//!   >
//! ```
//!
//! An untrusted folder keeps what only restricts (deny rules) or only offers (declared tools,
//! which ask before they run; skills; instructions).

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use mm_core::trust::{Grants, TrustStore};

use crate::cli::{Cli, Command};
use crate::consent::visible;
use crate::render::escape;
use crate::{Failure, render};

/// What a folder's own files grant, as `setup::resolve` found it.
#[derive(Debug, Clone, Default)]
pub struct Folder {
    pub grants: Grants,
    /// The agent is the folder's `./mm.md`, found by default (not `-a FILE`).
    pub agent_is_the_folders: bool,
}

/// The trust file: `$XDG_DATA_HOME/mm/trusted-folders.json`.
pub fn store() -> TrustStore {
    let dir = crate::dirs::data_dir().unwrap_or_else(|| std::env::temp_dir().join("mm"));
    TrustStore::new(dir.join("trusted-folders.json"))
}

/// The folder's trust once settled, for the consent dialog: an "always, saved" answer adds a
/// rule to `.mm/permissions`, which is the user's own grant and needs no question next time.
pub struct Settled {
    store: TrustStore,
    folder: PathBuf,
    grants: Mutex<Grants>,
    trusted: bool,
}

impl Settled {
    /// The user saved `allow RULE` to `.mm/permissions`: remember the folder as trusted with it,
    /// when its other grants were trusted (or there were none). A failure only means the
    /// next start asks.
    pub fn saved(&self, rule: &str) {
        if !self.trusted {
            return;
        }
        let mut grants = self.grants.lock().unwrap_or_else(PoisonError::into_inner);
        *grants = grants.with_saved_rule(rule);
        let _ = self.store.remember(&self.folder, &grants, true);
    }
}

/// Decides whether the folder is trusted — asking on the terminal when it must. Returns the
/// answer (when `false`, the caller takes back what the folder grants: [`Env::untrust`]) and,
/// in interactive mode, the settled trust for the consent dialog. Call before anything is
/// started (MCP servers).
///
/// [`Env::untrust`]: crate::setup::Env::untrust
pub async fn settle(
    cli: &Cli,
    cwd: &Path,
    folder: &Folder,
) -> Result<(bool, Option<Arc<Settled>>), Failure> {
    let grants = folder.grants.clone();
    let store = store();
    let interactive = cli.print.is_none() && matches!(cli.command, None | Some(Command::Tools));
    let terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let trusted = if grants.is_empty() || !interactive || !terminal {
        true
    } else if let Some(answer) = store.answer(cwd, &grants) {
        answer
    } else {
        match ask(cwd, &grants).await? {
            Some(answer) => {
                if let Err(e) = store.remember(cwd, &grants, answer) {
                    render::warn(&format!(
                        "the answer is not remembered ({}: {e}); mm asks again next time",
                        store.path().display()
                    ));
                }
                answer
            }
            // No answer (the end of the input): not trusted, and asked again next time.
            None => false,
        }
    };
    let settled = interactive.then(|| {
        Arc::new(Settled {
            store,
            folder: cwd.to_path_buf(),
            grants: Mutex::new(grants),
            trusted,
        })
    });
    Ok((trusted, settled))
}

/// Asks on stderr, reads the answer from stdin (off the runtime's thread, so that a signal
/// still ends mm). `y` trusts, `n` does not; `None` at the end of the input.
async fn ask(folder: &Path, grants: &Grants) -> Result<Option<bool>, Failure> {
    let mut text = String::from("\nThis folder's files would:\n");
    for line in grants.lines() {
        text.push_str(&format!("  - {}\n", visible(line)));
    }
    text.push_str(&format!(
        "Trust {}? [y] yes, apply them  [n] no, run without them  (remembered; asked again when they change)\n",
        escape::line(&folder.to_string_lossy())
    ));
    tokio::task::spawn_blocking(move || {
        let say = |text: &str| {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "{text}");
            let _ = err.flush();
        };
        say(&text);
        loop {
            say(crate::consent::ANSWER_PROMPT);
            let mut answer = String::new();
            match std::io::stdin().lock().read_line(&mut answer) {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
            match answer.trim().to_ascii_lowercase().as_str() {
                "y" | "yes" => return Some(true),
                "n" | "no" => return Some(false),
                _ => say("  Answer y or n.\n"),
            }
        }
    })
    .await
    .map_err(|e| Failure::runtime(e.to_string()))
}
