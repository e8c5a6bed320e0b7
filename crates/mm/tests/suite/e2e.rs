//! End-to-end tests against a real llama.cpp server and real models (docs/models.md):
//! - Gemma 3 270M, a weak base model, in constrained mode: what it does reliably — a valid call of
//!   the only tool offered, the script really run (read from the file the script writes) — and
//!   nothing that depends on its judgement;
//! - Qwen2.5-Coder-0.5B-Instruct in native mode and SmolLM2-135M-Instruct in constrained mode
//!   (`auto` picks it): the call, the script really run, and an answer in words drawn from what the
//!   script printed. Their servers run greedy and without the prompt cache, so each reply is the
//!   same from run to run.
//!
//! `scripts/test.sh` sets `MM_E2E=1` and the server/model paths; without `MM_E2E=1` (a bare
//! `cargo test`) they are skipped with a notice.

use std::ops::Deref;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use mm_test_support::llama::{LlamaOptions, LlamaServer, Model};

use super::Case;

/// A model server, and this test's turn at it: the end-to-end tests run one at a time. Each
/// server uses every core and has one slot, so two of them at once share the cores (seen on a
/// 2-core CI machine: a 512-token reply of Gemma 3 270M, 10 s alone, past mm's 300 s timeout) and
/// two tests of one server queue behind each other.
struct Serving {
    _turn: MutexGuard<'static, ()>,
    server: &'static LlamaServer,
}

impl Deref for Serving {
    type Target = LlamaServer;

    fn deref(&self) -> &LlamaServer {
        self.server
    }
}

/// The Gemma server, shared by its tests.
fn server() -> Option<Serving> {
    server_of(Model::Gemma)
}

/// The server of `model`, started once and shared by the tests of that model.
fn server_of(model: Model) -> Option<Serving> {
    if std::env::var("MM_E2E").as_deref() != Ok("1") {
        eprintln!("end-to-end test skipped: MM_E2E=1 is not set (scripts/test.sh sets it)");
        return None;
    }
    static TURN: Mutex<()> = Mutex::new(());
    // A test that failed while it held the turn leaves nothing to repair: take the turn anyway.
    let turn = TURN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    static SERVERS: [OnceLock<Result<LlamaServer, String>>; 3] = [const { OnceLock::new() }; 3];
    let slot = match model {
        Model::Gemma => &SERVERS[0],
        Model::Qwen => &SERVERS[1],
        Model::SmolLm2 => &SERVERS[2],
        other => panic!("no end-to-end server for {other:?}"),
    };
    match slot.get_or_init(|| LlamaServer::start(&LlamaOptions::model(model))) {
        Ok(server) => Some(Serving {
            _turn: turn,
            server,
        }),
        Err(e) => panic!("cannot start llama-server for {model:?}: {e}"),
    }
}

fn status_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/ops/scripts/status.sh")
}

/// An agent whose only tool is `status`, backed by the examples' recording script.
fn status_agent(mode: &str, max_output: usize) -> String {
    format!(
        "---\ntool_calls: {mode}\nyolo: true\nbuiltins: []\nlimits: {{max_turns: 6, max_output: {max_output}}}\ntools:\n  status:\n    description: Report the status of one of the company's services.\n    parameters:\n      service: {{type: string, description: \"The service name, like billing.\"}}\n    command: [\"{}\", \"{{{{service}}}}\"]\n---\nYou are the operations assistant of ACME. Use the tools to answer.\n",
        status_script().display()
    )
}

/// An agent whose only tool is `status`, with replies of at most `max_tokens`: the answer of an
/// instruction-tuned model is a sentence, and a runaway reply must not cost minutes.
fn answering_agent(mode: &str, max_tokens: u32) -> String {
    status_agent(mode, 8000).replace(
        "limits: {max_turns: 6,",
        &format!("limits: {{max_tokens: {max_tokens}, max_turns: 6,"),
    )
}

