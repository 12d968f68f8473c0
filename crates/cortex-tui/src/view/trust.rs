//! The trust prompt: the repository hook files the session found
//! untrusted, each named with its hooks, and a yes/no. `y` trusts exactly
//! the content shown (the sha256 the listing gave) through the same API
//! call `/hooks trust` uses; the server refuses a file that changed since.
//! `n` or Esc leaves them untrusted: their hooks keep not running, and
//! `/hooks` can trust them later. Every field comes from the repository:
//! each is cleaned.

use crate::app::command::{Command, HookFileView};
use crate::app::overlay::{Modal, Outcome, centered};
use crate::text::clean_line;
use crate::view::theme::Theme;
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Widget, Wrap};

/// Hooks named one by one; the rest are counted.
const SHOWN_HOOKS: usize = 12;

/// The prompt for the untrusted hook files found.
#[derive(Debug)]
pub struct TrustPrompt {
    files: Vec<HookFileView>,
}

impl TrustPrompt {
    /// Ask about `files` as the listing showed them.
    pub fn new(files: Vec<HookFileView>) -> TrustPrompt {
        TrustPrompt { files }
    }

    fn lines(&self, theme: Theme) -> Vec<Line<'static>> {
        let mut lines = Vec::new();
        for file in &self.files {
            let hooks = match file.hooks.len() {
                1 => "1 hook that does".to_owned(),
                n => format!("{n} hooks that do"),
            };
            lines.push(Line::from(vec![
                Span::styled(clean_line(&file.file), theme.accent()),
                Span::raw(format!(" has {hooks} not run: it is not trusted.")),
            ]));
            for hook in file.hooks.iter().take(SHOWN_HOOKS) {
                lines.push(Line::from(Span::raw(format!("  {}", clean_line(hook)))));
            }
            if file.hooks.len() > SHOWN_HOOKS {
                lines.push(Line::from(Span::styled(
                    format!("  … {} more (/hooks)", file.hooks.len() - SHOWN_HOOKS),
                    theme.dim(),
                )));
            }
            lines.push(Line::default());
        }
        lines.push(Line::from(Span::raw(
            "Trusted, they run in the guest (never on the host) from the next turn, \
             until the file changes.",
        )));
        lines.push(Line::from(vec![
            Span::styled("y", theme.accent()),
            Span::raw(" trust this exact content · "),
            Span::styled("n", theme.accent()),
            Span::raw(" not now"),
        ]));
        lines
    }
}

impl Modal for TrustPrompt {
    fn render(&self, screen: Rect, buf: &mut Buffer, theme: Theme) {
        let lines = self.lines(theme);
        let area = centered(screen, 72, (lines.len() as u16).saturating_add(4));
        Clear.render(area, buf);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(theme.border())
            .title(" Trust the repository's hooks? ");
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false })
            .render(area, buf);
    }

    fn on_key(&mut self, key: KeyEvent) -> Outcome {
        match key.code {
            KeyCode::Char('y') | KeyCode::Char('Y') => Outcome::Run(Command::TrustHooks(
                self.files
                    .iter()
                    .map(|f| (f.file.clone(), f.sha256.clone()))
                    .collect(),
            )),
            KeyCode::Char('n') | KeyCode::Char('N') | KeyCode::Esc => Outcome::Close,
            _ => Outcome::Keep,
        }
    }
}
