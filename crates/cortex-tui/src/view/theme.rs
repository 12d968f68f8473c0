//! Styles. With `NO_COLOR` set (to anything but an empty string), no
//! colour is ever emitted; emphasis (bold, dim, italic, reverse) stays, and
//! every state also has a glyph or a word, so nothing depends on colour.

use cortex_protocol::Mode;
use ratatui::style::{Color, Modifier, Style};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    color: bool,
}

impl Theme {
    /// Colours unless `NO_COLOR` is set (<https://no-color.org>).
    pub fn from_env() -> Theme {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Theme { color: !no_color }
    }

    pub fn colored() -> Theme {
        Theme { color: true }
    }

    pub fn no_color() -> Theme {
        Theme { color: false }
    }

    pub fn has_color(self) -> bool {
        self.color
    }

    fn fg(self, color: Color) -> Style {
        if self.color {
            Style::new().fg(color)
        } else {
            Style::new()
        }
    }

    pub fn plain(self) -> Style {
        Style::new()
    }

    pub fn dim(self) -> Style {
        Style::new().add_modifier(Modifier::DIM)
    }

    pub fn bold(self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }

    pub fn italic(self) -> Style {
        Style::new().add_modifier(Modifier::ITALIC)
    }

    pub fn accent(self) -> Style {
        self.fg(Color::Cyan)
    }

    pub fn ok(self) -> Style {
        self.fg(Color::Green)
    }

    pub fn error(self) -> Style {
        self.fg(Color::Red)
    }

    pub fn warning(self) -> Style {
        self.fg(Color::Yellow)
    }

    pub fn user(self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }

    pub fn heading(self) -> Style {
        self.fg(Color::Magenta).add_modifier(Modifier::BOLD)
    }

    pub fn inline_code(self) -> Style {
        self.fg(Color::Cyan)
    }

    pub fn link(self) -> Style {
        self.fg(Color::Blue).add_modifier(Modifier::UNDERLINED)
    }

    pub fn added(self) -> Style {
        self.fg(Color::Green)
    }

    pub fn removed(self) -> Style {
        self.fg(Color::Red)
    }

    pub fn hunk(self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::DIM)
    }

    /// The selected row of a list.
    pub fn selected(self) -> Style {
        if self.color {
            Style::new().fg(Color::Black).bg(Color::Cyan)
        } else {
            Style::new().add_modifier(Modifier::REVERSED)
        }
    }

    pub fn border(self) -> Style {
        self.fg(Color::DarkGray)
    }

    /// The mode's name on the composer border: read-only modes in one
    /// colour, the mode that can change the workspace in another.
    pub fn mode(self, mode: Mode) -> Style {
        let color = match mode {
            Mode::Ask => Color::Cyan,
            Mode::Plan | Mode::Spec => Color::Magenta,
            Mode::Agent => Color::Green,
        };
        self.fg(color).add_modifier(Modifier::BOLD)
    }

    /// A syntax token class in a code block.
    pub fn token(self, token: Token) -> Style {
        match token {
            Token::Plain => Style::new(),
            Token::Keyword => self.fg(Color::Magenta),
            Token::String => self.fg(Color::Green),
            Token::Number => self.fg(Color::Yellow),
            Token::Comment => self.fg(Color::DarkGray).add_modifier(Modifier::ITALIC),
            Token::Type => self.fg(Color::Cyan),
            Token::Function => self.fg(Color::Blue),
            Token::Punctuation => Style::new(),
        }
    }
}

/// Token classes the code highlighter tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Token {
    Plain,
    Keyword,
    String,
    Number,
    Comment,
    Type,
    Function,
    Punctuation,
}
