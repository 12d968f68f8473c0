//! Never ending a turn on an answer that is a tool call nobody ran.
//!
//! A model may write its call in the answer's text instead of calling the
//! tool: a provider without recovery (a hosted API, or an OpenAI-compatible
//! server with `recover_text_calls = false`) returns it as the answer, and a
//! call whose JSON is broken is text on every provider. Ending the turn there
//! would report success for work that never happened (docs/BENCHMARKS.md,
//! the task set: 0 calls run in 9 turns behind a llama.cpp server, exit 0).
//! So the first such answer of a turn goes back to the model once with what
//! was wrong; a second one fails the turn, saying why. A call the turn has
//! made and that succeeded, written out again, is a report of work done.
//! A call written as text in reply to the reminder to answer now (whose
//! reply was offered no call, `cortex_model::ToolChoice::Answer`) is met
//! once with that reminder again, saying no tool runs in that reply: the
//! 0.5B wrote its glob out as text there.

use crate::Session;
use crate::coach::{ANSWER_NOW, NO_MORE};
use crate::steer::{Reminder, Said};
use cortex_model::text_calls::{parse_reply, unreadable_call};
use cortex_protocol::ReminderKind;

/// What to do with an answer that made no call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum UnrunCall {
    /// The answer is an answer: the turn may end.
    None,
    /// Tell the model this, then ask again.
    Remind(Reminder),
    /// The model did it again: end the turn with this error.
    Fail(String),
}

impl Session {
    /// Checks an answer without calls; `reminded` is whether this turn
    /// already sent the reminder (set here when it does).
    pub(crate) fn unrun_call(&self, answer: &str, reminded: &mut bool) -> UnrunCall {
        let offered: Vec<String> = self
            .offered_tools()
            .iter()
            .map(|t| t.as_str().to_owned())
            .chain(self.mcp_offered().into_iter().map(|t| t.name))
            .collect();
        let names: Vec<&str> = offered.iter().map(String::as_str).collect();
        // The reply to the reminder to answer now after a repeat, which
        // offered no call: that reminder, not the one sent below (it also
        // asks for the answer), so a second call written as text takes the
        // usual path and the loop ends.
        let answer_due = self
            .state
            .steering
            .answer_due_after(ReminderKind::AfterRepeat);
        let problem = match parse_reply(answer, &names).calls.first() {
            // The call the turn made already, given back to say what was
            // done (the 1.5B recited its edit after its repeat was
            // refused, and the turn failed as if nothing had run); where
            // an answer is due, it is no answer.
            Some(call)
                if !answer_due && self.turn_work.made_already(&call.name, &call.arguments) =>
            {
                return UnrunCall::None;
            }
            Some(call) => format!(
                "Your reply wrote a call to `{}` as text, so it did not run",
                call.name
            ),
            None => match unreadable_call(answer, &names) {
                Some(why) => format!("Your reply looks like a tool call, but {why}"),
                None => return UnrunCall::None,
            },
        };
        if answer_due {
            return UnrunCall::Remind(
                Said::answer(format!(
                    "{NO_MORE} {problem}: no tool runs in this reply. {ANSWER_NOW}"
                ))
                .into_reminder(ReminderKind::UnrunCall),
            );
        }
        if std::mem::replace(reminded, true) {
            return UnrunCall::Fail(format!(
                "the model answered twice with a tool call written as text that did not run \
                 ({problem}); nothing was done"
            ));
        }
        UnrunCall::Remind(
            Said::words(format!(
                "{problem}. Call the tool through the tool-calling interface, with its arguments \
                 as a JSON object, or answer without a call if the work is done."
            ))
            .into_reminder(ReminderKind::UnrunCall),
        )
    }
}
