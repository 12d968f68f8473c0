//! Styles. With `NO_COLOR` set (to anything but an empty string), no
//! colour is ever emitted; emphasis (bold, dim, italic, reverse) stays, and
//! every state also has a glyph or a word, so nothing depends on colour.

use cortex_protocol::Mode;
use ratatui::style::{Color, Modifier, Style};

/// The styles every widget draws with; all plain under `NO_COLOR`.
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

    /// With colours.
    pub fn colored() -> Theme {
        Theme { color: true }
    }

    /// Without colours.
    pub fn no_color() -> Theme {
        Theme { color: false }
    }

    /// Whether colours are on.
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

    /// Ordinary text.
    pub fn plain(self) -> Style {
        Style::new()
    }

    /// Secondary text.
    pub fn dim(self) -> Style {
        Style::new().add_modifier(Modifier::DIM)
    }

    /// Bold text.
    pub fn bold(self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }

    /// Italic text.
    pub fn italic(self) -> Style {
        Style::new().add_modifier(Modifier::ITALIC)
    }

    /// What the eye should find (the spinner, the selection).
    pub fn accent(self) -> Style {
        self.fg(Color::Cyan)
    }

    /// Success.
    pub fn ok(self) -> Style {
        self.fg(Color::Green)
    }

    /// Errors.
    pub fn error(self) -> Style {
        self.fg(Color::Red)
    }

    /// Warnings.
    pub fn warning(self) -> Style {
        self.fg(Color::Yellow)
    }

    /// The user's messages.
    pub fn user(self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }

    /// Markdown headings.
    pub fn heading(self) -> Style {
        self.fg(Color::Magenta).add_modifier(Modifier::BOLD)
    }

    /// Inline code.
    pub fn inline_code(self) -> Style {
        self.fg(Color::Cyan)
    }

    /// Links.
    pub fn link(self) -> Style {
        self.fg(Color::Blue).add_modifier(Modifier::UNDERLINED)
    }

    /// Added diff lines.
    pub fn added(self) -> Style {
        self.fg(Color::Green)
    }

    /// Removed diff lines.
    pub fn removed(self) -> Style {
        self.fg(Color::Red)
    }

    /// Diff hunk headers.
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

    /// Box borders.
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
    /// Anything else.
    Plain,
    /// A keyword.
    Keyword,
    /// A string literal.
    String,
    /// A number.
    Number,
    /// A comment.
    Comment,
    /// A type name.
    Type,
    /// A function name.
    Function,
    /// Punctuation.
    Punctuation,
}
