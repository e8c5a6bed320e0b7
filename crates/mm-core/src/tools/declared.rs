//! Declared tools: one command of the agent file's `tools:` turned into a typed tool (SPEC §2).

use async_trait::async_trait;
use serde_json::{Map, Value};

use super::{Tool, ToolCtx, ToolKind, ToolOutput, ToolSpec};
use crate::args::Params;
use crate::config::DeclaredToolConfig;

/// A declared tool, ready to run.
pub struct DeclaredTool {
    config: DeclaredToolConfig,
    spec: ToolSpec,
}

impl DeclaredTool {
    pub fn new(config: DeclaredToolConfig) -> Self {
        let spec = ToolSpec {
            name: config.name.clone(),
            description: config.description.clone(),
            parameters: serde_json::json!({"type": "object", "properties": {}}),
        };
        Self { config, spec }
    }
}

#[async_trait]
impl Tool for DeclaredTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn params(&self) -> &Params {
        &self.config.params
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Declared
    }
    async fn run(&self, args: &Map<String, Value>, ctx: &ToolCtx) -> ToolOutput {
        let _ = (args, ctx);
        ToolOutput { content: "not implemented".into(), ..Default::default() }
    }
}
