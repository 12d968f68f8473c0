//! The body of every error answer: `{"error": {"code", "message"}}`, with a
//! 4xx or 5xx status.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The body of every error answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ErrorBody {
    /// What went wrong.
    pub error: ErrorDetail,
}

/// What went wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ErrorDetail {
    /// Stable, machine-readable: `not_found`, `conflict`, `bad_request`, …
    pub code: String,
    /// For humans.
    pub message: String,
    /// The paths the error is about, when it is about some: a rewind's
    /// `changed_outside` lists the files the user changed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
}
