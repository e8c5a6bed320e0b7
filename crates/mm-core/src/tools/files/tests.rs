use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::json;
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

use super::*;
use read_file::MAX_BYTES;

fn folder() -> TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"))
}

fn put(dir: &Path, relative: &str, content: impl AsRef<[u8]>) {
    let path = dir.join(relative);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
    }
    fs::write(path, content).unwrap_or_else(|e| panic!("{e}"));
}

fn get(dir: &Path, relative: &str) -> String {
    fs::read_to_string(dir.join(relative)).unwrap_or_else(|e| panic!("{relative}: {e}"))
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path)
        .unwrap_or_else(|e| panic!("{e}"))
        .permissions()
        .mode()
        & 0o777
}

fn tool(name: &str) -> Arc<dyn Tool> {
    file_tool(name).unwrap_or_else(|| panic!("no tool {name}"))
}

/// Runs `name` in `dir` the way the pipeline does: validated arguments, a real [`Output`].
async fn call_with(
    name: &str,
    dir: &Path,
    args: Value,
    cancel: CancellationToken,
) -> (Outcome, String) {
    let tool = tool(name);
    let args = tool
        .params()
        .validate(&args.to_string())
        .unwrap_or_else(|e| panic!("{:?}", e.problems));
    let ctx = ToolCtx::new(dir.to_path_buf(), cancel);
    let mut out = Output::new(1 << 20);
    let outcome = tool.run(&args, &ctx, &mut out).await;
    (outcome, out.finish().text)
}

async fn call(name: &str, dir: &Path, args: Value) -> (Outcome, String) {
    call_with(name, dir, args, CancellationToken::new()).await
}

async fn ok(name: &str, dir: &Path, args: Value) -> String {
    let (outcome, text) = call(name, dir, args).await;
    assert_eq!(outcome, Outcome::Success, "{text}");
    text
}

async fn refused(name: &str, dir: &Path, args: Value) -> String {
    let (outcome, text) = call(name, dir, args).await;
    assert_eq!(outcome, Outcome::Failed, "{text}");
    text
}

fn numbered(range: std::ops::RangeInclusive<usize>) -> String {
    range.map(|n| format!("{n}: line {n}\n")).collect()
}

fn lines(count: usize) -> String {
    (1..=count).map(|n| format!("line {n}\n")).collect()
}

// ---- specs ----

#[test]
fn every_file_tool_exists_and_says_whether_it_only_reads() {
    let read_only: Vec<_> = FILE_TOOLS
        .iter()
        .map(|name| (*name, tool(name).read_only()))
        .collect();
    assert_eq!(
        read_only,
        [
            ("read_file", true),
            ("write_file", false),
            ("edit_file", false),
            ("list_files", true),
            ("grep", true),
        ]
    );
    assert!(file_tool("bash").is_none());
    for name in FILE_TOOLS {
        assert_eq!(tool(name).spec().name, *name);
        assert_eq!(tool(name).kind(), ToolKind::Builtin);
    }
}

#[test]
fn specs_are_short_enough_for_small_models() {
    let mut total = 0;
    let mut sizes = Vec::new();
    for name in FILE_TOOLS {
        let entry = json!({"type": "function", "function": tool(name).spec()});
        let bytes = serde_json::to_string(&entry).map_or(0, |s| s.len());
        eprintln!("{name}: {bytes} bytes");
        sizes.push((*name, bytes));
        total += bytes;
    }
    eprintln!("all file tools: {total} bytes");
    for (name, bytes) in sizes {
        assert!(bytes <= 410, "{name}: {bytes} bytes");
    }
    assert!(total <= 1700, "{total} bytes");
}

#[test]
fn read_file_shows_its_parameters_tersely() {
    assert_eq!(
        tool("read_file").spec().parameters,
        json!({"type": "object", "properties": {
            "path": {"type": "string"},
            "offset": {"type": "integer", "description": "First line. Optional."},
            "limit": {"type": "integer", "description": "Max lines. Optional."},
        }})
    );
}

// ---- read_file ----

#[tokio::test]
async fn read_file_numbers_the_lines() {
    let dir = folder();
    put(dir.path(), "a.txt", "one\ntwo\r\n\nlast without newline");
    let text = ok("read_file", dir.path(), json!({"path": "a.txt"})).await;
    assert_eq!(text, "1: one\n2: two\n3: \n4: last without newline\n");
}

