//! An `mm eval` suite file (docs/eval.md): its name, which agent, which cases (prompts per
//! language, earlier turns, the expected call, checks of the answer), how many runs, which
//! modes and models.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// How the agent's declared tools are offered in a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// The declared tools, as the agent file has them.
    Declared,
    /// The same tools served by `mm serve` over HTTP, used as MCP tools.
    Mcp,
    /// No declared tools: one generated skill per tool saying which command to run with
    /// `bash`, plus `bash` and `read_skill`.
    Skill,
}

impl Mode {
    /// The column heading.
    pub fn title(self) -> &'static str {
        match self {
            Mode::Declared => "declared",
            Mode::Mcp => "MCP",
            Mode::Skill => "skill + bash",
        }
    }
}

/// A model to measure: a server and the model id sent to it.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Model {
    /// The row heading (default: the model id).
    #[serde(default)]
    pub name: Option<String>,
    /// The model id sent (default: the agent file's).
    #[serde(default)]
    pub model: Option<String>,
    /// One server, or several: runs take them in turn.
    #[serde(default)]
    pub base_url: Option<String>,
    #[serde(default)]
    pub base_urls: Vec<String>,
}

impl Model {
    pub fn label(&self) -> String {
        self.name
            .clone()
            .or_else(|| self.model.clone())
            .unwrap_or_else(|| "agent's model".into())
    }

    pub fn servers(&self) -> Vec<String> {
        let mut servers = self.base_urls.clone();
        if let Some(url) = &self.base_url {
            servers.insert(0, url.clone());
        }
        servers
    }
}

/// What a case expects: a program run with exactly one of the argv lists given, or no program
/// at all.
#[derive(Debug, Clone, PartialEq)]
pub enum Expect {
    Call {
        program: String,
        /// Each acceptable argv (`argv:` is one, `argv_any:` several).
        argv: Vec<Vec<String>>,
    },
    NoCall,
}

impl<'de> Deserialize<'de> for Expect {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Call {
            program: String,
            #[serde(default)]
            argv: Option<Vec<String>>,
            #[serde(default)]
            argv_any: Vec<Vec<String>>,
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Word(String),
            Call(Call),
        }
        match Raw::deserialize(d)? {
            Raw::Word(w) if w == "no_call" => Ok(Expect::NoCall),
            Raw::Word(w) => Err(serde::de::Error::custom(format!(
                "`{w}`: expect `no_call` or {{program, argv}}"
            ))),
            Raw::Call(c) => {
                let mut argv = c.argv_any;
                if let Some(one) = c.argv {
                    argv.insert(0, one);
                }
                if argv.is_empty() {
                    argv.push(Vec::new());
                }
                Ok(Expect::Call {
                    program: c.program,
                    argv,
                })
            }
        }
    }
}

/// Checks of the answer's text (`answer:`); every one given must pass.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnswerCheck {
    /// At least one of these, ignoring case.
    #[serde(default)]
    pub contains_any: Vec<String>,
    /// Every one of these, ignoring case.
    #[serde(default)]
    pub contains_all: Vec<String>,
    /// None of these, ignoring case.
    #[serde(default)]
    pub not_contains: Vec<String>,
    /// A regular expression (Rust `regex` syntax; `(?i)` ignores case) the answer must match.
    #[serde(default)]
    pub matches: Option<String>,
    #[serde(skip)]
    regex: Option<regex::Regex>,
}

impl AnswerCheck {
    /// The first check `answer` fails, said for a person; `None` when every one passes.
    pub fn failed(&self, answer: &str) -> Option<String> {
        let lower = answer.to_lowercase();
        let has = |needle: &String| lower.contains(&needle.to_lowercase());
        if !self.contains_any.is_empty() && !self.contains_any.iter().any(has) {
            return Some(format!("contains none of {:?}", self.contains_any));
        }
        if let Some(missing) = self.contains_all.iter().find(|n| !has(n)) {
            return Some(format!("does not contain {missing:?}"));
        }
        if let Some(found) = self.not_contains.iter().find(|n| has(n)) {
            return Some(format!("contains {found:?}"));
        }
        match (&self.regex, &self.matches) {
            (Some(regex), Some(pattern)) if !regex.is_match(answer) => {
                Some(format!("does not match /{pattern}/"))
            }
            _ => None,
        }
    }
}

