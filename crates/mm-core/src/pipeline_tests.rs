use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::*;
use crate::args::{ParamSpec, ParamType, Params, ValidArgs};
use crate::tools::{ToolKind, ToolSpec};

/// A tool that is not a process (like a file or MCP tool): writes `text` × `times`.
struct Writer {
    spec: ToolSpec,
    params: Params,
    runs: Mutex<u32>,
}

impl Writer {
    fn new() -> Self {
        let params = Params {
            params: vec![
                ParamSpec {
                    name: "text".into(),
                    ty: ParamType::String,
                    description: None,
                    required: true,
                    enum_values: None,
                    default: None,
                    schema: None,
                },
                ParamSpec {
                    name: "times".into(),
                    ty: ParamType::Integer,
                    description: None,
                    required: false,
                    enum_values: None,
                    default: Some(json!(1)),
                    schema: None,
                },
            ],
            deny_unknown: true,
        };
        Self {
            spec: ToolSpec {
                name: "write".into(),
                description: "Writes.".into(),
                parameters: params.model_schema(),
            },
            params,
            runs: Mutex::new(0),
        }
    }
}

#[async_trait]
impl Tool for Writer {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn params(&self) -> &Params {
        &self.params
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Mcp
    }
    async fn run(&self, args: &ValidArgs, _: &ToolCtx, out: &mut Output) -> Outcome {
        if let Ok(mut runs) = self.runs.lock() {
            *runs += 1;
        }
        let text = args["text"].as_str().unwrap_or_default();
        for _ in 0..args["times"].as_i64().unwrap_or(1) {
            out.write_str(text);
        }
        if text == "fail" {
            Outcome::Failed
        } else {
            Outcome::Success
        }
    }
}

struct Fixture {
    registry: Registry,
    writer: Arc<Writer>,
    events: Arc<Mutex<Vec<Event>>>,
}

impl Fixture {
    fn new() -> Self {
        let writer = Arc::new(Writer::new());
        let mut registry = Registry::new();
        registry.add(writer.clone());
        Self {
            registry,
            writer,
            events: Arc::new(Mutex::new(Vec::new())),
        }
    }

    fn pipeline(&self, consent: Consent, max_output: usize) -> CallPipeline<'_> {
        let events = self.events.clone();
        let sink: EventSink = Arc::new(move |e: &Event| {
            if let Ok(mut v) = events.lock() {
                v.push(e.clone());
            }
        });
        let limits = Limits {
            max_output,
            ..Limits::default()
        };
        CallPipeline::new(&self.registry, std::env::temp_dir(), limits, consent, sink)
    }

    fn runs(&self) -> u32 {
        self.writer.runs.lock().map(|r| *r).unwrap_or(0)
    }

    fn events(&self) -> Vec<Event> {
        self.events.lock().map(|v| v.clone()).unwrap_or_default()
    }
}

