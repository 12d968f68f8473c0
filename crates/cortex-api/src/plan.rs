//! `/v1/sessions/{id}/plan/accept` and `/plan/reject` (and the same under
//! `/spec/`): the user's verdict on the proposed plan or spec phase. Either
//! answers with the turn it starts ([`crate::TurnCreated`]).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// `POST /v1/sessions/{id}/plan/reject` and `…/spec/reject`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RejectPlan {
    /// What to change; the next turn's message. Not empty.
    pub feedback: String,
}
