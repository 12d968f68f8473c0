//! `GET /healthz`.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Liveness: `{"status": "ok"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Health {
    /// Always `ok` while the server answers.
    pub status: String,
}
