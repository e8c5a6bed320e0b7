//! One run: its earlier turns (a `history` case) and its judged turn, each a fresh `mm -p` (then
//! `mm --resume SESSION -p`) with `--output-format stream-json`, whose events say what the
//! model saw; then the judgement ([`super::judge`]).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mm_core::junk::AnswerContext;
use serde_json::Value;
use std::ffi::OsString;

use mm_core::{PipedChild, PipedSpec, StderrTo, Stop};
use tokio::io::AsyncReadExt;

use super::judge::{self, Judged};
use super::report::{EarlierTurn, RunRecord, ToolResult};
use super::suite::{Expect, Mode, Suite};
use super::workspace::Workspace;

/// The longest one turn may take (its model replies have their own deadlines).
const TURN_TIMEOUT: Duration = Duration::from_secs(600);

/// One run to do.
pub struct Planned {
    pub index: usize,
    /// Which of the eval's suites.
    pub suite: usize,
    pub model: String,
    pub model_id: Option<String>,
    pub server: Option<String>,
    pub mode: Mode,
    /// `--variants`: which (index into the workspace's variant agents, and name).
    pub variant: Option<(usize, String)>,
    pub case: usize,
    pub language: String,
    pub prompt: String,
    /// The earlier user turns, run before the prompt.
    pub history: Vec<String>,
    pub run: u32,
    /// `--seed` of every turn of the run.
    pub seed: Option<u64>,
}

/// What is the same for every run of an eval.
pub struct Options {
    pub mm: PathBuf,
    pub max_turns: Option<u32>,
    pub temperature: Option<f64>,
}

/// What one `mm -p` did.
#[derive(Debug, Default)]
pub struct Turn {
    pub answer: String,
    pub stop_reason: String,
    pub error: Option<String>,
    pub session_id: Option<String>,
    pub calls: Value,
    pub tokens: Value,
    pub truncated: bool,
    /// mm found the model's last reply useless and showed the output of a call instead, or no
    /// answer: what the reply was (the result line's `junk`).
    pub mm_junk: Option<mm_core::junk::Junk>,
    pub tool_results: Vec<ToolResult>,
    /// What the recording wrapper wrote during this turn.
    pub recorded: Vec<Value>,
}

/// Runs every turn of `p` and judges the last.
pub async fn execute(p: &Planned, suite: &Suite, ws: &Workspace, opts: &Options) -> RunRecord {
    let case = &suite.cases[p.case];
    let mut record = RunRecord {
        model: p.model.clone(),
        mode: p.mode,
        variant: p.variant.as_ref().map(|(_, name)| name.clone()),
        suite: suite.name.clone(),
        case: format!("{}/{}", suite.name, case.id),
        language: p.language.clone(),
        run: p.run,
        prompt: p.prompt.clone(),
        earlier: Vec::new(),
        temperature: opts.temperature,
        seed: p.seed,
        ok: false,
        judged: true,
        expects_call: Some(matches!(case.expect, Expect::Call { .. })),
        failure: None,
        junk: None,
        printed_junk: None,
        answer_check: None,
        seconds: 0.0,
        calls: Value::Array(Vec::new()),
        recorded: Vec::new(),
        tool_results: Vec::new(),
        tokens: Value::Null,
        answer: String::new(),
        truncated: false,
        stop_reason: String::new(),
        error: None,
    };
    let started = Instant::now();
    let mut mm_junk = None;
    let mut session: Option<String> = None;
    for (n, prompt) in p.history.iter().enumerate() {
        let turn = turn(p, ws, opts, n, prompt, session.as_deref()).await;
        let error = turn.error.clone().or_else(|| {
            turn.session_id
                .is_none()
                .then(|| "no session id in the result line".to_string())
        });
        session.clone_from(&turn.session_id);
        record.earlier.push(EarlierTurn {
            prompt: prompt.clone(),
            answer: turn.answer,
            stop_reason: turn.stop_reason,
            calls: turn.calls,
            recorded: turn.recorded,
            error: error.clone(),
        });
        if let Some(error) = error {
            record.error = Some(format!("earlier turn {}: {error}", n + 1));
            break;
        }
    }
    if record.error.is_none() {
        let turn = turn(p, ws, opts, p.history.len(), &p.prompt, session.as_deref()).await;
        record.answer = turn.answer;
        record.stop_reason = turn.stop_reason;
        record.error = turn.error;
        record.calls = turn.calls;
        record.tokens = turn.tokens;
        record.truncated = turn.truncated;
        mm_junk = turn.mm_junk;
        record.tool_results = turn.tool_results;
        record.recorded = turn.recorded;
    }
    record.seconds = started.elapsed().as_secs_f64();

    let mut prompts: Vec<&str> = p.history.iter().map(String::as_str).collect();
    prompts.push(&p.prompt);
    let (ran, mm): (Vec<&ToolResult>, Vec<&ToolResult>) =
        record.tool_results.iter().partition(|r| r.ran());
    let outputs: Vec<&str> = ran.iter().map(|r| r.content.as_str()).collect();
    let mut messages: Vec<&str> = mm.iter().map(|r| r.content.as_str()).collect();
    // What mm itself writes around the conversation is never an answer either.
    for text in mm_core::own_texts() {
        messages.push(text);
    }
    let names: Vec<&str> = ws.names.iter().map(String::as_str).collect();
    let parameters: Vec<&str> = ws.parameters.iter().map(String::as_str).collect();
    let earlier_answers = earlier_answers(&record.earlier, &record.calls);
    let verdict = judge::verdict(&Judged {
        expect: &case.expect,
        check: &case.answer,
        failed: record.error.is_some(),
        stop_reason: &record.stop_reason,
        recorded: &record.recorded,
        answer: &record.answer,
        mm_junk,
        context: AnswerContext {
            prompts: &prompts,
            tool_outputs: &outputs,
            mm_messages: &messages,
            earlier_answers: &earlier_answers,
            names: &names,
            parameters: &parameters,
            truncated: record.truncated,
            calls_succeeded: record.tool_results.iter().any(|r| r.ok),
        },
    });
    record.printed_junk = verdict.printed_junk.map(|j| j.as_str().to_string());
    record.ok = verdict.failure.is_none();
    record.failure = verdict.failure;
    record.junk = verdict.junk.map(|j| j.as_str().to_string());
    record.answer_check = verdict.check_failed;
    record
}