#[tokio::test]
async fn read_file_takes_absolute_paths() {
    let dir = folder();
    put(dir.path(), "a.txt", "x\n");
    let path = dir.path().join("a.txt").display().to_string();
    let text = ok("read_file", Path::new("/"), json!({"path": path})).await;
    assert_eq!(text, "1: x\n");
}

#[tokio::test]
async fn read_file_reads_a_range_and_says_how_to_read_on() {
    let dir = folder();
    put(dir.path(), "a.txt", lines(10));
    let text = ok(
        "read_file",
        dir.path(),
        json!({"path": "a.txt", "offset": 3, "limit": 4}),
    )
    .await;
    assert_eq!(
        text,
        format!(
            "{}… 4 more lines; call read_file with offset=7\n",
            numbered(3..=6)
        )
    );
    let text = ok(
        "read_file",
        dir.path(),
        json!({"path": "a.txt", "offset": 7}),
    )
    .await;
    assert_eq!(text, numbered(7..=10));
}

#[tokio::test]
async fn read_file_counts_a_last_line_without_newline_as_more() {
    let dir = folder();
    put(dir.path(), "a.txt", "a\nb\nc");
    let text = ok(
        "read_file",
        dir.path(),
        json!({"path": "a.txt", "limit": 1}),
    )
    .await;
    assert_eq!(text, "1: a\n… 2 more lines; call read_file with offset=2\n");
}

#[tokio::test]
async fn read_file_shows_at_most_2000_lines() {
    let dir = folder();
    put(dir.path(), "a.txt", lines(2812));
    for args in [
        json!({"path": "a.txt"}),
        json!({"path": "a.txt", "limit": 5000}),
    ] {
        let text = ok("read_file", dir.path(), args).await;
        assert!(text.starts_with("1: line 1\n"), "{text}");
        assert!(
            text.ends_with("2000: line 2000\n… 812 more lines; call read_file with offset=2001\n"),
            "{}",
            &text[text.len() - 100..]
        );
    }
}

#[tokio::test]
async fn read_file_stops_at_256_kib() {
    let dir = folder();
    let line = "x".repeat(1000);
    put(dir.path(), "a.txt", format!("{line}\n").repeat(400));
    let text = ok("read_file", dir.path(), json!({"path": "a.txt"})).await;
    // Each numbered line is about 1 KiB: 260 of them fit in 256 KiB.
    assert!(text.len() <= MAX_BYTES + 100, "{}", text.len());
    let tail = text.lines().last().unwrap_or_default();
    assert_eq!(
        tail,
        "… 256 KiB shown; 140 more lines; call read_file with offset=261"
    );
}

#[tokio::test]
async fn read_file_cuts_a_line_longer_than_the_cap() {
    let dir = folder();
    put(
        dir.path(),
        "min.js",
        format!("{}\nsecond\n", "é".repeat(200_000)),
    );
    let text = ok("read_file", dir.path(), json!({"path": "min.js"})).await;
    assert!(text.starts_with("1: éé"));
    assert!(text.len() <= MAX_BYTES + 100, "{}", text.len());
    assert!(
        text.ends_with("\n… line 1 cut at 256 KiB; 1 more lines; call read_file with offset=2\n"),
        "{}",
        &text[text.len() - 100..]
    );
}

#[tokio::test]
async fn read_file_answers_an_empty_file() {
    let dir = folder();
    put(dir.path(), "empty", "");
    assert_eq!(
        ok("read_file", dir.path(), json!({"path": "empty"})).await,
        "empty is empty."
    );
}

#[tokio::test]
async fn read_file_refuses_a_range_outside_the_file() {
    let dir = folder();
    put(dir.path(), "a.txt", lines(3));
    let cases = [
        (
            json!({"path": "a.txt", "offset": 9}),
            "a.txt has 3 lines; offset 9 is past the end.",
        ),
        (
            json!({"path": "a.txt", "offset": 0}),
            "offset is the first line to read: 1 or more.",
        ),
        (
            json!({"path": "a.txt", "limit": 0}),
            "limit is a number of lines: 1 or more.",
        ),
    ];
    for (args, answer) in cases {
        assert_eq!(refused("read_file", dir.path(), args).await, answer);
    }
}

