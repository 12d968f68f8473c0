//! An answer given without any tool call that is grounded anyway: the
//! turn's context showed every file of the workspace, as `read_file` shows
//! them, and the task only asks a question about them.
//!
//! The check of answers given without a call (`verify.rs`) is there for
//! guesses: a port number before reading the file that sets it. With the
//! whole workspace in the prompt there is nothing left to read, and sent to
//! check, the 1.5B read the file it had been shown and gave the same answer
//! (two rounds, most of the turn's time). A count of files is the exception
//! that proves it: the 0.5B miscounted the listing in its prompt (2 for 3),
//! so a count stands only when the harness's own `glob` of the files
//! counted agrees.

use super::TurnWork;
use super::count::{first_number, listed_paths};
use super::words::{asks_for_work, counted_files_pattern, files_to_run};
use crate::Session;
use cortex_protocol::{GlobArgs, ToolArgs};

impl TurnWork {
    /// Notes that the turn's context shows every file of the workspace.
    pub(crate) fn note_workspace_shown(&mut self) {
        self.workspace_shown = true;
    }

    /// Whether the task is a question the files shown answer: every file
    /// of the workspace is in the context, and the task asks for no change
    /// and names nothing to run.
    fn question_on_shown_files(&self) -> bool {
        self.workspace_shown
            && !asks_for_work(&self.prompt)
            && files_to_run(&self.prompt).is_empty()
    }
}

impl Session {
    /// Whether `answer`, given without any successful tool call, is
    /// grounded in the turn's context (see the module docs): then it is not
    /// sent back to be checked.
    pub(crate) async fn answered_from_context(&self, answer: &str) -> bool {
        if !self.turn_work.question_on_shown_files() {
            return false;
        }
        let Some(pattern) = counted_files_pattern(self.turn_work.prompt()) else {
            return true;
        };
        let Some(said) = first_number(answer) else {
            return false;
        };
        let listing = self
            .harness_call(ToolArgs::Glob(GlobArgs {
                pattern,
                path: None,
            }))
            .await;
        listing
            .as_deref()
            .and_then(listed_paths)
            .is_some_and(|paths| paths.len() == said)
    }
}
