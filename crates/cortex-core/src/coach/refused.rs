//! The writes refused before they run (`unwanted_write.rs`): each kind of
//! refusal once a turn per file, since a model that makes the same call
//! again may have a reason the check cannot read. A refusal that hands
//! over the call to make instead ([`Refusal::hands_over_call`]) also holds
//! while the model makes the refused call unchanged: the 1.5B copied its
//! own refused call back rather than the one handed over, and it ran
//! (run EB7: fix-typo-in-message, write-a-test-for-edge). A third
//! identical call is the stop rule's to refuse, and it bars the tool for a
//! round, so a model that insists is not refused for ever.

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

impl Refusal {
    /// Whether the refusal gives the call that does what the task asks
    /// (`unwanted_write::handed_call`), so the refused one stays refused
    /// while it is made unchanged.
    pub(crate) fn hands_over_call(self) -> bool {
        matches!(
            self,
            Refusal::Misplaced | Refusal::Replacement | Refusal::Elsewhere
        )
    }
}

/// Whether a write is refused (see [`TurnWork::refusal_holds`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Held {
    /// It runs.
    No,
    /// The first refusal of its kind for the file.
    First,
    /// The call refused before, made again unchanged.
    Unchanged,
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
    /// This call (its arguments as `ToolArgs`' debug text), refused with
    /// another handed over.
    Call(String),
}

impl TurnWork {
    /// Whether a write to `path` is refused for `why`: only the first time
    /// in the turn.
    pub(crate) fn first_refusal(&mut self, why: Refusal, path: &str) -> bool {
        self.refused_writes
            .insert(RefusedWrite::Of(why, normalise(path)))
    }

    /// Whether the write `call` to `path`, which `why` applies to, is
    /// refused: the first time in the turn, and when `why` hands over a
    /// call, again while `call` comes back unchanged.
    pub(crate) fn refusal_holds(
        &mut self,
        why: Refusal,
        path: &str,
        call: &cortex_protocol::ToolArgs,
    ) -> Held {
        let key = RefusedWrite::Call(format!("{call:?}"));
        if why.hands_over_call() && self.refused_writes.contains(&key) {
            return Held::Unchanged;
        }
        if !self.first_refusal(why, path) {
            return Held::No;
        }
        if why.hands_over_call() {
            self.refused_writes.insert(key);
        }
        Held::First
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