/// One case: a prompt per language, the earlier turns, and what must happen.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub id: String,
    /// Earlier user turns per language, each run as its own turn before the prompt.
    #[serde(default)]
    pub history: Option<BTreeMap<String, Vec<String>>>,
    /// Language code → prompt, in the order written.
    pub prompts: indexmap_like::Ordered,
    pub expect: Expect,
    #[serde(default)]
    pub answer: AnswerCheck,
}

impl Case {
    /// The earlier user turns of `language` (none without `history:`).
    pub fn history(&self, language: &str) -> &[String] {
        self.history
            .as_ref()
            .and_then(|h| h.get(language))
            .map_or(&[], Vec::as_slice)
    }
}

/// A suite file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    /// The name rows are prefixed with (`NAME/CASE`); default: the file's folder name, or its
    /// stem when the folder is `eval`.
    #[serde(default)]
    pub name: String,
    /// The agent file, relative to the suite file.
    pub agent: PathBuf,
    #[serde(default = "default_runs")]
    pub runs: u32,
    #[serde(default = "default_modes")]
    pub modes: Vec<Mode>,
    #[serde(default)]
    pub models: Vec<Model>,
    pub cases: Vec<Case>,
    /// The file it was read from.
    #[serde(skip)]
    pub path: PathBuf,
}

fn default_runs() -> u32 {
    5
}

fn default_modes() -> Vec<Mode> {
    vec![Mode::Declared, Mode::Mcp, Mode::Skill]
}

/// Ordered `language: prompt` pairs (a JSON object keeps its order with `preserve_order`).
pub mod indexmap_like {
    use serde::{Deserialize, Serialize};

    #[derive(Debug, Clone, Serialize, Deserialize)]
    #[serde(transparent)]
    pub struct Ordered(pub serde_json::Map<String, serde_json::Value>);

    impl Ordered {
        pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
            self.0
                .iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.as_str(), v)))
        }
    }
}