fn call(name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: "c1".into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

fn no_one_to_ask() -> Consent {
    Consent::Rules {
        permissions: Permissions::default(),
        asker: None,
    }
}

async fn handle(p: &CallPipeline<'_>, name: &str, arguments: &str) -> CallResult {
    p.handle(
        &call(name, arguments),
        &mut CallState::default(),
        &CancellationToken::new(),
    )
    .await
    .0
}

#[tokio::test]
async fn a_tool_that_is_not_a_process_is_truncated_saved_and_echoed_by_the_pipeline() {
    let f = Fixture::new();
    let p = f.pipeline(Consent::Granted, 100);
    let result = handle(&p, "write", r#"{"text":"0123456789","times":"50"}"#).await;
    assert!(result.ok);
    let path = result
        .full_output
        .clone()
        .unwrap_or_else(|| panic!("not saved"));
    let saved = std::fs::read_to_string(&path).unwrap_or_default();
    let _ = std::fs::remove_file(&path);
    assert_eq!(saved, "0123456789".repeat(50));
    assert!(
        result.content.starts_with(&format!(
            "{}\n[… 400 bytes cut; full output (500 bytes) saved to {} …]\n",
            "0123456789".repeat(5),
            path.display()
        )),
        "{}",
        result.content
    );
    let echoed: usize = f
        .events()
        .iter()
        .map(|e| match e {
            Event::ToolOutput { chunk, .. } => {
                String::from_utf8_lossy(chunk).matches("0123456789").count()
            }
            _ => 0,
        })
        .sum();
    assert_eq!(echoed, 10, "the echo stops at max_output");
    assert!(matches!(
        f.events().last(),
        Some(Event::ToolResult { ok: true, .. })
    ));
}

#[tokio::test]
async fn invalid_and_unknown_calls_are_answered_and_not_run() {
    let f = Fixture::new();
    let p = f.pipeline(Consent::Granted, 8000);
    let result = handle(&p, "write", r#"{"text":"x","times":"many"}"#).await;
    assert!(!result.ok);
    assert!(
        result.content.starts_with(
            "The call to write was not run: its arguments are invalid.\n- times: \"many\" is not an integer\nYou sent: {\"text\":\"x\",\"times\":\"many\"}"
        ),
        "{}",
        result.content
    );
    let result = handle(&p, "wrte", "{}").await;
    assert_eq!(
        result.content,
        "There is no tool named \"wrte\". The tools are: write."
    );
    assert_eq!(f.runs(), 0);
}

#[tokio::test]
async fn consent_is_asked_of_every_kind_of_tool() {
    let f = Fixture::new();
    let p = f.pipeline(no_one_to_ask(), 8000);
    let result = handle(&p, "write", r#"{"text":"x"}"#).await;
    assert!(!result.ok);
    assert!(
        result
            .content
            .starts_with("The user did not allow this call: it needs consent"),
        "{}",
        result.content
    );
    assert_eq!(f.runs(), 0);

    let asked = Consent::Rules {
        permissions: Permissions::default(),
        asker: Some(Arc::new(Answers::new(vec![ConsentAnswer::Once]))),
    };
    let result = handle(&f.pipeline(asked, 8000), "write", r#"{"text":"x"}"#).await;
    assert_eq!((result.content.as_str(), result.ok), ("x", true));
    let allowed = Consent::Rules {
        permissions: Permissions::new(false, vec!["write".into()]),
        asker: None,
    };
    let result = handle(&f.pipeline(allowed, 8000), "write", r#"{"text":"y"}"#).await;
    assert_eq!(result.content, "y");
    assert_eq!(f.runs(), 2);
}

/// Answers each question with the next answer of its list, and records the questions.
struct Answers {
    answers: Mutex<Vec<ConsentAnswer>>,
    asked: Mutex<Vec<ConsentRequest>>,
}

impl Answers {
    fn new(mut answers: Vec<ConsentAnswer>) -> Self {
        answers.reverse();
        Self {
            answers: Mutex::new(answers),
            asked: Mutex::new(Vec::new()),
        }
    }

    fn asked(&self) -> Vec<ConsentRequest> {
        self.asked.lock().map(|a| a.clone()).unwrap_or_default()
    }
}

#[async_trait]
impl ConsentAsker for Answers {
    async fn ask(&self, request: &ConsentRequest) -> Option<ConsentAnswer> {
        if let Ok(mut asked) = self.asked.lock() {
            asked.push(request.clone());
        }
        self.answers.lock().ok()?.pop()
    }
}

#[tokio::test]
async fn an_always_answer_holds_for_the_session_and_a_deny_reason_reaches_the_model() {
    let f = Fixture::new();
    let answers = Arc::new(Answers::new(vec![
        ConsentAnswer::Deny {
            reason: Some("  not now  ".into()),
        },
        ConsentAnswer::Always { save: false },
    ]));
    let permissions = Permissions::default();
    let consent = Consent::Rules {
        permissions: permissions.clone(),
        asker: Some(answers.clone()),
    };
    let denied = handle(
        &f.pipeline(consent.clone(), 8000),
        "write",
        r#"{"text":"a"}"#,
    )
    .await;
    assert_eq!(
        denied.content,
        "The user did not allow this call. Their reason: not now"
    );
    assert!(!denied.ok);
    let first = handle(
        &f.pipeline(consent.clone(), 8000),
        "write",
        r#"{"text":"b"}"#,
    )
    .await;
    assert_eq!(first.content, "b");
    // A pipeline of a later turn, built from a clone: not asked again.
    let later = handle(&f.pipeline(consent, 8000), "write", r#"{"text":"c"}"#).await;
    assert_eq!(later.content, "c");
    let asked = answers.asked();
    assert_eq!(asked.len(), 2);
    assert_eq!(
        asked[0],
        ConsentRequest {
            tool: "write".into(),
            summary: r#"{"text":"a","times":1}"#.into(),
            always: Some("write".into()),
            note: None,
            sandbox: None,
        }
    );
    assert_eq!(permissions.learned(), vec!["write".to_string()]);
    assert_eq!(f.runs(), 2);
}

/// Never answers, like a user who walked away.
struct Silent;

#[async_trait]
impl ConsentAsker for Silent {
    async fn ask(&self, _: &ConsentRequest) -> Option<ConsentAnswer> {
        std::future::pending().await
    }
}

#[tokio::test]
async fn cancelling_the_turn_withdraws_the_question_and_an_interrupt_is_a_cancel() {
    let f = Fixture::new();
    let p = f.pipeline(
        Consent::Rules {
            permissions: Permissions::default(),
            asker: Some(Arc::new(Silent)),
        },
        8000,
    );
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        stop.cancel();
    });
    let (result, _) = tokio::time::timeout(
        Duration::from_secs(5),
        p.handle(
            &call("write", r#"{"text":"x"}"#),
            &mut CallState::default(),
            &cancel,
        ),
    )
    .await
    .unwrap_or_else(|_| panic!("the question was not withdrawn"));
    assert!(result.cancelled);
    assert_eq!(result.content, "Not run: the user interrupted.");

    let interrupted = Consent::Rules {
        permissions: Permissions::default(),
        asker: Some(Arc::new(Answers::new(vec![ConsentAnswer::Interrupt]))),
    };
    let result = handle(&f.pipeline(interrupted, 8000), "write", r#"{"text":"x"}"#).await;
    assert!(result.cancelled);
    assert_eq!(f.runs(), 0);
}

#[tokio::test]
async fn the_loop_guard_warns_then_stops_without_running() {
    let f = Fixture::new();
    let p = f.pipeline(Consent::Granted, 8000);
    let mut state = CallState::default();
    let cancel = CancellationToken::new();
    let mut results = Vec::new();
    for _ in 0..5 {
        // Invalid calls count as much as valid ones.
        let (result, record) = p
            .handle(&call("write", r#"{"text":"a"}"#), &mut state, &cancel)
            .await;
        results.push((result, record.is_some()));
    }
    assert!(!results[1].0.content.contains("Note:"));
    assert!(
        results[2]
            .0
            .content
            .ends_with("Note: you have made this exact call 3 times in a row. Do not repeat it: change the arguments or answer the user."),
        "{}",
        results[2].0.content
    );
    let (last, recorded) = &results[4];
    assert_eq!(
        last.stopped.as_deref(),
        Some(
            r#"The call write({"text":"a"}) was made 5 times in a row; it was not run and the turn was stopped."#
        )
    );
    assert!(!recorded);
    assert_eq!(f.runs(), 4);
}

#[test]
fn endings_are_reported_on_their_own_line() {
    let cases = [
        ("done\n", Outcome::Success, "done\n"),
        ("", Outcome::Success, "(no output)"),
        ("oops", Outcome::Exit(3), "oops\nexit code 3"),
        ("", Outcome::Exit(3), "exit code 3"),
        (
            "tick\n",
            Outcome::TimedOut(Duration::from_secs(60)),
            "tick\ntimed out after 60s",
        ),
        (
            "",
            Outcome::TimedOut(Duration::from_millis(500)),
            "timed out after 0.5s",
        ),
        ("tick\n", Outcome::Cancelled, "tick\ncancelled"),
        ("", Outcome::Killed, "killed by a signal"),
        ("cannot run x", Outcome::Failed, "cannot run x"),
    ];
    for (output, outcome, expected) in cases {
        assert_eq!(words(output.into(), outcome), expected, "{outcome:?}");
    }
}

#[tokio::test]
async fn mms_own_answers_are_told_from_tool_output() {
    let f = Fixture::new();
    let p = f.pipeline(no_one_to_ask(), 8000);
    let invalid = handle(&p, "write", r#"{"text": 3, "oops": true}"#).await;
    let unknown = handle(&p, "nope", "{}").await;
    let refused = handle(&p, "write", r#"{"text":"a"}"#).await;
    for mine in [&invalid, &unknown, &refused] {
        assert!(!mine.ran, "{}", mine.content);
        assert!(written_by_mm(&mine.content), "{}", mine.content);
    }
    let granted = f.pipeline(Consent::Granted, 8000);
    let ran = handle(&granted, "write", r#"{"text":"The call to nothing"}"#).await;
    assert!(ran.ran && ran.ok);
    assert!(!written_by_mm(&ran.content), "{}", ran.content);
    assert!(!written_by_mm("billing: running, version 2.3.1"));
}

#[tokio::test]
async fn a_read_outside_the_working_folder_asks_and_one_inside_does_not() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let cwd = dir.path().join("project");
    std::fs::create_dir_all(&cwd).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(cwd.join("in.txt"), "inside\n").unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join("out.txt"), "outside\n").unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink(dir.path().join("out.txt"), cwd.join("link.txt"))
        .unwrap_or_else(|e| panic!("{e}"));
    let mut registry = Registry::new();
    for name in ["read_file", "grep"] {
        registry.add(crate::tools::file_tool(name).unwrap_or_else(|| panic!("{name}")));
    }
    let outside = dir.path().join("out.txt").to_string_lossy().into_owned();
    let real_outside = std::fs::canonicalize(&outside)
        .unwrap_or_else(|e| panic!("{e}"))
        .to_string_lossy()
        .into_owned();
    let run = |consent: Consent, name: &'static str, args: Value| {
        let registry = &registry;
        let cwd = cwd.clone();
        async move {
            let sink: EventSink = Arc::new(|_: &Event| {});
            let p = CallPipeline::new(registry, cwd, Limits::default(), consent, sink);
            handle(&p, name, &args.to_string()).await
        }
    };
    // Inside: no question, even with no one to ask.
    let inside = run(no_one_to_ask(), "read_file", json!({"path": "in.txt"})).await;
    assert_eq!(inside.content, "1: inside\n");
    // Outside, as an absolute path, through `..`, through a link, and grep's folder: refused
    // when there is no one to ask, and the model is told why.
    for (name, args) in [
        ("read_file", json!({"path": outside})),
        ("read_file", json!({"path": "../out.txt"})),
        ("read_file", json!({"path": "link.txt"})),
        ("grep", json!({"pattern": "outside", "path": ".."})),
    ] {
        let refused = run(no_one_to_ask(), name, args.clone()).await;
        assert!(
            refused
                .content
                .starts_with("The user did not allow this call: it reads /"),
            "{args}: {}",
            refused.content
        );
        assert!(
            refused
                .content
                .contains("outside the working folder; it needs consent"),
            "{}",
            refused.content
        );
        assert!(!refused.ok);
    }
    // Asked: the dialog says what the call reads; a yes runs it.
    let answers = Arc::new(Answers::new(vec![ConsentAnswer::Once]));
    let consent = Consent::Rules {
        permissions: Permissions::default(),
        asker: Some(answers.clone()),
    };
    let read = run(consent, "read_file", json!({"path": "link.txt"})).await;
    assert_eq!(read.content, "1: outside\n");
    let asked = answers.asked();
    assert_eq!(
        asked[0].note.as_deref(),
        Some(format!("it reads {real_outside}, outside the working folder").as_str())
    );
    // yolo, or an allow rule, lets it read without asking.
    for permissions in [
        Permissions::new(true, Vec::new()),
        Permissions::new(false, vec!["read_file".into()]),
    ] {
        let consent = Consent::Rules {
            permissions,
            asker: None,
        };
        let read = run(consent, "read_file", json!({"path": "../out.txt"})).await;
        assert_eq!(read.content, "1: outside\n");
    }
}

#[tokio::test]
async fn corpus_every_read_outside_the_folder_asks() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let cwd = dir.path().join("project");
    std::fs::create_dir_all(cwd.join("sub")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(cwd.join("in.txt"), "in\n").unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join("secret.txt"), "secret\n").unwrap_or_else(|e| panic!("{e}"));
    let link = |target: &str, at: &str| {
        std::os::unix::fs::symlink(target, cwd.join(at)).unwrap_or_else(|e| panic!("{e}"));
    };
    link("../secret.txt", "up.txt");
    link("/etc", "etc");
    link("up.txt", "chain.txt");
    link("..", "parent");
    link("/", "root");
    let mut registry = Registry::new();
    for name in ["read_file", "grep"] {
        registry.add(crate::tools::file_tool(name).unwrap_or_else(|| panic!("{name}")));
    }
    let abs = cwd.to_string_lossy().into_owned();
    let outside = [
        "/etc/passwd".to_string(),
        "/etc/shadow".into(),
        "/proc/self/environ".into(),
        "/proc/kmsg".into(),
        "/root/.ssh/id_rsa".into(),
        "../secret.txt".into(),
        "../../etc/passwd".into(),
        "sub/../../secret.txt".into(),
        "./../secret.txt".into(),
        "up.txt".into(),
        "chain.txt".into(),
        "etc/passwd".into(),
        "parent/secret.txt".into(),
        "root/etc/passwd".into(),
        "parent/project/../secret.txt".into(),
        format!("{abs}/../secret.txt"),
        format!("{abs}/up.txt"),
        format!("{abs}/etc/hosts"),
        "..".into(),
        "/".into(),
        "/proc/self/cwd/../secret.txt".into(),
        "/proc/self/root/etc/passwd".into(),
        "sub/../../project/../secret.txt".into(),
    ];
    let mut corpus =
        mm_test_support::Corpus::new("reads outside the working folder (no one to ask)");
    for path in &outside {
        for (tool, args) in [
            ("read_file", json!({ "path": path })),
            ("grep", json!({ "pattern": "secret", "path": path })),
        ] {
            let sink: EventSink = Arc::new(|_: &Event| {});
            let p = CallPipeline::new(
                &registry,
                cwd.clone(),
                Limits::default(),
                no_one_to_ask(),
                sink,
            );
            let result = handle(&p, tool, &args.to_string()).await;
            let held = !result.ok
                && result
                    .content
                    .starts_with("The user did not allow this call: it reads ");
            corpus.check((tool, path), held, || result.content.clone());
        }
    }
    for path in [
        "in.txt",
        "./in.txt",
        "sub/../in.txt",
        &format!("{abs}/in.txt"),
        "parent/project/in.txt",
    ] {
        let sink: EventSink = Arc::new(|_: &Event| {});
        let p = CallPipeline::new(
            &registry,
            cwd.clone(),
            Limits::default(),
            no_one_to_ask(),
            sink,
        );
        let result = handle(&p, "read_file", &json!({ "path": path }).to_string()).await;
        corpus.check(("inside", path), result.content == "1: in\n", || {
            result.content.clone()
        });
    }
    corpus.finish();
}

/// A user who takes their time in the dialog, then allows the call.
struct Slow;

#[async_trait]
impl ConsentAsker for Slow {
    async fn ask(&self, _: &ConsentRequest) -> Option<ConsentAnswer> {
        tokio::time::sleep(std::time::Duration::from_millis(400)).await;
        Some(ConsentAnswer::Once)
    }
}

/// `duration_ms` is the run's, not the dialog's: the user's 400 ms of thought are not counted;
/// and the record shows the arguments as decoded once (an object sent as a JSON string too).
#[tokio::test]
async fn a_calls_duration_leaves_the_dialog_out_and_its_record_holds_the_decoded_object() {
    let f = Fixture::new();
    let consent = Consent::Rules {
        permissions: Permissions::default(),
        asker: Some(Arc::new(Slow)),
    };
    let (result, record) = f
        .pipeline(consent, 8000)
        .handle(
            &call("write", r#""{\"text\":\"a\"}""#),
            &mut CallState::default(),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(result.content, "a");
    let record = record.expect("a record");
    assert!(record.duration_ms < 400, "{}", record.duration_ms);
    assert_eq!(record.arguments, serde_json::json!({"text": "a"}));
    let reported = f.events().into_iter().find_map(|e| match e {
        Event::ToolResult { duration_ms, .. } => Some(duration_ms),
        _ => None,
    });
    assert_eq!(reported, Some(record.duration_ms));
}

/// A tool named `name` of two enum parameters, `from` and `to`, taking `units`.
fn converter(name: &str, units: &[&str]) -> Arc<Writer> {
    let unit = |name: &str| ParamSpec {
        name: name.into(),
        ty: ParamType::String,
        description: None,
        required: true,
        enum_values: Some(units.iter().map(|u| json!(u)).collect()),
        default: None,
        schema: None,
    };
    let params = Params {
        params: vec![unit("from"), unit("to")],
        deny_unknown: true,
    };
    Arc::new(Writer {
        spec: ToolSpec {
            name: name.into(),
            description: "Converts.".into(),
            parameters: params.model_schema(),
        },
        params,
        runs: Mutex::new(0),
    })
}

#[tokio::test]
async fn values_another_tool_takes_are_named_with_that_tool() {
    let mut f = Fixture::new();
    f.registry
        .add(converter("convert_weight", &["g", "kg", "lb"]));
    f.registry
        .add(converter("exchange", &["EUR", "USD", "GBP"]));
    f.registry
        .add(converter("convert_length", &["cm", "m", "ft"]));
    let p = f.pipeline(Consent::Granted, 8000);

    let both = handle(&p, "convert_weight", r#"{"from":"EUR","to":"USD"}"#).await;
    assert!(!both.ok);
    assert!(
        both.content.ends_with(
            "\n\"EUR\" and \"USD\" are values that exchange takes: if that is what the user asked for, call exchange instead."
        ),
        "{}",
        both.content
    );
    let one = handle(&p, "convert_weight", r#"{"from":"kg","to":"GBP"}"#).await;
    assert!(
        one.content
            .ends_with("\n\"GBP\" is a value that exchange takes: if that is what the user asked for, call exchange instead."),
        "{}",
        one.content
    );
    // Values no other tool takes, or that two tools' enums split between them, name no tool.
    for arguments in [
        r#"{"from":"kg","to":"stone"}"#,
        r#"{"from":"ft","to":"USD"}"#,
    ] {
        let result = handle(&p, "convert_weight", arguments).await;
        assert!(!result.ok);
        assert!(
            result
                .content
                .ends_with("Call convert_weight again with each parameter as its own field."),
            "{arguments}: {}",
            result.content
        );
    }
}
