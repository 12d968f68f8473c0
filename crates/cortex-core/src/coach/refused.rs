//! The writes refused before they run (`unwanted_write.rs`): each kind of
//! refusal once a turn per file, since a model that makes the same call
//! again may have a reason the check cannot read.

use super::TurnWork;
use super::words::{asks_for_work, files_to_run, normalise, same_file};

/// Why a write to a file is refused before it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Refusal {
    /// It would leave a data file that parses now no longer parsing.
    Break,
    /// It would insert on the wrong side of the task's anchor.
    Misplaced,
    /// It would change a definition the task does not name, when the
    /// task names another of the file.
    Unnamed,
    /// It would lose text besides the replacement the task states.
    Replacement,
    /// It would create a file named as one the task names, in another
    /// folder.
    Elsewhere,
    /// It would write a file the task says another file (a script)
    /// writes.
    Product,
}

/// A refusal sent this turn.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum RefusedWrite {
    /// The task asks a question and no change.
    Question,
    /// The task says to run this file.
    ToRun(String),
    /// The write would drop this definition from this file.
    Drop(String, String),
    /// For this reason, a write to this file.
    Of(Refusal, String),
}

impl TurnWork {
    /// Whether a write to `path` is refused for `why`: only the first time
    /// in the turn.
    pub(crate) fn first_refusal(&mut self, why: Refusal, path: &str) -> bool {
        self.refused_writes
            .insert(RefusedWrite::Of(why, normalise(path)))
    }

    /// Whether a write that drops `name` from `path` is refused: only the
    /// first time in the turn.
    pub(crate) fn first_drop(&mut self, path: &str, name: &str) -> bool {
        self.refused_writes
            .insert(RefusedWrite::Drop(normalise(path), name.to_owned()))
    }

    /// Whether a write is refused because the task asks a question and no
    /// change: only the first time in the turn.
    pub(crate) fn first_unasked_write(&mut self) -> bool {
        !asks_for_work(&self.prompt) && self.refused_writes.insert(RefusedWrite::Question)
    }

    /// Whether a write to `path` is refused because the task says to run
    /// it: only the first time in the turn.
    pub(crate) fn first_write_to_run(&mut self, path: &str) -> bool {
        let path = normalise(path);
        files_to_run(&self.prompt)
            .iter()
            .any(|f| same_file(&path, f))
            && self.refused_writes.insert(RefusedWrite::ToRun(path))
    }
}
