//! Skills (SPEC §4), in the Agent Skills format: a folder holding `SKILL.md` — YAML front matter
//! with `name`, `description` and optional `keywords`, then a Markdown body — and any other files
//! the body mentions.
//!
//! [`load`] scans folders into a [`Catalogue`]; its [`prompt_section`](Catalogue::prompt_section)
//! is one line per skill at the end of the system prompt, and [`ReadSkillTool`] (`read_skill`)
//! gives the model a skill's body and files when it needs them. Only the catalogue costs tokens
//! on every request, so it stays a line per skill.
//!
//! Loading never fails: a malformed `SKILL.md` or a second skill of the same name is a warning
//! (`FILE:LINE: KEY: MESSAGE`, like agent-file errors) and the rest still loads. Folders that do
//! not exist are skipped without a word, since the default ones (`~/.config/mm/skills`,
//! `./.mm/skills`) usually don't.
//!
//! The front matter is split and read as an agent file's is ([`crate::front_matter`],
//! [`crate::yaml`]): the same lines in messages, duplicate keys and hostile nesting (`[[[[…`)
//! refused the same way, as a warning.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use ignore::WalkBuilder;
use serde_json::Value;

use crate::args::ValidArgs;
use crate::args::{ParamSpec, ParamType, Params};
use crate::diagnostic::AgentFileError;
use crate::front_matter::{FrontMatter, split_front_matter};
use crate::output::Output;
use crate::text::{one_line, similarity};
use crate::tools::{Outcome, Tool, ToolCtx, ToolKind, ToolSpec};
use crate::yaml::{Kind, Node};

/// The file that makes a folder a skill.
pub const SKILL_FILE: &str = "SKILL.md";
/// A `SKILL.md` larger than this is refused: the body goes to a small model whole.
const MAX_SKILL_BYTES: u64 = 1 << 20;
/// The Agent Skills limits on `name` and `description`.
const MAX_NAME_CHARS: usize = 64;
const MAX_DESCRIPTION_CHARS: usize = 1024;
/// The most keywords of a skill put in the catalogue, and the longest one.
const MAX_KEYWORDS: usize = 12;
const MAX_KEYWORD_CHARS: usize = 40;
/// At most this many files of a skill's folder are listed by `read_skill`.
const MAX_LISTED_FILES: usize = 50;
/// How deep `read_skill` looks into a skill's folder.
const MAX_LISTED_DEPTH: usize = 8;

/// One skill, as found at start-up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    name: String,
    description: String,
    keywords: Vec<String>,
    /// The skill's folder, absolute.
    dir: PathBuf,
    /// Its `SKILL.md` as it was found (for messages).
    file: PathBuf,
}

impl Skill {
    pub fn name(&self) -> &str {
        &self.name
    }
    /// On one line: the whitespace of a folded or literal YAML string is collapsed.
    pub fn description(&self) -> &str {
        &self.description
    }
    pub fn keywords(&self) -> &[String] {
        &self.keywords
    }
    /// The skill's folder, absolute.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// The skills found, in the order they were found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Catalogue {
    skills: Vec<Skill>,
}

impl Catalogue {
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }

    pub fn names(&self) -> Vec<&str> {
        self.skills.iter().map(|s| s.name.as_str()).collect()
    }

    /// The skill called `name`; case is ignored when no name matches exactly (small models
    /// capitalise).
    pub fn get(&self, name: &str) -> Option<&Skill> {
        let name = name.trim();
        self.skills.iter().find(|s| s.name == name).or_else(|| {
            self.skills
                .iter()
                .find(|s| s.name.eq_ignore_ascii_case(name))
        })
    }

    /// What is appended to the system prompt: a heading and one line per skill, or nothing when
    /// there are no skills.
    ///
    /// ```text
    ///
    ///
    /// Skills (read one with read_skill before following it):
    /// - deploy: Deploy a service. (release, ship)
    /// ```
    pub fn prompt_section(&self) -> String {
        if self.skills.is_empty() {
            return String::new();
        }
        let mut text = String::from("\n\nSkills:\n");
        for skill in &self.skills {
            let _ = write!(text, "- {}: {}", skill.name, skill.description);
            if !skill.keywords.is_empty() {
                let _ = write!(text, " ({})", skill.keywords.join(", "));
            }
            text.push('\n');
        }
        text
    }

    /// The answer to an unknown name: the known names, closest first.
    fn miss(&self, name: &str) -> String {
        if self.skills.is_empty() {
            return format!("No skill named {}. There are no skills.", quoted(name));
        }
        let mut names: Vec<(&str, f64)> = self
            .skills
            .iter()
            .map(|s| (s.name.as_str(), similarity(name, &s.name)))
            .collect();
        // Stable: equally close names keep the catalogue's order.
        names.sort_by(|a, b| b.1.total_cmp(&a.1));
        let names: Vec<&str> = names.into_iter().map(|(name, _)| name).collect();
        format!(
            "No skill named {}. Skills: {}.",
            quoted(name),
            names.join(", ")
        )
    }
}

