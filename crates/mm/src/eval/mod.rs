//! `mm eval SUITE...` (SPEC §8, docs/eval.md): how reliably a model uses the agent's tools, per
//! mode (declared, MCP, skill + bash). Each run is a fresh `mm -p` (after the earlier turns of
//! a `history` case) in a copy of the agent's folder whose tool programs record the argv they
//! get. A run succeeds only when the expected program ran with exactly the expected arguments
//! (or, for `no_call`, when none ran), the answer passes the case's checks, and
//! [`mm_core::junk`] finds it is a real answer.

mod judge;
mod record;
mod report;
mod run;
mod suggest;
mod suite;
mod variant;
mod workspace;

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::Semaphore;

pub use record::run as record;
pub use suite::Mode;

use self::report::{Arm, Results, RunRecord};
use self::run::{Options, Planned};
use self::suite::{Model, Suite};
use self::workspace::Workspace;
use crate::signals::Watch;
use crate::{Failure, exit};

/// The flags of `mm eval` (with the global `--temperature`, `--seed`, `--max-turns`,
/// `--base-url` and `-m`).
#[derive(Debug, Clone, clap::Args)]
pub struct EvalArgs {
    /// The suite files (YAML): one plan, one table.
    #[arg(required = true, value_name = "SUITE")]
    pub suites: Vec<PathBuf>,
    /// Runs at once.
    #[arg(short = 'j', long = "jobs", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub jobs: u32,
    /// Runs per case and language (overrides the suites' `runs`).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: Option<u32>,
    /// Modes to run (overrides the suites' `modes`), e.g. `--mode declared --mode skill`.
    #[arg(long = "mode", value_enum)]
    pub modes: Vec<Mode>,
    /// Where the JSON of every run and the SVG chart go (default: ./mm-eval).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// An earlier results.json: print what changed.
    #[arg(long, value_name = "OLD.json")]
    pub compare: Option<PathBuf>,
    /// Run declared mode once per way of showing the tools: `builtin` (the agent as it is, no
    /// closing sentence, a server-name prefix, "MCP tool from server …", required/enum as
    /// schema keywords, all three of the seed's stand-in) or a YAML file of variants
    /// (docs/eval.md); one row per variant.
    #[arg(long, value_name = "FILE|builtin", conflicts_with = "suggest_names")]
    pub variants: Option<String>,
    /// Ask the model what it would call each tool and its parameters (5 samples per tool),
    /// run its most consistent names as variants, choose on half of the cases and score on
    /// the other half; print the agent-file patch (never applied).
    #[arg(long)]
    pub suggest_names: bool,
    /// Run only the prompts (and histories) in these languages, e.g. `--language en`; each one
    /// must be a language of some case.
    #[arg(long = "language", value_name = "LANG")]
    pub languages: Vec<String>,
    /// Another mm binary to run the turns with (and `mm serve`), e.g. an older build, to
    /// measure a change of mm itself; the recording wrapper stays this one.
    #[arg(long, value_name = "PATH")]
    pub mm_binary: Option<PathBuf>,
}

/// The global flags `mm eval` takes from the command line.
#[derive(Debug, Clone, Default)]
pub struct Flags {
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub max_turns: Option<u32>,
    pub temperature: Option<f64>,
    pub seed: Option<u64>,
}

/// A suite, ready to run: its folder copy and the models it measures.
struct Prepared {
    suite: Suite,
    workspace: Workspace,
    models: Vec<Model>,
    /// The variants' names, in the order of the workspace's variant agents.
    variants: Vec<String>,
    agent_path: PathBuf,
    config: mm_core::AgentConfig,
    /// `--suggest-names`: the candidates, each with its patch of the agent file.
    suggested: Vec<(variant::Variant, Option<String>)>,
}

