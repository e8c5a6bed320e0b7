//! `mm eval SUITE` (SPEC §8, docs/eval.md): how reliably a model calls the agent's tools, per
//! mode (declared, MCP, skill + bash). Each run is a fresh `mm -p` in a copy of the agent's
//! folder whose tool programs record the argv they get; a run succeeds only when the expected
//! program ran with exactly the expected arguments (or, for `no_call`, when nothing ran).

mod record;
mod report;
mod suite;
mod workspace;

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::process::Command;
use tokio::sync::Semaphore;

pub use record::run as record;
pub use suite::Mode;

use self::report::{Results, RunRecord};
use self::suite::{Expect, Model, Suite};
use self::workspace::Workspace;
use crate::cli::Cli;
use crate::signals::Watch;
use crate::{Failure, exit};

/// The flags of `mm eval`.
#[derive(Debug, Clone, clap::Args)]
pub struct EvalArgs {
    /// The suite file (YAML).
    pub suite: PathBuf,
    /// Runs at once.
    #[arg(short = 'j', long = "jobs", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub jobs: u32,
    /// Runs per case and language (overrides the suite's `runs`).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: Option<u32>,
    /// Modes to run (overrides the suite's `modes`), e.g. `--mode declared --mode skill`.
    #[arg(long = "mode", value_enum)]
    pub modes: Vec<Mode>,
    /// Where the JSON of every run and the SVG chart go (default: ./mm-eval).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// An earlier results.json: print what changed.
    #[arg(long, value_name = "OLD.json")]
    pub compare: Option<PathBuf>,
}

/// The longest one run may take (its model replies have their own deadlines).
const RUN_TIMEOUT: Duration = Duration::from_secs(600);

/// One run to do.
struct Planned {
    index: usize,
    model: String,
    model_id: Option<String>,
    server: Option<String>,
    mode: Mode,
    case: usize,
    language: String,
    prompt: String,
    run: u32,
}

pub async fn run(cli: &Cli, args: &EvalArgs, watch: &Watch) -> Result<u8, Failure> {
    let mut suite = suite::load(&args.suite).map_err(Failure::usage)?;
    if let Some(runs) = args.runs {
        suite.runs = runs;
    }
    if !args.modes.is_empty() {
        suite.modes.clone_from(&args.modes);
    }
    let base = args.suite.parent().unwrap_or(Path::new("."));
    let agent_path = base.join(&suite.agent);
    let config = mm_core::load_agent(&agent_path).map_err(|e| Failure::usage(e.to_string()))?;
    if config.tools.is_empty() {
        return Err(Failure::usage(format!(
            "{}: the agent has no declared tools to measure",
            agent_path.display()
        )));
    }
    let agent_dir = std::fs::canonicalize(&agent_path)
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .ok_or_else(|| Failure::usage(format!("{}: no such agent file", agent_path.display())))?;
    let models = models(cli, &suite, &config.model);
    let mm = std::env::current_exe()
        .map_err(|e| Failure::runtime(format!("cannot find mm's own binary: {e}")))?;
    let workspace =
        Arc::new(Workspace::prepare(&config, &agent_dir, &mm).map_err(Failure::runtime)?);
    let plan = plan(&suite, &models);
    let total = plan.len();
    eprintln!(
        "mm eval {}: {total} runs ({} model(s) × {} mode(s) × {} case(s) × languages × {} run(s)), {} at once",
        args.suite.display(),
        models.len(),
        suite.modes.len(),
        suite.cases.len(),
        suite.runs,
        args.jobs
    );

    let max_turns = cli.max_turns;
    let cancel = watch.start_turn();
    let progress = Arc::new(Progress::new(total));
    let jobs = Arc::new(Semaphore::new(args.jobs as usize));
    let suite = Arc::new(suite);
    let mut tasks = tokio::task::JoinSet::new();
    let mut done: Vec<(usize, RunRecord)> = Vec::new();
    for planned in plan {
        // Taken here, in plan order: with `-j 1` the runs go one after the other as listed.
        let permit = tokio::select! {
            permit = jobs.clone().acquire_owned() => permit,
            () = cancel.cancelled() => break,
        };
        let Ok(permit) = permit else { break };
        let (workspace, suite, mm, cancel, progress) = (
            workspace.clone(),
            suite.clone(),
            mm.clone(),
            cancel.clone(),
            progress.clone(),
        );
        tasks.spawn(async move {
            let _permit = permit;
            let record = tokio::select! {
                record = execute(&planned, &suite, &workspace, &mm, max_turns) => record,
                () = cancel.cancelled() => return None,
            };
            progress.done(&record);
            Some((planned.index, record))
        });
        // Collect what finished meanwhile, so that the set does not grow with the plan.
        while let Some(joined) = tasks.try_join_next() {
            if let Ok(Some(run)) = joined {
                done.push(run);
            }
        }
    }
    while let Some(joined) = tasks.join_next().await {
        if let Ok(Some(run)) = joined {
            done.push(run);
        }
    }
    progress.finish();
    let ending = watch.end_turn();
    done.sort_by_key(|(i, _)| *i);
    let results = Results {
        suite: args.suite.display().to_string(),
        date: today(),
        interrupted: done.len() < total,
        runs: done.into_iter().map(|(_, r)| r).collect(),
    };
    output(args, &results, &suite.modes)?;
    Ok(match ending {
        Some(signal) => signal.exit_code(),
        None => exit::OK,
    })
}