/// Scans `folders` in order. In each, every direct subfolder holding a `SKILL.md` is a skill,
/// taken in name order; a folder that itself holds a `SKILL.md` is one skill. Returns the
/// catalogue and the warnings to show at start-up: malformed files (that skill is left out),
/// duplicate names (the first wins), folders that exist but cannot be read. Missing folders
/// are skipped silently.
pub fn load(folders: &[PathBuf]) -> (Catalogue, Vec<String>) {
    let mut loader = Loader::default();
    for folder in folders {
        loader.scan(folder);
    }
    (
        Catalogue {
            skills: loader.skills,
        },
        loader.warnings,
    )
}

#[derive(Default)]
struct Loader {
    skills: Vec<Skill>,
    warnings: Vec<String>,
    /// Skill folders already taken, canonical: a folder listed twice, or reached through a
    /// link, is one skill and no duplicate warning.
    seen: HashSet<PathBuf>,
}

impl Loader {
    fn scan(&mut self, folder: &Path) {
        if folder.join(SKILL_FILE).is_file() {
            self.add(folder);
            return;
        }
        let entries = match fs::read_dir(folder) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return,
            Err(e) => {
                self.warnings.push(format!(
                    "{}: cannot read the skills folder: {e}",
                    folder.display()
                ));
                return;
            }
        };
        let mut dirs: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|dir| dir.join(SKILL_FILE).is_file())
            .collect();
        dirs.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
        for dir in dirs {
            self.add(&dir);
        }
    }

    fn add(&mut self, dir: &Path) {
        if !self
            .seen
            .insert(fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf()))
        {
            return;
        }
        let file = dir.join(SKILL_FILE);
        let meta = match read_front(&file) {
            Ok(meta) => meta,
            Err(e) => return self.warnings.push(e.to_string()),
        };
        if let Some(first) = self.skills.iter().find(|s| s.name == meta.name) {
            let e = problem(
                &file,
                meta.name_line,
                "name",
                format!(
                    "{} is already the skill in {}; this one is ignored",
                    quoted(&meta.name),
                    first.file.display()
                ),
            );
            return self.warnings.push(e.to_string());
        }
        if let Some((line, why)) = &meta.trimmed {
            self.warnings
                .push(problem(&file, *line, "keywords", why.clone()).to_string());
        }
        self.skills.push(Skill {
            name: meta.name,
            description: meta.description,
            keywords: meta.keywords,
            dir: std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf()),
            file,
        });
    }
}

/// What the front matter says.
struct Meta {
    name: String,
    name_line: usize,
    description: String,
    keywords: Vec<String>,
    /// Keywords were left out: the line of `keywords` and why (a warning).
    trimmed: Option<(usize, String)>,
}

fn problem(file: &Path, line: usize, key: &str, message: impl Into<String>) -> AgentFileError {
    AgentFileError {
        file: file.display().to_string(),
        line,
        key: key.into(),
        message: message.into(),
    }
}

fn read_front(file: &Path) -> Result<Meta, AgentFileError> {
    let fail = |line: usize, message: String| problem(file, line, "", message);
    let text = read_skill_file(file).map_err(|why| fail(0, why))?;
    match split_front_matter(&text) {
        FrontMatter::Absent => Err(fail(
            1,
            "no front matter: start with a line `---`, then `name:` and `description:`, then `---`"
                .into(),
        )),
        FrontMatter::Unclosed => Err(fail(
            1,
            "the front matter opened here is not closed: end it with a line `---`".into(),
        )),
        FrontMatter::Closed {
            yaml, close_line, ..
        } => parse_front(yaml, close_line)
            .map_err(|(line, key, message)| problem(file, line, key, message)),
    }
}

