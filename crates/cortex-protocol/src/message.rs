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
        }
    }

    fn plain(role: Role, content: impl Into<String>) -> Self {
        Message {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            provider_items: Vec::new(),
        }
    }
}
