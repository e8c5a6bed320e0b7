//! Content blocks (text, image, audio, resource links, embedded resources) and their helpers.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One content block of a tool result or a prompt message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Content {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// A base64-encoded image.
    Image {
        /// Base64 data.
        data: String,
        /// For example `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// Base64-encoded audio.
    Audio {
        /// Base64 data.
        data: String,
        /// For example `audio/wav`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A link to a resource the client may read.
    ResourceLink(ResourceLink),
    /// A resource embedded in the result.
    Resource {
        /// The resource contents.
        resource: ResourceContents,
    },
}

/// A link to a resource (`resource_link` content block). Build it with [`resource_link`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceLink {
    /// The resource URI.
    pub uri: String,
    /// A short name.
    pub name: String,
    /// A display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resource holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

impl ResourceLink {
    /// Sets the MIME type.
    #[must_use]
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Sets the description.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the display title.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the size in bytes.
    #[must_use]
    pub fn size(mut self, size: u64) -> Self {
        self.size = Some(size);
        self
    }
}

impl From<ResourceLink> for Content {
    fn from(link: ResourceLink) -> Self {
        Content::ResourceLink(link)
    }
}

/// The contents of a resource: text or a base64 blob.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceContents {
    /// The resource URI.
    pub uri: String,
    /// Its MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Text contents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Base64 contents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
    /// Extra metadata.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

impl ResourceContents {
    /// Text contents.
    pub fn text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Self {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            text: Some(text.into()),
            blob: None,
            meta: None,
        }
    }

    /// Binary contents (bytes are base64-encoded; a `&str` is taken as base64 already).
    pub fn blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        data: impl Into<Base64>,
    ) -> Self {
        Self {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            text: None,
            blob: Some(data.into().0),
            meta: None,
        }
    }
}

/// Base64 data for [`image`], [`audio`] and [`ResourceContents::blob`]: bytes are encoded,
/// strings are taken as base64 already.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Base64(pub String);

impl From<Vec<u8>> for Base64 {
    fn from(bytes: Vec<u8>) -> Self {
        Base64(encode_base64(&bytes))
    }
}

impl From<&[u8]> for Base64 {
    fn from(bytes: &[u8]) -> Self {
        Base64(encode_base64(bytes))
    }
}

impl<const N: usize> From<&[u8; N]> for Base64 {
    fn from(bytes: &[u8; N]) -> Self {
        Base64(encode_base64(bytes))
    }
}

impl From<bytes::Bytes> for Base64 {
    fn from(bytes: bytes::Bytes) -> Self {
        Base64(encode_base64(&bytes))
    }
}

impl From<&str> for Base64 {
    fn from(b64: &str) -> Self {
        Base64(b64.to_string())
    }
}

impl From<String> for Base64 {
    fn from(b64: String) -> Self {
        Base64(b64)
    }
}

/// Standard base64 with padding.
pub(crate) fn encode_base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let sextet = |shift: u32| char::from(ALPHABET[((n >> shift) & 63) as usize]);
        out.push(sextet(18));
        out.push(sextet(12));
        out.push(if chunk.len() > 1 { sextet(6) } else { '=' });
        out.push(if chunk.len() > 2 { sextet(0) } else { '=' });
    }
    out
}

/// A text block.
pub fn text(text: impl Into<String>) -> Content {
    Content::Text { text: text.into() }
}

/// An image block; `data` is bytes (encoded for you) or a base64 string.
pub fn image(data: impl Into<Base64>, mime_type: impl Into<String>) -> Content {
    Content::Image {
        data: data.into().0,
        mime_type: mime_type.into(),
    }
}

/// An audio block; `data` is bytes (encoded for you) or a base64 string.
pub fn audio(data: impl Into<Base64>, mime_type: impl Into<String>) -> Content {
    Content::Audio {
        data: data.into().0,
        mime_type: mime_type.into(),
    }
}

/// A resource link; add details with the builder methods of [`ResourceLink`].
pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> ResourceLink {
    ResourceLink {
        uri: uri.into(),
        name: name.into(),
        title: None,
        description: None,
        mime_type: None,
        size: None,
    }
}

/// An embedded resource block.
pub fn embedded(resource: ResourceContents) -> Content {
    Content::Resource { resource }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648_vectors() {
        for (input, want) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(encode_base64(input.as_bytes()), want);
        }
    }

    #[test]
    fn blocks_serialize_as_mcp_expects() {
        let v = serde_json::to_value(image(vec![1u8, 2, 3], "image/png")).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"type":"image","data":"AQID","mimeType":"image/png"})
        );
        let v = serde_json::to_value(Content::from(
            resource_link("file:///a.csv", "a.csv").mime_type("text/csv"),
        ))
        .unwrap();
        assert_eq!(
            v,
            serde_json::json!({"type":"resource_link","uri":"file:///a.csv","name":"a.csv","mimeType":"text/csv"})
        );
        let v = serde_json::to_value(audio("AAAA", "audio/wav")).unwrap();
        assert_eq!(v["data"], "AAAA");
    }
}
