//! The `bash` built-in: a command line run by `bash -c`, with the same process rules as declared
//! tools.

use async_trait::async_trait;
use serde_json::{Map, Value};

use super::{Tool, ToolCtx, ToolKind, ToolOutput, ToolSpec};
use crate::args::Params;

pub struct BashTool {
    spec: ToolSpec,
    params: Params,
}

impl BashTool {
    pub fn new() -> Self {
        Self {
            spec: ToolSpec {
                name: "bash".into(),
                description: "Run a bash command line.".into(),
                parameters: serde_json::json!({"type": "object", "properties": {}}),
            },
            params: Params::default(),
        }
    }
}

impl Default for BashTool {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl Tool for BashTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn params(&self) -> &Params {
        &self.params
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Builtin
    }
    async fn run(&self, args: &Map<String, Value>, ctx: &ToolCtx) -> ToolOutput {
        let _ = (args, ctx);
        ToolOutput { content: "not implemented".into(), ..Default::default() }
    }
}
