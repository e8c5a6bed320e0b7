//! The file tools against files that are not regular: FIFOs, device nodes, `/proc/kmsg`, and a
//! job that never ends. Each test bounds its wait: without the fixes they block forever.

use std::fs;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;

/// Longer than any of these calls may take once fixed.
const PATIENCE: Duration = Duration::from_secs(10);

fn folder() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"))
}

fn fifo(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    nix::unistd::mkfifo(&path, nix::sys::stat::Mode::from_bits_truncate(0o600))
        .unwrap_or_else(|e| panic!("mkfifo: {e}"));
    path
}

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

async fn call(name: &str, dir: &Path, args: serde_json::Value) -> (Outcome, String) {
    let tool = file_tool(name).unwrap_or_else(|| panic!("no tool {name}"));
    run(tool.as_ref(), dir, args, CancellationToken::new()).await
}

async fn run(
    tool: &dyn Tool,
    dir: &Path,
    args: serde_json::Value,
    cancel: CancellationToken,
) -> (Outcome, String) {
    let args = tool
        .params()
        .validate(&args.to_string())
        .unwrap_or_else(|e| panic!("{:?}", e.problems));
    let ctx = ToolCtx::new(dir.to_path_buf(), cancel);
    let mut out = Output::new(1 << 20);
    let outcome = tokio::time::timeout(PATIENCE, tool.run(&args, &ctx, &mut out))
        .await
        .unwrap_or_else(|_| panic!("{} did not end within {PATIENCE:?}", tool.spec().name));
    (outcome, out.finish().text)
}

#[tokio::test]
async fn reading_a_fifo_is_refused_at_once() {
    let dir = folder();
    fifo(dir.path(), "pipe");
    let (outcome, text) = call("read_file", dir.path(), json!({"path": "pipe"})).await;
    assert_eq!(outcome, Outcome::Failed, "{text}");
    assert_eq!(
        text,
        "pipe cannot be read: it is a FIFO, not a regular file; only regular files are read."
    );
    let (outcome, text) = call("grep", dir.path(), json!({"pattern": "x", "path": "pipe"})).await;
    assert_eq!(outcome, Outcome::Failed, "{text}");
    assert_eq!(
        text,
        "pipe is a FIFO; grep searches regular files and folders."
    );
    let (outcome, text) = call(
        "edit_file",
        dir.path(),
        json!({"path": "pipe", "old_text": "a", "new_text": "b"}),
    )
    .await;
    assert_eq!(outcome, Outcome::Failed, "{text}");
    assert!(text.contains("it is a FIFO"), "{text}");
}

#[tokio::test]
async fn grep_skips_a_fifo_in_the_folder_it_searches() {
    let dir = folder();
    fs::write(dir.path().join("a.txt"), "needle\n").unwrap_or_else(|e| panic!("{e}"));
    fifo(dir.path(), "b.txt");
    // A symlink to a FIFO looks like a file to nothing but stat; it is skipped too.
    std::os::unix::fs::symlink(dir.path().join("b.txt"), dir.path().join("c.txt"))
        .unwrap_or_else(|e| panic!("{e}"));
    let (outcome, text) = call("grep", dir.path(), json!({"pattern": "needle"})).await;
    assert_eq!(
        (outcome, text.as_str()),
        (Outcome::Success, "a.txt:1:needle\n")
    );
    let (outcome, text) = call("read_file", dir.path(), json!({"path": "c.txt"})).await;
    assert_eq!(outcome, Outcome::Failed, "{text}");
}

#[tokio::test]
async fn proc_kmsg_is_answered_at_once() {
    if !is_root() {
        eprintln!("skipped: /proc/kmsg can only be opened by root");
        return;
    }
    if !Path::new("/proc/kmsg").exists() {
        eprintln!("skipped: no /proc/kmsg here");
        return;
    }
    // Either refused at once (nothing to read: it would block) or its pending lines shown;
    // never a wait for the kernel's next message.
    let (outcome, text) = call("read_file", Path::new("/"), json!({"path": "/proc/kmsg"})).await;
    assert!(
        outcome == Outcome::Failed || outcome == Outcome::Success,
        "{outcome:?}: {text}"
    );
    let (outcome, text) = call(
        "grep",
        Path::new("/"),
        json!({"pattern": "zz-no-such-line-zz", "path": "/proc/kmsg"}),
    )
    .await;
    assert_eq!(outcome, Outcome::Success, "{text}");
}

