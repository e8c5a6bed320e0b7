//! The folder an eval runs in: a copy of the agent's folder where every declared tool's program
//! is replaced by a recording wrapper (`mm eval-record`, which writes the argv it got to
//! `MM_EVAL_LOG`, then runs the real program), and one generated agent file per mode.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use mm_core::{AgentConfig, DeclaredToolConfig, ParamSpec, Presentation};

use super::variant::Variant;
use serde_json::{Map, Value, json};

/// Folders never copied (and the eval's own files).
const SKIPPED: &[&str] = &[".git", "target", "node_modules", ".mm-eval"];
/// The most bytes copied: an eval runs on a fixture, not a whole monorepo.
const MAX_COPY: u64 = 64 << 20;

/// The copy and what was generated in it.
pub struct Workspace {
    /// The copy of the agent's folder (removed when dropped).
    pub dir: tempfile::TempDir,
    /// The agent file for declared mode.
    pub declared: PathBuf,
    /// The agent file for skill mode.
    pub skill: PathBuf,
    /// What `mm serve` serves in MCP mode (the declared agent, as a server).
    pub serve: PathBuf,
    /// The agent files of declared mode for `--variants`, in their order.
    pub variants: Vec<PathBuf>,
    /// Folder of wrappers for programs outside the agent's folder, put first on PATH.
    pub bin: PathBuf,
    /// The names of the agent's tools and skills, in every mode (for the junk judge: a call
    /// to one of them written as text).
    pub names: Vec<String>,
    /// The names of the parameters of those tools (a call under an invented name still gives
    /// them).
    pub parameters: Vec<String>,
    config: AgentConfig,
    /// The declared tools with their programs replaced by the wrappers.
    tools: Vec<DeclaredToolConfig>,
}

impl Workspace {
    /// Copies the agent's folder and writes the wrappers and agent files. `mm` is this binary.
    /// `suite` is left out of the copy when it is in the agent's folder: the model must not be
    /// able to read the expected answers.
    pub fn prepare(
        config: &AgentConfig,
        agent_dir: &Path,
        mm: &Path,
        suite: &Path,
    ) -> Result<Self, String> {
        let dir = tempfile::Builder::new()
            .prefix("mm-eval-")
            .tempdir()
            .map_err(|e| format!("cannot make a folder for the eval: {e}"))?;
        let mut copied = 0;
        let suite = std::fs::canonicalize(suite).unwrap_or_else(|_| suite.to_path_buf());
        copy_tree(agent_dir, dir.path(), &suite, &mut copied)?;
        let eval_dir = dir.path().join(".mm-eval");
        let bin = eval_dir.join("bin");
        std::fs::create_dir_all(&bin).map_err(|e| e.to_string())?;

        // Each tool's program: the copy's own file becomes the wrapper when the program is in
        // the agent's folder (so `./scripts/x.sh` typed in bash is recorded too), else a
        // wrapper in `bin` named like the program.
        let mut tools = Vec::new();
        for tool in &config.tools {
            let real = resolve(&tool.program)?;
            let real = std::fs::canonicalize(&real).unwrap_or(real);
            let mut tool = tool.clone();
            let inside = real
                .strip_prefix(agent_dir)
                .ok()
                .map(|r| dir.path().join(r));
            match inside {
                // As written (`./scripts/x.sh`), resolved against the copy: the wrapper.
                Some(wrapper) => {
                    write_wrapper(&wrapper, mm, &real)?;
                    tool.program = wrapper;
                }
                None => {
                    let name = real
                        .file_name()
                        .map_or_else(|| tool.name.clone().into(), |n| n.to_owned());
                    let wrapper = bin.join(name);
                    write_wrapper(&wrapper, mm, &real)?;
                    if let Some(first) = tool.command.first_mut() {
                        *first = wrapper.display().to_string();
                    }
                    tool.program = wrapper;
                }
            }
            tools.push(tool);
        }

        let declared = dir.path().join(".mm-eval-declared.md");
        std::fs::write(
            &declared,
            agent_text(config, &Generated::Declared(&tools, config.presentation)),
        )
        .map_err(|e| e.to_string())?;
        let serve = declared.clone();
        let skills_dir = eval_dir.join("skills");
        for tool in &tools {
            let folder = skills_dir.join(&tool.name);
            std::fs::create_dir_all(&folder).map_err(|e| e.to_string())?;
            std::fs::write(folder.join("SKILL.md"), skill_text(tool)).map_err(|e| e.to_string())?;
        }
        let skill = dir.path().join(".mm-eval-skill.md");
        std::fs::write(&skill, agent_text(config, &Generated::Skill(&skills_dir)))
            .map_err(|e| e.to_string())?;
        let (names, parameters) = judged_names(config);
        Ok(Self {
            dir,
            declared,
            skill,
            serve,
            variants: Vec::new(),
            bin,
            names,
            parameters,
            config: config.clone(),
            tools,
        })
    }

