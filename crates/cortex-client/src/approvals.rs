//! The approval and rule calls of the API (`cortex-api`'s `approvals`).

use crate::{Client, ClientError, NO_BODY};
use cortex_api::{AnswerApproval, ApprovalAnswered, ApprovalState, RuleList, SetApproval};
use cortex_protocol::{ApprovalDecision, ApprovalPolicy, Rule, SessionId};
use http::Method;

impl Client {
    /// `PUT /v1/sessions/{id}/approval`.
    pub async fn set_approval(
        &self,
        id: &SessionId,
        approval: ApprovalPolicy,
    ) -> Result<ApprovalState, ClientError> {
        self.call(
            Method::PUT,
            &format!("/v1/sessions/{id}/approval"),
            Some(&SetApproval { approval }),
        )
        .await
    }

    /// `POST /v1/sessions/{id}/approvals/{call_id}`: the answer to an
    /// `approval.requested`.
    pub async fn answer_approval(
        &self,
        id: &SessionId,
        call_id: &str,
        decision: ApprovalDecision,
    ) -> Result<ApprovalAnswered, ClientError> {
        self.call(
            Method::POST,
            &format!("/v1/sessions/{id}/approvals/{call_id}"),
            Some(&AnswerApproval { decision }),
        )
        .await
    }

    /// `GET /v1/rules`: the caller's rules, oldest first.
    pub async fn rules(&self) -> Result<Vec<Rule>, ClientError> {
        let list: RuleList = self.call(Method::GET, "/v1/rules", NO_BODY).await?;
        Ok(list.rules)
    }

    /// `DELETE /v1/rules/{id}`.
    pub async fn delete_rule(&self, id: &str) -> Result<(), ClientError> {
        self.call::<serde_json::Value>(Method::DELETE, &format!("/v1/rules/{id}"), NO_BODY)
            .await
            .map(|_| ())
    }
}
