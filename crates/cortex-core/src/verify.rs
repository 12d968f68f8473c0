//! Asking a model to check an answer it gave without looking.
//!
//! Small local models answer "What does greet() return?" from a guess
//! without reading the file, or, after a failed edit, describe the fix in
//! prose instead of making it (docs/BENCHMARKS.md, the task set). When the
//! model's info says so (`verify_answers`: on for the embedded model, off for
//! hosted ones unless configured), the first answer of a turn in which no
//! tool call succeeded is met with one reminder to check it, and the next
//! reply must call a tool. Once per turn, so a turn still ends when the model
//! stops calling tools.

use crate::steer::{Reminder, Said};
use crate::{CoreError, Session};
use cortex_protocol::{EventKind, ReminderKind, ToolName, TurnId};

pub(crate) const VERIFY_ANSWER: &str = "Your answer is not based on any successful tool call \
in this turn. Check it against the repository first: call a tool now (read_file to read the \
file in question, edit_file or write_file to make a change you described, bash to run the \
tests), then give the final answer.";

/// The start of every answer check's reminder.
const VERIFY_PREFIX: &str = "Your answer is not based on any successful tool call in this turn.";

/// The reminder for an answer given without any successful call: when the
/// task says to run a file ("Run check.py and tell me what it prints"),
/// running it is the check, and the reply must call `bash` (asked to call
/// any tool, the 1.5B read `check.py` and repeated its guess). When it
/// counts files ("How many .py files are in the src folder?"), listing
/// them is, and the reply must call `glob`. Otherwise the reply must call
/// some tool: asked in words, small models repeat their guess; made to
/// call one, they read the file in question.
pub(crate) fn verify_reminder(prompt: &str) -> Reminder {
    let said = if let Some(pattern) = crate::coach::counted_files_pattern(prompt) {
        Said::call(
            ToolName::Glob,
            format!(
                "{VERIFY_PREFIX} The task asks how many files there are: Call glob now with the \
                 pattern `{pattern}`, then answer with the number of paths it lists."
            ),
        )
    } else {
        match crate::coach::files_to_run(prompt).first() {
            Some(file) => Said::call(
                ToolName::Bash,
                format!(
                    "{VERIFY_PREFIX} The task says to run {file}: Call bash now with `{}`, then \
                     answer from its output.",
                    crate::coach::run_command(file)
                ),
            ),
            None => Said::any_tool(VERIFY_ANSWER),
        }
    };
    said.into_reminder(ReminderKind::Unchecked)
}

impl Session {
    /// Whether this turn's first tool-less answer gets the reminder.
    pub(crate) fn verifies_answers(&self) -> bool {
        !self.mode().tools().is_empty() && self.model.info().is_some_and(|i| i.verify_answers)
    }

    /// Records the harness's message to the model, with its kind and what
    /// it asks of the next reply (`steer.rs`), and adds it to the history.
    pub(crate) async fn remind(
        &mut self,
        turn: &TurnId,
        reminder: Reminder,
    ) -> Result<(), CoreError> {
        let text = crate::steer::wording::render(reminder.text);
        self.turn_work.note_harness_words(&text);
        let event = EventKind::TurnReminder {
            text,
            kind: Some(reminder.kind),
            next: reminder.next,
        };
        self.record(Some(turn), event).await?;
        Ok(())
    }
}