/// The models: `--base-url` / `--model` given on the command line replace the suite's; a
/// suite without models measures the agent's own.
fn models(cli: &Cli, suite: &Suite, agent_model: &str) -> Vec<Model> {
    if cli.base_url.is_some() || cli.model.is_some() || suite.models.is_empty() {
        return vec![Model {
            name: Some(cli.model.clone().unwrap_or_else(|| agent_model.to_string())),
            model: cli.model.clone(),
            base_url: cli.base_url.clone(),
            base_urls: Vec::new(),
        }];
    }
    suite.models.clone()
}

/// Every run, in table order: model, mode, case, language, run.
fn plan(suite: &Suite, models: &[Model]) -> Vec<Planned> {
    let mut plan = Vec::new();
    for model in models {
        let servers = model.servers();
        for &mode in &suite.modes {
            for (case_index, case) in suite.cases.iter().enumerate() {
                for (language, prompt) in case.prompts.iter() {
                    for run in 1..=suite.runs {
                        let index = plan.len();
                        let server =
                            (!servers.is_empty()).then(|| servers[index % servers.len()].clone());
                        plan.push(Planned {
                            index,
                            model: model.label(),
                            model_id: model.model.clone(),
                            server,
                            mode,
                            case: case_index,
                            language: language.to_string(),
                            prompt: prompt.to_string(),
                            run,
                        });
                    }
                }
            }
        }
    }
    plan
}

