//! Checks on the task's test: an answer while the test the task names
//! failed the last time it ran, and a change never tested since.

use super::DO_IT_PREFIX;
use super::TurnWork;
use super::runs::{exercises, runs};
use super::words::{call_now, shows_code, test_command};
use crate::steer::Said;
use cortex_protocol::ToolName;

/// How a refusal of a change after the task's test passed ends.
pub(super) const DONE_IF_PASSING: &str = "If the test passing is what the task asks for, it is \
done: answer now, saying what you changed.";

impl TurnWork {
    /// The last word of the task's test command (`test_calc.py` of
    /// `python3 -B test_calc.py`): a command the model ran that contains it
    /// ran the test, whatever the model wrote around it (`python`, flags).
    pub(super) fn test_key(&self) -> Option<String> {
        let known = test_command(&self.prompt, &self.files)?;
        Some(known.rsplit(' ').next().unwrap_or(&known).to_owned())
    }

    /// The command that ran the task's test after the turn's last change
    /// and passed, when it is the last command of the turn: one that runs
    /// the test, not one that shows its file (`runs.rs`).
    pub(super) fn test_passed_since_change(&self) -> Option<&str> {
        if self.last_failed.is_some() || self.changed.is_empty() {
            return None;
        }
        let key = self.test_key()?;
        self.commands_since_change
            .last()
            .filter(|ran| runs(ran, &key))
            .map(String::as_str)
    }

    /// Files changed, and the test the task or the workspace names failed
    /// the last time it ran: an answer now gives up on it ("you need to
    /// ensure that…") or claims what it did not see.
    /// With the fixed code in the answer, the call to make is a `write_file`
    /// of it (a small model gave the file with its import as advice, then
    /// a forced edit that quoted the wrong lines).
    pub(super) fn test_fails(&self, answer: &str) -> Option<Said> {
        let failed = self.last_failed.as_deref()?;
        if self.changed.is_empty() {
            return None;
        }
        let key = self.test_key()?;
        if !runs(failed, &key) {
            return None;
        }
        // The harness's own reading of the failure beats the code of an
        // answer that missed it (the near key named, the answer's code
        // still looking up the wrong one).
        let why = match &self.failure_hint {
            Some(hint) => format!("Its output above says why: {hint}"),
            None => "Its output above says why.".to_owned(),
        };
        let (tool, what) = if shows_code(answer) && self.failure_hint.is_none() {
            (
                ToolName::WriteFile,
                " with the whole new content of the file, the code your answer shows,",
            )
        } else {
            (self.edit_tool(), "")
        };
        // A test the task asks to write is the turn's own work: it may be
        // what is wrong (a written test imported nothing).
        let whose = if self.asks_to_write(&key) {
            "the test you wrote or the code it tests"
        } else {
            "the code (not the test, unless the task asks for that)"
        };
        Some(Said::call(
            tool,
            format!(
                "{DO_IT_PREFIX} `{failed}` failed the last time you ran it, so the task is not \
                 done. {why} {}{what} to fix {whose} so that it passes, then run it again.",
                call_now(tool)
            ),
        ))
    }

    /// Files changed, a test command known, and nothing run since that
    /// exercises the change (showing a file tests nothing).
    pub(super) fn untested(&self) -> Option<Said> {
        if self.changed.is_empty() || self.commands_since_change.iter().any(|c| exercises(c)) {
            return None;
        }
        let command = test_command(&self.prompt, &self.files)?;
        Some(Said::call(
            ToolName::Bash,
            format!(
                "{DO_IT_PREFIX} you changed {} but have not run the tests since. {} to run \
                 `{command}` and check that it passes before you answer.",
                self.changed.join(", "),
                call_now(ToolName::Bash)
            ),
        ))
    }
}
