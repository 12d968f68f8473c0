//! The tool events' hooks around one call: `PreToolUse` before approvals
//! (it may refuse the call, or make the user decide it), `PostToolUse` after
//! a call that succeeded (what it adds is appended to the result).

use super::HookEvent;
use crate::answer::Answer;
use crate::{CoreError, Session};
use cortex_protocol::{ToolCallRequest, ToolStatus, TurnId};

/// What the `PreToolUse` hooks made of a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PreTool {
    /// No hook objected: approvals decide as usual.
    Go,
    /// A hook denied the call, or failed (a failed guard refuses, stated):
    /// the reason the model reads.
    Refuse(String),
    /// A hook answered `ask`: the user decides, whatever the policy or the
    /// rules would have done. Why, for the approval request.
    Ask(String),
}

impl Session {
    /// What the `PreToolUse` hooks make of `call`.
    pub(crate) async fn pre_tool_hooks(
        &self,
        turn: &TurnId,
        call: &ToolCallRequest,
    ) -> Result<PreTool, CoreError> {
        if !self.hooks.any(HookEvent::PreToolUse) {
            return Ok(PreTool::Go);
        }
        let fields = serde_json::json!({
            "tool_input": super::tool_input(&call.arguments),
        });
        let outcome = self
            .run_hooks(Some(turn), HookEvent::PreToolUse, Some(&call.name), fields)
            .await?;
        if let Some((hook, error)) = outcome.failed {
            return Ok(PreTool::Refuse(format!(
                "the PreToolUse hook `{hook}` failed: {error}; the call was refused"
            )));
        }
        if let Some((hook, reason)) = outcome.refused {
            return Ok(PreTool::Refuse(format!(
                "the PreToolUse hook `{hook}` refused the call: {reason}"
            )));
        }
        Ok(match outcome.asked {
            Some((hook, reason)) => PreTool::Ask(match reason {
                Some(reason) => format!("the PreToolUse hook `{hook}` asks: {reason}"),
                None => format!("the PreToolUse hook `{hook}` asks for your approval"),
            }),
            None => PreTool::Go,
        })
    }

    /// The `PostToolUse` hooks for a call that succeeded: what they add is
    /// appended to the result the model reads.
    pub(crate) async fn post_tool_hooks(
        &self,
        turn: &TurnId,
        call: &ToolCallRequest,
        answer: &mut Answer,
    ) -> Result<(), CoreError> {
        // Without a hook, the result is not copied for one.
        if answer.status != ToolStatus::Ok || !self.hooks.any(HookEvent::PostToolUse) {
            return Ok(());
        }
        let fields = serde_json::json!({
            "tool_input": super::tool_input(&call.arguments),
            "tool_response": answer.output,
        });
        let outcome = self
            .run_hooks(Some(turn), HookEvent::PostToolUse, Some(&call.name), fields)
            .await?;
        for context in outcome.context {
            answer
                .output
                .push_str(&format!("\n\n[PostToolUse hook] {context}"));
        }
        if let Some((hook, reason)) = outcome.refused {
            answer
                .output
                .push_str(&format!("\n\n[PostToolUse hook `{hook}`] {reason}"));
        }
        Ok(())
    }
}
