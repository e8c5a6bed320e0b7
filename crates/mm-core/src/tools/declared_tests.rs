use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::args::{ParamSpec, ParamType};
use crate::tools::Outcome;

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
    ToolCtx::new(std::env::temp_dir(), CancellationToken::new())
}

/// A run's output and whether it succeeded.
struct Ran {
    content: String,
    ok: bool,
}

async fn call(tool: &DeclaredTool, raw: &str) -> Ran {
    let args = tool
        .params()
        .validate(raw)
        .unwrap_or_else(|e| panic!("{:?}", e.problems));
    let mut out = Output::new(8000);
    let outcome = tool.run(&args, &ctx(), &mut out).await;
    Ran {
        content: out.finish().text,
        ok: outcome == Outcome::Success,
    }
}

fn entries(output: &Ran) -> Vec<&str> {
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

#[test]
fn presentation_changes_only_what_it_names() {
    let spec = release("printf").spec().clone();
    let config = release("printf").config;
    let plain = DeclaredTool::presented(
        config.clone(),
        Presentation {
            closing_sentence: false,
            ..Presentation::default()
        },
    );
    assert_eq!(
        plain.spec().description,
        "Publish a release of the product to a channel"
    );
    assert_eq!(plain.spec().parameters, spec.parameters);

    let keywords = DeclaredTool::presented(
        config,
        Presentation {
            schema: SchemaStyle::Keywords,
            ..Presentation::default()
        },
    );
    assert_eq!(keywords.spec().description, spec.description);
    assert_eq!(
        keywords.spec().parameters,
        json!({"type": "object", "properties": {
            "version": {"type": "string", "description": "The version, like 1.4.2."},
            "channel": {"type": "string", "enum": ["stable", "beta"]},
            "dry_run": {"type": "boolean"},
            "level": {"type": "integer"},
            "ratio": {"type": "number"},
        }, "required": ["version", "channel"]})
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

#[tokio::test]
async fn numbers_reach_the_program_in_their_shortest_form() {
    for (sent, expected) in [
        ("3.0", "--ratio=3"),
        ("-0.0", "--ratio=0"),
        ("2.50", "--ratio=2.5"),
        ("\"3.0\"", "--ratio=3"),
        ("1e3", "--ratio=1000"),
        ("1e300", "--ratio=1e300"),
        ("-7", "--ratio=-7"),
    ] {
        let raw = format!(r#"{{"version":"1","channel":"stable","ratio":{sent}}}"#);
        let out = call(&release("printf"), &raw).await;
        assert_eq!(entries(&out)[3], expected, "{sent}");
    }
    let out = call(
        &release("printf"),
        r#"{"version":1.50,"channel":"stable","level":4.0}"#,
    )
    .await;
    // A number for a string keeps its spelling; an integral float for an integer is an integer.
    assert_eq!(
        entries(&out)[..3],
        ["1.50", "--channel=stable", "--level=4"]
    );
}

#[test]
fn the_consent_preview_is_the_command_line_that_will_run() {
    let tool = release("./scripts/release.sh");
    let args = |v: serde_json::Value| {
        crate::args::ValidArgs::unchecked(v.as_object().cloned().unwrap_or_default())
    };
    assert_eq!(
        tool.preview(&args(
            json!({"version": "1.4.2", "channel": "beta", "level": 1})
        )),
        Some(r"./scripts/release.sh '%s\0' 1.4.2 --channel=beta --level=1 '{{x}} stays'".into())
    );
    // A hostile value is shown as the one argument it is, quotes and all.
    assert_eq!(
        tool.preview(&args(
            json!({"version": "1.4.2; rm -rf ~ 'x'", "channel": "beta", "level": 1})
        )),
        Some(
            r"./scripts/release.sh '%s\0' '1.4.2; rm -rf ~ '\''x'\''' --channel=beta --level=1 '{{x}} stays'"
                .into()
        )
    );
    // A value that cannot be passed is not previewed (the call is answered, not run).
    assert_eq!(
        tool.preview(&args(json!({"version": "a\u{0}b", "channel": "beta"}))),
        None
    );
}
