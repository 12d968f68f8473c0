//! The composer: the input box at the bottom. Its top border names the mode
//! and then any chips (`Agent — Goal · 2/8`: the goals work adds that chip
//! through [`Chrome::chips`]); its bottom border carries a key hint.

use crate::app::editor::Editor;
use crate::state::title;
use crate::text::char_width;
use crate::view::theme::Theme;
use cortex_protocol::Mode;
use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Widget};

/// What the border shows.
#[derive(Debug, Clone, Default)]
pub struct Chrome {
    /// The session's mode, first on the border.
    pub mode: Mode,
    /// Shown after the mode, each after an em dash.
    pub chips: Vec<String>,
    /// Right of the bottom border (`Esc stop`, `? help`).
    pub hint: String,
}

/// The composer widget: the editor's text in a bordered box.
pub struct Composer<'a> {
    /// The text and cursor.
    pub editor: &'a Editor,
    /// What the border shows.
    pub chrome: &'a Chrome,
    /// Shown while the text is empty.
    pub placeholder: &'a str,
    /// Colours.
    pub theme: Theme,
}

/// Rows the input may take before it scrolls.
pub const MAX_INPUT_ROWS: u16 = 8;

impl Composer<'_> {
    /// Rows the composer wants at `width` (borders included), at most
    /// `max`.
    pub fn height(&self, width: u16, max: u16) -> u16 {
        let rows = visual_rows(self.editor, width.saturating_sub(2)).0.len() as u16;
        (rows.clamp(1, MAX_INPUT_ROWS) + 2).min(max.max(3))
    }

    /// Draw into `area`; returns where the terminal cursor goes.
    pub fn render(&self, area: Rect, buf: &mut Buffer) -> Option<(u16, u16)> {
        let theme = self.theme;
        let mut title = vec![
            Span::raw(" "),
            Span::styled(title(self.chrome.mode), theme.mode(self.chrome.mode)),
        ];
        for chip in &self.chrome.chips {
            title.push(Span::styled(" — ", theme.dim()));
            title.push(Span::styled(chip.clone(), theme.bold()));
        }
        title.push(Span::raw(" "));
        let mut block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(theme.border())
            .title(Line::from(title));
        if !self.chrome.hint.is_empty() && area.width > 12 {
            block = block.title_bottom(
                Line::from(Span::styled(format!(" {} ", self.chrome.hint), theme.dim()))
                    .alignment(Alignment::Right),
            );
        }
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.width == 0 || inner.height == 0 {
            return None;
        }
        if self.editor.is_empty() {
            let shown = crate::text::truncate(self.placeholder, usize::from(inner.width));
            buf.set_span(
                inner.x,
                inner.y,
                &Span::styled(shown.into_owned(), theme.dim()),
                inner.width,
            );
            return Some((inner.x, inner.y));
        }
        let (rows, (cursor_row, cursor_col)) = visual_rows(self.editor, inner.width);
        let height = usize::from(inner.height);
        // Scrolled so the cursor's row is in view.
        let first = (cursor_row + 1).saturating_sub(height);
        for (i, row) in rows.iter().skip(first).take(height).enumerate() {
            buf.set_string(inner.x, inner.y + i as u16, row, theme.plain());
        }
        Some((
            inner.x + cursor_col as u16,
            inner.y + (cursor_row - first) as u16,
        ))
    }
}

/// The editor's text cut into rows of `width` cells, and the cursor's row
/// and column among them.
fn visual_rows(editor: &Editor, width: u16) -> (Vec<String>, (usize, usize)) {
    let width = usize::from(width.max(1));
    let mut rows = vec![String::new()];
    let mut used = 0;
    let mut cursor = (0, 0);
    let text = editor.text();
    for (i, c) in text.char_indices() {
        if i == editor.cursor() {
            if used >= width {
                rows.push(String::new());
                used = 0;
            }
            cursor = (rows.len() - 1, used);
        }
        if c == '\n' {
            rows.push(String::new());
            used = 0;
            continue;
        }
        let w = char_width(c);
        if used + w > width {
            rows.push(String::new());
            used = 0;
        }
        if let Some(row) = rows.last_mut() {
            row.push(c);
        }
        used += w;
    }
    if editor.cursor() >= text.len() {
        if used >= width {
            rows.push(String::new());
            used = 0;
        }
        cursor = (rows.len() - 1, used);
    }
    (rows, cursor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_cursor() {
        let mut e = Editor::default();
        e.insert("abcdef\ngh");
        let (rows, cursor) = visual_rows(&e, 4);
        assert_eq!(rows, ["abcd", "ef", "gh"]);
        assert_eq!(cursor, (2, 2));
        let mut e = Editor::default();
        e.insert("abcd");
        assert_eq!(
            visual_rows(&e, 4).1,
            (1, 0),
            "the cursor wraps past a full row"
        );
    }
}