    /// Writes the agent file of declared mode with the tools shown as `variant` says (the next
    /// of [`Self::variants`]), checked as mm will read it; its tool names join
    /// [`Self::names`].
    pub fn add_variant(&mut self, variant: &Variant) -> Result<(), String> {
        let (tools, presentation) = variant.apply(&self.tools, self.config.presentation)?;
        let index = self.variants.len();
        let path = self.dir.path().join(format!(".mm-eval-variant-{index}.md"));
        std::fs::write(
            &path,
            agent_text(&self.config, &Generated::Declared(&tools, presentation)),
        )
        .map_err(|e| e.to_string())?;
        mm_core::load_agent(&path).map_err(|e| format!("variant `{}`: {e}", variant.name))?;
        for tool in tools.iter() {
            if !self.names.contains(&tool.name) {
                self.names.push(tool.name.clone());
            }
            for param in &tool.params.params {
                if !self.parameters.contains(&param.name) {
                    self.parameters.push(param.name.clone());
                }
            }
        }
        self.variants.push(path);
        Ok(())
    }

    /// The agent file of an MCP-mode turn (`key` names it), whose server is at `url`.
    pub fn mcp_agent(&self, key: &str, url: &str) -> Result<PathBuf, String> {
        let path = self.dir.path().join(format!(".mm-eval/mcp-{key}.md"));
        std::fs::write(&path, agent_text(&self.config, &Generated::Mcp(url)))
            .map_err(|e| e.to_string())?;
        Ok(path)
    }

    /// The environment of every `mm` an eval starts: the run's log for the recording
    /// wrappers, the wrappers' folder first on `PATH`, none of the user's `MM_*` settings, and
    /// sessions (`XDG_DATA_HOME`, docs/sessions.md) and logs (`XDG_STATE_HOME`) inside the
    /// eval's folder, never among the user's own.
    pub fn environment(&self, log: &Path) -> (Vec<(OsString, OsString)>, Vec<OsString>) {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut paths = vec![self.bin.clone()];
        paths.extend(std::env::split_paths(&path));
        let own = self.dir.path().join(".mm-eval");
        let set = vec![
            ("MM_EVAL_LOG".into(), log.into()),
            ("PATH".into(), std::env::join_paths(paths).unwrap_or(path)),
            ("XDG_DATA_HOME".into(), own.join("data").into()),
            ("XDG_STATE_HOME".into(), own.join("state").into()),
        ];
        let removed = ["MM_AGENT", "MM_MODEL", "MM_BASE_URL"]
            .map(OsString::from)
            .to_vec();
        (set, removed)
    }
}

