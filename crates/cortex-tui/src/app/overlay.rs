//! The overlay slot: one modal at a time drawn over the screen, which gets
//! every key while it is open. Help and the session picker are modals; the
//! plan review (Accept / Reject) and approvals (Allow / Deny / Always)
//! become modals of their own by implementing [`Modal`].

use crate::app::Command;
use crate::view::theme::Theme;
use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

/// What a key did to a modal.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    /// Still open.
    Keep,
    Close,
    /// Close it and run this.
    Run(Command),
}

pub trait Modal: Send {
    /// Draw over `screen` (the modal chooses its own box inside it).
    fn render(&self, screen: Rect, buf: &mut Buffer, theme: Theme);
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
