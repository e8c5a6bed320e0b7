//! Declared tools: one command of the agent file's `tools:` turned into a typed tool (SPEC §2).
//!
//! The command is an argv template: each `{{name}}` is replaced inside its own entry, in one
//! pass, and the result runs without a shell through [`crate::process`]. A model's value can
//! therefore never add an argument, chain a command or redirect output.

use std::ffi::OsString;

use async_trait::async_trait;
use serde_json::{Map, Value};

use super::{Outcome, Tool, ToolCtx, ToolKind, ToolSpec, run_in};
use crate::args::ValidArgs;
use crate::args::{Params, render_value};
use crate::config::{DeclaredToolConfig, Presentation, SchemaStyle, placeholders};
use crate::output::Output;
use crate::process::ProcessSpec;
use crate::sandbox::SandboxMode;

/// Closes every declared tool's description: small models otherwise pack all the arguments into
/// the first field (measured on mellum2-12b, see docs/tools.md).
const CLOSING: &str = "Give each parameter as its own field.";

/// A declared tool, ready to run.
pub struct DeclaredTool {
    config: DeclaredToolConfig,
    spec: ToolSpec,
    sandbox: SandboxMode,
}

impl DeclaredTool {
    /// The tool as SPEC §2 shows it to the model.
    pub fn new(config: DeclaredToolConfig) -> Self {
        Self::presented(config, Presentation::default())
    }

    /// The tool shown to the model as `presentation` says (the agent file's `presentation:`).
    pub fn presented(config: DeclaredToolConfig, presentation: Presentation) -> Self {
        let description = if presentation.closing_sentence {
            describe(&config.description)
        } else {
            config.description.trim().to_string()
        };
        let parameters = match presentation.schema {
            SchemaStyle::Sentences => config.params.model_schema(),
            SchemaStyle::Keywords => config.params.keyword_schema(),
        };
        let spec = ToolSpec {
            name: config.name.clone(),
            description,
            parameters,
        };
        Self {
            config,
            spec,
            sandbox: SandboxMode::Off,
        }
    }

    /// Runs its command confined by `sandbox`.
    pub fn sandboxed(mut self, sandbox: SandboxMode) -> Self {
        self.sandbox = sandbox;
        self
    }

    /// The arguments after the program, values substituted. `Err` is the answer to the model
    /// when a value cannot be passed.
    fn argv(&self, args: &Map<String, Value>) -> Result<Vec<OsString>, String> {
        if let Some((name, _)) = args
            .iter()
            .find(|(_, v)| v.as_str().is_some_and(|s| s.contains('\0')))
        {
            return Err(format!(
                "{} was not run: the value of {name} contains a NUL byte, which cannot be passed to a program.",
                self.config.name
            ));
        }
        Ok(self
            .config
            .command
            .iter()
            .skip(1)
            .filter_map(|entry| substitute(entry, args, &self.config.params))
            .map(OsString::from)
            .collect())
    }
}

#[async_trait]
impl Tool for DeclaredTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn params(&self) -> &Params {
        &self.config.params
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Declared
    }
    fn sandbox(&self) -> SandboxMode {
        self.sandbox
    }
    /// The command exactly as it will run, each argv entry quoted when it needs it to read
    /// as one (`./release.sh '1.4.2; rm -rf ~' --channel=beta`).
    fn preview(&self, args: &ValidArgs) -> Option<String> {
        let argv = self.argv(args).ok()?;
        let program = self.config.command.first()?;
        let mut line = quoted(program);
        for arg in &argv {
            line.push(' ');
            line.push_str(&quoted(&arg.to_string_lossy()));
        }
        Some(line)
    }
    async fn run(&self, args: &ValidArgs, ctx: &ToolCtx, out: &mut Output) -> Outcome {
        let argv = match self.argv(args) {
            Ok(argv) => argv,
            Err(answer) => {
                out.write_str(&answer);
                return Outcome::Failed;
            }
        };
        let spec = ProcessSpec {
            program: self.config.program.clone().into_os_string(),
            args: argv,
            cwd: ctx.cwd.clone(),
            timeout: self.config.timeout,
            sandbox: self.sandbox,
        };
        run_in(&spec, ctx, out).await
    }
}

/// `arg` as a shell would need it written to be one word: bare when it is plain, else in single
/// quotes. For showing only; nothing runs through a shell.
fn quoted(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

/// A tool's description as the model reads it: the text as given, ended as a sentence, then
/// [`CLOSING`] (declared and MCP tools alike).
pub(crate) fn describe(description: &str) -> String {
    let mut text = description.trim().to_string();
    if text.is_empty() {
        return CLOSING.to_string();
    }
    if !text.ends_with(['.', '!', '?']) {
        text.push('.');
    }
    text.push(' ');
    text.push_str(CLOSING);
    text
}

/// One argv entry with its placeholders replaced, in one pass over the template (a value that
/// holds `{{x}}` stays literal). `None` drops the entry: it names an optional parameter that was
/// omitted and has no default. A placeholder naming no parameter (the agent-file check refuses
/// those) stays as written.
fn substitute(entry: &str, args: &Map<String, Value>, params: &Params) -> Option<String> {
    let mut out = String::with_capacity(entry.len());
    let mut copied = 0;
    for (range, name) in placeholders(entry) {
        if !params.params.iter().any(|p| p.name == name) {
            continue;
        }
        out.push_str(&entry[copied..range.start]);
        out.push_str(&render_value(args.get(name)?));
        copied = range.end;
    }
    out.push_str(&entry[copied..]);
    Some(out)
}

#[cfg(test)]
#[path = "declared_tests.rs"]
mod tests;
