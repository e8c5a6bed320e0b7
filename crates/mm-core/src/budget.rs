//! The size of the first request, and what made it so: a small model pays for every byte of
//! the system prompt and the tools on every request, and a server, a skill or a tool list can
//! make them large without anyone noticing (20,000 MCP tools once made a 4.6 MB request). The
//! binary warns at start-up when the first request would pass [`FIRST_REQUEST_BUDGET`].

use std::collections::HashMap;

use crate::mcp::McpServer;
use crate::registry::Registry;
use crate::tools::{Tool as _, ToolKind};

/// The size past which start-up warns. examples/ops with every built-in is under 3 KB; 16 KB
/// leaves room for a few MCP servers while still catching a server or skill that blows up
/// every request.
pub const FIRST_REQUEST_BUDGET: usize = 16 * 1024;

/// What the request's envelope adds (model, `max_tokens`, `stream`, roles, the user's
/// prompt's framing), roughly: a few hundred bytes.
const ENVELOPE: usize = 200;

/// One part of the first request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// What it is: `the instructions`, `the skills catalogue (3 skills)`, `12 built-in tools`,
    /// `MCP server gh (92 tools)`.
    pub what: String,
    pub bytes: usize,
}

/// The first request's size (about: without the user's prompt) and its parts, largest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cost {
    pub bytes: usize,
    pub parts: Vec<Part>,
}

impl Cost {
    /// What a budget warning says: the size, and the parts that made it, largest first.
    pub fn over_budget(&self) -> Option<String> {
        if self.bytes <= FIRST_REQUEST_BUDGET {
            return None;
        }
        let parts: Vec<String> = self
            .parts
            .iter()
            .filter(|p| p.bytes > 0)
            .map(|p| format!("{} {}", p.what, kb(p.bytes)))
            .collect();
        Some(format!(
            "the first request is about {}, over the {} budget a small model can afford: {}",
            kb(self.bytes),
            kb(FIRST_REQUEST_BUDGET),
            parts.join(", ")
        ))
    }
}

/// The cost of a first request with `system` as the system prompt (`catalogue`: the skills
/// catalogue it ends with, `skills` of them) and the tools of `registry` (those of `mcp`
/// counted per server), each as it is sent.
pub fn first_request(
    system: &str,
    catalogue: &str,
    skills: usize,
    registry: &Registry,
    mcp: &[McpServer],
) -> Cost {
    let json_len = |text: &str| serde_json::Value::from(text).to_string().len();
    let mut parts = vec![
        Part {
            what: "the instructions".into(),
            bytes: json_len(system).saturating_sub(json_len(catalogue)),
        },
        Part {
            what: format!("the skills catalogue ({skills} skills)"),
            bytes: json_len(catalogue).saturating_sub(2),
        },
    ];
    let server_of: HashMap<&str, &str> = mcp
        .iter()
        .flat_map(|s| {
            s.tools
                .iter()
                .map(move |t| (t.spec().name.as_str(), s.name.as_str()))
        })
        .collect();
    let mut groups: Vec<(String, usize, usize)> = Vec::new();
    for tool in registry.iter() {
        let spec = tool.spec();
        let sent = serde_json::json!({"type": "function", "function": spec})
            .to_string()
            .len()
            + 1;
        let group = match (tool.kind(), server_of.get(spec.name.as_str())) {
            (ToolKind::Mcp, Some(server)) => format!("MCP server {server}"),
            (ToolKind::Mcp, None) => "MCP".to_string(),
            (ToolKind::Declared, _) => "declared".to_string(),
            _ => "built-in".to_string(),
        };
        match groups.iter_mut().find(|(name, ..)| *name == group) {
            Some((_, count, bytes)) => {
                *count += 1;
                *bytes += sent;
            }
            None => groups.push((group, 1, sent)),
        }
    }
    for (group, count, bytes) in groups {
        let what = if group.starts_with("MCP server") {
            format!("{group} ({count} tools)")
        } else {
            format!("{count} {group} tools")
        };
        parts.push(Part { what, bytes });
    }
    let bytes = ENVELOPE + parts.iter().map(|p| p.bytes).sum::<usize>();
    parts.sort_by_key(|p| std::cmp::Reverse(p.bytes));
    Cost { bytes, parts }
}

