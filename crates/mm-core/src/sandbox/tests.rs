use std::ffi::OsString;
use std::path::Path;

use super::*;

fn support(landlock_abi: Option<u32>, seccomp: bool) -> Support {
    Support {
        landlock_abi,
        landlock_missing: landlock_abi.is_none().then_some("not enabled at boot"),
        seccomp,
    }
}

#[test]
fn modes_parse_from_their_names_and_back() {
    for name in SandboxMode::NAMES {
        let mode = SandboxMode::parse(name).unwrap_or_else(|| panic!("{name}"));
        assert_eq!(mode.name(), *name);
    }
    assert_eq!(SandboxMode::parse("Workspace"), None);
    assert_eq!(SandboxMode::default(), SandboxMode::Off);
    assert!(!SandboxMode::Off.is_on());
    assert!(SandboxMode::BestEffort.is_on());
}

#[test]
fn workspace_needs_landlock_abi_6_and_seccomp() {
    assert!(support(Some(7), true).enforces_workspace());
    assert!(support(Some(6), true).enforces_workspace());
    assert!(support(Some(6), true).refusal("bash").is_none());
    for (s, missing) in [
        (
            support(Some(5), true),
            "Landlock ABI 6 (this kernel has ABI 5",
        ),
        (support(Some(3), true), "no TCP or signal rules"),
        (support(None, true), "Landlock (not enabled at boot"),
        (support(Some(7), false), "seccomp (UDP"),
    ] {
        assert!(!s.enforces_workspace(), "{s:?}");
        let refusal = s.refusal("bash").unwrap_or_default();
        assert!(refusal.starts_with("cannot run bash: `sandbox: workspace` cannot be enforced"));
        assert!(refusal.contains(missing), "{refusal}");
        assert!(
            refusal.contains("best-effort") && !refusal.contains('\n'),
            "{refusal}"
        );
    }
}

#[test]
fn the_summary_names_the_abi_and_what_it_covers() {
    assert_eq!(
        support(Some(7), true).summary(),
        "Landlock ABI 7 (files, TCP, signals, abstract sockets); seccomp socket filter: available"
    );
    assert_eq!(
        support(None, false).summary(),
        "no Landlock (not enabled at boot); seccomp socket filter: not available"
    );
}

#[test]
fn the_probe_reads_this_kernel_without_restricting_it() {
    let found = super::support();
    eprintln!("this kernel: {}", found.summary());
    // Still free after the probe: a write outside any folder of ours works.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("after-probe"), "x").unwrap();
}

#[test]
fn a_run_is_wrapped_with_its_argv_unchanged_after_the_policy() {
    let args: Vec<OsString> = ["--", "a b", "$(rm -rf ~)", "-x"]
        .iter()
        .map(OsString::from)
        .collect();
    let wrap = |mode| wrap_as(true, mode, "prog".as_ref(), &args, Path::new("/w")).unwrap();
    assert!(wrap(SandboxMode::Off).is_none());
    let wrapped = wrap(SandboxMode::BestEffort).unwrap();
    assert_eq!(wrapped.program, OsString::from("/proc/self/exe"));
    assert_eq!(wrapped.arg0, HELPER_ARG0);
    let tmp = wrapped.tmp.path().as_os_str().to_owned();
    assert!(wrapped.tmp.path().is_dir());
    let mut expected: Vec<OsString> = vec![
        "best-effort".into(),
        "/w".into(),
        tmp,
        "--".into(),
        "prog".into(),
    ];
    expected.extend(args);
    assert_eq!(wrapped.args, expected);
    let tmp = wrapped.tmp.path().to_path_buf();
    drop(wrapped);
    assert!(!tmp.exists(), "the private temp folder goes with the run");
}

#[test]
fn without_a_helper_a_sandboxed_run_is_refused_not_run_unconfined() {
    // This test binary never called `enter`.
    assert!(!HELPER_READY.load(Ordering::SeqCst));
    let err = wrap(
        SandboxMode::Workspace,
        "bash".as_ref(),
        &[],
        Path::new("/w"),
    )
    .err()
    .map(|e| e.to_string())
    .unwrap_or_default();
    assert!(
        err.contains("cannot run bash sandboxed: this executable has no sandbox helper"),
        "{err}"
    );
}

#[test]
fn the_blocked_note_is_for_failed_sandboxed_runs_that_read_like_a_refusal() {
    let denied = "sh: 1: cannot create /etc/x: Permission denied\n";
    let note = blocked_note(SandboxMode::Workspace, true, denied).unwrap_or_default();
    assert_eq!(
        note,
        "mm: the sandbox (workspace) may have blocked this: it allows writes only in the working folder and $TMPDIR, and no network."
    );
    assert!(
        blocked_note(
            SandboxMode::Workspace,
            true,
            "socket: Operation not permitted"
        )
        .is_some()
    );
    assert!(blocked_note(SandboxMode::Off, true, denied).is_none());
    assert!(blocked_note(SandboxMode::Workspace, false, denied).is_none());
    assert!(blocked_note(SandboxMode::Workspace, true, "no such file").is_none());
}
