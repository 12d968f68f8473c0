//! `/rewind` and Esc Esc: the app's side of the rewind modals
//! (`view/rewind.rs`). Between turns only: the list opens from the state's
//! turns, a chosen turn is previewed by a dry run against the API
//! ([`Command::PreviewRewind`]), and only the preview's Enter (or `y` when
//! it overwrites the user's files) rewinds.

use crate::app::command::RewindPreview;
use crate::app::{App, Command};
use crate::view::rewind::{RewindPanel, TurnList};

impl App {
    /// Open the list of turns to rewind to before.
    pub fn open_rewind(&mut self) -> Vec<Command> {
        if self.state.running() {
            self.flash("/rewind waits until the turn ends (Esc stops it)");
            return Vec::new();
        }
        if self.state.turns.list.is_empty() {
            self.flash("no turn to rewind");
            return Vec::new();
        }
        self.overlay = Some(Box::new(TurnList::new(&self.state.turns.list)));
        Vec::new()
    }

    /// The dry run came back: show what the rewind would change. A turn
    /// that left the conversation meanwhile (another client rewound it)
    /// is said instead.
    pub(super) fn rewind_previewed(&mut self, preview: RewindPreview) {
        if self.state.running() {
            self.flash("/rewind waits until the turn ends (Esc stops it)");
            return;
        }
        let turns = &self.state.turns;
        let Some(turn) = turns.list.iter().find(|t| t.id == preview.turn_id) else {
            self.flash("that turn is no longer in the conversation");
            return;
        };
        let going = turns.going(&turn.id);
        let panel = RewindPanel::new(preview.turn_id, turn.prompt.clone(), going, preview.files);
        self.flash = None;
        self.overlay = Some(Box::new(panel));
    }
}
