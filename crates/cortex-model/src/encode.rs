//! The exact body each wire format would send for a request, without
//! sending it: for measuring request sizes (docs/BENCHMARKS.md) and for
//! debugging what a provider sees.

use crate::{ModelError, ModelRequest};

/// A wire format, with its default options (Anthropic: caching on,
/// thinking off, `max_tokens` 8192).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireFormat {
    /// OpenAI Chat Completions (`/chat/completions`).
    OpenAiChat,
    /// OpenAI Responses (`/responses`).
    OpenAiResponses,
    /// Anthropic Messages (`/v1/messages`).
    Anthropic,
}

impl WireFormat {
    /// Every format, in the order reports list them.
    pub const ALL: [WireFormat; 3] = [
        WireFormat::OpenAiChat,
        WireFormat::OpenAiResponses,
        WireFormat::Anthropic,
    ];

    /// A label for reports, matching the `provider` prefix of
    /// [`crate::ModelProvider::describe`] where there is one.
    pub fn name(self) -> &'static str {
        match self {
            WireFormat::OpenAiChat => "openai (chat)",
            WireFormat::OpenAiResponses => "openai-responses",
            WireFormat::Anthropic => "anthropic",
        }
    }
}

/// The JSON body `format` sends for `request` (to model `request.model`).
pub fn request_body(format: WireFormat, request: &ModelRequest) -> Result<Vec<u8>, ModelError> {
    let model = request.model.as_str();
    let body = match format {
        WireFormat::OpenAiChat => crate::openai::chat_body(model, request),
        WireFormat::OpenAiResponses => crate::openai::responses_body(model, request),
        WireFormat::Anthropic => crate::anthropic::default_body(model, request),
    };
    body.map_err(|e| ModelError::Protocol(format!("cannot encode the request: {e}")))
}
