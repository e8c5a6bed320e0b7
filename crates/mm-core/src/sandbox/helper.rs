//! The helper's side: `mm-sandbox MODE WORKDIR TMPDIR -- PROGRAM ARGS…` restricts this
//! (single-threaded) process, then executes PROGRAM with ARGS unchanged.
//!
//! Order: Landlock (which also sets `no_new_privs`), then the seccomp filter, then `exec`. Both
//! restrictions are inherited by everything the program starts and cannot be lifted.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope, path_beneath_rules,
};
use nix::libc;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use super::SandboxMode;
use crate::spawn_error::spawn_error;

/// Exit code when the sandbox cannot be set up (the program did not run).
const CANNOT_RESTRICT: i32 = 126;
/// Exit code when the program cannot be started (as a shell says it).
const CANNOT_RUN: i32 = 127;

/// Runs the helper on its arguments (after `argv[0]`); returns only on failure, with the exit
/// code, having said why on stderr (which the model reads).
pub(super) fn run(args: Vec<OsString>) -> i32 {
    let mut args = args.into_iter();
    let mode = args
        .next()
        .and_then(|m| m.to_str().and_then(SandboxMode::parse));
    let workdir = args.next().map(PathBuf::from);
    let tmpdir = args.next().map(PathBuf::from);
    let separator = args.next();
    let program = args.next();
    let (Some(mode), Some(workdir), Some(tmpdir), Some(program)) = (mode, workdir, tmpdir, program)
    else {
        eprintln!(
            "mm sandbox: usage: {} MODE WORKDIR TMPDIR -- PROGRAM ARGS…",
            super::HELPER_ARG0
        );
        return CANNOT_RESTRICT;
    };
    if separator.as_deref() != Some(std::ffi::OsStr::new("--")) {
        eprintln!("mm sandbox: expected `--` before the program");
        return CANNOT_RESTRICT;
    }
    let hard = mode == SandboxMode::Workspace;
    if let Err(why) = landlock(&workdir, &tmpdir, hard) {
        eprintln!("mm sandbox: cannot confine files and network: {why}");
        return CANNOT_RESTRICT;
    }
    if let Err(why) = seccomp() {
        if hard {
            eprintln!("mm sandbox: cannot install the socket filter: {why}");
            return CANNOT_RESTRICT;
        }
    }
    // The argv goes to the program exactly as received: no shell, no parsing.
    let rest: Vec<OsString> = args.collect();
    #[expect(
        clippy::disallowed_methods,
        reason = "no child: the helper becomes the program (exec), in the group the runner made"
    )]
    let error = std::process::Command::new(&program).args(&rest).exec();
    let cwd = std::env::current_dir().unwrap_or_default();
    eprintln!("{}", spawn_error(&program, &cwd, error));
    CANNOT_RUN
}

/// Landlock: read and execute everywhere; write under `workdir`, `tmpdir`, `/dev/null` and
/// `/dev/tty`; no TCP bind or connect (nor UDP from ABI 10); no signals or abstract unix
/// sockets outside the sandbox. `hard`: everything up to [`super::REQUIRED_ABI`] must be enforced;
/// what newer kernels add is taken when present.
fn landlock(workdir: &Path, tmpdir: &Path, hard: bool) -> Result<(), String> {
    let newest = ABI::V10;
    // [`super::REQUIRED_ABI`] (the crate wants its ABIs named, not computed).
    let required = ABI::V6;
    // Connecting to a unix socket by its path (ABI 9) stays allowed: `AF_UNIX` is local.
    let fs_all: BitFlags<AccessFs> = AccessFs::from_all(newest) & !AccessFs::ResolveUnix;
    let level = if hard {
        CompatLevel::HardRequirement
    } else {
        CompatLevel::BestEffort
    };
    let restrict = || -> Result<_, landlock::RulesetError> {
        Ruleset::default()
            .set_compatibility(level)
            .handle_access(AccessFs::from_all(required))?
            .handle_access(AccessNet::from_all(required))?
            .scope(Scope::from_all(required))?
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(fs_all)?
            .handle_access(AccessNet::from_all(newest))?
            .create()?
            .add_rules(path_beneath_rules(["/"], AccessFs::from_read(newest)))?
            .add_rules(path_beneath_rules([workdir, tmpdir], fs_all))?
            .add_rules(path_beneath_rules(["/dev/null", "/dev/tty"], fs_all))?
            .restrict_self()
    };
    let status = restrict().map_err(|e| e.to_string())?;
    if hard && status.ruleset == landlock::RulesetStatus::NotEnforced {
        // Cannot happen with hard requirements, but the run must not go on unconfined.
        return Err("the kernel enforced none of the rules".into());
    }
    Ok(())
}

/// seccomp: `socket()` and `socketpair()` fail with EPERM for every family but `AF_UNIX`
/// (closing UDP, which Landlock covers only from ABI 10, and raw, netlink, … sockets), and
/// `io_uring_setup` fails (an io_uring can open sockets without the `socket` syscall).
fn seccomp() -> Result<(), seccompiler::Error> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)?;
    let not_unix = || -> Result<Vec<SeccompRule>, seccompiler::Error> {
        Ok(vec![SeccompRule::new(vec![SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Ne,
            libc::AF_UNIX as u64,
        )?])?])
    };
    let rules: BTreeMap<i64, Vec<SeccompRule>> = [
        (libc::SYS_socket, not_unix()?),
        (libc::SYS_socketpair, not_unix()?),
        (libc::SYS_io_uring_setup, Vec::new()),
    ]
    .into_iter()
    .collect();
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )?;
    let program: BpfProgram = filter.try_into()?;
    seccompiler::apply_filter(&program)
}
