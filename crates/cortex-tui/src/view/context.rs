//! What drawing a cell depends on besides the cell: the width, the clock
//! (spinners and elapsed times), whether rows are expanded, the theme.

use crate::time::Millis;
use crate::view::theme::Theme;

/// Braille spinner frames, one per tick.
pub const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// Milliseconds per spinner frame.
pub const SPINNER_MS: i64 = 100;

#[derive(Debug, Clone, Copy)]
pub struct Ctx {
    pub theme: Theme,
    /// Columns of the transcript.
    pub width: usize,
    /// Rows of the transcript (a folded row never takes all of them).
    pub height: usize,
    pub now: Millis,
    pub spinner: usize,
    /// Ctrl+O: tool output and diffs shown whole.
    pub expanded: bool,
}

impl Ctx {
    pub fn new(theme: Theme, width: usize, height: usize, now: Millis, expanded: bool) -> Ctx {
        Ctx {
            theme,
            width,
            height,
            now,
            spinner: (now / SPINNER_MS).rem_euclid(SPINNER.len() as i64) as usize,
            expanded,
        }
    }

    /// Output rows under a folded tool row: a few, and never so many that
    /// the row's own header leaves a small screen.
    pub fn output_rows(&self) -> usize {
        crate::view::tool_row::FOLDED_OUTPUT
            .min(self.height.saturating_sub(3))
            .max(1)
    }
}
