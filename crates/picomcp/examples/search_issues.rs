//! `search_issues`: typed input with a bounded, defaulted `limit`, annotations, canned results.
//!
//! `cargo run -p picomcp --example search_issues -- --http 127.0.0.1:8002`

mod common;

use picomcp::{Ctx, Server, ToolConfig, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchInput {
    /// owner/name
    repo: String,
    /// Words to look for in titles and bodies.
    query: String,
    /// How many issues to return.
    #[serde(default = "default_limit")]
    #[schemars(range(max = 50))]
    limit: u32,
}

fn default_limit() -> u32 {
    10
}

const ISSUES: [(&str, u32); 5] = [
    ("Crash when the config file is empty", 101),
    ("Search ignores the limit parameter", 87),
    ("Timeout on large repositories", 64),
    ("Docs: explain the cache directory", 42),
    ("Panic on non-UTF-8 file names", 17),
];

fn search(input: &SearchInput) -> String {
    let hits: Vec<String> = ISSUES
        .iter()
        .cycle()
        .take(input.limit.min(ISSUES.len() as u32) as usize)
        .map(|(title, n)| format!("{title} — https://github.com/{}/issues/{n}", input.repo))
        .collect();
    if hits.is_empty() {
        return format!("No open issues match {:?} in {}.", input.query, input.repo);
    }
    hits.join("\n")
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut server = Server::new("search", env!("CARGO_PKG_VERSION"));
    server.tool(
        "search_issues",
        ToolConfig::new()
            .title("Search issues")
            .description(
                "Search open GitHub issues in a repository. Use it before filing a new issue.",
            )
            .read_only_hint(true)
            .open_world_hint(true),
        |input: SearchInput, _ctx: Ctx| async move { Ok::<_, ToolError>(search(&input)) },
    )?;
    common::run(server).await
}