/// The default name of the suite at `path`: its folder's name, or its file stem when that
/// folder is `eval` (`eval/seed.yaml` is `seed`, `eval/agents/helpdesk/suite.yaml` is
/// `helpdesk`).
fn default_name(path: &Path) -> String {
    let stem = || {
        path.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    match absolute
        .parent()
        .and_then(Path::file_name)
        .map(|f| f.to_string_lossy().into_owned())
    {
        Some(folder) if folder != "eval" => folder,
        _ => stem(),
    }
}

/// Reads a suite; errors name the file and, for a wrong key or value, its path in the file.
/// `text`, the YAML file `path` of the eval (a suite, a variants file), read as a `T`; the
/// error names the file and the key (`suite.yaml: cases[2].expect: …`).
pub fn from_yaml<T: serde::de::DeserializeOwned>(path: &Path, text: &str) -> Result<T, String> {
    let file = path.display();
    let value = mm_core::yaml_to_json(text).map_err(|e| format!("{file}:{e}"))?;
    serde_path_to_error::deserialize(value).map_err(|e| {
        let at = e.path().to_string();
        let at = if at == "." {
            String::new()
        } else {
            format!(" {at}:")
        };
        format!("{file}:{at} {}", e.inner())
    })
}

pub fn load(path: &Path) -> Result<Suite, String> {
    let file = path.display();
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("{file}: cannot read the suite: {e}"))?;
    let mut suite: Suite = from_yaml(path, &text)?;
    suite.path = path.to_path_buf();
    if suite.name.trim().is_empty() {
        suite.name = default_name(path);
    }
    if suite.cases.is_empty() {
        return Err(format!("{file}: cases: no cases"));
    }
    if suite.runs == 0 {
        return Err(format!("{file}: runs: must be at least 1"));
    }
    for case in &mut suite.cases {
        let id = &case.id;
        if case.prompts.iter().next().is_none() {
            return Err(format!(
                "{file}: cases.{id}.prompts: give at least one `language: prompt`"
            ));
        }
        if let Some(history) = &case.history {
            for (language, _) in case.prompts.iter() {
                match history.get(language) {
                    Some(turns) if !turns.is_empty() => {}
                    _ => {
                        return Err(format!(
                            "{file}: cases.{id}.history: no earlier turns for `{language}` (every \
                             language of `prompts` needs its own)"
                        ));
                    }
                }
            }
        }
        if let Some(pattern) = &case.answer.matches {
            let regex = regex::Regex::new(pattern).map_err(|e| {
                format!("{file}: cases.{id}.answer.matches: not a regular expression: {e}")
            })?;
            case.answer.regex = Some(regex);
        }
    }
    Ok(suite)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_text(dir: &Path, name: &str, text: &str) -> Result<Suite, String> {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| e.to_string())?;
        load(&path)
    }

    const CASE: &str = "agent: mm.md\ncases:\n  - id: open\n    prompts: {en: Open it., fr: Ouvre-le.}\n    expect: no_call\n";

    #[test]
    fn names_history_and_answer_checks() {
        let dir = tempfile::tempdir().expect("tempdir");
        let eval = dir.path().join("eval");
        let helpdesk = eval.join("agents/helpdesk");
        std::fs::create_dir_all(&helpdesk).expect("mkdir");
        assert_eq!(
            load_text(&eval, "seed.yaml", CASE).expect("seed").name,
            "seed"
        );
        assert_eq!(
            load_text(&helpdesk, "suite.yaml", CASE)
                .expect("helpdesk")
                .name,
            "helpdesk"
        );
        let named = format!("name: desk\n{CASE}");
        assert_eq!(
            load_text(&eval, "x.yaml", &named).expect("named").name,
            "desk"
        );

        let text = "agent: mm.md\ncases:\n  - id: follow-up\n    history: {en: [The VPN is down.], fr: [Le VPN est en panne.]}\n    prompts: {en: Restart it., fr: Redémarre-le.}\n    expect: no_call\n    answer: {contains_any: [T-1042, t-1043], contains_all: [vpn], not_contains: [sorry], matches: \"(?i)^the\"}\n";
        let suite = load_text(&eval, "h.yaml", text).expect("history");
        let case = &suite.cases[0];
        assert_eq!(case.history("fr"), ["Le VPN est en panne."]);
        assert!(case.history("de").is_empty());
        let check = &case.answer;
        assert_eq!(check.failed("The VPN ticket is T-1042."), None);
        assert_eq!(
            check.failed("The VPN ticket is T-9."),
            Some("contains none of [\"T-1042\", \"t-1043\"]".into())
        );
        assert_eq!(
            check.failed("The ticket is T-1042."),
            Some("does not contain \"vpn\"".into())
        );
        assert_eq!(
            check.failed("The VPN: T-1042, sorry."),
            Some("contains \"sorry\"".into())
        );
        assert_eq!(
            check.failed("A VPN ticket: T-1042."),
            Some("does not match /(?i)^the/".into())
        );
        assert_eq!(AnswerCheck::default().failed(""), None);
    }

    #[test]
    fn errors_name_the_file_and_the_case() {
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = "agent: mm.md\ncases:\n  - id: follow-up\n    history: {en: [The VPN is down.]}\n    prompts: {en: Restart it., fr: Redémarre-le.}\n    expect: no_call\n";
        let error = load_text(dir.path(), "s.yaml", missing).expect_err("fr has no history");
        assert!(
            error.contains("s.yaml: cases.follow-up.history: no earlier turns for `fr`"),
            "{error}"
        );
        let regex = "agent: mm.md\ncases:\n  - id: ticket\n    prompts: {en: Open it.}\n    expect: no_call\n    answer: {matches: \"T-(\"}\n";
        let error = load_text(dir.path(), "r.yaml", regex).expect_err("bad regex");
        assert!(
            error.contains("r.yaml: cases.ticket.answer.matches: not a regular expression"),
            "{error}"
        );
        let unknown = "agent: mm.md\ncases:\n  - id: t\n    prompts: {en: Open it.}\n    expect: no_call\n    answer: {contain: [x]}\n";
        let error = load_text(dir.path(), "u.yaml", unknown).expect_err("unknown key");
        assert!(
            error.contains("u.yaml: cases[0].answer.contain: unknown field `contain`"),
            "{error}"
        );
    }

    /// Every suite of the repository's `eval/` folder loads, with its agent, and every case
    /// with a history has it for each of its languages.
    #[test]
    fn the_repository_suites_load() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../eval");
        let mut found = Vec::new();
        let mut folders = vec![root];
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(&folder).expect("eval/").flatten() {
                let path = entry.path();
                if path.is_dir() {
                    folders.push(path);
                } else if path.extension().is_some_and(|e| e == "yaml") {
                    found.push(path);
                }
            }
        }
        assert!(!found.is_empty());
        for path in found {
            let suite = load(&path).unwrap_or_else(|e| panic!("{e}"));
            let agent = path.parent().expect("folder").join(&suite.agent);
            let config = mm_core::load_agent(&agent).unwrap_or_else(|e| panic!("{e}"));
            assert!(!config.tools.is_empty(), "{}", agent.display());
        }
    }
}