/// A front-matter problem: line, key, message.
type Bad = (usize, &'static str, String);

/// Reads `name`, `description` and `keywords` from the front matter (which starts on line 2
/// and is closed on `close_line`) with the agent file's YAML reader ([`crate::yaml`]: lines,
/// duplicate keys and hostile nesting are handled there); other keys (`license`, `metadata`,
/// …) are skipped.
fn parse_front(yaml: &str, close_line: usize) -> Result<Meta, Bad> {
    let root = crate::yaml::parse(yaml, 2).map_err(|e| (e.line, "", e.message))?;
    let entries = match root {
        None => Vec::new(),
        Some(Node {
            kind: Kind::Map(entries),
            ..
        }) => entries,
        Some(node) => {
            return Err((
                node.line,
                "",
                "the front matter must be `key: value` lines".into(),
            ));
        }
    };
    let mut name: Option<(String, usize)> = None;
    let mut description: Option<(String, usize)> = None;
    let mut keywords: Option<(Vec<String>, usize)> = None;
    for entry in &entries {
        match entry.key.as_str() {
            "name" => name = text_of(&entry.value, "name")?.map(|n| (n, entry.line)),
            "description" => {
                description = text_of(&entry.value, "description")?.map(|d| (d, entry.line));
            }
            "keywords" => keywords = Some((keywords_of(&entry.value)?, entry.line)),
            _ => {}
        }
    }
    let Some((name, name_line)) = name.filter(|(n, _)| !n.is_empty()) else {
        return Err((close_line, "name", "missing".into()));
    };
    let valid = name.chars().count() <= MAX_NAME_CHARS
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !valid {
        return Err((
            name_line,
            "name",
            format!(
                "{} is not a skill name: use letters, digits, `-`, `_` or `.`, at most {MAX_NAME_CHARS}",
                quoted(&name)
            ),
        ));
    }
    let Some((description, description_line)) = description.filter(|(d, _)| !d.is_empty()) else {
        return Err((close_line, "description", "missing".into()));
    };
    if description.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err((
            description_line,
            "description",
            format!("longer than {MAX_DESCRIPTION_CHARS} characters"),
        ));
    }
    let (keywords, trimmed) = trim_keywords(keywords.unwrap_or_default());
    Ok(Meta {
        name,
        name_line,
        description,
        keywords,
        trimmed,
    })
}

/// Every keyword is in every request: a skill may not make the catalogue large. The keywords
/// kept, and the warning (line of `keywords`, why) when some were left out.
fn trim_keywords(
    (mut keywords, line): (Vec<String>, usize),
) -> (Vec<String>, Option<(usize, String)>) {
    let given = keywords.len();
    let long = keywords
        .iter()
        .filter(|k| k.chars().count() > MAX_KEYWORD_CHARS)
        .count();
    keywords.retain(|k| k.chars().count() <= MAX_KEYWORD_CHARS);
    keywords.truncate(MAX_KEYWORDS);
    let trimmed = (given > keywords.len()).then(|| {
        let mut why = Vec::new();
        if long > 0 {
            why.push(format!("{long} longer than {MAX_KEYWORD_CHARS} characters"));
        }
        if given - long > MAX_KEYWORDS {
            why.push(format!(
                "{} past the first {MAX_KEYWORDS}",
                given - long - MAX_KEYWORDS
            ));
        }
        (
            line,
            format!(
                "{} of {given} keywords left out ({}): every keyword is in every request",
                given - keywords.len(),
                why.join(", ")
            ),
        )
    });
    (keywords, trimmed)
}

/// A scalar as one line of text (`name: 1.0` is the text `1.0`); `None` for YAML's null (not
/// given); a list or a mapping is an error.
fn scalar_text(node: &Node) -> Option<Option<String>> {
    Some(match &node.kind {
        Kind::Null => None,
        Kind::Str(s) => Some(one_line(s)),
        Kind::Bool(b) => Some(b.to_string()),
        Kind::Int(i) => Some(i.to_string()),
        Kind::Float(f) => Some(f.to_string()),
        Kind::Seq(_) | Kind::Map(_) => return None,
    })
}

fn text_of(node: &Node, key: &'static str) -> Result<Option<String>, Bad> {
    scalar_text(node).ok_or_else(|| (node.line, key, "expected text".into()))
}

/// `keywords`: a list of words, or one comma-separated text.
fn keywords_of(node: &Node) -> Result<Vec<String>, Bad> {
    let mut words: Vec<String> = match &node.kind {
        Kind::Seq(items) => items
            .iter()
            .map(|item| match scalar_text(item) {
                Some(word) => Ok(word.unwrap_or_default()),
                None => Err((item.line, "keywords", "expected a list of words".into())),
            })
            .collect::<Result<_, _>>()?,
        _ => match scalar_text(node) {
            Some(text) => text.unwrap_or_default().split(',').map(one_line).collect(),
            None => {
                return Err((
                    node.line,
                    "keywords",
                    "expected a list of words or a comma-separated text".into(),
                ));
            }
        },
    };
    words.retain(|w| !w.is_empty());
    Ok(words)
}

