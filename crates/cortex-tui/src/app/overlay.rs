//! The overlay slot: one modal at a time drawn over the screen, which gets
//! every key while it is open. Help and the session picker are modals; a
//! waiting approval is not (its panel, `view/approval.rs`, leaves the
//! composer usable), and the plan review keeps its keys on the status line.

use crate::app::command::Command;
use crate::view::theme::Theme;
use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

/// What a key did to a modal.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    /// Still open.
    Keep,
    /// Close it; nothing to run.
    Close,
    /// Close it and run this.
    Run(Command),
}

/// A modal in the overlay slot: drawn over the screen, and given every key
/// while it is open. It does no I/O; what needs the API leaves it as a
/// [`Command`] in [`Outcome::Run`].
pub trait Modal: Send {
    /// Draw over `screen` (the modal chooses its own box inside it).
    ///
    /// **When:** on every frame while the modal is open, after the screen
    /// beneath it was drawn. **May assume:** `screen` is the whole
    /// terminal, of any size (a tiny one too). **Guarantees:** draws inside
    /// `screen` only and changes nothing (it takes `&self`), so drawing
    /// twice shows the same thing.
    fn render(&self, screen: Rect, buf: &mut Buffer, theme: Theme);

    /// Handle one key press.
    ///
    /// **When:** for every key while the modal is open, instead of the
    /// composer. **Guarantees:** the answer says whether the modal stays
    /// ([`Outcome::Keep`]), closes ([`Outcome::Close`]) or closes and has
    /// the app run a command ([`Outcome::Run`]); the app drops the modal
    /// when it closes, so nothing of it outlives that answer.
    fn on_key(&mut self, key: KeyEvent) -> Outcome;
}

/// A centred box of at most `width` × `height` inside `screen`, with a
/// margin where there is room for one (a small screen gives the box all
/// of it, so nothing half-covered shows beside it).
pub fn centered(screen: Rect, width: u16, height: u16) -> Rect {
    let w = if screen.width < 60 {
        screen.width
    } else {
        width.min(screen.width - 4)
    };
    let h = if screen.height < 20 {
        screen.height
    } else {
        height.min(screen.height - 2)
    };
    Rect {
        x: screen.x + (screen.width - w) / 2,
        y: screen.y + (screen.height - h) / 2,
        width: w,
        height: h,
    }
}
