//! A tool result as the model reads it: the text blocks in order, embedded
//! text resources, links and structured content as text, images kept aside
//! as attachments (for providers that take them), and whether the server
//! called it an error.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

/// An image larger than this (base64 bytes) is described, not attached.
pub const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;

/// An image a tool returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpImage {
    /// e.g. `image/png`.
    pub mime_type: String,
    /// Base64, as the server sent it.
    pub data: String,
}

/// What one call gave back.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct McpOutput {
    /// The server said the call failed (`isError`); `text` says why.
    pub is_error: bool,
    /// The text parts, joined.
    pub text: String,
    /// The image parts.
    pub images: Vec<McpImage>,
    /// `structuredContent`, when the server sent it.
    pub structured: Option<serde_json::Value>,
}

impl McpOutput {
    pub(crate) fn from_result(result: CallToolResult) -> McpOutput {
        let mut parts: Vec<String> = Vec::new();
        let mut images = Vec::new();
        for block in result.content {
            match block {
                ContentBlock::Text(t) => parts.push(t.text),
                ContentBlock::Image(image) => {
                    let size = image.data.len();
                    if size <= MAX_IMAGE_BYTES && image.mime_type.starts_with("image/") {
                        parts.push(format!("[image {}: {}]", images.len() + 1, image.mime_type));
                        images.push(McpImage {
                            mime_type: image.mime_type,
                            data: image.data,
                        });
                    } else {
                        parts.push(format!(
                            "[image {} of {size} base64 bytes left out: over the {MAX_IMAGE_BYTES}-byte limit or not an image type]",
                            image.mime_type
                        ));
                    }
                }
                ContentBlock::Audio(audio) => {
                    parts.push(format!("[audio {} left out]", audio.mime_type));
                }
                ContentBlock::Resource(embedded) => match embedded.resource {
                    ResourceContents::TextResourceContents { uri, text, .. } => {
                        parts.push(format!("[resource {uri}]\n{text}"));
                    }
                    ResourceContents::BlobResourceContents { uri, mime_type, .. } => {
                        let mime = mime_type.unwrap_or_else(|| "binary".into());
                        parts.push(format!("[resource {uri}: {mime} data left out]"));
                    }
                    #[allow(unreachable_patterns)]
                    _ => parts.push("[resource of an unknown kind left out]".into()),
                },
                ContentBlock::ResourceLink(link) => {
                    let mut line = format!("[link {}: {}]", link.name, link.uri);
                    if let Some(description) = link.description {
                        line.push(' ');
                        line.push_str(&description);
                    }
                    parts.push(line);
                }
                #[allow(unreachable_patterns)]
                _ => parts.push("[content of an unknown kind left out]".into()),
            }
        }
        let structured = result.structured_content;
        // The spec asks servers to repeat structured content as text; when
        // one does not, the model still needs to see it.
        if let Some(value) = &structured
            && parts.iter().all(|p| p.trim().is_empty())
        {
            parts.push(value.to_string());
        }
        let is_error = result.is_error.unwrap_or(false);
        let mut text = parts.join("\n");
        if text.trim().is_empty() {
            text = if is_error {
                "the tool failed and said nothing more".to_owned()
            } else {
                "(no output)".to_owned()
            };
        }
        McpOutput {
            is_error,
            text,
            images,
            structured,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(value: serde_json::Value) -> CallToolResult {
        serde_json::from_value(value).expect("a CallToolResult")
    }

    #[test]
    fn text_images_resources_and_structure() {
        let out = McpOutput::from_result(result(json!({
            "content": [
                {"type": "text", "text": "first"},
                {"type": "image", "data": "aGk=", "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "file:///a", "text": "body"}},
                {"type": "resource_link", "uri": "file:///b", "name": "b"},
                {"type": "audio", "data": "aGk=", "mimeType": "audio/wav"}
            ],
            "structuredContent": {"n": 1}
        })));
        assert!(!out.is_error);
        assert_eq!(
            out.text,
            "first\n[image 1: image/png]\n[resource file:///a]\nbody\n[link b: file:///b]\n[audio audio/wav left out]"
        );
        assert_eq!(
            out.images,
            [McpImage {
                mime_type: "image/png".into(),
                data: "aGk=".into()
            }]
        );
        assert_eq!(out.structured, Some(json!({"n": 1})));
    }

    #[test]
    fn structured_only_and_errors_still_read() {
        let out = McpOutput::from_result(result(
            json!({"content": [], "structuredContent": {"result": 5}}),
        ));
        assert_eq!(out.text, r#"{"result":5}"#);
        let err = McpOutput::from_result(result(json!({"content": [], "isError": true})));
        assert!(err.is_error);
        assert!(err.text.contains("failed"));
    }
}
