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
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use mm_core::trust::{Grants, TrustStore};

use crate::cli::{Cli, Command};
use crate::consent::visible;
use crate::render::escape;
use crate::setup::Env;
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
    let dir = crate::sessions::data_dir().unwrap_or_else(|| std::env::temp_dir().join("mm"));
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

/// Decides whether the folder is trusted — asking on the terminal when it must — and takes
/// back what it grants when it is not. Call before anything is started (MCP servers).
pub async fn settle(cli: &Cli, env: &mut Env) -> Result<Option<Arc<Settled>>, Failure> {
    let grants = env.folder.grants.clone();
    let store = store();
    let interactive = cli.print.is_none() && matches!(cli.command, None | Some(Command::Tools));
    let terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let trusted = if grants.is_empty() || !interactive || !terminal {
        true
    } else if let Some(answer) = store.answer(&env.cwd, &grants) {
        answer
    } else {
        match ask(&env.cwd, &grants).await? {
            Some(answer) => {
                if let Err(e) = store.remember(&env.cwd, &grants, answer) {
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
    if !trusted {
        untrust(cli, env);
    }
    Ok(interactive.then(|| {
        Arc::new(Settled {
            store,
            folder: env.cwd.clone(),
            grants: Mutex::new(grants),
            trusted,
        })
    }))
}

/// Leaves out what the folder grants: its MCP stdio servers, hooks, `yolo`, allow rules (of
/// the agent file and `.mm/permissions`), and the key sent to its `base_url`.
fn untrust(cli: &Cli, env: &mut Env) {
    let agent_too = env.folder.agent_is_the_folders;
    if agent_too {
        mm_core::trust::take_back(&mut env.config, cli.yolo, cli.base_url.is_none());
    }
    env.permissions = env.permissions.clone().without_grants(agent_too, cli.yolo);
    env.registry = mm_core::Registry::from_config(&env.config, &env.skills);
    render::warn(&format!(
        "this folder is not trusted: what its files grant is not applied (MCP commands, hooks, \
         yolo, allow rules, the API key); the answer is kept in {}",
        store().path().display()
    ));
}

/// Asks on stderr, reads the answer from stdin (off the runtime's thread, so that a signal
/// still ends mm). `y` trusts, `n` does not; `None` at the end of the input.
async fn ask(folder: &std::path::Path, grants: &Grants) -> Result<Option<bool>, Failure> {
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
