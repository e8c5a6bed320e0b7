//! client

use tokio_util::sync::CancellationToken;

use super::{ChatRequest, ChatResponse, ProviderConfig, ProviderError, StreamDelta};

/// A connection to one OpenAI-compatible server.
pub struct Provider {
    config: ProviderConfig,
}

impl Provider {
    pub fn new(config: ProviderConfig) -> Result<Self, ProviderError> {
        Ok(Self { config })
    }

    pub fn config(&self) -> &ProviderConfig {
        &self.config
    }

    /// Sends the conversation and returns the complete reply; `on_delta` sees it stream in.
    pub async fn chat(
        &self,
        request: &ChatRequest<'_>,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
        cancel: &CancellationToken,
    ) -> Result<ChatResponse, ProviderError> {
        let _ = (request, on_delta, cancel);
        Err(ProviderError::BadReply("not implemented".into()))
    }
}
