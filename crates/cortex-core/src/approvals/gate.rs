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

/// What the model reads when the user denied its call.
const USER_DENIED: &str = "the user denied this call. Do not retry it; continue without it or \
    ask the user what to do instead.";

/// The longest summary of a call that approvals have no subject for.
const SUMMARY_CHARS: usize = 200;

/// One line for the user about a call approvals have no subject for (a
/// read-only tool a hook asked about): its name and arguments, cut.
fn call_summary(call: &ToolCallRequest) -> String {
    let line = format!(
        "{} {}",
        call.name,
        call.arguments
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    );
    if line.chars().count() <= SUMMARY_CHARS {
        return line;
    }
    let kept: String = line.chars().take(SUMMARY_CHARS).collect();
    format!("{kept}…")
}

impl Session {
    /// The session's approval state (policy, waiting requests), for tasks
    /// that do not hold the session.
    pub fn approvals(&self) -> &super::Approvals {
        &self.approvals
    }

    /// The approval gate for one call whose arguments parsed (`args`;
    /// `None` for an MCP call, named `mcp__SERVER__TOOL`). Waits for the
    /// user's answer in `ask`, or whatever the policy when a `PreToolUse`
    /// hook asked (`hook_asks`, why); returns `Stopped` when `cancel` fires
    /// first.
    pub(crate) async fn approve(
        &mut self,
        turn: &TurnId,
        call: &ToolCallRequest,
        args: Option<&ToolArgs>,
        hook_asks: Option<String>,
        cancel: &CancellationToken,
    ) -> Result<Approval, CoreError> {
        let subject = Subject::of(&call.name, args);
        if let Some(subject) = &subject {
            let ctx = DenyContext::for_workspace(&self.workspace);
            let denied = match subject {
                Subject::Bash { analysis, .. } => deny::check_bash(analysis, &ctx),
                Subject::Write { path } => deny::check_write(path, &ctx),
                Subject::Mcp { .. } => None,
            };
            if let Some(reason) = denied {
                return Ok(Approval::Refuse(format!(
                    "refused: {reason}. No rule or approval can allow this; do not retry it."
                )));
            }
        }
        if let Some(why) = hook_asks {
            return self
                .ask_for_hook(turn, call, subject.as_ref(), why, cancel)
                .await;
        }
        let Some(subject) = subject else {
            return Ok(Approval::Run);
        };
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
            Some(ApprovalDecision::Deny) => Approval::Refuse(USER_DENIED.to_owned()),
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

    /// A `PreToolUse` hook answered `ask`: the user decides this call,
    /// whatever the policy and the rules would have done (a hook can make a
    /// call stricter, never looser). Where nobody can answer (policy
    /// `deny`, a subagent), the call is refused. "Always" allows it this
    /// once and stores no rule: the hook asks again next time anyway.
    async fn ask_for_hook(
        &mut self,
        turn: &TurnId,
        call: &ToolCallRequest,
        subject: Option<&Subject>,
        why: String,
        cancel: &CancellationToken,
    ) -> Result<Approval, CoreError> {
        if self.approvals.policy() == ApprovalPolicy::Deny {
            return Ok(Approval::Refuse(format!(
                "refused: {why}, and the session's approval policy is `deny`. Do not retry \
                 it; do the task another way or say what you would run."
            )));
        }
        if self.subagents.is_child() {
            return Ok(Approval::Refuse(format!(
                "refused: {why}, and a subagent cannot ask the user. Do not retry it; say in \
                 your answer what you would run, so the agent that started you can do it."
            )));
        }
        let summary = match subject {
            Some(subject) => subject.summary(),
            None => call_summary(call),
        };
        let decision = self.ask(turn, call, summary, why, cancel).await?;
        Ok(match decision {
            None => Approval::Stopped,
            Some(ApprovalDecision::Deny) => Approval::Refuse(USER_DENIED.to_owned()),
            Some(ApprovalDecision::Allow | ApprovalDecision::Always) => Approval::Run,
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