/// The names of the agent's declared tools, its built-ins, its skills, and the built-ins of
/// skill mode; and the names of those tools' parameters.
fn judged_names(config: &AgentConfig) -> (Vec<String>, Vec<String>) {
    let (catalogue, _) = mm_core::skills::load(&config.skills);
    let mut names: Vec<String> = config.tools.iter().map(|t| t.name.clone()).collect();
    names.extend(catalogue.names().into_iter().map(str::to_string));
    let registry = mm_core::Registry::from_config(config, &std::sync::Arc::new(catalogue));
    names.extend(registry.iter().map(|t| t.spec().name.clone()));
    names.extend(["bash".to_string(), "read_skill".to_string()]);
    let mut unique = Vec::new();
    for name in names {
        if !unique.contains(&name) {
            unique.push(name);
        }
    }
    (unique, registry.parameter_names())
}

/// The program as an absolute path: a bare name is looked up on PATH now, before the wrappers'
/// folder is put first on it (a wrapper must not find itself).
fn resolve(program: &Path) -> Result<PathBuf, String> {
    if program.components().count() > 1 || program.is_absolute() {
        return Ok(program.to_path_buf());
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| format!("{}: not found on PATH", program.display()))
}

fn write_wrapper(path: &Path, mm: &Path, program: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let quote = |p: &Path| format!("'{}'", p.display().to_string().replace('\'', r"'\''"));
    let text = format!(
        "#!/bin/sh\n# Written by mm eval: records the call, then runs the real program.\nexec {} eval-record {} \"$@\"\n",
        quote(mm),
        quote(program)
    );
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
    }
    let _ = std::fs::remove_file(path);
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("{}: {e}", path.display()))
}

fn copy_tree(from: &Path, to: &Path, skip: &Path, copied: &mut u64) -> Result<(), String> {
    let entries = std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        if SKIPPED.iter().any(|s| name == *s) {
            continue;
        }
        let source = entry.path();
        if source == skip {
            continue;
        }
        let target = to.join(&name);
        let kind = entry.file_type().map_err(|e| e.to_string())?;
        if kind.is_dir() {
            std::fs::create_dir_all(&target).map_err(|e| e.to_string())?;
            copy_tree(&source, &target, skip, copied)?;
        } else if kind.is_file() {
            *copied += std::fs::copy(&source, &target)
                .map_err(|e| format!("cannot copy {}: {e}", source.display()))?;
            if *copied > MAX_COPY {
                return Err(format!(
                    "the agent's folder {} holds more than {} MiB; run the eval on a smaller fixture",
                    from.display(),
                    MAX_COPY >> 20
                ));
            }
        } else if kind.is_symlink() {
            if let Ok(link) = std::fs::read_link(&source) {
                let _ = std::os::unix::fs::symlink(link, &target);
            }
        }
    }
    Ok(())
}

