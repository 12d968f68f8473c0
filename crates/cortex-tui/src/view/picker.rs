//! The session picker (`/sessions`): the caller's sessions, newest first;
//! Enter resumes the selected one.

use crate::app::command::{Command, Entry};
use crate::app::overlay::{Modal, Outcome, centered};
use crate::text;
use crate::view::theme::Theme;
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Widget};

/// The session picker modal.
#[derive(Debug)]
pub struct Picker {
    entries: Vec<Entry>,
    selected: usize,
}

impl Picker {
    /// A picker over `entries`, the first one selected.
    pub fn new(entries: Vec<Entry>) -> Picker {
        Picker {
            entries,
            selected: 0,
        }
    }
}

impl Modal for Picker {
    fn render(&self, screen: Rect, buf: &mut Buffer, theme: Theme) {
        let area = centered(screen, 72, self.entries.len().max(1) as u16 + 2);
        Clear.render(area, buf);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(theme.border())
            .title(" Sessions · Enter resumes ");
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.height == 0 {
            return;
        }
        if self.entries.is_empty() {
            buf.set_string(inner.x, inner.y, "no sessions yet", theme.dim());
            return;
        }
        let rows = usize::from(inner.height);
        let first = (self.selected + 1).saturating_sub(rows);
        let width = usize::from(inner.width);
        for (i, entry) in self.entries.iter().enumerate().skip(first).take(rows) {
            let mark = if entry.current { "•" } else { " " };
            let row = format!("{mark} {} {:<5} {}", entry.when, entry.mode, entry.title);
            let row = format!("{:<width$}", text::truncate(&row, width));
            let style = if i == self.selected {
                theme.selected()
            } else {
                theme.plain()
            };
            let y = inner.y + (i - first) as u16;
            buf.set_line(
                inner.x,
                y,
                &Line::from(Span::styled(row, style)),
                inner.width,
            );
        }
    }

    fn on_key(&mut self, key: KeyEvent) -> Outcome {
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => Outcome::Close,
            KeyCode::Down | KeyCode::Char('j') => {
                if self.selected + 1 < self.entries.len() {
                    self.selected += 1;
                }
                Outcome::Keep
            }
            KeyCode::Up | KeyCode::Char('k') => {
                self.selected = self.selected.saturating_sub(1);
                Outcome::Keep
            }
            KeyCode::Enter => match self.entries.get(self.selected) {
                Some(entry) if entry.current => Outcome::Close,
                Some(entry) => Outcome::Run(Command::OpenSession(entry.id.clone())),
                None => Outcome::Close,
            },
            _ => Outcome::Keep,
        }
    }
}