/// `2.9 KiB`, `4.4 MiB`.
fn kb(bytes: usize) -> String {
    let bytes = bytes as f64;
    if bytes >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", bytes / (1024.0 * 1024.0))
    } else {
        format!("{:.1} KiB", bytes / 1024.0)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::config::AgentConfig;
    use crate::skills::Catalogue;

    #[test]
    fn the_default_agent_is_within_budget_and_a_huge_prompt_is_named() {
        let registry =
            Registry::from_config(&AgentConfig::default(), &Arc::new(Catalogue::default()));
        let cost = first_request("Be brief.", "", 0, &registry, &[]);
        assert!(cost.bytes < 3000, "{cost:?}");
        assert_eq!(cost.over_budget(), None);
        let huge = "x".repeat(40_000);
        let cost = first_request(&huge, "", 0, &registry, &[]);
        let warning = cost.over_budget().unwrap_or_default();
        assert!(
            warning.starts_with("the first request is about 4"),
            "{warning}"
        );
        assert!(
            warning.contains(
                "over the 16.0 KiB budget a small model can afford: the instructions 39.1 KiB, "
            ),
            "{warning}"
        );
    }

    #[test]
    fn corpus_whatever_makes_the_first_request_big_is_named() {
        use crate::tools::{Outcome, Tool, ToolCtx, ToolSpec};
        use crate::{Output, Params};
        /// A tool of a given size and kind.
        struct Sized(ToolSpec, Params, ToolKind);
        #[async_trait::async_trait]
        impl Tool for Sized {
            fn spec(&self) -> &ToolSpec {
                &self.0
            }
            fn params(&self) -> &Params {
                &self.1
            }
            fn kind(&self) -> ToolKind {
                self.2
            }
            async fn run(
                &self,
                _: &crate::args::ValidArgs,
                _: &ToolCtx,
                _: &mut Output,
            ) -> Outcome {
                Outcome::Success
            }
        }
        let tool = |n: usize, kind: ToolKind, description: usize| -> Arc<dyn Tool> {
            Arc::new(Sized(
                ToolSpec {
                    name: format!("t{n}"),
                    description: "d".repeat(description),
                    parameters: serde_json::json!({"type": "object", "properties": {}}),
                },
                Params {
                    params: Vec::new(),
                    deny_unknown: false,
                },
                kind,
            ))
        };
        let mut corpus =
            mm_test_support::Corpus::new("first-request budget (what made it big is named)");
        let cases: Vec<(&str, usize, ToolKind, usize, &str)> = vec![
            (
                "20000 small MCP tools",
                20_000,
                ToolKind::Mcp,
                10,
                "20000 MCP tools",
            ),
            (
                "200 declared tools",
                200,
                ToolKind::Declared,
                100,
                "200 declared tools",
            ),
            (
                "one huge MCP tool",
                1,
                ToolKind::Mcp,
                100_000,
                "1 MCP tools",
            ),
            (
                "one huge declared tool",
                1,
                ToolKind::Declared,
                20_000,
                "1 declared tools",
            ),
        ];
        for (what, count, kind, description, named) in cases {
            let mut registry = Registry::new();
            for n in 0..count {
                registry.add(tool(n, kind, description));
            }
            let warning = first_request("Be brief.", "", 0, &registry, &[])
                .over_budget()
                .unwrap_or_default();
            let first_named = warning.split(": ").nth(1).unwrap_or_default();
            corpus.check(what, first_named.starts_with(named), || warning.clone());
        }
        let registry = Registry::new();
        for (what, system, catalogue) in [
            ("a long instructions", "x".repeat(20_000), String::new()),
            (
                "a long skills catalogue",
                format!("Hi.{}", "s".repeat(30_000)),
                "s".repeat(30_000),
            ),
        ] {
            let warning = first_request(&system, &catalogue, 3, &registry, &[])
                .over_budget()
                .unwrap_or_default();
            let named = if catalogue.is_empty() {
                "the instructions"
            } else {
                "the skills catalogue (3 skills)"
            };
            let first_named = warning.split(": ").nth(1).unwrap_or_default();
            corpus.check(what, first_named.starts_with(named), || warning.clone());
        }
        let under = first_request("Be brief.", "", 0, &Registry::new(), &[]);
        corpus.check("a small agent", under.over_budget().is_none(), || {
            format!("{under:?}")
        });
        corpus.finish();
    }
}
