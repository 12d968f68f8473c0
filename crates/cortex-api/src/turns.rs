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
