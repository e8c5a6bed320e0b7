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
mod tests {
    use std::path::PathBuf;

    use serde_json::json;
    use tokio_util::sync::CancellationToken;

    use super::*;
    use crate::args::{ParamSpec, ParamType};

    fn param(name: &str, ty: ParamType, required: bool) -> ParamSpec {
        ParamSpec {
            name: name.into(),
            ty,
            description: None,
            required,
            enum_values: None,
            default: None,
            schema: None,
        }
    }

    /// `release` of the SPEC, run by `printf '%s\0'` so that each argv entry comes back whole.
    fn release(program: &str) -> DeclaredTool {
        DeclaredTool::new(DeclaredToolConfig {
            name: "release".into(),
            description: "Publish a release of the product to a channel".into(),
            params: Params {
                params: vec![
                    ParamSpec {
                        description: Some("The version, like 1.4.2.".into()),
                        ..param("version", ParamType::String, true)
                    },
                    ParamSpec {
                        enum_values: Some(vec![json!("stable"), json!("beta")]),
                        ..param("channel", ParamType::String, true)
                    },
                    param("dry_run", ParamType::Boolean, false),
                    ParamSpec {
                        default: Some(json!(1)),
                        ..param("level", ParamType::Integer, false)
                    },
                    param("ratio", ParamType::Number, false),
                ],
                deny_unknown: true,
            },
            command: vec![
                program.into(),
                "%s\\0".into(),
                "{{version}}".into(),
                "--channel={{ channel }}".into(),
                "--dry-run={{dry_run}}".into(),
                "--level={{level}}".into(),
                "--ratio={{ratio}}".into(),
                "{{x}} stays".into(),
            ],
            program: PathBuf::from(program),
            timeout: Duration::from_secs(10),
        })
    }

    fn ctx() -> ToolCtx {
        ToolCtx {
            cwd: std::env::temp_dir(),
            cancel: CancellationToken::new(),
            echo: None,
            max_output: 8000,
        }
    }

    async fn call(tool: &DeclaredTool, raw: &str) -> ToolOutput {
        let args = tool
            .params()
            .validate(raw)
            .unwrap_or_else(|e| panic!("{:?}", e.problems));
        tool.run(&args, &ctx()).await
    }

    fn entries(output: &ToolOutput) -> Vec<&str> {
        output.content.split_terminator('\0').collect()
    }

    #[test]
    fn the_model_sees_the_closing_sentence_and_plain_schema() {
        let tool = release("printf");
        assert_eq!(
            tool.spec().description,
            "Publish a release of the product to a channel. Give each parameter as its own field."
        );
        assert_eq!(
            tool.spec().parameters["properties"]["channel"],
            json!({"type": "string",
            "description": "Required. One of: stable, beta."})
        );
        assert_eq!(tool.spec().parameters.get("required"), None);
        assert_eq!(
            describe("Is it up?"),
            "Is it up? Give each parameter as its own field."
        );
    }

    #[tokio::test]
    async fn values_fill_their_entries_and_nothing_else() {
        let out = call(
            &release("printf"),
            r#"{"version":"1.4.2; rm -rf ~","channel":"beta","dry_run":"TRUE","ratio":"2.50"}"#,
        )
        .await;
        assert!(out.ok, "{}", out.content);
        assert_eq!(
            entries(&out),
            [
                "1.4.2; rm -rf ~",
                "--channel=beta",
                "--dry-run=true",
                "--level=1",
                "--ratio=2.5",
                "{{x}} stays"
            ]
        );
    }

    #[tokio::test]
    async fn injection_attempts_stay_one_argument() {
        for value in [
            "$(id)",
            "`id`",
            "a | b",
            "a\nb",
            "-rf",
            "--channel=stable",
            "{{channel}}",
            "{{ level }}",
        ] {
            let raw = json!({"version": value, "channel": "stable", "dry_run": false}).to_string();
            let out = call(&release("printf"), &raw).await;
            assert_eq!(entries(&out)[..2], [value, "--channel=stable"], "{value:?}");
        }
    }

    #[tokio::test]
    async fn an_omitted_optional_without_default_drops_its_entry() {
        let out = call(
            &release("printf"),
            r#"{"version":"1","channel":"stable","level":7}"#,
        )
        .await;
        assert_eq!(
            entries(&out),
            ["1", "--channel=stable", "--level=7", "{{x}} stays"]
        );
    }

    #[tokio::test]
    async fn a_nul_byte_is_answered_not_run() {
        let out = call(
            &release("printf"),
            r#"{"version":"1\u0000","channel":"stable"}"#,
        )
        .await;
        assert!(!out.ok);
        assert_eq!(
            out.content,
            "release was not run: the value of version contains a NUL byte, which cannot be passed to a program."
        );
    }

    #[tokio::test]
    async fn a_missing_program_is_answered() {
        let out = call(
            &release("./scripts/no-such-release.sh"),
            r#"{"version":"1","channel":"stable"}"#,
        )
        .await;
        assert!(!out.ok);
        assert_eq!(
            out.content,
            "cannot run ./scripts/no-such-release.sh: no such file"
        );
    }

    #[test]
    fn endings_are_reported_on_their_own_line() {
        let outcome = |output: &str, exit_code, timed_out, cancelled| ProcessOutcome {
            output: output.into(),
            exit_code,
            timed_out,
            cancelled,
            full_output: None,
            duration: Duration::ZERO,
        };
        let t = Duration::from_secs(60);
        let cases = [
            (outcome("done\n", Some(0), false, false), "done\n", true),
            (outcome("", Some(0), false, false), "(no output)", true),
            (
                outcome("oops", Some(3), false, false),
                "oops\nexit code 3",
                false,
            ),
            (outcome("", Some(3), false, false), "exit code 3", false),
            (
                outcome("tick\n", None, true, false),
                "tick\ntimed out after 60s",
                false,
            ),
            (
                outcome("tick\n", None, false, true),
                "tick\ncancelled",
                false,
            ),
            (outcome("", None, false, false), "killed by a signal", false),
        ];
        for (outcome, content, ok) in cases {
            let out = outcome_to_output(outcome, t);
            assert_eq!((out.content.as_str(), out.ok), (content, ok));
        }
        let half = outcome_to_output(outcome("", None, true, false), Duration::from_millis(500));
        assert_eq!(half.content, "timed out after 0.5s");
    }
}
