//! The help overlay (`?` or `/help`): the keys and the slash commands,
//! scrollable on a small screen.

use crate::app::overlay::{Modal, Outcome, centered};
use crate::app::slash::COMMANDS;
use crate::view::theme::Theme;
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Widget, Wrap};

/// The keys the help lists, with what each does.
pub const KEYS: &[(&str, &str)] = &[
    ("Enter", "send (queued mid-turn)"),
    ("Alt+Enter", "new line (Ctrl+J too)"),
    ("Esc", "stop the turn"),
    ("Shift+Tab", "next mode"),
    ("Up/Down", "earlier messages"),
    ("Tab", "complete / and @"),
    ("PgUp/PgDn", "scroll (wheel too)"),
    ("Ctrl+Y", "accept the plan/spec"),
    ("Ctrl+R", "reject it (type why)"),
    ("Ctrl+O", "expand output"),
    ("Ctrl+L", "redraw"),
    ("Ctrl+C", "clear; twice quits"),
    ("?", "this help"),
];

/// The help modal: keys and slash commands, scrollable.
#[derive(Debug, Default)]
pub struct Help {
    scroll: u16,
}

impl Help {
    fn lines(theme: Theme) -> Vec<Line<'static>> {
        let mut lines = vec![Line::from(Span::styled("Keys", theme.heading()))];
        for (key, what) in KEYS {
            lines.push(Line::from(vec![
                Span::styled(format!("{key:<10} "), theme.accent()),
                Span::raw(*what),
            ]));
        }
        lines.push(Line::default());
        lines.push(Line::from(Span::styled("Commands", theme.heading())));
        for command in COMMANDS {
            let name = if command.args.is_empty() {
                format!("/{}", command.name)
            } else {
                format!("/{} {}", command.name, command.args)
            };
            lines.push(Line::from(Span::styled(name, theme.accent())));
            lines.push(Line::from(Span::raw(format!("  {}", command.help))));
        }
        lines.push(Line::default());
        lines.push(Line::from(Span::styled(
            "@path completes a repository file",
            theme.dim(),
        )));
        lines
    }
}

impl Modal for Help {
    fn render(&self, screen: Rect, buf: &mut Buffer, theme: Theme) {
        let lines = Help::lines(theme);
        let area = centered(screen, 56, lines.len() as u16 + 2);
        Clear.render(area, buf);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(theme.border())
            .title(" Help · ↑↓ scroll · Esc closes ");
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false })
            .scroll((self.scroll, 0))
            .render(area, buf);
    }

    fn on_key(&mut self, key: KeyEvent) -> Outcome {
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::Char('?') | KeyCode::Enter => {
                Outcome::Close
            }
            KeyCode::Down | KeyCode::Char('j') => {
                self.scroll = self.scroll.saturating_add(1);
                Outcome::Keep
            }
            KeyCode::Up | KeyCode::Char('k') => {
                self.scroll = self.scroll.saturating_sub(1);
                Outcome::Keep
            }
            KeyCode::PageDown | KeyCode::Char(' ') => {
                self.scroll = self.scroll.saturating_add(8);
                Outcome::Keep
            }
            KeyCode::PageUp => {
                self.scroll = self.scroll.saturating_sub(8);
                Outcome::Keep
            }
            _ => Outcome::Keep,
        }
    }
}
