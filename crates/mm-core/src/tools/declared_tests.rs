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
