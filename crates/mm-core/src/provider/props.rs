//! llama-server's `GET /props`: what the server says about itself, and when mm asks.
//!
//! It is asked only when the reply's shape depends on it, once per [`Provider`](super::Provider):
//!
//! - `auto` mode, a request with tools: `chat_template_caps.supports_tool_calls: false` picks
//!   constrained mode, anything else (no endpoint, no field, `true`) native mode;
//! - `constrained` mode, a request with tools: a server whose `/props` looks like llama-server's
//!   gets the compact GBNF `grammar` instead of `response_format` (see `gbnf`).
//!
//! Never in `native` mode, nor for a request without tools (it is a plain request in every mode).
//! `n_ctx` is taken from it when it was read for one of those reasons, and never fetched on its
//! own: llama-server's context-overflow error carries both numbers already.

use std::time::Duration;

use super::wire::Props;
use super::{ChatRequest, ProviderConfig};
use crate::config::ToolCallMode;

/// Longest wait for `GET /props`.
const PROPS_TIMEOUT: Duration = Duration::from_secs(10);

/// What the server says about itself (all empty when it was not asked or has no `/props`).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ServerInfo {
    /// `chat_template_caps.supports_tool_calls`.
    pub template_tools: Option<bool>,
    /// `default_generation_settings.n_ctx`.
    pub n_ctx: Option<u64>,
    /// `/props` looks like llama-server's: its `grammar` field can be used.
    pub llama_server: bool,
}

/// Whether this request's body depends on `/props` (see the module's overview).
pub(crate) fn needed(mode: ToolCallMode, request: &ChatRequest<'_>) -> bool {
    match mode {
        // An answer step and a repair step get a grammar when the server is llama-server.
        ToolCallMode::Native => request.answer_only || request.call_only,
        ToolCallMode::Auto | ToolCallMode::Constrained => {
            !request.tools.is_empty() || request.answer_only
        }
    }
}

/// llama-server's `/props` lives beside `/v1`, not under it.
fn url(base_url: &str) -> String {
    let base = base_url.trim_end_matches('/');
    format!("{}/props", base.strip_suffix("/v1").unwrap_or(base))
}

/// One `GET /props`. `Err` when the server could not be reached (ask again later); a server
/// without the endpoint, or with one that is not llama-server's, is `Ok` and empty.
pub(crate) async fn read(
    http: &reqwest::Client,
    config: &ProviderConfig,
) -> Result<ServerInfo, ()> {
    let mut builder = http.get(url(&config.base_url));
    if let Some(key) = config.api_key.as_deref().filter(|k| !k.is_empty()) {
        builder = builder.bearer_auth(key);
    }
    let limit = PROPS_TIMEOUT.min(config.timeout);
    let response = match tokio::time::timeout(limit, builder.send()).await {
        Ok(Ok(response)) => response,
        Ok(Err(_)) | Err(_) => return Err(()),
    };
    if !response.status().is_success() {
        return Ok(ServerInfo::default());
    }
    let text = tokio::time::timeout(limit, response.text())
        .await
        .map_err(|_| ())?
        .map_err(|_| ())?;
    let props: Props = serde_json::from_str(&text).unwrap_or_default();
    let info = ServerInfo {
        llama_server: props.default_generation_settings.is_some()
            || props.chat_template_caps.is_some(),
        template_tools: props
            .chat_template_caps
            .as_ref()
            .and_then(|caps| caps.supports_tool_calls),
        n_ctx: props.n_ctx(),
    };
    tracing::debug!(?info, "read the server's /props");
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_is_beside_v1() {
        assert_eq!(url("http://h:8080/v1"), "http://h:8080/props");
        assert_eq!(url("http://h:8080/v1/"), "http://h:8080/props");
        assert_eq!(url("http://h:8080"), "http://h:8080/props");
    }

    #[test]
    fn only_auto_and_constrained_requests_with_tools_need_it() {
        let tools = [crate::tools::ToolSpec {
            name: "t".into(),
            description: String::new(),
            parameters: serde_json::json!({"type": "object"}),
        }];
        let with = ChatRequest::new(&[], &tools, 1);
        let without = ChatRequest::new(&[], &[], 1);
        assert!(!needed(ToolCallMode::Native, &with));
        assert!(needed(ToolCallMode::Auto, &with));
        assert!(needed(ToolCallMode::Constrained, &with));
        for mode in [
            ToolCallMode::Native,
            ToolCallMode::Auto,
            ToolCallMode::Constrained,
        ] {
            assert!(!needed(mode, &without), "{mode:?}");
        }
    }
}
