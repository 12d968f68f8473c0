//! Judging a reply that made no call: the answer policies, in order.
//!
//! Each policy looks at the answer and either lets it pass to the next or
//! decides: remind the model (a typed [`Reminder`]), fail the turn, or
//! accept. The turn loop asks [`Session::judge_answer`] once per such reply
//! and acts on the [`Verdict`]; adding or removing a policy changes
//! [`ANSWER_POLICIES`] and its arm here, never the loop.
//!
//! - [`AnswerPolicy::CutReply`] (`cut_reply.rs`): a reply cut at the output
//!   limit, or stopped as a runaway, goes back once with the limit said.
//! - [`AnswerPolicy::UnrunCall`] (`unrun_call.rs`): a call written as text
//!   goes back once; a second one fails the turn.
//! - [`AnswerPolicy::Coach`] (`coach/`): the answer checks of the
//!   small-model help; what they still doubt is kept for `turn.completed`.
//! - [`AnswerPolicy::Hook`] (`hooks.rs`): a `Stop` hook of the user's that
//!   blocks sends the model back with its reason, once per turn.
//! - [`AnswerPolicy::Unchecked`] (`verify.rs`): an answer with no
//!   successful call in the turn is checked once; given again, it is
//!   doubted.

use crate::hooks::HookEvent;
use crate::steer::Reminder;
use crate::unrun_call::UnrunCall;
use crate::{CoreError, Session};
use cortex_model::Assembled;
use cortex_protocol::{NextReply, ReminderKind, TurnId};

/// What the answer policies decide about a reply that made no call.
pub(crate) enum Verdict {
    /// The answer ends the turn.
    Accept,
    /// Tell the model this, then ask again.
    Remind(Reminder),
    /// End the turn as failed, saying why.
    Fail(String),
}

/// The answer policies.
#[derive(Debug, Clone, Copy)]
pub(crate) enum AnswerPolicy {
    CutReply,
    UnrunCall,
    Coach,
    Hook,
    Unchecked,
}

/// The order they judge in: a reply that is no answer at all (cut, a call
/// written as text) before the checks of what it says.
/// The user's `Stop` hooks judge after the harness's own checks, so they
/// see an answer those let through.
pub(crate) const ANSWER_POLICIES: [AnswerPolicy; 5] = [
    AnswerPolicy::CutReply,
    AnswerPolicy::UnrunCall,
    AnswerPolicy::Coach,
    AnswerPolicy::Hook,
    AnswerPolicy::Unchecked,
];

/// What the answer policies said so far in a turn, and whether a call of
/// it succeeded (an answer after one is grounded in something).
#[derive(Debug, Default)]
pub(crate) struct Judged {
    cut_retried: bool,
    call_reminded: bool,
    unchecked_sent: bool,
    /// A `Stop` hook sent the model back this turn (it does once).
    hook_sent: bool,
    grounded: bool,
}

impl Judged {
    /// A round of calls ended; `any_ok`: one of them succeeded.
    pub(crate) fn after_round(&mut self, any_ok: bool) {
        self.grounded |= any_ok;
    }
}

impl Session {
    /// The verdict on `reply`, which made no call: the first policy that
    /// decides, else accept.
    pub(crate) async fn judge_answer(
        &mut self,
        turn: &TurnId,
        reply: &Assembled,
        judged: &mut Judged,
    ) -> Result<Verdict, CoreError> {
        for policy in ANSWER_POLICIES {
            if let Some(verdict) = self.judge_with(turn, policy, reply, judged).await? {
                return Ok(verdict);
            }
        }
        Ok(Verdict::Accept)
    }

    async fn judge_with(
        &mut self,
        turn: &TurnId,
        policy: AnswerPolicy,
        reply: &Assembled,
        judged: &mut Judged,
    ) -> Result<Option<Verdict>, CoreError> {
        Ok(match policy {
            AnswerPolicy::CutReply => self
                .cut_reply(reply, &mut judged.cut_retried)
                .map(Verdict::Remind),
            AnswerPolicy::UnrunCall => {
                match self.unrun_call(&reply.text, &mut judged.call_reminded) {
                    UnrunCall::None => None,
                    UnrunCall::Remind(reminder) => Some(Verdict::Remind(reminder)),
                    UnrunCall::Fail(error) => Some(Verdict::Fail(error)),
                }
            }
            AnswerPolicy::Coach => self.coach(&reply.text).await.map(Verdict::Remind),
            AnswerPolicy::Hook => self.stop_hooks(turn, &reply.text, judged).await?,
            AnswerPolicy::Unchecked => self.unchecked(&reply.text, judged).await,
        })
    }

    /// The user's `Stop` hooks: one that blocks sends the model back with
    /// its reason, once per turn (a hook that always blocks cannot keep a
    /// turn going forever).
    async fn stop_hooks(
        &mut self,
        turn: &TurnId,
        answer: &str,
        judged: &mut Judged,
    ) -> Result<Option<Verdict>, CoreError> {
        if judged.hook_sent {
            return Ok(None);
        }
        let fields = serde_json::json!({
            "stop_hook_active": false,
            "last_assistant_message": answer,
        });
        let outcome = self
            .run_hooks(Some(turn), HookEvent::Stop, None, fields)
            .await?;
        let Some((hook, reason)) = outcome.refused else {
            return Ok(None);
        };
        judged.hook_sent = true;
        Ok(Some(Verdict::Remind(Reminder {
            kind: ReminderKind::Hook,
            next: NextReply::Free,
            text: format!("The Stop hook `{hook}` did not accept the answer: {reason}"),
        })))
    }

    /// An answer with no successful call in the turn, for a model that
    /// checks its answers: checked once (the reply must call a tool);
    /// given again, doubted. Not when the turn's context grounds it.
    async fn unchecked(&mut self, answer: &str, judged: &mut Judged) -> Option<Verdict> {
        if !self.verifies_answers() || judged.grounded || self.answered_from_context(answer).await {
            return None;
        }
        if !std::mem::replace(&mut judged.unchecked_sent, true) {
            let reminder = crate::verify::verify_reminder(self.turn_work.prompt());
            return Some(Verdict::Remind(reminder));
        }
        self.turn_work.doubt(ReminderKind::Unchecked);
        None
    }
}
