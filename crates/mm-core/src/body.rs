//! HTTP bodies read with a limit: a server (a model server, an MCP server) decides how much it
//! sends, so mm never reads a body whole without bounding it first.

/// A body read up to a limit.
pub(crate) struct Body {
    pub bytes: Vec<u8>,
    /// The body went on past the limit; `bytes` holds its first `limit` bytes.
    pub cut: bool,
}

/// Reads `response`'s body, keeping at most `limit` bytes; stops reading once past it.
pub(crate) async fn read(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<Body, reqwest::Error> {
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        let room = limit - bytes.len();
        if chunk.len() > room {
            bytes.extend_from_slice(&chunk[..room]);
            return Ok(Body { bytes, cut: true });
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(Body { bytes, cut: false })
}
