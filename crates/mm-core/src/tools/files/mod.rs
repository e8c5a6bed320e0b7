//! The built-in file tools: `read_file`, `write_file`, `edit_file`, `list_files` and `grep`.
//!
//! Each tool is a [`FileTool`]: its spec, its parameters, whether it only reads, and a plain
//! blocking function that gets validated arguments and answers with a text and an [`Outcome`].
//! The function runs on tokio's blocking pool, so a large file or a long walk never stalls the
//! turn loop. What is shared lives here: path resolution, the atomic write, the walker and the
//! glob filter that `list_files` and `grep` both use (the crates ripgrep is built from).

mod edit_file;
mod grep;
mod list_files;
mod read_file;
mod write_file;

use std::fs::{self, File};
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use globset::{Glob, GlobBuilder, GlobMatcher};
use ignore::WalkBuilder;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::{Outcome, Tool, ToolCtx, ToolKind, ToolSpec};
use crate::args::ValidArgs;
use crate::args::{ParamSpec, Params};
use crate::output::Output;

/// The file tools, in the order they are offered.
pub const FILE_TOOLS: &[&str] = &["read_file", "write_file", "edit_file", "list_files", "grep"];

/// The file tool called `name`, if there is one.
pub fn file_tool(name: &str) -> Option<Arc<dyn Tool>> {
    let tool = match name {
        "read_file" => read_file::tool(),
        "write_file" => write_file::tool(),
        "edit_file" => edit_file::tool(),
        "list_files" => list_files::tool(),
        "grep" => grep::tool(),
        _ => return None,
    };
    Some(Arc::new(tool))
}

/// What a file tool's job gets: its validated arguments and the call's context.
struct Job {
    args: Map<String, Value>,
    cwd: PathBuf,
    cancel: CancellationToken,
}

impl Job {
    fn str(&self, name: &str) -> &str {
        self.args.get(name).and_then(Value::as_str).unwrap_or("")
    }
    fn opt_str(&self, name: &str) -> Option<&str> {
        self.args
            .get(name)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    }
    fn int(&self, name: &str) -> Option<i64> {
        self.args.get(name).and_then(Value::as_i64)
    }
    /// A path argument: relative paths are taken from mm's working directory; absolute ones are
    /// allowed (mm runs with the user's rights, and consent guards the writes).
    fn path(&self, name: &str) -> PathBuf {
        resolve(&self.cwd, self.opt_str(name).unwrap_or("."))
    }
}

fn resolve(cwd: &Path, path: &str) -> PathBuf {
    let path = Path::new(path);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    }
}

/// How a job ended: the text the model reads and the outcome.
type Answer = (Outcome, String);

fn done(text: impl Into<String>) -> Answer {
    (Outcome::Success, text.into())
}

fn refuse(text: impl Into<String>) -> Answer {
    (Outcome::Failed, text.into())
}

/// A built-in file tool.
struct FileTool {
    spec: ToolSpec,
    params: Params,
    read_only: bool,
    job: fn(&Job) -> Answer,
    /// The longest a run may take ([`FILE_TIMEOUT`]).
    timeout: Duration,
}

impl FileTool {
    fn new(
        name: &str,
        description: &str,
        params: Vec<ParamSpec>,
        read_only: bool,
        job: fn(&Job) -> Answer,
    ) -> Self {
        let (spec, params) = ToolSpec::builtin(name, description, params);
        Self {
            spec,
            params,
            read_only,
            job,
            timeout: FILE_TIMEOUT,
        }
    }
}

