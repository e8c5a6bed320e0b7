//! Loading an agent file (SPEC §1): Markdown with YAML front matter, or plain YAML.
//!
//! Every error names the file, the line and the key:
//! `ops.md:14: tools.release.command[0]: the program may not contain a placeholder`.
//!
//! Layers: [`crate::yaml`] (shared with skills' front matter) turns saphyr's marked tree into a small tree that knows the line of every
//! key and value; [`decode`] walks it, checking each mapping's keys as it goes (so the first
//! problem in file order is the one reported), into the resolved [`AgentConfig`]. Walking the
//! tree by hand rather than through serde keeps key order, exact lines and the wording of every
//! message in one place. The full reference is `docs/agent-file.md`.

mod decode;
mod extras;
mod read;
mod tools;

pub use crate::yaml::to_json as yaml_to_json;

#[cfg(test)]
mod tests;

use std::path::Path;

use crate::config::AgentConfig;
use crate::front_matter::{FrontMatter, split_front_matter};

/// Front matter larger than this is refused: an agent file is a page of configuration, and
/// the bound keeps nesting (hence recursion while walking the tree) shallow.
const MAX_YAML_BYTES: usize = 1 << 20;

pub use crate::diagnostic::AgentFileError;

/// Reads and checks the agent file at `path`.
pub fn load_agent(path: &Path) -> Result<AgentConfig, AgentFileError> {
    let text = std::fs::read_to_string(path).map_err(|e| AgentFileError {
        file: path.display().to_string(),
        line: 0,
        key: String::new(),
        message: format!("cannot read the agent file: {e}"),
    })?;
    parse_agent(path, &text)
}

/// Parses agent-file `text` as if read from `path`: a `.yaml`/`.yml` extension (any case) means
/// plain YAML, anything else Markdown. Relative paths in the file (programs, skills) resolve
/// against the folder of `path`, made absolute from the current directory when relative.
pub fn parse_agent(path: &Path, text: &str) -> Result<AgentConfig, AgentFileError> {
    let (config, mut unsupported) = parse_shape(path, text)?;
    if !unsupported.is_empty() {
        return Err(unsupported.remove(0));
    }
    Ok(config)
}

/// Parses and checks everything, and returns apart the uses of what is not built yet (the
/// reserved built-ins `web_fetch` and `todo`).
fn parse_shape(
    path: &Path,
    text: &str,
) -> Result<(AgentConfig, Vec<AgentFileError>), AgentFileError> {
    let file = path.display().to_string();
    let fail = |line: usize, message: String| AgentFileError {
        file: file.clone(),
        line,
        key: String::new(),
        message,
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let is_yaml = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"));
    let (front, first_line, body) = if is_yaml {
        (Some(text), 1, None)
    } else {
        match split_front_matter(text) {
            FrontMatter::Absent => (None, 1, Some(text)),
            FrontMatter::Closed { yaml, body, .. } => (Some(yaml), 2, Some(body)),
            FrontMatter::Unclosed => {
                return Err(fail(
                    1,
                    "the front matter opened here is not closed: end it with a line `---`".into(),
                ));
            }
        }
    };
    let root = match front {
        Some(yaml) if yaml.len() > MAX_YAML_BYTES => {
            return Err(fail(
                first_line,
                format!(
                    "the YAML is too large ({} bytes; at most {MAX_YAML_BYTES})",
                    yaml.len()
                ),
            ));
        }
        Some(yaml) => crate::yaml::parse(yaml, first_line).map_err(|e| fail(e.line, e.message))?,
        None => None,
    };
    let mut cx = read::Cx::new(file.clone(), path);
    let config = decode::agent(&mut cx, root.as_ref(), body)?;
    let config = AgentConfig {
        path: Some(path.to_path_buf()),
        ..config
    };
    Ok((config, cx.unsupported))
}