/// Runs mm against the real server; returns (exit code, the calls the script recorded, stderr).
fn run(
    case: &Case,
    server: &LlamaServer,
    extra: &[&str],
    prompt: &str,
) -> (i32, Vec<String>, String) {
    let (code, calls, _, stderr) = run_answer(case, server, extra, prompt);
    (code, calls, stderr)
}

/// Runs mm against the real server; returns (exit code, the calls the script recorded, the
/// answer on stdout, stderr).
fn run_answer(
    case: &Case,
    server: &LlamaServer,
    extra: &[&str],
    prompt: &str,
) -> (i32, Vec<String>, String, String) {
    let log = case.path().join("ops-calls.log");
    let out = case
        .mm_offline()
        .env("MM_OPS_LOG", &log)
        .args(["--base-url", &server.base_url()])
        .args(extra)
        .args(["-p", prompt])
        .timeout(Duration::from_secs(600))
        .output()
        .expect("mm runs");
    let calls = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    let stdout = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    (out.status.code().unwrap_or(-1), calls, stdout, stderr)
}

fn assert_status_ran(code: i32, calls: &[String], stderr: &str) {
    // 0: answered; 3: the weak model kept calling and the loop detector or max_turns stopped it.
    assert!(code == 0 || code == 3, "mm exited {code}:\n{stderr}");
    assert!(!calls.is_empty(), "the status script never ran:\n{stderr}");
    for call in calls {
        let args: Vec<&str> = call.split(' ').collect();
        assert_eq!(args[0], "status", "{call}");
        assert_eq!(args.len(), 2, "exactly one argument, the service: {call}");
    }
}

#[test]
fn e2e_the_real_model_calls_the_declared_tool_in_auto_mode_streaming() {
    let Some(server) = server() else { return };
    let case = Case::new(&status_agent("auto", 8000));
    let (code, calls, stderr) = run(
        &case,
        &server,
        &[],
        "What is the status of the billing service?",
    );
    assert_status_ran(code, &calls, &stderr);
}

#[test]
fn e2e_constrained_mode_without_streaming() {
    let Some(server) = server() else { return };
    let case = Case::new(&status_agent("constrained", 8000));
    let (code, calls, stderr) = run(
        &case,
        &server,
        &["--no-stream"],
        "What is the status of the billing service?",
    );
    assert_status_ran(code, &calls, &stderr);
}

#[test]
fn e2e_a_tool_with_large_output_is_truncated_for_the_model() {
    let Some(server) = server() else { return };
    let agent = "---\ntool_calls: constrained\nyolo: true\nbuiltins: []\nlimits: {max_turns: 3, max_output: 1500}\ntools:\n  report:\n    description: Print the full service report.\n    parameters:\n      service: {type: string, description: \"The service name.\"}\n    command: [\"./report\", \"{{service}}\"]\n---\nUse the tools to answer.\n";
    let case = Case::new(agent);
    case.script(
        "report",
        "#!/bin/sh\necho \"$1\" >> \"$(dirname \"$0\")/report.calls\"\ni=0; while [ $i -lt 5000 ]; do echo \"line $i of the report: all checks passed\"; i=$((i+1)); done\n",
    );
    let (code, _, stderr) = run(
        &case,
        &server,
        &[],
        "Show me the report of the billing service.",
    );
    assert!(code == 0 || code == 3, "mm exited {code}:\n{stderr}");
    let calls = std::fs::read_to_string(case.path().join("report.calls")).unwrap_or_default();
    assert!(!calls.is_empty(), "the report script never ran:\n{stderr}");
    // The model's context held: no context error, and the saved full output exists.
    assert!(!stderr.contains("context"), "{stderr}");
    let saved: Vec<_> = std::fs::read_dir(case.path().join("mm-output"))
        .map(|d| d.filter_map(Result::ok).collect())
        .unwrap_or_default();
    assert!(
        !saved.is_empty(),
        "the full output was saved under $TMPDIR/mm-output:\n{stderr}"
    );
}

