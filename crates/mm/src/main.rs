//! `mm`: the command-line front of mm-core. Parses flags, resolves the agent, renders events and
//! maps outcomes to exit codes (0 done, 1 runtime failure, 2 usage or agent-file error, 3 turn
//! stopped, 130 / 143 / 129 ended by SIGINT / SIGTERM / SIGHUP).

mod cli;
mod consent;
mod dirs;
mod eval;
mod interactive;
mod print;
mod render;
mod serve;
mod sessions;
mod setup;
mod signals;
mod trust;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};

/// Exit codes (SPEC §8).
pub mod exit {
    pub const OK: u8 = 0;
    pub const RUNTIME: u8 = 1;
    pub const USAGE: u8 = 2;
    pub const STOPPED: u8 = 3;
    pub const INTERRUPTED: u8 = 130;
    pub const TERMINATED: u8 = 143;
    pub const HANGUP: u8 = 129;
    /// `--output-format stream-json` and the reader of stdout went away (128 + SIGPIPE, what a
    /// shell reports for a writer a pipe ended).
    pub const PIPE: u8 = 141;
}

/// A failure with the exit code it maps to; its message is printed as one line.
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub message: String,
}

impl Failure {
    pub fn usage(message: impl Into<String>) -> Self {
        Self {
            code: exit::USAGE,
            message: message.into(),
        }
    }
    pub fn runtime(message: impl Into<String>) -> Self {
        Self {
            code: exit::RUNTIME,
            message: message.into(),
        }
    }
}

/// The libraries' diagnostics (`tracing`) on stderr: warnings, or what `MM_LOG` asks for
/// (`MM_LOG=debug`, `MM_LOG=mm_core::provider=trace`; the `tracing` filter syntax).
fn init_log() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("MM_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .without_time()
        .try_init();
}

fn main() -> ExitCode {
    // First, while mm has one thread: started as the sandbox helper, this process restricts
    // itself and becomes the tool's program (it does not return).
    mm_core::sandbox::enter();
    let cli = Cli::parse();
    if let Some(Command::EvalRecord { program, args }) = &cli.command {
        // No runtime, no signals: it records and becomes the program.
        return ExitCode::from(eval::record(program, args));
    }
    init_log();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mm: cannot start the async runtime: {e}");
            return ExitCode::from(exit::RUNTIME);
        }
    };
    let outcome = runtime.block_on(run(cli));
    // Do not wait for blocking tasks (a consent prompt reading a terminal) on the way out.
    runtime.shutdown_background();
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(failure) => {
            // Server error bodies end up in messages: escaped like everything else drawn.
            eprintln!("mm: {}", render::escape::line(&failure.message));
            ExitCode::from(failure.code)
        }
    }
}

async fn run(cli: Cli) -> Result<u8, Failure> {
    // Before anything can start a tool, so that no signal ends mm without killing its group.
    let signals = signals::Signals::install()
        .map_err(|e| Failure::runtime(format!("cannot handle signals: {e}")))?;
    let watch = signals::Watch::default();
    tokio::select! {
        biased;
        // Dropping the run here, not `std::process::exit`, is what kills a running tool's group
        // (its guard's drop) when mm cannot wait for the turn to end.
        signal = signals::until_abandoned(signals, watch.clone()) => Ok(signal.exit_code()),
        outcome = dispatch(cli, &watch) => outcome,
    }
}

async fn dispatch(cli: Cli, watch: &signals::Watch) -> Result<u8, Failure> {
    if let Some(Command::Eval(args)) = &cli.command {
        // The suite names its agent; no ./mm.md is read.
        let flags = eval::Flags {
            model: cli.model.clone(),
            base_url: cli.base_url.clone(),
            max_turns: cli.max_turns,
            temperature: cli.temperature,
            seed: cli.seed,
        };
        return eval::run(&flags, args, watch).await;
    }
    let mut env = setup::resolve(&cli)?;
    if matches!(cli.command, None | Some(Command::Serve { .. })) {
        setup::settle_sandbox(&env)?;
    }
    // Before anything the folder's files start (MCP servers) or grant is applied.
    let (trusted, settled) = trust::settle(&cli, &env.cwd, &env.folder).await?;
    if !trusted {
        env.untrust(&cli);
    }
    env.trust = settled;
    // MCP servers are started for what offers tools to a model (or shows them), not for
    // `mm check` (it reads the file) or `mm serve` (it serves the declared tools only).
    let clients = match cli.command {
        None | Some(Command::Tools) => env.connect_mcp().await,
        Some(
            Command::Check
            | Command::Serve { .. }
            | Command::Sessions { .. }
            | Command::Eval(_)
            | Command::EvalRecord { .. },
        ) => Vec::new(),
    };
    if matches!(cli.command, None | Some(Command::Tools)) {
        // Only now are the MCP tools known.
        env.warn_unknown_rule_tools();
        env.warn_over_budget();
    }
    let outcome = match cli.command {
        Some(Command::Tools) => setup::print_tools(&env).await,
        Some(Command::Check) => setup::print_check(&env),
        Some(Command::Sessions { all }) => sessions::list(&env.cwd, all).await,
        Some(Command::Serve { http }) => serve::run(env, http).await,
        // Handled above.
        Some(Command::Eval(_) | Command::EvalRecord { .. }) => Ok(exit::OK),
        None => match &cli.print {
            Some(prompt) => print::run(&cli, env, prompt, watch).await,
            None => interactive::run(&cli, env, watch).await,
        },
    };
    // Sessions ended (HTTP: DELETE), stdio servers asked to exit, all at once.
    futures::future::join_all(clients.iter().map(|c| c.close())).await;
    outcome
}
