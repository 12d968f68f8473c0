//! What drawing a cell depends on besides the cell: the width, the clock
//! (spinners and elapsed times), whether rows are expanded, the theme.

use crate::time::Millis;
use crate::view::theme::Theme;

/// Braille spinner frames, one per tick.
pub const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// Milliseconds per spinner frame.
pub const SPINNER_MS: i64 = 100;

/// Output rows shown under a folded tool row.
pub const FOLDED_OUTPUT: usize = 4;

/// What drawing a cell depends on besides the cell.
#[derive(Debug, Clone, Copy)]
pub struct Ctx {
    /// Colours.
    pub theme: Theme,
    /// Columns of the transcript.
    pub width: usize,
    /// Rows of the transcript (a folded row never takes all of them).
    pub height: usize,
    /// The clock, for elapsed times.
    pub now: Millis,
    /// The spinner's frame.
    pub spinner: usize,
    /// Ctrl+O: tool output and diffs shown whole.
    pub expanded: bool,
}

impl Ctx {
    /// The context of one frame; the spinner's frame follows from `now`.
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
        FOLDED_OUTPUT.min(self.height.saturating_sub(3)).max(1)
    }
}