#[test]
fn e2e_a_prompt_larger_than_the_context_gives_a_clear_error() {
    let Some(server) = server() else { return };
    let case = Case::new(&status_agent("auto", 8000));
    let prompt = "Please summarise the following text. ".to_string() + &"word ".repeat(20_000);
    let (code, calls, stderr) = run(&case, &server, &[], &prompt);
    assert_eq!(code, 1, "{stderr}");
    assert!(calls.is_empty());
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("mm: ")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(errors[0].contains("context"), "{stderr}");
}

#[test]
fn e2e_qwen_calls_status_natively_and_answers_in_words_from_its_output() {
    let Some(server) = server_of(Model::Qwen) else {
        return;
    };
    let case = Case::new(&answering_agent("native", 200));
    let (code, calls, answer, stderr) = run_answer(
        &case,
        &server,
        &[],
        "What is the status of the billing service?",
    );
    assert_eq!(code, 0, "{stderr}");
    // The right call, really run (the script's own log), once: the model writes its calls as
    // text, so the answer step follows the result and the call is not made again.
    assert_eq!(calls, ["status billing"], "{stderr}");
    // An answer in words, from what the script printed
    // ("billing: running, version 2.3.1, up 4 days, error rate 0.02%").
    assert!(
        !answer.contains('{') && answer.split_whitespace().count() >= 4,
        "not an answer in words: {answer:?}\n{stderr}"
    );
    assert!(
        answer.contains("running") && answer.contains("2.3.1"),
        "the answer does not say what the script printed: {answer:?}\n{stderr}"
    );
}

#[test]
fn e2e_smollm2_in_auto_mode_is_constrained_calls_status_and_answers_from_its_output() {
    let Some(server) = server_of(Model::SmolLm2) else {
        return;
    };
    let case = Case::new(&answering_agent("auto", 150));
    let (code, calls, answer, stderr) = run_answer(
        &case,
        &server,
        &[],
        "What is the status of the billing service?",
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(!calls.is_empty(), "the status script never ran:\n{stderr}");
    for call in &calls {
        // One argument naming billing (this model writes "Billing Service").
        let arg = call.strip_prefix("status ").unwrap_or_default();
        assert!(arg.to_lowercase().contains("billing"), "{call}");
    }
    assert!(
        answer.to_lowercase().contains("running"),
        "the answer does not say what the script printed: {answer:?}\n{stderr}"
    );
}

/// The repeated-call case of the issue: after a right call, Qwen2.5-Coder-0.5B called the same
/// tool again with parameters invented from its output (`{"service":"billing","build":"7f3e2",
/// "replicas":3,"queue_depth":12}`), mm answered "invalid", and mm's own message became the
/// answer. Now: the call runs once, and the answer is in words, from the output.
#[test]
fn e2e_qwen_does_not_repeat_a_call_that_worked_nor_answer_with_mms_message() {
    let Some(server) = server_of(Model::Qwen) else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("deploy.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\necho \"deploy $*\" >> \"$MM_OPS_LOG\"\necho \"$1: deployed build 7f3e2, replicas 3, queue depth 12, healthy\"\n",
    )
    .expect("script");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let agent = format!(
        "---\nyolo: true\nbuiltins: []\nlimits: {{max_tokens: 200, max_turns: 6}}\ntools:\n  deployment:\n    description: Show the current deployment of a service.\n    parameters:\n      service: {{type: string, description: \"The service name, like billing.\"}}\n    command: [\"{}\", \"{{{{service}}}}\"]\n---\nYou are the release engineer's assistant.\n",
        script.display()
    );
    let case = Case::new(&agent);
    let (code, calls, answer, stderr) = run_answer(
        &case,
        &server,
        &[],
        "Which build of the billing service is deployed?",
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(calls, ["deploy billing"], "the call ran once:\n{stderr}");
    assert!(!stderr.contains("invalid"), "{stderr}");
    assert!(
        !answer.contains("was not run") && !answer.contains('{'),
        "not an answer: {answer:?}\n{stderr}"
    );
    assert!(
        answer.contains("7f3e2"),
        "the answer does not say what the script printed: {answer:?}\n{stderr}"
    );
}
