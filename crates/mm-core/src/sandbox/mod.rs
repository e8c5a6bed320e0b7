//! `sandbox: workspace`: tool runs that can write only in the working folder and reach no
//! network (docs/sandbox.md).
//!
//! Enforcement is the kernel's (Landlock for files, TCP and signals; a seccomp filter for every
//! socket family but `AF_UNIX`), applied by a helper that is the same executable started again:
//! [`crate::process`] starts `/proc/self/exe` with `argv[0]` = [`HELPER_ARG0`], the policy and
//! the real argv; the helper ([`enter`], called first thing in `main`, while the process has one
//! thread) restricts itself and then executes the program with its argv unchanged. Restricting
//! in the child of a threaded process (`pre_exec`) is not safe: the Landlock crate allocates.
//!
//! What the kernel cannot enforce is never silent: a `workspace` run on a kernel without what
//! it needs is refused with one line ([`Support::refusal`]); `best-effort` runs with what is
//! enforced, and mm says so once at start.

mod helper;

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::Path;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// `argv[0]` of the helper: how [`enter`] knows it is one.
pub const HELPER_ARG0: &str = "mm-sandbox";

/// The lowest Landlock ABI that enforces all of `workspace` with the seccomp filter: files
/// (ABI 1-3, truncation), TCP bind and connect (4), device ioctls (5), signals and abstract
/// unix sockets scoped to the sandbox (6).
pub const REQUIRED_ABI: u32 = 6;

/// How tool runs are confined (`sandbox:` in the agent file, `--sandbox`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SandboxMode {
    /// Runs with the user's rights.
    #[default]
    Off,
    /// Writes only in the working folder and a private temp folder, no network but `AF_UNIX`,
    /// no signals outside the run; refused where the kernel cannot enforce all of it.
    Workspace,
    /// `workspace` as far as the kernel enforces it.
    BestEffort,
}

impl SandboxMode {
    /// The names, as written in the agent file and on the command line.
    pub const NAMES: &'static [&'static str] = &["workspace", "off", "best-effort"];

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "workspace" => Some(Self::Workspace),
            "off" => Some(Self::Off),
            "best-effort" => Some(Self::BestEffort),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Workspace => "workspace",
            Self::BestEffort => "best-effort",
        }
    }

    pub fn is_on(self) -> bool {
        self != Self::Off
    }
}

impl std::fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What this kernel can enforce, probed once without restricting anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Support {
    /// The Landlock ABI the kernel offers; `None`: no Landlock (not built in, or not enabled
    /// at boot, see `lsm=` in docs/sandbox.md).
    pub landlock_abi: Option<u32>,
    /// Why there is no Landlock, when there is none.
    pub landlock_missing: Option<&'static str>,
    /// Seccomp filters are available (`Seccomp:` in `/proc/self/status`).
    pub seccomp: bool,
}

impl Support {
    /// Whether every part of `workspace` is enforced here.
    pub fn enforces_workspace(&self) -> bool {
        self.landlock_abi.is_some_and(|abi| abi >= REQUIRED_ABI) && self.seccomp
    }

    /// What `workspace` needs and this kernel lacks, one phrase each (empty: nothing).
    pub fn missing(&self) -> Vec<String> {
        let mut missing = Vec::new();
        match (self.landlock_abi, self.landlock_missing) {
            (None, why) => missing.push(format!(
                "Landlock ({}: writes and TCP are not confined)",
                why.unwrap_or("not available")
            )),
            (Some(abi), _) if abi < 4 => missing.push(format!(
                "Landlock ABI {REQUIRED_ABI} (this kernel has ABI {abi}: no TCP or signal rules)"
            )),
            (Some(abi), _) if abi < REQUIRED_ABI => missing.push(format!(
                "Landlock ABI {REQUIRED_ABI} (this kernel has ABI {abi}: signals and abstract \
                 sockets are not confined)"
            )),
            _ => {}
        }
        if !self.seccomp {
            missing.push("seccomp (UDP and other socket families stay open)".to_string());
        }
        missing
    }

    /// What this kernel enforces, for `mm check`: `Landlock ABI 7 (files, TCP, signals), seccomp
    /// socket filter: available`.
    pub fn summary(&self) -> String {
        let landlock = match (self.landlock_abi, self.landlock_missing) {
            (Some(abi), _) => {
                let mut parts = vec!["files"];
                if abi >= 4 {
                    parts.push("TCP");
                }
                if abi >= 6 {
                    parts.push("signals, abstract sockets");
                }
                if abi >= 10 {
                    parts.push("UDP");
                }
                format!("Landlock ABI {abi} ({})", parts.join(", "))
            }
            (None, why) => format!("no Landlock ({})", why.unwrap_or("not available")),
        };
        let seccomp = if self.seccomp {
            "available"
        } else {
            "not available"
        };
        format!("{landlock}; seccomp socket filter: {seccomp}")
    }

    /// The one line that refuses a `workspace` run here, `None` when it can run.
    pub fn refusal(&self, program: &str) -> Option<String> {
        let missing = self.missing();
        (!missing.is_empty()).then(|| {
            format!(
                "cannot run {program}: `sandbox: workspace` cannot be enforced on this kernel \
                 (missing: {}); use `sandbox: best-effort` to run with what it enforces, or \
                 `--sandbox off`",
                missing.join("; ")
            )
        })
    }
}