/// One fresh `mm -p` (and, in MCP mode, its own `mm serve`).
async fn execute(
    p: &Planned,
    suite: &Suite,
    ws: &Workspace,
    mm: &Path,
    max_turns: Option<u32>,
) -> RunRecord {
    let case = &suite.cases[p.case];
    let log = ws
        .dir
        .path()
        .join(format!(".mm-eval/run-{}.jsonl", p.index));
    let mut record = RunRecord {
        model: p.model.clone(),
        mode: p.mode,
        case: case.id.clone(),
        language: p.language.clone(),
        run: p.run,
        prompt: p.prompt.clone(),
        ok: false,
        seconds: 0.0,
        calls: Value::Array(Vec::new()),
        recorded: Vec::new(),
        tokens: Value::Null,
        answer: String::new(),
        stop_reason: String::new(),
        error: None,
    };
    let mut server = None;
    let agent = match p.mode {
        Mode::Declared => ws.declared.clone(),
        Mode::Skill => ws.skill.clone(),
        Mode::Mcp => match serve(ws, mm, &log).await {
            Ok((child, url)) => {
                server = Some(child);
                match ws.mcp_agent(p.index, &url) {
                    Ok(agent) => agent,
                    Err(e) => return failed(record, e),
                }
            }
            Err(e) => return failed(record, e),
        },
    };
    let mut command = Command::new(mm);
    command
        .arg("-C")
        .arg(ws.dir.path())
        .arg("-a")
        .arg(&agent)
        .args(["--yolo", "--output-format", "json", "-p", &p.prompt]);
    if let Some(url) = &p.server {
        command.args(["--base-url", url]);
    }
    if let Some(model) = &p.model_id {
        command.args(["-m", model]);
    }
    if let Some(turns) = max_turns {
        command.args(["--max-turns", &turns.to_string()]);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![ws.bin.clone()];
    paths.extend(std::env::split_paths(&path));
    command
        .env("MM_EVAL_LOG", &log)
        .env("PATH", std::env::join_paths(paths).unwrap_or(path))
        .env_remove("MM_AGENT")
        .env_remove("MM_MODEL")
        .env_remove("MM_BASE_URL")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let started = Instant::now();
    let output = match command.spawn() {
        Ok(child) => tokio::time::timeout(RUN_TIMEOUT, child.wait_with_output()).await,
        Err(e) => return failed(record, format!("cannot start mm: {e}")),
    };
    record.seconds = started.elapsed().as_secs_f64();
    drop(server);
    match output {
        Err(_) => record.error = Some(format!("no end after {}s", RUN_TIMEOUT.as_secs())),
        Ok(Err(e)) => record.error = Some(e.to_string()),
        Ok(Ok(output)) => match serde_json::from_slice::<Value>(&output.stdout) {
            Ok(report) => {
                record.calls = report["tool_calls"].clone();
                record.tokens = report["usage"].clone();
                record.answer = report["result"].as_str().unwrap_or_default().to_string();
                record.stop_reason = report["stop_reason"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                if let Some(error) = report["error"].as_str() {
                    record.error = Some(error.to_string());
                }
            }
            Err(_) => {
                let stderr = String::from_utf8_lossy(&output.stderr);
                record.error = Some(format!(
                    "mm exited with {}: {}",
                    output.status,
                    stderr.lines().last().unwrap_or_default()
                ));
            }
        },
    }
    record.recorded = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    record.ok = record.error.is_none() && succeeded(&case.expect, &record.recorded);
    record
}

fn failed(mut record: RunRecord, error: String) -> RunRecord {
    record.error = Some(error);
    record
}

/// The expected program ran with exactly one of the expected argv lists (the program by file
/// name), or, for `no_call`, nothing ran.
fn succeeded(expect: &Expect, recorded: &[Value]) -> bool {
    match expect {
        Expect::NoCall => recorded.is_empty(),
        Expect::Call { program, argv } => recorded.iter().any(|r| {
            let name = Path::new(program)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            r["program"].as_str() == Some(name.as_str())
                && r["argv"].as_array().is_some_and(|got| {
                    argv.iter().any(|want| {
                        got.len() == want.len()
                            && got.iter().zip(want).all(|(g, w)| g.as_str() == Some(w))
                    })
                })
        }),
    }
}

/// `mm serve --http` on a free loopback port, the agent's tools recording to `log`.
async fn serve(
    ws: &Workspace,
    mm: &Path,
    log: &Path,
) -> Result<(tokio::process::Child, String), String> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("no free port: {e}"))?
        .port();
    let child = Command::new(mm)
        .arg("-C")
        .arg(ws.dir.path())
        .arg("-a")
        .arg(&ws.serve)
        .args(["serve", "--http", &format!("127.0.0.1:{port}")])
        .env("MM_EVAL_LOG", log)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
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

/// The table on stdout; results.json and chart.svg in `--out`; the comparison when asked.
fn output(args: &EvalArgs, results: &Results, modes: &[Mode]) -> Result<(), Failure> {
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("mm-eval"));
    std::fs::create_dir_all(&out)
        .map_err(|e| Failure::runtime(format!("{}: {e}", out.display())))?;
    let json =
        serde_json::to_string_pretty(results).map_err(|e| Failure::runtime(e.to_string()))?;
    let write = |name: &str, text: &str| {
        let path = out.join(name);
        std::fs::write(&path, text)
            .map_err(|e| Failure::runtime(format!("{}: {e}", path.display())))
    };
    write("results.json", &json)?;
    write("chart.svg", &report::svg(results, modes))?;
    let mut text = report::table(results, modes);
    if results.interrupted {
        text.push_str("\n(interrupted: only the finished runs are counted)\n");
    }
    if let Some(old) = &args.compare {
        let old_text = std::fs::read_to_string(old)
            .map_err(|e| Failure::usage(format!("{}: {e}", old.display())))?;
        let old: Results = serde_json::from_str(&old_text).map_err(|e| {
            Failure::usage(format!(
                "{}: not an mm eval results file: {e}",
                old.display()
            ))
        })?;
        text.push('\n');
        text.push_str(&report::compare(&old, results, modes));
    }
    crate::setup::write_stdout(&text)?;
    eprintln!(
        "mm eval: every run in {}, the chart in {}",
        out.join("results.json").display(),
        out.join("chart.svg").display()
    );
    Ok(())
}