/// Released when the test ends, however it ends, so that the blocking thread can finish and the
/// runtime can shut down.
static RELEASE: AtomicBool = AtomicBool::new(false);

struct Release;

impl Drop for Release {
    fn drop(&mut self) {
        RELEASE.store(true, Ordering::SeqCst);
    }
}

/// A job that takes no notice of its token: stands for a read stuck in the kernel.
fn stuck(_: &Job) -> Answer {
    while !RELEASE.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(10));
    }
    done("late")
}

#[tokio::test]
async fn a_stuck_job_is_cancelled_by_ctrl_c_and_ended_by_its_timeout() {
    let _release = Release;
    let dir = folder();
    let tool = FileTool::new("stuck", "Never ends.", Vec::new(), true, stuck);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let (outcome, _) = run(&tool, dir.path(), json!({}), cancel).await;
    assert_eq!(outcome, Outcome::Cancelled);

    let mut tool = FileTool::new("stuck", "Never ends.", Vec::new(), true, stuck);
    tool.timeout = Duration::from_millis(200);
    let (outcome, _) = run(&tool, dir.path(), json!({}), CancellationToken::new()).await;
    assert_eq!(outcome, Outcome::TimedOut(Duration::from_millis(200)));
}

#[tokio::test]
async fn writing_over_a_fifo_is_refused_and_it_stays_a_fifo() {
    let dir = folder();
    let path = fifo(dir.path(), "pipe");
    let (outcome, text) = call(
        "write_file",
        dir.path(),
        json!({"path": "pipe", "content": "x"}),
    )
    .await;
    assert_eq!(outcome, Outcome::Failed, "{text}");
    assert_eq!(
        text,
        "pipe was not written: it is a FIFO, not a regular file"
    );
    let kind = fs::symlink_metadata(&path)
        .unwrap_or_else(|e| panic!("{e}"))
        .file_type();
    assert!(kind.is_fifo());
    // No temporary file left behind.
    let names: Vec<_> = fs::read_dir(dir.path())
        .unwrap_or_else(|e| panic!("{e}"))
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[tokio::test]
async fn writing_over_a_device_node_is_refused_and_it_stays_a_device() {
    if !is_root() {
        eprintln!("skipped: mknod of a character device needs root");
        return;
    }
    let dir = folder();
    // A private copy of /dev/null (1, 3): the system's own is never put at risk.
    let path = dir.path().join("null");
    nix::sys::stat::mknod(
        &path,
        nix::sys::stat::SFlag::S_IFCHR,
        nix::sys::stat::Mode::from_bits_truncate(0o666),
        nix::sys::stat::makedev(1, 3),
    )
    .unwrap_or_else(|e| panic!("mknod: {e}"));
    for (tool, args) in [
        ("write_file", json!({"path": "null", "content": "x"})),
        (
            "edit_file",
            json!({"path": "null", "old_text": "a", "new_text": "b"}),
        ),
    ] {
        let (outcome, text) = call(tool, dir.path(), args).await;
        assert_eq!(outcome, Outcome::Failed, "{tool}: {text}");
        assert!(text.contains("a character device"), "{tool}: {text}");
        let kind = fs::symlink_metadata(&path)
            .unwrap_or_else(|e| panic!("{e}"))
            .file_type();
        assert!(kind.is_char_device(), "{tool} replaced the device");
    }
    let (outcome, text) = call("read_file", dir.path(), json!({"path": "null"})).await;
    assert_eq!(outcome, Outcome::Failed, "{text}");
}

#[tokio::test]
async fn grep_skips_a_file_whose_line_would_not_fit_and_says_so() {
    let dir = folder();
    let mut huge = "x".repeat(6 << 20);
    huge.push_str(" needle\n");
    fs::write(dir.path().join("a.min.js"), huge).unwrap_or_else(|e| panic!("{e}"));
    fs::write(dir.path().join("b.txt"), "needle\n").unwrap_or_else(|e| panic!("{e}"));
    let (outcome, text) = call("grep", dir.path(), json!({"pattern": "needle"})).await;
    assert_eq!(outcome, Outcome::Success, "{text}");
    assert_eq!(
        text,
        "b.txt:1:needle\n… 1 file(s) not searched to the end: a line longer than 4 MiB\n"
    );
}

/// Special files of every kind this machine can make: `(name, what)`.
fn specials(dir: &Path) -> Vec<(String, &'static str)> {
    let mut made = Vec::new();
    fifo(dir, "fifo");
    made.push(("fifo".to_string(), "a FIFO"));
    let socket = std::os::unix::net::UnixListener::bind(dir.join("socket"))
        .unwrap_or_else(|e| panic!("bind: {e}"));
    std::mem::forget(socket);
    made.push(("socket".to_string(), "a socket"));
    for (link, target) in [
        ("to-fifo", dir.join("fifo")),
        ("to-zero", PathBuf::from("/dev/zero")),
        ("to-urandom", PathBuf::from("/dev/urandom")),
        ("to-tty", PathBuf::from("/dev/tty")),
        ("to-stdin", PathBuf::from("/proc/self/fd/0")),
    ] {
        std::os::unix::fs::symlink(&target, dir.join(link)).unwrap_or_else(|e| panic!("{e}"));
        made.push((link.to_string(), "a link to a special file"));
    }
    for device in [
        "/dev/zero",
        "/dev/null",
        "/dev/urandom",
        "/dev/random",
        "/dev/full",
        "/dev/tty",
        "/dev/ptmx",
    ] {
        if Path::new(device).exists() {
            made.push((device.to_string(), "a device"));
        }
    }
    if is_root() {
        for (name, major, minor) in [
            ("null", 1, 3),
            ("zero", 1, 5),
            ("urandom", 1, 9),
            ("tty", 5, 0),
        ] {
            let path = dir.join(format!("dev-{name}"));
            nix::sys::stat::mknod(
                &path,
                nix::sys::stat::SFlag::S_IFCHR,
                nix::sys::stat::Mode::from_bits_truncate(0o666),
                nix::sys::stat::makedev(major, minor),
            )
            .unwrap_or_else(|e| panic!("mknod: {e}"));
            made.push((format!("dev-{name}"), "a device node"));
        }
        for pseudo in ["/proc/kmsg", "/sys/kernel/debug/tracing/trace_pipe"] {
            if Path::new(pseudo).exists() {
                made.push((pseudo.to_string(), "a pseudo-file that waits"));
            }
        }
    } else {
        eprintln!("device nodes and /proc/kmsg left out: they need root");
    }
    made
}

#[tokio::test]
async fn corpus_readers_never_block_on_a_special_file() {
    let dir = folder();
    let mut corpus =
        mm_test_support::Corpus::new("readers on special files (read_file, grep, edit_file)");
    for (name, what) in specials(dir.path()) {
        let calls = [
            ("read_file", json!({"path": name})),
            ("grep", json!({"pattern": "zz-no-such-zz", "path": name})),
            (
                "edit_file",
                json!({"path": name, "old_text": "a", "new_text": "b"}),
            ),
        ];
        for (tool, args) in calls {
            let tool = file_tool(tool).unwrap_or_else(|| panic!("{tool}"));
            let validated = tool
                .params()
                .validate(&args.to_string())
                .unwrap_or_else(|_| crate::args::ValidArgs::unchecked(serde_json::Map::new()));
            let ctx = ToolCtx::new(dir.path().to_path_buf(), CancellationToken::new());
            let mut out = Output::new(1 << 20);
            let ran =
                tokio::time::timeout(Duration::from_secs(5), tool.run(&validated, &ctx, &mut out))
                    .await;
            let text = out.finish().text;
            // Held: an answer within 5 s, and nothing read from it as if it were a file.
            let held = match ran {
                Ok(Outcome::Failed) => true,
                // grep of a pseudo-file with nothing in it, or of a folder: no match, at once.
                Ok(Outcome::Success) => text.starts_with("No matches"),
                _ => false,
            };
            corpus.check((tool.spec().name.as_str(), &name, what), held, || {
                format!("{ran:?}: {text}")
            });
        }
    }
    corpus.finish();
}

#[tokio::test]
async fn corpus_writers_never_replace_a_special_file() {
    let dir = folder();
    let mut corpus =
        mm_test_support::Corpus::new("writers on special files (write_file, edit_file)");
    for (name, what) in specials(dir.path()) {
        // The system's own devices stay out of reach of a failing test (a write follows a
        // link to its target): only private copies and links to them.
        let system = fs::canonicalize(dir.path().join(&name))
            .is_ok_and(|real| !real.starts_with(fs::canonicalize(dir.path()).unwrap_or_default()));
        if name.starts_with('/') || system {
            continue;
        }
        for (tool, args) in [
            ("write_file", json!({"path": name, "content": "x"})),
            (
                "edit_file",
                json!({"path": name, "old_text": "a", "new_text": "b"}),
            ),
        ] {
            let path = dir.path().join(&name);
            let before = fs::symlink_metadata(&path).map(|m| m.file_type());
            let (outcome, text) = call(tool, dir.path(), args).await;
            let after = fs::symlink_metadata(&path).map(|m| m.file_type());
            let target_kind = fs::metadata(&path).map(|m| m.file_type().is_file());
            let held = outcome == Outcome::Failed
                && before.ok() == after.ok()
                && !matches!(target_kind, Ok(true));
            corpus.check((tool, &name, what), held, || format!("{outcome:?}: {text}"));
        }
    }
    corpus.finish();
}

#[tokio::test]
async fn corpus_long_lines_cost_only_what_is_shown() {
    let mut corpus =
        mm_test_support::Corpus::new("long lines for read_file and grep (memory bounded)");
    let dir = folder();
    let shapes: Vec<(&str, Vec<u8>)> = vec![
        ("8 MiB, one line, no newline", vec![b'x'; 8 << 20]),
        (
            "8 MiB, one line",
            [vec![b'x'; 8 << 20], b"\n".to_vec()].concat(),
        ),
        (
            "8 MiB then short lines",
            [vec![b'x'; 8 << 20], b"\na\nb\n".to_vec()].concat(),
        ),
        (
            "short, 8 MiB, short",
            [b"a\n".to_vec(), vec![b'x'; 8 << 20], b"\nb\n".to_vec()].concat(),
        ),
        ("8 MiB of multi-byte", "é".repeat(4 << 20).into_bytes()),
        (
            "8 MiB with CRLF",
            [vec![b'x'; 8 << 20], b"\r\n".to_vec()].concat(),
        ),
        (
            "two 5 MiB lines",
            [
                vec![b'x'; 5 << 20],
                b"\n".to_vec(),
                vec![b'y'; 5 << 20],
                b"\n".to_vec(),
            ]
            .concat(),
        ),
        (
            "a bad byte past the cap",
            [vec![b'x'; 1 << 20], vec![0xff], b"\n".to_vec()].concat(),
        ),
    ];
    for (what, bytes) in shapes {
        std::fs::write(dir.path().join("big"), &bytes).unwrap_or_else(|e| panic!("{e}"));
        for offset in [1, 2] {
            let (outcome, text) = call(
                "read_file",
                dir.path(),
                json!({"path": "big", "offset": offset}),
            )
            .await;
            let held = text.len() <= super::read_file::MAX_BYTES + 200
                && matches!(outcome, Outcome::Success | Outcome::Failed);
            corpus.check((what, "read_file", offset), held, || {
                format!("{outcome:?}, {} bytes", text.len())
            });
        }
        let (outcome, text) =
            call("grep", dir.path(), json!({"pattern": "x", "path": "big"})).await;
        let held = outcome == Outcome::Success && text.len() < 100_000;
        corpus.check((what, "grep"), held, || {
            format!("{outcome:?}, {} bytes", text.len())
        });
    }
    corpus.finish();
}
