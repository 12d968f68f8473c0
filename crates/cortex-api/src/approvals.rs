//! Approvals and rules: `PUT /v1/sessions/{id}/approval` (the policy),
//! `POST /v1/sessions/{id}/approvals/{call_id}` (the user's answer to an
//! `approval.requested`), `GET /v1/rules` and `DELETE /v1/rules/{id}` (the
//! caller's persisted rules).

use cortex_protocol::{ApprovalDecision, ApprovalPolicy, Rule};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// `PUT /v1/sessions/{id}/approval`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SetApproval {
    /// The session's new approval policy: `auto` runs every call, `ask` asks before calls no rule covers, `deny` refuses them.
    pub approval: ApprovalPolicy,
}

/// The session's approval state: its policy and the calls waiting for an
/// answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ApprovalState {
    /// The session's approval policy.
    pub approval: ApprovalPolicy,
    /// Call ids waiting for `POST …/approvals/{call_id}`.
    pub pending: Vec<String>,
}

/// `POST /v1/sessions/{id}/approvals/{call_id}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AnswerApproval {
    /// `allow` (this call), `always` (this call, and a rule for calls like it) or `deny`.
    pub decision: ApprovalDecision,
}

/// The answer was delivered; `approval.resolved` follows on the timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ApprovalAnswered {
    /// The call that was answered.
    pub call_id: String,
    /// The answer given.
    pub decision: ApprovalDecision,
}

/// `GET /v1/rules`: the caller's rules, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct RuleList {
    /// The rules, each with its id (for `DELETE /v1/rules/{id}`).
    pub rules: Vec<Rule>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_refuse_unknown_values() {
        let ok: AnswerApproval =
            serde_json::from_value(serde_json::json!({"decision": "always"})).expect("decode");
        assert_eq!(ok.decision, ApprovalDecision::Always);
        for bad in [
            serde_json::json!({"decision": "maybe"}),
            serde_json::json!({"decision": "allow", "extra": 1}),
        ] {
            assert!(serde_json::from_value::<AnswerApproval>(bad).is_err());
        }
        assert!(
            serde_json::from_value::<SetApproval>(serde_json::json!({"approval": "sometimes"}))
                .is_err()
        );
    }
}
