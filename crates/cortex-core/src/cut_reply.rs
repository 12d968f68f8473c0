//! A reply cut at the output limit is tried once more, with the limit said.
//!
//! A small model can write until it reaches the output limit without ever
//! finishing a call or an answer (a fenced file that never closes, the same
//! paragraph again and again; docs/BENCHMARKS.md, the task set: one round ran
//! into the 5-minute bound). Ending the turn there hands the user half an
//! answer; so the first such reply of a turn goes back to the model once, with
//! the bound stated, and a second one ends the turn as cut (`max_tokens`).
//! A cut reply that did complete calls is not retried: its calls run.
//!
//! For models that need the answer checks (`verify_answers`), a reply that
//! has degenerated — a long run of blank lines, the same passage again and
//! again — is stopped by the harness as it streams (the provider would go
//! on to the limit: behind a llama.cpp server, whose tool choice is not
//! enforced, the 1.5B wrote 2,048 tokens of newlines after a reminder, 150 s
//! a round) and retried once the same way (`cortex_model::runaway`).

use crate::Session;
use crate::steer::{Reminder, Said};
use cortex_model::{Assembled, FinishReason, RUNAWAY};
use cortex_protocol::ReminderKind;

impl Session {
    /// The reminder for a reply cut before it made a call, unless this turn
    /// already sent it (`retried`, set here when it does).
    pub(crate) fn cut_reply(&self, reply: &Assembled, retried: &mut bool) -> Option<Reminder> {
        let ran_away = reply.finish == Some(FinishReason::Other(RUNAWAY.to_owned()));
        if (reply.finish != Some(FinishReason::Length) && !ran_away)
            || !reply.tool_calls.is_empty()
            || std::mem::replace(retried, true)
        {
            return None;
        }
        if ran_away {
            return Some(
                Said::words(
                    "Your last reply was stopped: it had turned into blank lines or the same \
                     text again and again, so nothing in it ran. Reply again: make one tool call, \
                     or give a short answer.",
                )
                .into_reminder(ReminderKind::CutReply),
            );
        }
        let limit = self
            .model
            .info()
            .map(|info| u64::from(info.max_output_tokens))
            .filter(|&n| n > 0)
            .or_else(|| (reply.output_tokens > 0).then_some(reply.output_tokens));
        let bound = match limit {
            Some(n) => format!("the output limit of {n} tokens"),
            None => "the output limit".to_owned(),
        };
        Some(
            Said::words(format!(
                "Your last reply was cut off at {bound} before it finished, so nothing in it ran. \
                 Reply again within that limit: make one tool call, or give a short answer. Put \
                 long file content in several smaller calls rather than one."
            ))
            .into_reminder(ReminderKind::CutReply),
        )
    }
}