/// The answers of the earlier turns that read a program's output, as the turn loop judges
/// them (`mm_core::junk`'s `CopiedEarlierAnswer`): not a turn that made one of the judged
/// turn's `calls` (name and arguments) too, whose answer may be told again.
fn earlier_answers<'a>(earlier: &'a [EarlierTurn], calls: &Value) -> Vec<&'a str> {
    let made = |calls: &Value| -> Vec<(Value, Value)> {
        calls
            .as_array()
            .map(|calls| {
                calls
                    .iter()
                    .map(|c| (c["name"].clone(), c["arguments"].clone()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let now = made(calls);
    earlier
        .iter()
        .filter(|e| {
            let ran = e.calls.as_array().is_some_and(|calls| {
                calls
                    .iter()
                    .any(|c| c["ok"] == Value::Bool(true) || !c["exit_code"].is_null())
            });
            ran && !made(&e.calls).iter().any(|c| now.contains(c))
        })
        .map(|e| e.answer.as_str())
        .collect()
}

/// Turn `n` of run `p`: one `mm -p` (and, in MCP mode, its own `mm serve`), recording to its
/// own log.
async fn turn(
    p: &Planned,
    ws: &Workspace,
    opts: &Options,
    n: usize,
    prompt: &str,
    resume: Option<&str>,
) -> Turn {
    let key = format!("{}-{n}", p.index);
    let log = ws.dir.path().join(format!(".mm-eval/run-{key}.jsonl"));
    let mut server = None;
    let agent = match (p.mode, &p.variant) {
        (Mode::Declared, Some((v, _))) => ws.variants[*v].clone(),
        (Mode::Declared, None) => ws.declared.clone(),
        (Mode::Skill, _) => ws.skill.clone(),
        (Mode::Mcp, _) => match serve(ws, &opts.mm, &log).await {
            Ok((child, url)) => {
                server = Some(child);
                match ws.mcp_agent(&key, &url) {
                    Ok(agent) => agent,
                    Err(e) => return failed(e),
                }
            }
            Err(e) => return failed(e),
        },
    };
    let mut args: Vec<OsString> = vec![
        "-C".into(),
        ws.dir.path().into(),
        "-a".into(),
        agent.into(),
        "--yolo".into(),
        "--output-format".into(),
        "stream-json".into(),
    ];
    if let Some(session) = resume {
        args.extend(["--resume".into(), session.into()]);
    }
    args.extend(["-p".into(), prompt.into()]);
    if let Some(url) = &p.server {
        args.extend(["--base-url".into(), url.into()]);
    }
    if let Some(model) = &p.model_id {
        args.extend(["-m".into(), model.into()]);
    }
    if let Some(turns) = opts.max_turns {
        args.extend(["--max-turns".into(), turns.to_string().into()]);
    }
    if let Some(t) = opts.temperature {
        args.extend(["--temperature".into(), t.to_string().into()]);
    }
    if let Some(seed) = p.seed {
        args.extend(["--seed".into(), seed.to_string().into()]);
    }
    let output = match spawn_mm(&opts.mm, args, ws, &log, StderrTo::Piped) {
        Ok(child) => tokio::time::timeout(TURN_TIMEOUT, output_of(child)).await,
        Err(e) => return failed(format!("cannot start mm: {e}")),
    };
    drop(server);
    let mut turn = match output {
        Err(_) => failed(format!("no end after {}s", TURN_TIMEOUT.as_secs())),
        Ok(Err(e)) => failed(e.to_string()),
        Ok(Ok(output)) => read_events(&output.stdout).unwrap_or_else(|| {
            let stderr = String::from_utf8_lossy(&output.stderr);
            failed(format!(
                "mm exited with {} and no result line: {}",
                output.status,
                stderr.lines().last().unwrap_or_default()
            ))
        }),
    };
    turn.recorded = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    turn
}

fn failed(error: String) -> Turn {
    Turn {
        error: Some(error),
        calls: Value::Array(Vec::new()),
        ..Turn::default()
    }
}

/// The turn as `--output-format stream-json` told it: the `tool_result` events, then the
/// `result` line (`None` without one).
fn read_events(stdout: &[u8]) -> Option<Turn> {
    let mut results = Vec::new();
    for line in String::from_utf8_lossy(stdout).lines() {
        let Ok(event) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        match event["type"].as_str() {
            Some("tool_result") => {
                if let Ok(result) = serde_json::from_value::<ToolResult>(event) {
                    results.push(result);
                }
            }
            Some("result") => {
                let text = |key: &str| event[key].as_str().map(str::to_string);
                return Some(Turn {
                    answer: text("result").unwrap_or_default(),
                    stop_reason: text("stop_reason").unwrap_or_default(),
                    error: text("error"),
                    session_id: text("session_id"),
                    calls: match &event["tool_calls"] {
                        Value::Null => Value::Array(Vec::new()),
                        calls => calls.clone(),
                    },
                    tokens: event["usage"].clone(),
                    truncated: event["truncated"] == true,
                    mm_junk: serde_json::from_value(event["junk"].clone()).ok(),
                    tool_results: results,
                    recorded: Vec::new(),
                });
            }
            _ => {}
        }
    }
    None
}

/// `mm serve --http` on a free loopback port, the agent's tools recording to `log`.
async fn serve(ws: &Workspace, mm: &Path, log: &Path) -> Result<(PipedChild, String), String> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("no free port: {e}"))?
        .port();
    let args: Vec<OsString> = vec![
        "-C".into(),
        ws.dir.path().into(),
        "-a".into(),
        ws.serve.clone().into(),
        "serve".into(),
        "--http".into(),
        format!("127.0.0.1:{port}").into(),
    ];
    let child = spawn_mm(mm, args, ws, log, StderrTo::Null)
        .map_err(|e| format!("cannot start mm serve: {e}"))?;
    let deadline = Instant::now() + Duration::from_secs(10);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        if Instant::now() > deadline {
            return Err("mm serve did not listen within 10s".into());
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Ok((child, format!("http://127.0.0.1:{port}/mcp")))
}

/// How long an `mm` the eval stops (timed out, or the eval interrupted) has to kill its own
/// tools' process groups after SIGTERM, before its group is SIGKILLed.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// An `mm` of the eval, through mm-core's process runner: its own process group, stdin closed,
/// stopped with SIGTERM (so that it kills its tools' groups) and then SIGKILL when dropped.
fn spawn_mm(
    mm: &Path,
    args: Vec<OsString>,
    ws: &Workspace,
    log: &Path,
    stderr: StderrTo,
) -> std::io::Result<PipedChild> {
    let (env, env_remove) = ws.environment(log);
    let mut child = mm_core::spawn_piped(PipedSpec {
        program: mm.into(),
        args,
        cwd: std::env::current_dir()?,
        env,
        env_remove,
        stderr,
        stop: Stop::Terminate(STOP_GRACE),
        ..PipedSpec::default()
    })?;
    drop(child.stdin.take());
    Ok(child)
}

/// What an `mm` wrote, once it ended.
struct Output {
    status: std::process::ExitStatus,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

/// Reads the child's stdout and stderr to their end, then reaps it.
async fn output_of(mut child: PipedChild) -> std::io::Result<Output> {
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    let (out, err) = (child.stdout.take(), child.stderr.take());
    let read_out = async {
        match out {
            Some(mut pipe) => pipe.read_to_end(&mut stdout).await.map(|_| ()),
            None => Ok(()),
        }
    };
    let read_err = async {
        match err {
            Some(mut pipe) => pipe.read_to_end(&mut stderr).await.map(|_| ()),
            None => Ok(()),
        }
    };
    let (a, b) = tokio::join!(read_out, read_err);
    a?;
    b?;
    let status = child.wait().await?;
    Ok(Output {
        status,
        stdout,
        stderr,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_events_give_the_results_and_the_answer() {
        let stdout = concat!(
            "{\"type\":\"text_delta\",\"text\":\"x\"}\n",
            "{\"type\":\"tool_result\",\"id\":\"1\",\"name\":\"status\",\"ok\":true,\"exit_code\":0,\"duration_ms\":3,\"content\":\"billing: running\"}\n",
            "{\"type\":\"tool_result\",\"id\":\"2\",\"name\":\"release\",\"ok\":false,\"exit_code\":null,\"duration_ms\":0,\"content\":\"The call to release was not run: its arguments are invalid.\"}\n",
            "{\"type\":\"tool_result\",\"id\":\"3\",\"name\":\"pkgtest\",\"ok\":false,\"exit_code\":null,\"duration_ms\":0,\"content\":\"no package\\nexit code 1\"}\n",
            "{\"type\":\"result\",\"result\":\"Running.\",\"stop_reason\":\"done\",\"turns\":2,\"tool_calls\":[],\"usage\":{},\"duration_ms\":5,\"truncated\":true,\"session_id\":\"s1\"}\n",
        );
        let turn = read_events(stdout.as_bytes()).expect("a result line");
        assert_eq!(turn.answer, "Running.");
        assert_eq!(turn.stop_reason, "done");
        assert_eq!(turn.session_id.as_deref(), Some("s1"));
        assert!(turn.truncated);
        let ran: Vec<bool> = turn.tool_results.iter().map(ToolResult::ran).collect();
        assert_eq!(ran, [true, false, true]);
        assert!(read_events(b"{\"type\":\"text_delta\",\"text\":\"x\"}\n").is_none());
        let error = read_events(
            b"{\"type\":\"result\",\"result\":\"\",\"stop_reason\":\"error\",\"error\":\"boom\"}\n",
        )
        .expect("a result line");
        assert_eq!(error.error.as_deref(), Some("boom"));
    }

    /// The earlier answers a judged answer may not restate: those of turns where a program ran,
    /// not of a turn that made one of the judged turn's calls too.
    #[test]
    fn earlier_answers_are_those_of_turns_that_read_an_output() {
        let turn = |answer: &str, calls: Value| EarlierTurn {
            prompt: String::new(),
            answer: answer.to_string(),
            stop_reason: "done".to_string(),
            calls,
            recorded: Vec::new(),
            error: None,
        };
        let status = serde_json::json!([{"name": "status", "arguments": {"service": "billing"},
            "ok": true, "exit_code": 0}]);
        let refused = serde_json::json!([{"name": "status", "arguments": {"svc": "x"},
            "ok": false, "exit_code": null}]);
        let failed = serde_json::json!([{"name": "restart", "arguments": {"service": "auth"},
            "ok": false, "exit_code": 1}]);
        let earlier = [
            turn("Billing is running.", status.clone()),
            turn("I could not check it.", refused),
            turn("The restart of auth failed.", failed),
            turn("Paris is the capital of France.", Value::Null),
        ];
        assert_eq!(
            earlier_answers(&earlier, &serde_json::json!([])),
            ["Billing is running.", "The restart of auth failed."]
        );
        assert_eq!(
            earlier_answers(&earlier, &status),
            ["The restart of auth failed."],
            "the same call made again may be told the same way"
        );
    }
}
