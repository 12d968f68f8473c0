//! `/v1/sessions/{id}/plan/accept` and `/plan/reject`: the user's verdict on
//! the proposed plan. Either answers with the turn it starts
//! ([`crate::TurnCreated`]).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// `POST /v1/sessions/{id}/plan/reject`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RejectPlan {
    /// What to change; the next turn's message. Not empty.
    pub feedback: String,
}