/// A progress bar on a terminal, one line per run otherwise (stderr).
struct Progress {
    total: usize,
    state: std::sync::Mutex<(usize, usize)>,
    terminal: bool,
}

impl Progress {
    fn new(total: usize) -> Self {
        Self {
            total,
            state: std::sync::Mutex::new((0, 0)),
            terminal: std::io::stderr().is_terminal(),
        }
    }

    fn done(&self, run: &RunRecord) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.0 += 1;
        state.1 += usize::from(run.ok);
        let (done, ok) = *state;
        let mut err = std::io::stderr().lock();
        if self.terminal {
            let width = 30;
            let filled = done * width / self.total.max(1);
            let _ = write!(
                err,
                "\r[{}{}] {done}/{} runs, {ok} right",
                "#".repeat(filled),
                ".".repeat(width - filled),
                self.total
            );
        } else {
            let _ = writeln!(
                err,
                "run {done}/{}: {} {} {} {} #{}: {} ({:.1} s)",
                self.total,
                run.model,
                run.mode.title(),
                run.case,
                run.language,
                run.run,
                if run.ok { "right" } else { "wrong" },
                run.seconds
            );
        }
        let _ = err.flush();
    }

    fn finish(&self) {
        if self.terminal {
            eprintln!();
        }
    }
}

/// Today's date (UTC), `YYYY-MM-DD`.
fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let (year, month, day) = mm_core::session::civil_from_days(days);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn success_needs_exactly_the_expected_argv() {
        let expect = Expect::Call {
            program: "./scripts/release.sh".into(),
            argv: vec![
                vec!["1.4.2".into(), "--channel=beta".into()],
                vec![
                    "1.4.2".into(),
                    "--channel=beta".into(),
                    "--dry-run=false".into(),
                ],
            ],
        };
        let explicit = json!({"program": "release.sh", "argv": ["1.4.2", "--channel=beta", "--dry-run=false"]});
        assert!(succeeded(&expect, &[explicit]));
        let right = json!({"program": "release.sh", "argv": ["1.4.2", "--channel=beta"]});
        let extra = json!({"program": "release.sh", "argv": ["1.4.2", "--channel=beta", "x"]});
        let other = json!({"program": "status.sh", "argv": ["1.4.2", "--channel=beta"]});
        assert!(succeeded(&expect, &[other.clone(), right]));
        assert!(!succeeded(&expect, &[extra]));
        assert!(!succeeded(&expect, std::slice::from_ref(&other)));
        assert!(!succeeded(&expect, &[]));
        assert!(succeeded(&Expect::NoCall, &[]));
        assert!(!succeeded(&Expect::NoCall, &[other]));
    }

    #[test]
    fn dates_are_civil() {
        let date = today();
        assert_eq!(date.len(), 10);
        assert!(date.starts_with("20"), "{date}");
    }
}