pub async fn run(flags: &Flags, args: &EvalArgs, watch: &Watch) -> Result<u8, Failure> {
    let mm = std::env::current_exe()
        .map_err(|e| Failure::runtime(format!("cannot find mm's own binary: {e}")))?;
    // `--suggest-names` starts from the agent's own names; its candidates join per suite.
    let variants = match &args.variants {
        Some(spec) => variant::load(spec).map_err(Failure::usage)?,
        None if args.suggest_names => vec![variant::Variant::as_declared()],
        None => Vec::new(),
    };
    if (args.variants.is_some() || args.suggest_names)
        && args.modes.iter().any(|m| *m != Mode::Declared)
    {
        return Err(Failure::usage(
            "--variants and --suggest-names show the declared tools in other ways: they run \
             declared mode only (leave out --mode, or give --mode declared)",
        ));
    }
    let mut prepared: Vec<Prepared> = Vec::new();
    for path in &args.suites {
        let next = prepare(flags, args, path, &mm, &variants)?;
        if let Some(other) = prepared.iter().find(|p| p.suite.name == next.suite.name) {
            return Err(Failure::usage(format!(
                "{} and {} are both named `{}`: give one a `name:`",
                other.suite.path.display(),
                path.display(),
                next.suite.name
            )));
        }
        prepared.push(next);
    }
    let seeds = seeds(flags);
    if args.suggest_names {
        let cancel = watch.start_turn();
        for p in &mut prepared {
            suggest_names(p, seeds.unwrap_or(1), &cancel).await?;
        }
        if watch.end_turn().is_some() {
            return Err(Failure::runtime(
                "interrupted while asking the model for names",
            ));
        }
    }
    let prepared: Vec<Arc<Prepared>> = prepared.into_iter().map(Arc::new).collect();
    for language in &args.languages {
        let offered = prepared.iter().any(|p| {
            p.suite
                .cases
                .iter()
                .any(|c| c.prompts.iter().any(|(l, _)| l == language))
        });
        if !offered {
            return Err(Failure::usage(format!(
                "--language {language}: no case of these suites has a prompt in `{language}`"
            )));
        }
    }
    let plan = plan(&prepared, seeds, &args.languages);
    let total = plan.len();
    let listed: Vec<String> = args
        .suites
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    eprintln!(
        "mm eval {}: {total} runs (models × {} × cases × languages × runs), {} at once",
        listed.join(" "),
        if prepared.iter().all(|p| p.variants.is_empty()) {
            "modes"
        } else {
            "variants"
        },
        args.jobs
    );
    let most_runs = prepared.iter().map(|p| p.suite.runs).max().unwrap_or(1);
    if most_runs > 1 && flags.temperature.is_none_or(|t| t == 0.0) {
        eprintln!(
            "mm eval: {most_runs} runs per case without --temperature (or at 0): with greedy \
             decoding they will be the same run; --temperature 0.7 makes them differ"
        );
    }

    let options = Arc::new(Options {
        mm: args.mm_binary.clone().unwrap_or(mm),
        max_turns: flags.max_turns,
        temperature: flags.temperature,
    });
    let cancel = watch.start_turn();
    let mut done = execute(plan, &prepared, options, args.jobs, &cancel).await;
    let ending = watch.end_turn();
    done.sort_by_key(|(i, _)| *i);
    let results = Results {
        suite: listed.join(", "),
        suites: prepared.iter().map(|p| p.suite.name.clone()).collect(),
        date: today(),
        temperature: flags.temperature,
        seed: seeds,
        interrupted: done.len() < total,
        runs: done.into_iter().map(|(_, r)| r).collect(),
    };
    let arms = arms(&prepared);
    output(args, &results, &arms, &prepared)?;
    Ok(match ending {
        Some(signal) => signal.exit_code(),
        None => exit::OK,
    })
}

/// One suite file, ready to run: loaded with the flags' overrides, its agent checked and copied
/// into a workspace, its models chosen.
fn prepare(
    flags: &Flags,
    args: &EvalArgs,
    path: &Path,
    mm: &Path,
    variants: &[variant::Variant],
) -> Result<Prepared, Failure> {
    let mut suite = suite::load(path).map_err(Failure::usage)?;
    if let Some(runs) = args.runs {
        suite.runs = runs;
    }
    if !args.modes.is_empty() {
        suite.modes.clone_from(&args.modes);
    }
    if !variants.is_empty() {
        suite.modes = vec![Mode::Declared];
    }
    let base = path.parent().unwrap_or(Path::new("."));
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
    let models = models(flags, &suite, &config.model);
    let mut workspace =
        Workspace::prepare(&config, &agent_dir, mm, path).map_err(Failure::runtime)?;
    let mut names = Vec::new();
    for variant in variants {
        workspace
            .add_variant(variant)
            .map_err(|e| Failure::usage(format!("{}: {e}", agent_path.display())))?;
        names.push(variant.name.clone());
    }
    Ok(Prepared {
        suite,
        workspace,
        models,
        variants: names,
        agent_path,
        config,
        suggested: Vec::new(),
    })
}