#[tokio::test]
async fn read_file_refuses_a_missing_file_and_a_folder() {
    let dir = folder();
    fs::create_dir(dir.path().join("sub")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        refused("read_file", dir.path(), json!({"path": "nope.txt"})).await,
        "nope.txt does not exist."
    );
    assert_eq!(
        refused("read_file", dir.path(), json!({"path": "sub"})).await,
        "sub is a folder, not a file."
    );
}

#[tokio::test]
async fn read_file_refuses_binary_files() {
    let dir = folder();
    put(dir.path(), "a.bin", b"\x7fELF\x02\x01\x01\x00\x00rest");
    put(dir.path(), "latin1.txt", b"caf\xe9\n");
    let mut late = lines(2000).into_bytes();
    late.extend_from_slice(b"caf\xe9\n");
    put(dir.path(), "late.txt", late);
    assert_eq!(
        refused("read_file", dir.path(), json!({"path": "a.bin"})).await,
        "a.bin is a binary file; read_file shows text only."
    );
    assert_eq!(
        refused("read_file", dir.path(), json!({"path": "latin1.txt"})).await,
        "latin1.txt is a binary file; read_file shows text only."
    );
    // Past the first 8 KiB, a bad line is found when it is shown.
    assert_eq!(
        refused(
            "read_file",
            dir.path(),
            json!({"path": "late.txt", "offset": 1990})
        )
        .await,
        "late.txt is not UTF-8 text (line 2001); read_file shows text only."
    );
}

// ---- write_file ----

#[tokio::test]
async fn write_file_creates_folders_and_the_file() {
    let dir = folder();
    let text = ok(
        "write_file",
        dir.path(),
        json!({"path": "new/deep/a.txt", "content": "héllo\n"}),
    )
    .await;
    assert_eq!(text, "Wrote 7 bytes to new/deep/a.txt (new file).");
    assert_eq!(get(dir.path(), "new/deep/a.txt"), "héllo\n");
}

#[tokio::test]
async fn write_file_replaces_a_file_and_keeps_its_permissions() {
    let dir = folder();
    put(dir.path(), "run.sh", "old");
    let path = dir.path().join("run.sh");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o751)).unwrap_or_else(|e| panic!("{e}"));
    let text = ok(
        "write_file",
        dir.path(),
        json!({"path": "run.sh", "content": "#!/bin/sh\n"}),
    )
    .await;
    assert_eq!(text, "Wrote 10 bytes to run.sh (replaced).");
    assert_eq!(get(dir.path(), "run.sh"), "#!/bin/sh\n");
    assert_eq!(mode(&path), 0o751);
}

#[tokio::test]
async fn write_file_gives_a_new_file_ordinary_permissions() {
    let dir = folder();
    ok(
        "write_file",
        dir.path(),
        json!({"path": "a", "content": ""}),
    )
    .await;
    // 0666 less the umask: at least readable by the group, unlike a bare temporary file.
    let mode = mode(&dir.path().join("a"));
    assert_eq!(mode & 0o600, 0o600, "{mode:o}");
    assert_ne!(mode, 0o600, "{mode:o}");
}

#[tokio::test]
async fn write_file_follows_a_symlink() {
    let dir = folder();
    put(dir.path(), "real.txt", "old");
    std::os::unix::fs::symlink("real.txt", dir.path().join("link.txt"))
        .unwrap_or_else(|e| panic!("{e}"));
    ok(
        "write_file",
        dir.path(),
        json!({"path": "link.txt", "content": "new"}),
    )
    .await;
    assert_eq!(get(dir.path(), "real.txt"), "new");
    let link = fs::symlink_metadata(dir.path().join("link.txt")).unwrap_or_else(|e| panic!("{e}"));
    assert!(link.file_type().is_symlink());
}

