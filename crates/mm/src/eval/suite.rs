//! An `mm eval` suite file (docs/eval.md): which agent, which cases, how many runs, which
//! modes and models.

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
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
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

/// One case: a prompt per language and what must happen.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub id: String,
    /// Language code → prompt, in the order written.
    pub prompts: indexmap_like::Ordered,
    pub expect: Expect,
}

/// A suite file.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    /// The agent file, relative to the suite file.
    pub agent: PathBuf,
    #[serde(default = "default_runs")]
    pub runs: u32,
    #[serde(default = "default_modes")]
    pub modes: Vec<Mode>,
    #[serde(default)]
    pub models: Vec<Model>,
    pub cases: Vec<Case>,
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

/// Reads a suite; errors name the file and, for a wrong key or value, its path in the file.
pub fn load(path: &Path) -> Result<Suite, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read the suite: {e}", path.display()))?;
    let value = mm_core::yaml_to_json(&text).map_err(|e| format!("{}:{e}", path.display()))?;
    let suite: Suite = serde_path_to_error::deserialize(value).map_err(|e| {
        let at = e.path().to_string();
        let at = if at == "." {
            String::new()
        } else {
            format!(" {at}:")
        };
        format!("{}:{at} {}", path.display(), e.inner())
    })?;
    if suite.cases.is_empty() {
        return Err(format!("{}: cases: no cases", path.display()));
    }
    if suite.runs == 0 {
        return Err(format!("{}: runs: must be at least 1", path.display()));
    }
    for case in &suite.cases {
        if case.prompts.iter().next().is_none() {
            return Err(format!(
                "{}: cases.{}.prompts: give at least one `language: prompt`",
                path.display(),
                case.id
            ));
        }
    }
    Ok(suite)
}
