//! The transcript: every cell's wrapped rows, of which a frame draws only
//! the visible ones.
//!
//! Each cell's rows are computed once per (content revision, width,
//! expansion) and kept; a frame while text streams re-wraps only the cell
//! that changed (and the live ones: running tools, whose spinner and
//! elapsed time move), sums the cached heights and copies the rows in view.
//! Rows of cells far from the view are dropped (their height is kept) so
//! memory follows the session's text, not what was drawn.

use crate::state::{Cell, CellKind};
use crate::view::cells;
use crate::view::context::Ctx;
use crate::view::streaming::Streaming;
use crate::view::wrap::wrap_all;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

/// Screens of rows kept around the view.
const KEEP_SCREENS: usize = 3;

/// The transcript widget: rows cached per cell revision and width, only the
/// visible ones drawn, and the scroll position.
#[derive(Debug, Default)]
pub struct Transcript {
    entries: Vec<Entry>,
    /// The first row shown; `None` follows the end.
    top: Option<usize>,
    /// Rows in total and rows in view at the last frame.
    total: usize,
    height: usize,
    width: usize,
}

#[derive(Debug, Default)]
struct Entry {
    rev: u32,
    width: usize,
    expanded: bool,
    /// A blank row before the cell.
    gap: bool,
    height: usize,
    lines: Option<Vec<Line<'static>>>,
    known: bool,
    /// While the cell is an answer still streaming.
    stream: Option<Streaming>,
}

impl Transcript {
    /// Forget everything (another session is shown).
    pub fn reset(&mut self) {
        *self = Transcript::default();
    }

    /// Rows of the whole transcript at the last frame.
    pub fn total_rows(&self) -> usize {
        self.total
    }

    /// Rows held in the cache now (those near the view).
    pub fn cached_rows(&self) -> usize {
        self.entries
            .iter()
            .filter_map(|e| e.lines.as_ref())
            .map(Vec::len)
            .sum()
    }

    /// Whether the view follows the end.
    pub fn following(&self) -> bool {
        self.top.is_none()
    }

    /// Rows below the view (0 when following).
    pub fn rows_below(&self) -> usize {
        match self.top {
            None => 0,
            Some(top) => self.total.saturating_sub(top + self.height),
        }
    }

    /// Scroll `rows` up (stops following the end).
    pub fn scroll_up(&mut self, rows: usize) {
        let top = self
            .top
            .unwrap_or_else(|| self.total.saturating_sub(self.height));
        self.top = Some(top.saturating_sub(rows));
    }

    /// Scroll `rows` down (follows the end again at the bottom).
    pub fn scroll_down(&mut self, rows: usize) {
        if let Some(top) = self.top {
            let top = top + rows;
            if top + self.height >= self.total {
                self.top = None;
            } else {
                self.top = Some(top);
            }
        }
    }

    /// Follow the end again.
    pub fn to_bottom(&mut self) {
        self.top = None;
    }

    /// Rows of a page (for PageUp/PageDown).
    pub fn page(&self) -> usize {
        self.height.saturating_sub(2).max(1)
    }

    /// Draw `cells` into `area`.
    pub fn render(&mut self, cells: &[Cell], ctx: &Ctx, area: Rect, buf: &mut Buffer) {
        let width = usize::from(area.width);
        let height = usize::from(area.height);
        if width == 0 || height == 0 {
            return;
        }
        let total = self.measure(cells, ctx);
        if self.width != width && self.width != 0 {
            // A resize re-flows: keep the same share of the transcript above.
            if let Some(top) = self.top {
                self.top = Some(top * total / self.total.max(1));
            }
        }
        self.width = width;
        self.total = total;
        self.height = height;
        let max_top = total.saturating_sub(height);
        let top = match self.top {
            Some(top) if top < max_top => top,
            Some(_) => {
                self.top = None;
                max_top
            }
            None => max_top,
        };
        self.draw_rows(cells, ctx, top, area, buf);
        if let Some(top) = self.top {
            let below = total.saturating_sub(top + height);
            let label = format!(" ↓ {below} more ");
            let x = area
                .right()
                .saturating_sub(crate::text::width(&label) as u16);
            buf.set_span(
                x,
                area.bottom() - 1,
                &Span::styled(label, ctx.theme.selected()),
                area.width,
            );
        }
    }

    /// Bring every entry up to date; returns the rows in total.
    fn measure(&mut self, cells: &[Cell], ctx: &Ctx) -> usize {
        self.entries.truncate(cells.len());
        self.entries.resize_with(cells.len(), Entry::default);
        let mut total = 0;
        let mut prev = None;
        for (cell, entry) in cells.iter().zip(self.entries.iter_mut()) {
            let gap = cells::gap_before(prev, &cell.kind);
            prev = Some(&cell.kind);
            let fresh = entry.known
                && entry.rev == cell.rev
                && entry.width == ctx.width
                && entry.expanded == ctx.expanded
                && !cell.is_live();
            if !fresh {
                refresh(cell, entry, ctx);
            }
            entry.gap = gap;
            total += entry.height + usize::from(gap);
        }
        total
    }

    fn draw_rows(&mut self, cells: &[Cell], ctx: &Ctx, top: usize, area: Rect, buf: &mut Buffer) {
        let height = usize::from(area.height);
        let keep_from = top.saturating_sub(KEEP_SCREENS * height);
        let keep_to = top + (KEEP_SCREENS + 1) * height;
        let mut offset = 0;
        for (cell, entry) in cells.iter().zip(self.entries.iter_mut()) {
            let start = offset + usize::from(entry.gap);
            let end = start + entry.height;
            offset = end;
            if end <= keep_from || start >= keep_to {
                entry.lines = None;
                entry.stream = None;
                continue;
            }
            if end <= top || start >= top + height {
                continue;
            }
            let lines = entry.lines.get_or_insert_with(|| lines_of(cell, ctx));
            for (i, line) in lines.iter().enumerate() {
                let row = start + i;
                if row < top || row >= top + height {
                    continue;
                }
                let y = area.y + (row - top) as u16;
                buf.set_line(area.x, y, line, area.width);
            }
        }
    }
}

/// Recompute an entry's rows: an answer that streams from its last
/// complete block, anything else whole.
fn refresh(cell: &Cell, entry: &mut Entry, ctx: &Ctx) {
    let lines = match &cell.kind {
        CellKind::Assistant { text, done: false } => {
            let mut lines = entry.lines.take().unwrap_or_default();
            entry
                .stream
                .get_or_insert_with(Streaming::default)
                .update(text, ctx, &mut lines);
            lines
        }
        _ => {
            entry.stream = None;
            lines_of(cell, ctx)
        }
    };
    entry.rev = cell.rev;
    entry.width = ctx.width;
    entry.expanded = ctx.expanded;
    entry.height = lines.len();
    entry.lines = Some(lines);
    entry.known = true;
}

fn lines_of(cell: &Cell, ctx: &Ctx) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    wrap_all(&cells::render(&cell.kind, ctx), ctx.width, &mut lines);
    lines
}