#[tokio::test]
async fn write_file_refuses_a_folder_and_leaves_it() {
    let dir = folder();
    put(dir.path(), "sub/keep.txt", "kept");
    let text = refused(
        "write_file",
        dir.path(),
        json!({"path": "sub", "content": "x"}),
    )
    .await;
    assert_eq!(text, "sub was not written: it is a folder");
    assert_eq!(get(dir.path(), "sub/keep.txt"), "kept");
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{e}"))
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_write_that_fails_midway_leaves_the_old_file() {
    let dir = folder();
    put(dir.path(), "a.txt", "old content");
    let path = dir.path().join("a.txt");
    let result = write_atomic_with(&path, |file| {
        file.write_all(b"half of the new")?;
        // While the new content is being written, the target still holds the old one and the
        // temporary file sits beside it.
        assert_eq!(get(dir.path(), "a.txt"), "old content");
        assert_eq!(names(dir.path()).len(), 2);
        Err(io::Error::other("disk full"))
    });
    assert_eq!(result.map_err(|e| e.to_string()), Err("disk full".into()));
    assert_eq!(get(dir.path(), "a.txt"), "old content");
    assert_eq!(
        names(dir.path()),
        ["a.txt"],
        "the temporary file is removed"
    );
}

#[test]
fn a_rename_that_fails_leaves_the_target_and_no_temporary_file() {
    let dir = folder();
    put(dir.path(), "a.txt", "old");
    let path = dir.path().join("a.txt");
    // The target turns into a non-empty folder while the new content is written: the rename
    // over it fails.
    let result = write_atomic_with(&path, |file| {
        fs::remove_file(&path)?;
        put(dir.path(), "a.txt/inside.txt", "kept");
        file.write_all(b"new")
    });
    assert!(result.is_err(), "{result:?}");
    assert_eq!(get(dir.path(), "a.txt/inside.txt"), "kept");
    assert_eq!(
        names(dir.path()),
        ["a.txt"],
        "the temporary file is removed"
    );
}

// ---- edit_file ----

#[tokio::test]
async fn edit_file_replaces_a_unique_text() {
    let dir = folder();
    put(dir.path(), "a.rs", "fn a() {}\nfn b() {}\n");
    let path = dir.path().join("a.rs");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap_or_else(|e| panic!("{e}"));
    let text = ok(
        "edit_file",
        dir.path(),
        json!({"path": "a.rs", "old_text": "fn b() {}", "new_text": "fn b() { a() }"}),
    )
    .await;
    assert_eq!(text, "Replaced 1 match in a.rs.");
    assert_eq!(get(dir.path(), "a.rs"), "fn a() {}\nfn b() { a() }\n");
    assert_eq!(mode(&path), 0o640);
}

#[tokio::test]
async fn edit_file_refuses_a_text_that_is_not_unique() {
    let dir = folder();
    put(dir.path(), "a.txt", "x = 1\ny = 1\nz = 1\n");
    let text = refused(
        "edit_file",
        dir.path(),
        json!({"path": "a.txt", "old_text": " = 1", "new_text": " = 2"}),
    )
    .await;
    assert_eq!(
        text,
        "old_text matches 3 times in a.txt; add the lines around it to make it unique."
    );
    assert_eq!(get(dir.path(), "a.txt"), "x = 1\ny = 1\nz = 1\n");
    let text = ok(
        "edit_file",
        dir.path(),
        json!({"path": "a.txt", "old_text": "y = 1", "new_text": "y = 2"}),
    )
    .await;
    assert_eq!(text, "Replaced 1 match in a.txt.");
    assert_eq!(get(dir.path(), "a.txt"), "x = 1\ny = 2\nz = 1\n");
}

#[tokio::test]
async fn edit_file_refuses_a_missing_text_and_hints_the_closest_line() {
    let dir = folder();
    put(dir.path(), "a.py", "def main():\n    print('hello')\n");
    let text = refused(
        "edit_file",
        dir.path(),
        json!({"path": "a.py", "old_text": "print(\"hello\")", "new_text": "pass"}),
    )
    .await;
    assert_eq!(
        text,
        "old_text was not found in a.py. Closest line 2:     print('hello')\nCopy the text exactly, whitespace included."
    );
    let text = refused(
        "edit_file",
        dir.path(),
        json!({"path": "a.py", "old_text": "something else entirely", "new_text": "x"}),
    )
    .await;
    assert_eq!(text, "old_text was not found in a.py.");
    assert_eq!(get(dir.path(), "a.py"), "def main():\n    print('hello')\n");
}

#[tokio::test]
async fn edit_file_refuses_an_empty_or_unchanged_text() {
    let dir = folder();
    put(dir.path(), "a.txt", "abc");
    let cases = [
        (
            json!({"path": "a.txt", "old_text": "", "new_text": "x"}),
            "old_text is empty; to create or overwrite a file, use write_file.",
        ),
        (
            json!({"path": "a.txt", "old_text": "b", "new_text": "b"}),
            "old_text and new_text are the same; nothing to change.",
        ),
        (
            json!({"path": "gone.txt", "old_text": "b", "new_text": "c"}),
            "gone.txt does not exist.",
        ),
    ];
    for (args, answer) in cases {
        assert_eq!(refused("edit_file", dir.path(), args).await, answer);
    }
    assert_eq!(get(dir.path(), "a.txt"), "abc");
}

#[tokio::test]
async fn edit_file_refuses_a_binary_file() {
    let dir = folder();
    put(dir.path(), "a.bin", b"ab\xffcd");
    let text = refused(
        "edit_file",
        dir.path(),
        json!({"path": "a.bin", "old_text": "ab", "new_text": "x"}),
    )
    .await;
    assert_eq!(text, "a.bin is not UTF-8 text; edit_file edits text only.");
}

#[tokio::test]
async fn edit_file_matches_newlines_in_a_crlf_file() {
    let dir = folder();
    put(dir.path(), "a.txt", "one\r\ntwo\r\nthree\r\n");
    ok(
        "edit_file",
        dir.path(),
        json!({"path": "a.txt", "old_text": "one\ntwo", "new_text": "1\n2"}),
    )
    .await;
    assert_eq!(get(dir.path(), "a.txt"), "1\r\n2\r\nthree\r\n");
}

// ---- list_files ----

fn tree() -> TempDir {
    let dir = folder();
    for (path, content) in [
        (".gitignore", "target/\n*.log\n"),
        ("src/main.rs", "fn main() {}\n"),
        ("src/lib.rs", "pub fn hello() {}\n// TODO later\n"),
        ("src/deep/mod.rs", "// todo: tests\n"),
        ("README.md", "# Hello\nTODO: docs\n"),
        ("build.log", "TODO ignored\n"),
        ("target/debug/out.rs", "// TODO ignored\n"),
        (".hidden/secret.rs", "// TODO hidden\n"),
        ("b.rs", "// TODO top\n"),
    ] {
        put(dir.path(), path, content);
    }
    dir
}

#[tokio::test]
async fn list_files_lists_sorted_files_without_ignored_or_hidden_ones() {
    let dir = tree();
    let text = ok("list_files", dir.path(), json!({})).await;
    assert_eq!(
        text,
        "README.md\nb.rs\nsrc/deep/mod.rs\nsrc/lib.rs\nsrc/main.rs\n"
    );
}

#[tokio::test]
async fn list_files_filters_by_glob() {
    let dir = tree();
    let cases = [
        (
            json!({"pattern": "*.rs"}),
            "b.rs\nsrc/deep/mod.rs\nsrc/lib.rs\nsrc/main.rs\n",
        ),
        (
            json!({"pattern": "**/*.rs"}),
            "b.rs\nsrc/deep/mod.rs\nsrc/lib.rs\nsrc/main.rs\n",
        ),
        (json!({"pattern": "src/*.rs"}), "src/lib.rs\nsrc/main.rs\n"),
        (
            json!({"pattern": "src/**/*.rs"}),
            "src/deep/mod.rs\nsrc/lib.rs\nsrc/main.rs\n",
        ),
        (json!({"pattern": "*.{md,log}"}), "README.md\n"),
        (json!({"pattern": "*.py"}), "No files match *.py in .."),
    ];
    for (args, answer) in cases {
        assert_eq!(
            ok("list_files", dir.path(), args.clone()).await,
            answer,
            "{args}"
        );
    }
}

#[tokio::test]
async fn list_files_caps_the_list() {
    let dir = folder();
    for n in 0..510 {
        put(dir.path(), &format!("f{n:04}.txt"), "");
    }
    let text = ok("list_files", dir.path(), json!({})).await;
    let shown: Vec<_> = text.lines().collect();
    assert_eq!(shown.len(), MAX_FILES_SHOWN + 1);
    assert_eq!(shown[0], "f0000.txt");
    assert_eq!(shown[499], "f0499.txt");
    assert_eq!(shown[500], "… 10 more files; narrow the pattern");
}

const MAX_FILES_SHOWN: usize = list_files::MAX_FILES;

#[tokio::test]
async fn list_files_refuses_a_bad_glob() {
    let dir = tree();
    let cases = [(
        json!({"pattern": "a[b"}),
        "invalid glob \"a[b\": unclosed character class; missing ']'",
    )];
    for (args, answer) in cases {
        assert_eq!(refused("list_files", dir.path(), args).await, answer);
    }
}

#[tokio::test]
async fn list_files_stops_when_cancelled() {
    let dir = tree();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let (outcome, _) = call_with("list_files", dir.path(), json!({}), cancel).await;
    assert_eq!(outcome, Outcome::Cancelled);
}

// ---- grep ----

#[tokio::test]
async fn grep_answers_file_line_text_sorted_without_ignored_files() {
    let dir = tree();
    let text = ok("grep", dir.path(), json!({"pattern": "TODO"})).await;
    assert_eq!(
        text,
        "README.md:2:TODO: docs\nb.rs:1:// TODO top\nsrc/lib.rs:2:// TODO later\n"
    );
}

#[tokio::test]
async fn grep_takes_case_a_glob_and_a_path() {
    let dir = tree();
    let cases = [
        (
            json!({"pattern": "(?i)todo", "glob": "*.rs"}),
            "b.rs:1:// TODO top\nsrc/deep/mod.rs:1:// todo: tests\nsrc/lib.rs:2:// TODO later\n",
        ),
        (
            json!({"pattern": "todo", "path": "src"}),
            "src/deep/mod.rs:1:// todo: tests\n",
        ),
        (
            json!({"pattern": "fn \\w+", "path": "src/main.rs"}),
            "src/main.rs:1:fn main() {}\n",
        ),
        // A file named outright is searched even when ignored.
        (
            json!({"pattern": "TODO", "path": "build.log"}),
            "build.log:1:TODO ignored\n",
        ),
        (
            json!({"pattern": "nothing here"}),
            "No matches for nothing here in ..",
        ),
    ];
    for (args, answer) in cases {
        assert_eq!(ok("grep", dir.path(), args.clone()).await, answer, "{args}");
    }
}

#[tokio::test]
async fn grep_skips_binary_files() {
    let dir = folder();
    put(dir.path(), "a.bin", b"needle\x00\x01\x02needle\n");
    put(dir.path(), "a.txt", "needle\n");
    let text = ok("grep", dir.path(), json!({"pattern": "needle"})).await;
    assert_eq!(text, "a.txt:1:needle\n");
}

#[tokio::test]
async fn grep_refuses_an_invalid_regex_with_the_reason() {
    let dir = tree();
    let text = refused("grep", dir.path(), json!({"pattern": "fn ("})).await;
    assert!(text.starts_with("invalid regex \"fn (\": "), "{text}");
    assert!(text.contains("unclosed group"), "{text}");
    assert_eq!(
        refused("grep", dir.path(), json!({"pattern": "x", "path": "nope"})).await,
        "nope does not exist."
    );
}

#[tokio::test]
async fn grep_caps_matches_and_counts_the_rest() {
    let dir = folder();
    put(dir.path(), "a.txt", "hit\n".repeat(150));
    put(dir.path(), "b.txt", "hit\n".repeat(150));
    let text = ok("grep", dir.path(), json!({"pattern": "hit"})).await;
    let shown: Vec<_> = text.lines().collect();
    assert_eq!(shown.len(), grep::MAX_MATCHES + 1);
    assert_eq!(shown[149], "a.txt:150:hit");
    assert_eq!(shown[199], "b.txt:50:hit");
    assert_eq!(
        shown[200],
        "… 100 more matches (300 in 2 files); narrow the pattern, path or glob"
    );
}

#[tokio::test]
async fn grep_trims_long_lines() {
    let dir = folder();
    put(
        dir.path(),
        "min.js",
        format!("{}needle{}\n", "é".repeat(100), "x".repeat(1000)),
    );
    let text = ok("grep", dir.path(), json!({"pattern": "needle"})).await;
    let line = text.strip_prefix("min.js:1:").unwrap_or_default();
    assert!(line.ends_with("xx…\n"), "{line}");
    assert!(line.len() <= grep::MAX_LINE + 5, "{}", line.len());
}