/// An agent file for `mode`, its front matter written as JSON (which is YAML): the agent's
/// model settings, limits and instructions; the declared `tools` (declared mode), or no tools
/// and the generated skills with `bash` and `read_skill` (skill mode), or an MCP server (MCP
/// mode, [`Workspace::mcp_agent`]). Hooks and the agent's own MCP servers are
/// left out: an eval measures the model with the tools.
enum Generated<'a> {
    Declared(&'a [DeclaredToolConfig], Presentation),
    Skill(&'a Path),
    Mcp(&'a str),
}

fn agent_text(config: &AgentConfig, mode: &Generated<'_>) -> String {
    let mut front = Map::new();
    front.insert("model".into(), config.model.clone().into());
    front.insert("base_url".into(), config.base_url.clone().into());
    if let Some(var) = &config.api_key_env {
        front.insert("api_key_env".into(), var.clone().into());
    }
    let calls = match config.tool_calls {
        mm_core::ToolCallMode::Native => "native",
        mm_core::ToolCallMode::Constrained => "constrained",
        mm_core::ToolCallMode::Auto => "auto",
    };
    front.insert("tool_calls".into(), calls.into());
    front.insert("yolo".into(), true.into());
    let limits = &config.limits;
    front.insert(
        "limits".into(),
        json!({
            "max_turns": limits.max_turns,
            "max_output": limits.max_output,
            "loop": limits.loop_threshold,
            "max_tokens": limits.max_tokens,
            "reply_timeout": format!("{}ms", limits.reply_timeout.as_millis().max(1)),
        }),
    );
    match mode {
        Generated::Declared(tools, presentation) => {
            front.insert(
                "presentation".into(),
                json!({
                    "closing_sentence": presentation.closing_sentence,
                    "schema": presentation.schema.as_str(),
                }),
            );
            if let Some(builtins) = &config.builtins {
                front.insert("builtins".into(), json!(builtins));
            }
            if !config.skills.is_empty() {
                front.insert("skills".into(), json!(config.skills));
            }
            let mut map = Map::new();
            for tool in *tools {
                map.insert(tool.name.clone(), tool_json(tool));
            }
            front.insert("tools".into(), Value::Object(map));
        }
        Generated::Skill(skills) => {
            front.insert("builtins".into(), json!(["bash", "read_skill"]));
            front.insert("skills".into(), json!([skills]));
        }
        Generated::Mcp(url) => {
            if let Some(builtins) = &config.builtins {
                front.insert("builtins".into(), json!(builtins));
            }
            // The server's tools keep their declared names: the comparison is of the protocol.
            front.insert("mcp".into(), json!({"eval": {"url": url, "prefix": ""}}));
        }
    }
    let front = Value::Object(front).to_string();
    format!("---\n{front}\n---\n{}\n", config.instructions.trim())
}

fn tool_json(tool: &DeclaredToolConfig) -> Value {
    let mut parameters = Map::new();
    for p in &tool.params.params {
        parameters.insert(p.name.clone(), param_json(p));
    }
    json!({
        "description": tool.description,
        "parameters": parameters,
        "command": tool.command,
        "timeout": format!("{}ms", tool.timeout.as_millis().max(1)),
    })
}

fn param_json(p: &ParamSpec) -> Value {
    let mut out = Map::new();
    out.insert("type".into(), p.ty.json_name().unwrap_or("string").into());
    if let Some(d) = &p.description {
        out.insert("description".into(), d.clone().into());
    }
    out.insert("required".into(), p.required.into());
    if let Some(values) = &p.enum_values {
        out.insert("enum".into(), Value::Array(values.clone()));
    }
    if let Some(default) = &p.default {
        out.insert("default".into(), default.clone());
    }
    Value::Object(out)
}

/// The skill generated for a tool: its description, and the command to run with `bash`, each
/// placeholder shown as `<name>` and each entry of an optional parameter in brackets.
fn skill_text(tool: &DeclaredToolConfig) -> String {
    let mut line = vec![tool.command.first().cloned().unwrap_or_default()];
    for entry in tool.command.iter().skip(1) {
        let mut shown = entry.clone();
        let mut optional = false;
        for p in &tool.params.params {
            let placeholder = format!("{{{{{}}}}}", p.name);
            if shown.contains(&placeholder) {
                shown = shown.replace(&placeholder, &format!("<{}>", p.name));
                optional |= !p.required || p.default.is_some();
            }
        }
        line.push(if optional {
            format!("[{shown}]")
        } else {
            shown
        });
    }
    let mut text = format!(
        "---\nname: {}\ndescription: {}\n---\nRun this command with the bash tool, from the project folder:\n\n    {}\n\n",
        tool.name,
        serde_json::to_string(&tool.description).unwrap_or_default(),
        line.join(" ")
    );
    for p in &tool.params.params {
        let mut facts = vec![p.ty.json_name().unwrap_or("any").to_string()];
        if !p.required || p.default.is_some() {
            facts.push("optional: leave out its bracketed part".into());
        }
        if let Some(values) = &p.enum_values {
            let values: Vec<String> = values.iter().map(mm_core::render_value).collect();
            facts.push(format!("one of: {}", values.join(", ")));
        }
        text.push_str(&format!(
            "- `<{}>` ({}): {}\n",
            p.name,
            facts.join("; "),
            p.description.as_deref().unwrap_or("")
        ));
    }
    text
}
