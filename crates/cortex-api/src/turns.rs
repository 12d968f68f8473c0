//! `/v1/sessions/{id}/turns` and `/stop`: starting a turn, stopping it.

use cortex_protocol::TurnId;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// `POST /v1/sessions/{id}/turns`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTurn {
    /// The user's message; not empty.
    pub message: String,
    /// Images attached to it (PNG, JPEG, GIF or WebP; at most 8, each at
    /// most 5 MiB). A model that takes no images answers 422
    /// `model_takes_no_images` before the turn starts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<TurnAttachment>,
}

impl CreateTurn {
    /// A message without attachments.
    pub fn text(message: impl Into<String>) -> CreateTurn {
        CreateTurn {
            message: message.into(),
            attachments: Vec::new(),
        }
    }
}

/// An image attached to a turn's message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TurnAttachment {
    /// `image/png`, `image/jpeg`, …: informative only; the server reads the
    /// type from the bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The bytes, base64 (standard alphabet, padded).
    pub data: String,
}

impl TurnAttachment {
    /// An attachment of `bytes`.
    pub fn of_bytes(bytes: &[u8]) -> TurnAttachment {
        use base64::Engine;
        TurnAttachment {
            mime_type: None,
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
        }
    }

    /// Its bytes; `Err` says why `data` is not base64.
    pub fn bytes(&self) -> Result<Vec<u8>, String> {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD
            .decode(self.data.as_bytes())
            .map_err(|e| e.to_string())
    }
}

/// The answer to `POST …/turns`: the turn runs in the background.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct TurnCreated {
    /// The new turn's id; its events carry it.
    #[schema(value_type = String)]
    pub turn_id: TurnId,
}

/// `POST /v1/sessions/{id}/stop`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct StopAnswer {
    /// The turn that was told to stop; its `turn.stopped` event follows.
    #[schema(value_type = String)]
    pub turn_id: TurnId,
}
