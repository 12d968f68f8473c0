//! The conversation history as the model sees it, independent of any
//! provider's wire format. Providers translate to and from these types.

use crate::ids::CallId;
use serde::{Deserialize, Serialize};

/// Who a message is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The harness's instructions (the system prompt).
    System,
    /// The user, or the harness speaking for them (a turn's message, a
    /// reminder, a compaction's context).
    User,
    /// The model: text and the tool calls it made.
    Assistant,
    /// The answer to one tool call.
    Tool,
}

/// A tool call the model asked for. `name` is whatever the model wrote, which
/// may not be a tool Cortex knows; `arguments` is the raw JSON text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallRequest {
    /// The provider's id for the call; its answer names it.
    pub id: CallId,
    /// The tool's name as the model wrote it.
    pub name: String,
    /// The arguments as the model wrote them (JSON text, maybe malformed).
    pub arguments: String,
}

/// One message of the history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// Who it is from.
    pub role: Role,
    /// Its text (a tool message: the tool's output).
    #[serde(default)]
    pub content: String,
    /// Assistant messages: the calls it made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallRequest>,
    /// Tool messages: which call this answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<CallId>,
    /// Assistant messages: opaque records a provider asked to get back
    /// verbatim with the rest of the history (Anthropic thinking blocks with
    /// their signatures, OpenAI Responses encrypted reasoning items). Only
    /// the provider that wrote an item reads it; the others skip it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub provider_items: Vec<ProviderItem>,
    /// Tool messages: what the tool returned besides text (an MCP server's
    /// images). `content` names each one (`[image 1: image/png]`); a
    /// provider whose wire format takes images sends them with the result,
    /// the others send [`Message::text_only_content`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
}

/// A non-text part of a message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Attachment {
    /// An image with its bytes (a tool's, or a user's once read back).
    Image {
        /// `image/png`, `image/jpeg`, …
        mime_type: String,
        /// The bytes, base64 (standard alphabet, padded).
        data: String,
    },
    /// An image the user attached, named by the store's key
    /// (`turn.images`): the session puts its bytes in before a request, so
    /// a provider only ever sees [`Attachment::Image`].
    Stored {
        /// `image/png`, `image/jpeg`, …
        mime_type: String,
        /// The sha256 of its bytes, the key of the store's blob.
        sha256: String,
    },
}

impl Attachment {
    /// A `data:` URL of the attachment (what OpenAI's formats take); `None`
    /// for one whose bytes are not here.
    pub fn data_url(&self) -> Option<String> {
        self.inline()
            .map(|(mime_type, data)| format!("data:{mime_type};base64,{data}"))
    }

    /// (mime type, base64 bytes) of an image whose bytes are here.
    pub fn inline(&self) -> Option<(&str, &str)> {
        match self {
            Attachment::Image { mime_type, data } => Some((mime_type, data)),
            Attachment::Stored { .. } => None,
        }
    }
}

/// An image a user attached to a turn, as the timeline names it: its bytes
/// are in the store once, under `sha256` (`turn.images`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageRef {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub mime_type: String,
    /// The sha256 of its bytes, lower-case hex.
    pub sha256: String,
    /// Its size in bytes.
    pub bytes: u64,
}

impl ImageRef {
    /// What clients show of a turn's images (`turn.images`): how many, and
    /// each one's type and size.
    pub fn line(images: &[ImageRef]) -> String {
        let each: Vec<String> = images
            .iter()
            .map(|i| {
                let kind = i.mime_type.strip_prefix("image/").unwrap_or(&i.mime_type);
                format!("{kind} {} KB", i.bytes.div_ceil(1024))
            })
            .collect();
        let count = match images.len() {
            1 => "1 image".to_owned(),
            n => format!("{n} images"),
        };
        format!("attached {count}: {}", each.join(", "))
    }

    /// The message attachment that names it.
    pub fn attachment(&self) -> Attachment {
        Attachment::Stored {
            mime_type: self.mime_type.clone(),
            sha256: self.sha256.clone(),
        }
    }
}

/// One opaque item of a provider, kept with an assistant message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderItem {
    /// Which wire format wrote it, e.g. `anthropic`, `openai-responses`.
    pub provider: String,
    /// The item exactly as the provider sent it.
    pub item: serde_json::Value,
}

impl Message {
    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::plain(Role::User, content)
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::plain(Role::System, content)
    }

    /// An assistant message with the calls it made (no provider items).
    pub fn assistant(content: impl Into<String>, tool_calls: Vec<ToolCallRequest>) -> Self {
        Message {
            role: Role::Assistant,
            content: content.into(),
            tool_calls,
            tool_call_id: None,
            provider_items: Vec::new(),
            attachments: Vec::new(),
        }
    }

    /// The answer to call `call_id`.
    pub fn tool(call_id: CallId, content: impl Into<String>) -> Self {
        Message {
            role: Role::Tool,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: Some(call_id),
            provider_items: Vec::new(),
            attachments: Vec::new(),
        }
    }

    /// A tool's answer with what it returned besides text.
    pub fn tool_with(
        call_id: CallId,
        content: impl Into<String>,
        attachments: Vec<Attachment>,
    ) -> Self {
        Message {
            attachments,
            ..Self::tool(call_id, content)
        }
    }

    /// The content for a model that cannot take attachments: the text, and
    /// a note saying the attachments it names are not shown (rather than
    /// letting the model guess at them).
    pub fn text_only_content(&self) -> std::borrow::Cow<'_, str> {
        match self.attachments.len() {
            0 => std::borrow::Cow::Borrowed(&self.content),
            n => std::borrow::Cow::Owned(format!(
                "{}\n(note: the {n} image(s) named above are not shown to you: this model is \
                 not given images)",
                self.content
            )),
        }
    }

    fn plain(role: Role, content: impl Into<String>) -> Self {
        Message {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            provider_items: Vec::new(),
            attachments: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attachments_are_noted_for_text_only_models_and_optional_on_the_wire() {
        let image = Attachment::Image {
            mime_type: "image/png".into(),
            data: "aGk=".into(),
        };
        assert_eq!(
            image.data_url().as_deref(),
            Some("data:image/png;base64,aGk=")
        );
        let plain = Message::tool(CallId::from("c"), "5");
        assert_eq!(plain.text_only_content(), "5");
        let with = Message::tool_with(CallId::from("c"), "[image 1: image/png]", vec![image]);
        let text = with.text_only_content();
        assert!(
            text.starts_with("[image 1: image/png]\n(note: the 1 image(s)"),
            "{text}"
        );
        // Stored messages without the field still read.
        let json = serde_json::to_value(&plain).expect("json");
        assert!(json.get("attachments").is_none());
        let back: Message = serde_json::from_value(json).expect("reads");
        assert_eq!(back, plain);
        let json = serde_json::to_value(&with).expect("json");
        assert_eq!(json["attachments"][0]["type"], "image");
    }
}