#[async_trait]
impl Tool for FileTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn params(&self) -> &Params {
        &self.params
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Builtin
    }
    fn read_only(&self) -> bool {
        self.read_only
    }
    /// `path`, for the tools that have one (`grep` without one searches the working folder).
    fn path<'a>(&self, args: &'a ValidArgs) -> Option<&'a str> {
        let has_path = self.params.params.iter().any(|p| p.name == "path");
        has_path.then(|| {
            args.get("path")
                .and_then(Value::as_str)
                .filter(|p| !p.is_empty())
                .unwrap_or(".")
        })
    }
    /// The job runs on tokio's blocking pool; its await is raced with the call's cancellation
    /// and [`FileTool::timeout`], so no file, however odd, can hold a turn: a job still running
    /// then is told to stop (its token) and left to finish on its own thread, its answer unread.
    async fn run(&self, args: &ValidArgs, ctx: &ToolCtx, out: &mut Output) -> Outcome {
        let stop = ctx.cancel.child_token();
        let job = Job {
            args: args.clone().into_map(),
            cwd: ctx.cwd.clone(),
            cancel: stop.clone(),
        };
        let run = self.job;
        let task = tokio::task::spawn_blocking(move || run(&job));
        let (outcome, text) = tokio::select! {
            biased;
            () = ctx.cancel.cancelled() => (Outcome::Cancelled, String::new()),
            () = tokio::time::sleep(self.timeout) => {
                stop.cancel();
                (Outcome::TimedOut(self.timeout), String::new())
            }
            joined = task => match joined {
                Ok(answer) => answer,
                Err(e) => refuse(format!("{} failed: {e}", self.spec.name)),
            },
        };
        out.write_str(&text);
        outcome
    }
}

/// How long a file tool may run (a walk of a huge tree, a slow file system).
pub(crate) const FILE_TIMEOUT: Duration = Duration::from_secs(120);

/// Opens a file for reading, or says why not, worded for the model: only regular files are
/// read (a FIFO would block, a device never end; see [`crate::regular`]).
fn open_regular(path: &Path, shown: &str) -> Result<File, String> {
    crate::regular::open(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => format!("{shown} does not exist."),
        io::ErrorKind::IsADirectory => format!("{shown} is a folder, not a file."),
        io::ErrorKind::InvalidInput => match fs::metadata(path) {
            Ok(meta) if meta.is_dir() => format!("{shown} is a folder, not a file."),
            _ => format!("{shown} cannot be read: {e}; only regular files are read."),
        },
        _ => cannot_read(shown, &e),
    })
}

/// A read that failed, worded for the model: a pseudo-file with nothing to read (`/proc/kmsg`,
/// opened without blocking) says so rather than "resource temporarily unavailable".
fn cannot_read(shown: &str, e: &io::Error) -> String {
    if e.kind() == io::ErrorKind::WouldBlock {
        format!("{shown} cannot be read: it would block (a special file with nothing to read).")
    } else {
        format!("{shown} cannot be read: {e}")
    }
}

/// Whether a write created the file or replaced it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Written {
    Created,
    Replaced,
}

/// Writes `content` to `path` atomically (see [`write_atomic_with`]).
fn write_atomic(path: &Path, content: &[u8]) -> io::Result<Written> {
    write_atomic_with(path, |file| file.write_all(content))
}

/// Writes a file so that it is never seen half-written: `fill` writes a temporary file beside
/// the target (same folder, hence same file system), which is synced and then renamed over the
/// target. Until the rename the target keeps its old content; if anything fails the temporary
/// file is removed. Missing parent folders are created. An existing file keeps its permissions
/// (not its owner: mm cannot give files away); a symlink is followed, so the file it points to
/// is replaced and the link stays.
fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<Written> {
    let target = match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    };
    let old = match fs::metadata(&target) {
        Ok(meta) if meta.is_dir() => {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "it is a folder",
            ));
        }
        // A FIFO, a device, a socket: renaming a file over it would replace it (as root,
        // `/dev/null` itself) with a regular file. Only regular files are written.
        Ok(meta) if !meta.is_file() => {
            return Err(crate::regular::not_regular(meta.file_type()));
        }
        Ok(meta) => Some(meta.permissions()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    let folder = match target.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    fs::create_dir_all(folder)?;
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // A new file gets 0666 less the umask, like any other program's; the temporary file's
    // usual 0600 would hide it from the user's group.
    let mut temp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".mm-tmp")
        .permissions(fs::Permissions::from_mode(0o666))
        .tempfile_in(folder)?;
    fill(temp.as_file_mut())?;
    if let Some(permissions) = old.clone() {
        temp.as_file().set_permissions(permissions)?;
    }
    temp.as_file().sync_all()?;
    temp.persist(&target).map_err(|e| e.error)?;
    // The rename itself is durable once the folder is synced; a failure here changes nothing
    // the user can see, so it is not reported.
    let _ = File::open(folder).and_then(|f| f.sync_all());
    Ok(if old.is_some() {
        Written::Replaced
    } else {
        Written::Created
    })
}