/// `--suggest-names` for one suite: the model's names for each tool become candidate variants
/// (beside the agent's own), each with the patch that would apply it.
async fn suggest_names(
    p: &mut Prepared,
    seed: u64,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<(), Failure> {
    let [model] = p.models.as_slice() else {
        return Err(Failure::usage(format!(
            "{}: --suggest-names asks one model: give -m (and --base-url), or keep one model in the suite",
            p.suite.path.display()
        )));
    };
    let server = suggest::Server {
        base_url: model
            .servers()
            .first()
            .cloned()
            .unwrap_or_else(|| p.config.base_url.clone()),
        model: model
            .model
            .clone()
            .unwrap_or_else(|| p.config.model.clone()),
        api_key: p
            .config
            .api_key_env
            .as_ref()
            .and_then(|var| std::env::var(var).ok()),
    };
    let mut proposals = Vec::new();
    for tool in &p.config.tools {
        eprintln!(
            "mm eval: asking {} for names of `{}` ({} samples)",
            server.model,
            tool.name,
            suggest::SAMPLES
        );
        let got = suggest::propose(&server, tool, seed, cancel)
            .await
            .map_err(|e| Failure::runtime(format!("asking for names: {e}")))?;
        proposals.push(got);
    }
    let text = std::fs::read_to_string(&p.agent_path).unwrap_or_default();
    for candidate in suggest::candidates(&p.config.tools, &proposals) {
        p.workspace
            .add_variant(&candidate)
            .map_err(|e| Failure::runtime(format!("{}: {e}", p.agent_path.display())))?;
        p.variants.push(candidate.name.clone());
        let patch = suggest::patch(&p.agent_path, &text, &p.config, &candidate);
        p.suggested.push((candidate, patch));
    }
    Ok(())
}

/// Runs the plan, `jobs` at once, in plan order, until it is done or `cancel` fires; returns
/// the runs that finished, with their index in the plan.
async fn execute(
    plan: Vec<run::Planned>,
    prepared: &[Arc<Prepared>],
    options: Arc<Options>,
    jobs: u32,
    cancel: &tokio_util::sync::CancellationToken,
) -> Vec<(usize, RunRecord)> {
    let progress = Arc::new(Progress::new(plan.len()));
    let jobs = Arc::new(Semaphore::new(jobs as usize));
    let mut tasks = tokio::task::JoinSet::new();
    let mut done: Vec<(usize, RunRecord)> = Vec::new();
    for planned in plan {
        // Taken here, in plan order: with `-j 1` the runs go one after the other as listed.
        let permit = tokio::select! {
            permit = jobs.clone().acquire_owned() => permit,
            () = cancel.cancelled() => break,
        };
        let Ok(permit) = permit else { break };
        let (suite, options, cancel, progress) = (
            prepared[planned.suite].clone(),
            options.clone(),
            cancel.clone(),
            progress.clone(),
        );
        tasks.spawn(async move {
            let _permit = permit;
            let record = tokio::select! {
                record = run::execute(&planned, &suite.suite, &suite.workspace, &options) => record,
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
    done
}

/// The base seed, when seeds are sent: with `--temperature` or `--seed` (default 1); each run
/// sends this plus its number, so that its runs differ and a rerun repeats them.
fn seeds(flags: &Flags) -> Option<u64> {
    (flags.temperature.is_some() || flags.seed.is_some()).then(|| flags.seed.unwrap_or(1))
}

/// The table's rows per model (and columns per case): the modes of every suite in the order
/// first met, or declared mode once per variant.
fn arms(prepared: &[Arc<Prepared>]) -> Vec<Arm> {
    let mut arms: Vec<Arm> = Vec::new();
    for p in prepared {
        let of_suite: Vec<Arm> = if p.variants.is_empty() {
            p.suite
                .modes
                .iter()
                .map(|mode| Arm {
                    mode: *mode,
                    variant: None,
                })
                .collect()
        } else {
            p.variants
                .iter()
                .map(|name| Arm {
                    mode: Mode::Declared,
                    variant: Some(name.clone()),
                })
                .collect()
        };
        for arm in of_suite {
            if !arms.contains(&arm) {
                arms.push(arm);
            }
        }
    }
    arms
}

/// The models: `--base-url` / `--model` given on the command line replace the suite's; a
/// suite without models measures the agent's own.
fn models(flags: &Flags, suite: &Suite, agent_model: &str) -> Vec<Model> {
    if flags.base_url.is_some() || flags.model.is_some() || suite.models.is_empty() {
        return vec![Model {
            name: Some(
                flags
                    .model
                    .clone()
                    .unwrap_or_else(|| agent_model.to_string()),
            ),
            model: flags.model.clone(),
            base_url: flags.base_url.clone(),
            base_urls: Vec::new(),
        }];
    }
    suite.models.clone()
}

/// Every run, in order: suite, model, mode (or variant), case, language, run; with `languages`,
/// only the prompts in those.
fn plan(prepared: &[Arc<Prepared>], seeds: Option<u64>, languages: &[String]) -> Vec<Planned> {
    let mut plan = Vec::new();
    for (suite_index, p) in prepared.iter().enumerate() {
        let shown: Vec<Option<(usize, String)>> = if p.variants.is_empty() {
            vec![None]
        } else {
            p.variants.iter().cloned().enumerate().map(Some).collect()
        };
        let suite = &p.suite;
        for model in &p.models {
            let servers = model.servers();
            for (&mode, variant) in suite
                .modes
                .iter()
                .flat_map(|m| shown.iter().map(move |v| (m, v)))
            {
                for (case_index, case) in suite.cases.iter().enumerate() {
                    for (language, prompt) in case.prompts.iter() {
                        if !languages.is_empty() && !languages.iter().any(|l| l == language) {
                            continue;
                        }
                        for run in 1..=suite.runs {
                            let index = plan.len();
                            let server = (!servers.is_empty())
                                .then(|| servers[index % servers.len()].clone());
                            plan.push(Planned {
                                index,
                                suite: suite_index,
                                model: model.label(),
                                model_id: model.model.clone(),
                                server,
                                mode,
                                variant: variant.clone(),
                                case: case_index,
                                language: language.to_string(),
                                prompt: prompt.to_string(),
                                history: case.history(language).to_vec(),
                                run,
                                seed: seeds.map(|base| base.saturating_add(u64::from(run))),
                            });
                        }
                    }
                }
            }
        }
    }
    plan
}

/// The table on stdout; results.json and chart.svg in `--out`; the comparison when asked.
fn output(
    args: &EvalArgs,
    results: &Results,
    arms: &[Arm],
    prepared: &[Arc<Prepared>],
) -> Result<(), Failure> {
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
    write("chart.svg", &report::svg(results, arms))?;
    let mut text = report::table(results, arms);
    if results.interrupted {
        text.push_str("\n(interrupted: only the finished runs are counted)\n");
    }
    for p in prepared.iter().filter(|p| !p.suggested.is_empty()) {
        let cases: Vec<String> = p.suite.cases.iter().map(|c| c.id.clone()).collect();
        let candidates: Vec<variant::Variant> =
            p.suggested.iter().map(|(v, _)| v.clone()).collect();
        let chosen = suggest::chosen(&p.suite.name, &cases, &results.runs, &candidates);
        let Some(index) = chosen else { continue };
        let (variant, patch) = &p.suggested[index];
        let yaml = suggest::variant_yaml(variant);
        write(&format!("{}-names.yaml", p.suite.name), &yaml)?;
        text.push_str(&suggest::report(
            &p.suite.name,
            &cases,
            &results.runs,
            &candidates,
            index,
            patch.as_deref(),
            &yaml,
        ));
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
        text.push_str(&report::compare(&old, results, arms));
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
            let verdict = verdict_of(run);
            let shown = Arm::of(run).title();
            let _ = writeln!(
                err,
                "run {done}/{}: {} {shown} {} {} #{}: {verdict} ({:.1} s)",
                self.total, run.model, run.case, run.language, run.run, run.seconds
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

/// A run's verdict on its progress line: `right`, `wrong (junk: refusal)`, `wrong (wrong_args;
/// printed junk: copied_tool_output)`.
fn verdict_of(run: &RunRecord) -> String {
    match (run.failure, &run.junk, &run.printed_junk) {
        (None, _, _) => "right".to_string(),
        (Some(class), Some(junk), _) => format!("wrong ({}: {junk})", class.as_str()),
        (Some(class), None, Some(printed)) => {
            format!("wrong ({}; printed junk: {printed})", class.as_str())
        }
        (Some(class), None, None) => format!("wrong ({})", class.as_str()),
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

    #[test]
    fn dates_are_civil() {
        let date = today();
        assert_eq!(date.len(), 10);
        assert!(date.starts_with("20"), "{date}");
    }

    #[test]
    fn a_progress_line_says_when_junk_was_printed() {
        let mut run: RunRecord = serde_json::from_str(
            r#"{"model": "m", "mode": "declared", "case": "a/b", "language": "en", "run": 1,
                "prompt": "p", "ok": true, "seconds": 1.0, "calls": [], "recorded": [],
                "tokens": null, "answer": "x", "stop_reason": "done"}"#,
        )
        .expect("a run loads");
        assert_eq!(verdict_of(&run), "right");
        run.failure = Some(judge::FailureClass::WrongArgs);
        assert_eq!(verdict_of(&run), "wrong (wrong_args)");
        run.printed_junk = Some("copied_tool_output".into());
        assert_eq!(
            verdict_of(&run),
            "wrong (wrong_args; printed junk: copied_tool_output)"
        );
        run.failure = Some(judge::FailureClass::Junk);
        run.junk = Some("refusal".into());
        assert_eq!(verdict_of(&run), "wrong (junk: refusal)");
    }
}
