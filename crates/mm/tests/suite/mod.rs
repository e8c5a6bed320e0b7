//! Shared fixtures: a temporary project folder with an agent file and recording scripts.

mod agent_errors;
mod allow_rules;
mod builtins;
mod calls;
mod e2e;
mod eval;
mod hardening;
mod hooks;
mod hostile;
mod interactive;
mod mcp;
mod output;
mod processes;
mod provider_errors;
mod provider_hardening;
mod pty;
mod sandbox;
mod serve;
mod sessions;
mod signals;
mod trust;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use mm_test_support::ScriptedServer;
use serde_json::Value;

/// A project folder for one test: `mm.md`, and `./rec`, a script that records its argv.
pub struct Case {
    pub dir: tempfile::TempDir,
}

/// `./rec` appends its arguments, each ended by NUL, then a newline, to `argv.log`, and prints
/// `recorded N args`.
const REC: &str = r#"#!/bin/sh
here="$(dirname "$0")"
{ for a in "$@"; do printf '%s\0' "$a"; done; printf '\n'; } >> "$here/argv.log"
echo "recorded $# args"
"#;

impl Case {
    pub fn new(agent: &str) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("mm.md"), agent).expect("write agent");
        let case = Self { dir };
        case.script("rec", REC);
        case
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes an executable script into the folder.
    pub fn script(&self, name: &str, body: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, body).expect("write script");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        path
    }

    /// `mm` run in the folder against `server`, with no ambient MM_* settings.
    pub fn mm(&self, server: &ScriptedServer) -> Command {
        let mut cmd = self.mm_offline();
        cmd.arg("--base-url").arg(server.base_url());
        cmd
    }

    /// `mm` run in the folder, with no server given.
    pub fn mm_offline(&self) -> Command {
        let mut cmd = Command::cargo_bin("mm").expect("mm binary");
        cmd.current_dir(self.dir.path())
            .env_remove("MM_AGENT")
            .env_remove("MM_MODEL")
            .env_remove("MM_BASE_URL")
            // Sessions and history go under the test's HOME, never the user's.
            .env_remove("XDG_DATA_HOME")
            .env("HOME", self.dir.path())
            .env("TMPDIR", self.dir.path());
        cmd
    }

    /// Every recorded run of `./rec`: its argv (without the program).
    pub fn calls(&self) -> Vec<Vec<String>> {
        let Ok(bytes) = std::fs::read(self.dir.path().join("argv.log")) else {
            return Vec::new();
        };
        let text = String::from_utf8(bytes).expect("utf-8 argv");
        let mut calls = Vec::new();
        let mut current = Vec::new();
        let mut rest = text.as_str();
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix('\n') {
                calls.push(std::mem::take(&mut current));
                rest = after;
                continue;
            }
            let end = rest.find('\0').expect("NUL-terminated arg");
            current.push(rest[..end].to_string());
            rest = &rest[end + 1..];
        }
        calls
    }
}

/// An agent file with the given `tools:` YAML (indented by two spaces) and `yolo: true`.
pub fn agent_with_tools(tools: &str) -> String {
    format!("---\nyolo: true\ntools:\n{tools}---\nYou are a test agent.\n")
}

/// The `tool` messages of a recorded request, in order.
pub fn tool_messages(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .filter(|m| m["role"] == "tool")
                .map(|m| m["content"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// The last tool message sent in the last request.
pub fn last_tool_message(server: &ScriptedServer) -> String {
    let requests = server.requests();
    let last = requests.last().expect("a request");
    tool_messages(last).pop().expect("a tool message")
}