/// Which files a glob selects. A glob without `/` matches file names at any depth (`*.rs`,
/// like a `.gitignore` line); one with `/` matches the path from the search root (`src/*.rs`
/// only in `src`, `**/*.rs` anywhere).
struct Filter {
    glob: Option<GlobMatcher>,
    by_name: bool,
}

impl Filter {
    fn new(pattern: Option<&str>) -> Result<Self, String> {
        let Some(pattern) = pattern else {
            return Ok(Self {
                glob: None,
                by_name: false,
            });
        };
        let pattern = pattern.trim_start_matches("./");
        let by_name = !pattern.contains('/');
        let glob = if by_name {
            Glob::new(pattern)
        } else {
            GlobBuilder::new(pattern).literal_separator(true).build()
        }
        .map_err(|e| format!("invalid glob {pattern:?}: {}", e.kind()))?;
        Ok(Self {
            glob: Some(glob.compile_matcher()),
            by_name,
        })
    }

    /// Whether the file at `relative` (from the search root) is selected.
    fn matches(&self, relative: &Path) -> bool {
        match &self.glob {
            None => true,
            Some(glob) if self.by_name => relative.file_name().is_some_and(|n| glob.is_match(n)),
            Some(glob) => glob.is_match(relative),
        }
    }
}

/// The files under `root` that `filter` selects, ripgrep's way: `.gitignore`, `.ignore` and
/// global git excludes are respected (in a git repository or not), hidden files and folders are
/// skipped, and each folder is walked in name order so that the result is sorted. Yields the
/// path on disk and the path shown to the model (`shown_root` joined with the relative path,
/// so that it can be passed back to another tool as is). `None` from `each` stops the walk.
fn walk(
    root: &Path,
    shown_root: &str,
    filter: &Filter,
    cancel: &CancellationToken,
    mut each: impl FnMut(&Path, String) -> Option<()>,
) -> Result<(), Outcome> {
    // A file named as the root is searched as the model named it, ignore rules or not.
    if root.is_file() {
        let name = Path::new(root.file_name().unwrap_or_default());
        if filter.matches(name) {
            each(root, shown_root.to_string());
        }
        return Ok(());
    }
    let walker = WalkBuilder::new(root)
        .require_git(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .build();
    for entry in walker {
        if cancel.is_cancelled() {
            return Err(Outcome::Cancelled);
        }
        // Unreadable entries (permissions, a broken link) are skipped, as ripgrep does.
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        let relative = path.strip_prefix(root).unwrap_or(path);
        if filter.matches(relative) && each(path, shown(shown_root, relative)).is_none() {
            break;
        }
    }
    Ok(())
}

/// `relative` as the model sees it: under the root it named, `/`-separated.
fn shown(shown_root: &str, relative: &Path) -> String {
    let relative = relative.to_string_lossy();
    match shown_root.trim_start_matches("./").trim_end_matches('/') {
        "" if shown_root.starts_with('/') => format!("/{relative}"),
        "" | "." => relative.into_owned(),
        root => format!("{root}/{relative}"),
    }
}

#[cfg(test)]
mod special_tests;
#[cfg(test)]
mod tests;
