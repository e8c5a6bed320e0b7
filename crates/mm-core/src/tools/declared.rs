//! Declared tools: one command of the agent file's `tools:` turned into a typed tool (SPEC §2).
//!
//! The command is an argv template: each `{{name}}` is replaced inside its own entry, in one
//! pass, and the result runs without a shell through [`crate::process`]. A model's value can
//! therefore never add an argument, chain a command or redirect output.

use std::ffi::OsString;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Map, Value};

use super::{Tool, ToolCtx, ToolKind, ToolOutput, ToolSpec};
use crate::args::Params;
use crate::config::{DeclaredToolConfig, placeholders};
use crate::process::{ProcessOutcome, ProcessSpec, run_process};

/// Closes every declared tool's description: small models otherwise pack all the arguments into
/// the first field (measured on mellum2-12b, see docs/tools.md).
const CLOSING: &str = "Give each parameter as its own field.";

/// A declared tool, ready to run.
pub struct DeclaredTool {
    config: DeclaredToolConfig,
    spec: ToolSpec,
}

impl DeclaredTool {
    pub fn new(config: DeclaredToolConfig) -> Self {
        let spec = ToolSpec {
            name: config.name.clone(),
            description: describe(&config.description),
            parameters: config.params.model_schema(),
        };
        Self { config, spec }
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
    async fn run(&self, args: &Map<String, Value>, ctx: &ToolCtx) -> ToolOutput {
        let argv = match self.argv(args) {
            Ok(argv) => argv,
            Err(answer) => {
                return ToolOutput {
                    content: answer,
                    ok: false,
                    ..Default::default()
                };
            }
        };
        let spec = ProcessSpec {
            program: self.config.program.clone().into_os_string(),
            args: argv,
            cwd: ctx.cwd.clone(),
            timeout: self.config.timeout,
            max_output: ctx.max_output,
        };
        run_to_output(&spec, ctx).await
    }
}

/// `description` as one sentence, then the closing sentence.
fn describe(description: &str) -> String {
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
        out.push_str(&render(args.get(name)?));
        copied = range.end;
    }
    out.push_str(&entry[copied..]);
    Some(out)
}

/// A value as program text: strings as they are, integers in decimal, numbers in their shortest
/// JSON form, booleans as `true`/`false`.
fn render(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Runs `spec` for a tool and words the result for the model (shared with `bash`).
pub(super) async fn run_to_output(spec: &ProcessSpec, ctx: &ToolCtx) -> ToolOutput {
    match run_process(spec, &ctx.cancel, ctx.echo.clone()).await {
        Ok(outcome) => outcome_to_output(outcome, spec.timeout),
        // Could not start (not found, not executable…): the model reads why.
        Err(e) => ToolOutput {
            content: e.to_string(),
            ok: false,
            ..Default::default()
        },
    }
}

/// The output, then one line saying how it ended when that was not a plain exit 0.
fn outcome_to_output(outcome: ProcessOutcome, timeout: Duration) -> ToolOutput {
    let ending = if outcome.timed_out {
        Some(format!("timed out after {}s", timeout.as_secs_f64()))
    } else if outcome.cancelled {
        Some("cancelled".to_string())
    } else {
        match outcome.exit_code {
            Some(0) => None,
            Some(code) => Some(format!("exit code {code}")),
            None => Some("killed by a signal".to_string()),
        }
    };
    let mut content = outcome.output;
    match &ending {
        Some(line) => {
            if !content.is_empty() && !content.ends_with('\n') {
                content.push('\n');
            }
            content.push_str(line);
        }
        // An empty result reads to a small model as if nothing happened.
        None if content.is_empty() => content.push_str("(no output)"),
        None => {}
    }
    ToolOutput {
        content,
        ok: ending.is_none(),
        exit_code: outcome.exit_code,
        timed_out: outcome.timed_out,
        cancelled: outcome.cancelled,
    }
}

#[cfg(test)]
#[path = "declared_tests.rs"]
mod tests;
