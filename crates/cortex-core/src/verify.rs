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

use crate::{CoreError, Session};
use cortex_model::ToolChoice;
use cortex_protocol::{EventKind, Message, Role, ToolName, TurnId};

pub(crate) const VERIFY_ANSWER: &str = "Your answer is not based on any successful tool call \
in this turn. Check it against the repository first: call a tool now (read_file to read the \
file in question, edit_file or write_file to make a change you described, bash to run the \
tests), then give the final answer.";

/// The start of every answer check's reminder.
const VERIFY_PREFIX: &str = "Your answer is not based on any successful tool call in this turn.";

/// The reminder for an answer given without any successful call: when the
/// task says to run a file ("Run check.py and tell me what it prints"),
/// running it is the check, and the reply must call `bash` (asked to call
/// any tool, the 1.5B read `check.py` and repeated its guess, run H). When
/// it counts files ("How many .py files are in the src folder?"), listing
/// them is, and the reply must call `glob`.
pub(crate) fn verify_reminder(prompt: &str) -> String {
    if let Some(pattern) = crate::coach::counted_files_pattern(prompt) {
        return format!(
            "{VERIFY_PREFIX} The task asks how many files there are: Call glob now with the \
             pattern `{pattern}`, then answer with the number of paths it lists."
        );
    }
    match crate::coach::files_to_run(prompt).first() {
        Some(file) => format!(
            "{VERIFY_PREFIX} The task says to run {file}: Call bash now with `{}`, then answer \
             from its output.",
            crate::coach::run_command(file)
        ),
        None => VERIFY_ANSWER.to_owned(),
    }
}

/// The round after the reminder must call a tool: asked in words, small
/// models repeat their guess (the task set, docs/BENCHMARKS.md); made to
/// call one, they read the file in question. A reminder of the answer checks
/// that names the tool to call (`coach::chosen_tool`) makes that tool the
/// only choice, when `offered`: made to call just any tool after "put `add`
/// back", a small model reads the file again and repeats its advice.
/// After a round in which a call was refused as a repeat
/// (`stop_rule::repeated_tool`), the next reply may not call that tool: the
/// 0.5B went on making the refused `read_file` until the turn ended (run W).
/// After a round in which a refusal handed over the call to make instead
/// (`unwanted_write::handed_tool`), the next reply must call that tool.
/// After the reminder that a question is to be answered now
/// (`coach::ANSWER_NOW`), the reply must be the answer: told so in words,
/// the 0.5B went on calling — an edit of the file it was asked about, a
/// glob after the glob that answered (runs E5, E6).
/// Derived from the history, so a resumed session asks the same.
pub(crate) fn tool_choice(history: &[Message], offered: &[ToolName]) -> ToolChoice {
    match history.last() {
        Some(last)
            if last.role == Role::User
                && last.content.starts_with(crate::coach::NO_MORE)
                && last.content.ends_with(crate::coach::ANSWER_NOW) =>
        {
            ToolChoice::Answer
        }
        Some(last)
            if last.role == Role::User
                && (last.content.starts_with(VERIFY_PREFIX)
                    || last.content.starts_with(crate::coach::DO_IT_PREFIX)) =>
        {
            match crate::coach::chosen_tool(&last.content) {
                Some(tool) if offered.contains(&tool) => ToolChoice::Tool(tool),
                _ => ToolChoice::Required,
            }
        }
        _ => {
            // Past the reminder that follows such a round (`coach::NO_MORE`).
            let last_round: Vec<&Message> = history
                .iter()
                .rev()
                .skip_while(|m| {
                    m.role == Role::User && m.content.starts_with(crate::coach::NO_MORE)
                })
                .take_while(|m| m.role == Role::Tool)
                .collect();
            let barred = last_round
                .iter()
                .filter_map(|m| crate::stop_rule::repeated_tool(&m.content))
                .find(|tool| offered.contains(tool));
            let handed = last_round
                .iter()
                .filter_map(|m| crate::unwanted_write::handed_tool(&m.content))
                .find(|tool| offered.contains(tool) && Some(*tool) != barred);
            match (handed, barred) {
                (Some(tool), _) => ToolChoice::Tool(tool),
                (None, Some(tool)) => ToolChoice::AutoWithout(tool),
                (None, None) => ToolChoice::Auto,
            }
        }
    }
}

impl Session {
    /// Whether this turn's first tool-less answer gets the reminder.
    pub(crate) fn verifies_answers(&self) -> bool {
        !self.mode().tools().is_empty() && self.model.info().is_some_and(|i| i.verify_answers)
    }

    /// Records the harness's message to the model and adds it to the history.
    pub(crate) async fn remind(&mut self, turn: &TurnId, text: &str) -> Result<(), CoreError> {
        self.turn_work.note_harness_words(text);
        let reminder = EventKind::TurnReminder {
            text: text.to_owned(),
        };
        self.record(Some(turn), reminder).await?;
        Ok(())
    }
}
