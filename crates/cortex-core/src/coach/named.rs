//! A task that names several files, some changed and some not: the
//! reminder to change the others (or, when they are only named as a
//! reference, to say so).

use super::words::{call_now, files_to_run, lists_files, named_files, same_file};
use super::{DO_IT_PREFIX, TurnWork};
use crate::steer::Said;

impl TurnWork {
    /// A task that names several files, some changed and some not.
    pub(super) fn untouched_files(&self) -> Option<Said> {
        let (named, untouched) = self.untouched();
        if untouched.is_empty() {
            return None;
        }
        // Files listed together ("in both client.py and worker.py") are
        // each to change: the next reply must edit. A file named otherwise
        // ("mean lives in stats/mathutils.py") may be only a reference
        // (made to edit it, the model broke it).
        if !lists_files(&self.prompt, &named) {
            return Some(Said::words(format!(
                "The task names {} and you have changed {} only. If {} need{} a change too, \
                 make it now (read it first); otherwise answer again.",
                named.join(", "),
                self.changed.join(", "),
                untouched.join(" and "),
                if untouched.len() == 1 { "s" } else { "" },
            )));
        }
        Some(Said::call(
            self.edit_tool(),
            format!(
                "{DO_IT_PREFIX} the task names {} and you have changed {} only. {} to make the \
                 change the task asks for in {}, then answer.",
                named.join(", "),
                self.changed.join(", "),
                call_now(self.edit_tool()),
                untouched.join(" and "),
            ),
        ))
    }

    /// The files the task names to change (not those it says to run) and,
    /// of those, the ones the turn has neither changed nor run a command
    /// on; both empty before the first change or when it names fewer than
    /// two.
    pub(super) fn untouched(&self) -> (Vec<String>, Vec<String>) {
        if self.changed.is_empty() {
            return Default::default();
        }
        // A test the prompt says to run is named, but not to be changed.
        let to_run = files_to_run(&self.prompt);
        let named: Vec<String> = named_files(&self.prompt)
            .into_iter()
            .filter(|n| !to_run.iter().any(|r| same_file(r, n)))
            .collect();
        if named.len() < 2 {
            return Default::default();
        }
        let untouched = named
            .iter()
            .filter(|n| !self.changed.iter().any(|c| same_file(c, n)))
            .filter(|n| {
                !self
                    .commands_since_change
                    .iter()
                    .any(|c| c.contains(n.as_str()))
            })
            .cloned()
            .collect();
        (named, untouched)
    }
}
