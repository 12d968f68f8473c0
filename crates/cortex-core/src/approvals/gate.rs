//! The approval gate of the dispatcher: deny list, policy, rules, and the
//! wait for the user's answer.

use super::deny::{self, DenyContext};
use super::matcher::Subject;
use super::principal_or_local;
use crate::{CoreError, Session, new_id};
use cortex_protocol::{
    ApprovalDecision, ApprovalPolicy, ApprovalResolution, EventKind, Rule, RuleMatch, ToolArgs,
    ToolCallRequest, TurnId,
};
use tokio_util::sync::CancellationToken;

/// What the gate decided for one call.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Approval {
    Run,
    /// Refused, with the reason the model reads.
    Refuse(String),
    /// The turn was stopped while the call waited.
    Stopped,
}

impl Session {
    /// The session's approval state (policy, waiting requests), for tasks
    /// that do not hold the session.
    pub fn approvals(&self) -> &super::Approvals {
        &self.approvals
    }

    /// The approval gate for one call whose arguments parsed (`args`;
    /// `None` for an MCP call, named `mcp__SERVER__TOOL`). Waits for the
    /// user's answer in `ask`; returns `Stopped` when `cancel` fires first.
    pub(crate) async fn approve(
        &mut self,
        turn: &TurnId,
        call: &ToolCallRequest,
        args: Option<&ToolArgs>,
        cancel: &CancellationToken,
    ) -> Result<Approval, CoreError> {
        let Some(subject) = Subject::of(&call.name, args) else {
            return Ok(Approval::Run);
        };
        let ctx = DenyContext::for_workspace(&self.workspace);
        let denied = match &subject {
            Subject::Bash { analysis, .. } => deny::check_bash(analysis, &ctx),
            Subject::Write { path } => deny::check_write(path, &ctx),
            Subject::Mcp { .. } => None,
        };
        if let Some(reason) = denied {
            return Ok(Approval::Refuse(format!(
                "refused: {reason}. No rule or approval can allow this; do not retry it."
            )));
        }
        let policy = self.approvals.policy();
        if policy == ApprovalPolicy::Auto {
            return Ok(Approval::Run);
        }
        let rules = self.applicable_rules().await?;
        let reasons = subject.uncovered(&rules, &self.workspace);
        if reasons.is_empty() {
            return Ok(Approval::Run);
        }
        let reason = reasons.join("; ");
        if policy == ApprovalPolicy::Deny {
            return Ok(Approval::Refuse(format!(
                "refused: this call needs the user's approval ({reason}) and the session's \
                 approval policy is `deny`. Do not retry it; do the task another way or say \
                 what you would run."
            )));
        }
        if self.subagents.is_child() {
            // Nobody watches a subagent's timeline for its questions.
            return Ok(Approval::Refuse(format!(
                "refused: this call needs the user's approval ({reason}), and a subagent \
                 cannot ask the user. Do not retry it; say in your answer what you would run, \
                 so the agent that started you can do it."
            )));
        }
        let decision = self
            .ask(turn, call, subject.summary(), reason, cancel)
            .await?;
        Ok(match decision {
            None => Approval::Stopped,
            Some(ApprovalDecision::Deny) => Approval::Refuse(
                "the user denied this call. Do not retry it; continue without it or ask the \
                 user what to do instead."
                    .to_owned(),
            ),
            Some(ApprovalDecision::Allow) => Approval::Run,
            Some(ApprovalDecision::Always) => {
                let added = subject.rules_for_always(&rules, &self.workspace);
                if added.is_empty() {
                    // Opaque, dynamic or wrapped: any rule would be wider than
                    // the command shown, so this answer allows it once only.
                    tracing::info!(
                        call = %call.id.0,
                        "approval: \"Always\" stored no rule; the command is allowed this once"
                    );
                }
                self.persist_rules(added).await?;
                Approval::Run
            }
        })
    }

    /// `approval.requested`, the wait, `approval.resolved`. `None`: stopped.
    async fn ask(
        &mut self,
        turn: &TurnId,
        call: &ToolCallRequest,
        summary: String,
        reason: String,
        cancel: &CancellationToken,
    ) -> Result<Option<ApprovalDecision>, CoreError> {
        let answer = self.approvals.register(&call.id);
        self.timeline
            .emit(
                Some(turn),
                EventKind::ApprovalRequested {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    summary,
                    reason,
                },
            )
            .await?;
        let decision = tokio::select! {
            decision = answer => decision.ok(),
            _ = cancel.cancelled() => None,
        };
        self.approvals.forget(&call.id);
        let resolution = decision.map_or(ApprovalResolution::Stopped, ApprovalResolution::from);
        self.timeline
            .emit(
                Some(turn),
                EventKind::ApprovalResolved {
                    call_id: call.id.clone(),
                    decision: resolution,
                },
            )
            .await?;
        Ok(decision)
    }

    /// The principal whose rules apply to this session.
    async fn principal(&self) -> Result<String, CoreError> {
        let owner = self.timeline.store().owner(&self.id).await?;
        Ok(principal_or_local(owner))
    }

    /// The principal's rules for this repository and its user-wide ones.
    async fn applicable_rules(&self) -> Result<Vec<RuleMatch>, CoreError> {
        let principal = self.principal().await?;
        let repository = self.repository.display().to_string();
        Ok(self
            .timeline
            .store()
            .rules(&principal)
            .await?
            .into_iter()
            .filter(|r| r.repository.as_deref().is_none_or(|r| r == repository))
            .map(|r| r.matches)
            .collect())
    }

    /// Store the rules an "Always" added, scoped to this repository.
    async fn persist_rules(&self, added: Vec<RuleMatch>) -> Result<(), CoreError> {
        if added.is_empty() {
            return Ok(());
        }
        let principal = self.principal().await?;
        let repository = self.repository.display().to_string();
        for matches in added {
            let rule = Rule {
                id: new_id(),
                repository: Some(repository.clone()),
                matches,
                created_at: cortex_protocol::now_rfc3339(),
            };
            self.timeline.store().add_rule(&principal, &rule).await?;
        }
        Ok(())
    }
}