fn quoted(text: &str) -> String {
    Value::from(text).to_string()
}

/// The `read_skill` built-in: a skill's body and the files beside it.
///
/// The body is read from disk at each call, not cached at start-up, so that a skill edited while
/// mm runs is read as it is now; the catalogue (names, descriptions) is the start-up one.
pub struct ReadSkillTool {
    catalogue: Arc<Catalogue>,
    spec: ToolSpec,
    params: Params,
}

impl ReadSkillTool {
    pub const NAME: &'static str = "read_skill";

    pub fn new(catalogue: Arc<Catalogue>) -> Self {
        let (spec, params) = ToolSpec::builtin(
            Self::NAME,
            "Read a skill: steps, files.",
            vec![ParamSpec::new("name", ParamType::String, None, true)],
        );
        Self {
            catalogue,
            spec,
            params,
        }
    }
}

#[async_trait]
impl Tool for ReadSkillTool {
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
        true
    }
    async fn run(&self, args: &ValidArgs, _ctx: &ToolCtx, out: &mut Output) -> Outcome {
        let name = args.get("name").and_then(Value::as_str).unwrap_or("");
        let Some(skill) = self.catalogue.get(name).cloned() else {
            out.write_str(&self.catalogue.miss(name));
            return Outcome::Failed;
        };
        // Reading and walking the folder block: off the turn loop's threads.
        let (outcome, text) = tokio::task::spawn_blocking(move || answer(&skill))
            .await
            .unwrap_or_else(|e| (Outcome::Failed, format!("read_skill failed: {e}")));
        out.write_str(&text);
        outcome
    }
}

/// A `SKILL.md`: a regular file (opened without blocking: a FIFO in a cloned folder cannot hang
/// start-up), at most [`MAX_SKILL_BYTES`], UTF-8.
fn read_skill_file(file: &Path) -> Result<String, String> {
    let bytes = crate::regular::read(file, MAX_SKILL_BYTES).map_err(|e| match e.kind() {
        std::io::ErrorKind::FileTooLarge => format!("too large (at most {MAX_SKILL_BYTES} bytes)"),
        _ => format!("cannot read: {e}"),
    })?;
    String::from_utf8(bytes).map_err(|_| "cannot read: it is not UTF-8".to_string())
}

/// The body of `skill`'s `SKILL.md` (front matter left out), then its folder and files.
fn answer(skill: &Skill) -> (Outcome, String) {
    let text = match read_skill_file(&skill.file) {
        Ok(text) => text,
        Err(e) => {
            let message = format!("Cannot read {}: {e}", skill.file.display());
            return (Outcome::Failed, message);
        }
    };
    let body = match split_front_matter(&text) {
        FrontMatter::Closed { body, .. } => body,
        FrontMatter::Absent | FrontMatter::Unclosed => &text,
    };
    let mut answer = body.trim().to_string();
    let dir = skill.dir.display();
    let (files, more) = files_in(&skill.dir);
    if files.is_empty() {
        let _ = write!(answer, "\n\nNo other files in {dir}.");
    } else {
        let _ = write!(answer, "\n\nFiles in {dir}:");
        for file in &files {
            let _ = write!(answer, "\n- {file}");
        }
        if more {
            let _ = write!(answer, "\n(only the first {MAX_LISTED_FILES} are listed)");
        }
    }
    answer.push('\n');
    (Outcome::Success, answer)
}

/// The files in `dir` (not `SKILL.md`), `/`-separated and relative, in path order, hidden and
/// ignored files left out as `list_files` does; and whether there were more than the cap.
fn files_in(dir: &Path) -> (Vec<String>, bool) {
    let walker = WalkBuilder::new(dir)
        .require_git(false)
        .max_depth(Some(MAX_LISTED_DEPTH))
        .sort_by_file_name(|a, b| a.cmp(b))
        .build();
    let mut files = Vec::new();
    for entry in walker.filter_map(Result::ok) {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(relative) = entry.path().strip_prefix(dir) else {
            continue;
        };
        if relative == Path::new(SKILL_FILE) {
            continue;
        }
        if files.len() == MAX_LISTED_FILES {
            return (files, true);
        }
        let parts: Vec<_> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect();
        files.push(parts.join("/"));
    }
    (files, false)
}

#[cfg(test)]
#[path = "skills_tests.rs"]
mod tests;