/// This kernel's support, probed on first use.
pub fn support() -> &'static Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    SUPPORT.get_or_init(probe)
}

fn probe() -> Support {
    use landlock::{LandlockStatus, RestrictSelf};
    // No flag and no `no_new_privs`: `apply` only asks the kernel its ABI (a read-only query)
    // and restricts nothing.
    let status = RestrictSelf::default()
        .no_new_privs(false)
        .apply()
        .map(|s| s.landlock);
    let (landlock_abi, landlock_missing) = match status {
        Ok(LandlockStatus::Available {
            effective_abi,
            kernel_abi,
        }) => {
            let abi = kernel_abi.unwrap_or(effective_abi as i32);
            (u32::try_from(abi).ok(), None)
        }
        Ok(LandlockStatus::NotEnabled) => (None, Some("not enabled at boot")),
        Ok(LandlockStatus::NotImplemented) => (None, Some("not built into this kernel")),
        Err(_) => (None, Some("not available")),
    };
    let seccomp = std::fs::read_to_string("/proc/self/status")
        .is_ok_and(|status| status.lines().any(|l| l.starts_with("Seccomp:")));
    Support {
        landlock_abi,
        landlock_missing,
        seccomp,
    }
}

/// Set by [`enter`]: this executable serves as the helper.
static HELPER_READY: AtomicBool = AtomicBool::new(false);

/// Call first in `main`, before any thread or async runtime starts. In a process started as the
/// helper (`argv[0]` is [`HELPER_ARG0`]) it never returns: it restricts the process and becomes
/// the program, or exits 126 (cannot restrict) / 127 (cannot run the program) with one line on
/// stderr. Otherwise it records that this executable can be the helper and returns.
///
/// A library user that never calls it cannot run tools sandboxed: they are refused, not run
/// unconfined.
pub fn enter() {
    let mut args = std::env::args_os();
    let is_helper = args
        .next()
        .is_some_and(|arg0| arg0.as_os_str() == OsStr::new(HELPER_ARG0));
    if !is_helper {
        HELPER_READY.store(true, Ordering::SeqCst);
        return;
    }
    std::process::exit(helper::run(args.collect()));
}

/// A run wrapped in the helper: what to start instead of the program.
pub(crate) struct Wrapped {
    /// The helper: this executable.
    pub program: OsString,
    pub arg0: &'static str,
    /// The policy, then `--`, then the program and its arguments unchanged.
    pub args: Vec<OsString>,
    /// The run's private temp folder (`TMPDIR`), removed when this is dropped.
    pub tmp: tempfile::TempDir,
}

/// Wraps `program args…` for `mode` (`None` when off). Errors are the refusals: `workspace`
/// where the kernel cannot enforce it, or an executable that did not call [`enter`].
pub(crate) fn wrap(
    mode: SandboxMode,
    program: &OsStr,
    args: &[OsString],
    cwd: &Path,
) -> io::Result<Option<Wrapped>> {
    wrap_as(
        HELPER_READY.load(Ordering::SeqCst),
        mode,
        program,
        args,
        cwd,
    )
}

/// [`wrap`], for an executable that serves as the helper or not.
fn wrap_as(
    helper_ready: bool,
    mode: SandboxMode,
    program: &OsStr,
    args: &[OsString],
    cwd: &Path,
) -> io::Result<Option<Wrapped>> {
    if !mode.is_on() {
        return Ok(None);
    }
    let name = program.to_string_lossy();
    if !helper_ready {
        return Err(io::Error::other(format!(
            "cannot run {name} sandboxed: this executable has no sandbox helper \
             (mm_core::sandbox::enter was not called at start)"
        )));
    }
    if mode == SandboxMode::Workspace
        && let Some(refusal) = support().refusal(&name)
    {
        return Err(io::Error::new(io::ErrorKind::PermissionDenied, refusal));
    }
    let tmp = tempfile::Builder::new().prefix("mm-sandbox-").tempdir()?;
    let mut wrapped_args: Vec<OsString> = vec![
        mode.name().into(),
        cwd.as_os_str().to_owned(),
        tmp.path().as_os_str().to_owned(),
        "--".into(),
        program.to_owned(),
    ];
    wrapped_args.extend(args.iter().cloned());
    Ok(Some(Wrapped {
        // The running executable itself, even if its file was replaced since it started.
        program: "/proc/self/exe".into(),
        arg0: HELPER_ARG0,
        args: wrapped_args,
        tmp,
    }))
}

/// The line mm adds to a failed sandboxed run whose output reads like a refused write or
/// connection (`Permission denied`, `Operation not permitted`, `Read-only file system`): a
/// heuristic, worded as one. `None` when it does not apply.
pub fn blocked_note(mode: SandboxMode, failed: bool, output: &str) -> Option<String> {
    const SIGNS: &[&str] = &[
        "Permission denied",
        "Operation not permitted",
        "Read-only file system",
    ];
    (mode.is_on() && failed && SIGNS.iter().any(|s| output.contains(s))).then(|| {
        format!(
            "mm: the sandbox ({mode}) may have blocked this: it allows writes only in the \
             working folder and $TMPDIR, and no network."
        )
    })
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
