//! `/rewind` (and Esc Esc on an empty composer): two modals.
//!
//! [`TurnList`] lists the conversation's turns, newest first, each with its
//! prompt's first line and the files its tools wrote (and how many
//! commands it ran, whose changes only the preview can name); Enter asks
//! the API for a dry run of rewinding to before it. [`RewindPanel`] shows
//! that answer before anything is applied: the files a rewind would
//! restore, remove and bring back, how many turns a conversation rewind
//! takes out of the history, and the scope (files, conversation, both) to
//! choose. Files the user changed outside the session come first, named,
//! and a rewind that would overwrite them asks once more (`y`), which is
//! the API's `force`. Every text here was sanitised before it arrived
//! (the state's fold, the app's [`RewindPanel::new`]).

use crate::app::command::{Command, FilesPreview};
use crate::app::overlay::{Modal, Outcome, centered};
use crate::state::TurnEntry;
use crate::text;
use crate::view::theme::Theme;
use crate::view::wrap::{Para, wrap_all};
use cortex_protocol::RewindScope;
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Widget};
use std::cell::Cell;

/// The list of turns to rewind to before.
#[derive(Debug)]
pub struct TurnList {
    /// Newest first, with each turn's number in the conversation.
    turns: Vec<(usize, TurnEntry)>,
    selected: usize,
}

impl TurnList {
    /// A list over `turns` (oldest first, as the state keeps them), the
    /// newest selected.
    pub fn new(turns: &[TurnEntry]) -> TurnList {
        TurnList {
            turns: turns.iter().cloned().enumerate().rev().collect(),
            selected: 0,
        }
    }
}

/// `a.py, b.txt · 2 commands`, or what the turn did not do.
fn files_line(turn: &TurnEntry) -> String {
    let mut parts = Vec::new();
    if !turn.files.is_empty() {
        parts.push(turn.files.join(", "));
    }
    match turn.commands {
        0 => {}
        1 => parts.push("1 command".to_owned()),
        n => parts.push(format!("{n} commands")),
    }
    if parts.is_empty() {
        "no file written".to_owned()
    } else {
        parts.join(" · ")
    }
}

fn boxed(area: Rect, buf: &mut Buffer, theme: Theme, title: &str, keys: Line<'static>) -> Rect {
    Clear.render(area, buf);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(theme.border())
        .title(title.to_owned())
        .title_bottom(keys);
    let inner = block.inner(area);
    block.render(area, buf);
    inner
}

fn row(buf: &mut Buffer, inner: Rect, y: u16, text: &str, style: Style) {
    let width = usize::from(inner.width);
    let shown = format!("{:<width$}", text::truncate(text, width));
    buf.set_line(
        inner.x,
        y,
        &Line::from(Span::styled(shown, style)),
        inner.width,
    );
}

impl Modal for TurnList {
    fn render(&self, screen: Rect, buf: &mut Buffer, theme: Theme) {
        let rows = (self.turns.len().max(1) * 2) as u16;
        let area = centered(screen, 72, rows + 2);
        let keys = Line::from(Span::styled(" Enter previews · Esc ", theme.bold()));
        let inner = boxed(area, buf, theme, " Rewind to before ", keys);
        if inner.height == 0 {
            return;
        }
        if self.turns.is_empty() {
            row(buf, inner, inner.y, "no turn to rewind", theme.dim());
            return;
        }
        // Two rows a turn: keep the selected one's both in view.
        let shown = usize::from(inner.height).div_ceil(2).max(1);
        let first = (self.selected + 1).saturating_sub(shown);
        let mut y = inner.y;
        for (i, (number, turn)) in self.turns.iter().enumerate().skip(first) {
            if y >= inner.bottom() {
                break;
            }
            let style = if i == self.selected {
                theme.selected()
            } else {
                theme.plain()
            };
            row(
                buf,
                inner,
                y,
                &format!("{}. {}", number + 1, turn.prompt),
                style,
            );
            y += 1;
            if y < inner.bottom() {
                row(
                    buf,
                    inner,
                    y,
                    &format!("   {}", files_line(turn)),
                    theme.dim(),
                );
                y += 1;
            }
        }
    }

    fn on_key(&mut self, key: KeyEvent) -> Outcome {
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => Outcome::Close,
            KeyCode::Down | KeyCode::Char('j') => {
                if self.selected + 1 < self.turns.len() {
                    self.selected += 1;
                }
                Outcome::Keep
            }
            KeyCode::Up | KeyCode::Char('k') => {
                self.selected = self.selected.saturating_sub(1);
                Outcome::Keep
            }
            KeyCode::Enter => match self.turns.get(self.selected) {
                Some((_, turn)) => Outcome::Run(Command::PreviewRewind {
                    turn_id: turn.id.clone(),
                }),
                None => Outcome::Close,
            },
            _ => Outcome::Keep,
        }
    }
}

/// What rewinding to before one turn would change, and the scope.
#[derive(Debug)]
pub struct RewindPanel {
    turn_id: String,
    prompt: String,
    /// Turns a conversation rewind takes out of the history.
    going: usize,
    /// The files' diff, or why the files cannot be rewound.
    files: Result<FilesPreview, String>,
    scope: RewindScope,
    /// Waiting for `y`: the rewind overwrites files changed outside.
    confirming: bool,
    /// The first content row shown.
    top: usize,
    /// How far down the content can scroll, as the last frame drew it
    /// (rows wrap to the width, which only drawing knows).
    bottom: Cell<usize>,
}

impl RewindPanel {
    /// The panel for `turn` (its prompt already clean), `going` turns in
    /// the conversation from it on, and the API's dry run, whose paths and
    /// error are cleaned here.
    pub fn new(
        turn_id: String,
        prompt: String,
        going: usize,
        files: Result<FilesPreview, String>,
    ) -> RewindPanel {
        let clean =
            |v: Vec<String>| -> Vec<String> { v.iter().map(|p| text::clean_line(p)).collect() };
        let files = match files {
            Ok(p) => Ok(FilesPreview {
                diff: cortex_protocol::RewindDiff {
                    created: clean(p.diff.created),
                    changed: clean(p.diff.changed),
                    deleted: clean(p.diff.deleted),
                },
                changed_outside: clean(p.changed_outside),
            }),
            Err(why) => Err(text::clean_line(&why)),
        };
        let scope = if files.is_ok() {
            RewindScope::Both
        } else {
            RewindScope::Conversation
        };
        RewindPanel {
            turn_id,
            prompt,
            going,
            files,
            scope,
            confirming: false,
            top: 0,
            bottom: Cell::new(0),
        }
    }

    /// The scope chosen now.
    pub fn scope(&self) -> RewindScope {
        self.scope
    }

    /// The scopes that can be chosen: the conversation only when the files
    /// cannot be rewound.
    fn scopes(&self) -> &'static [RewindScope] {
        if self.files.is_ok() {
            &[
                RewindScope::Both,
                RewindScope::Files,
                RewindScope::Conversation,
            ]
        } else {
            &[RewindScope::Conversation]
        }
    }

    fn choose(&mut self, scope: RewindScope) {
        if self.scopes().contains(&scope) {
            self.scope = scope;
            self.confirming = false;
        }
    }

    fn cycle(&mut self, step: isize) {
        let scopes = self.scopes();
        let at = scopes.iter().position(|s| *s == self.scope).unwrap_or(0);
        let next = (at as isize + step).rem_euclid(scopes.len() as isize) as usize;
        self.choose(scopes[next]);
    }

    /// The user's files a rewind of this scope would overwrite.
    fn overwrites(&self) -> &[String] {
        match &self.files {
            Ok(p) if self.scope.files() => &p.changed_outside,
            _ => &[],
        }
    }

    fn apply(&self, force: bool) -> Outcome {
        Outcome::Run(Command::Rewind {
            turn_id: Some(self.turn_id.clone()),
            scope: self.scope,
            force,
        })
    }

    /// Every content row, unwrapped (each truncated to the width).
    fn lines(&self, theme: Theme) -> Vec<(String, Style)> {
        let mut lines = vec![(format!("before: {}", self.prompt), theme.bold())];
        let names = [
            (RewindScope::Both, "both"),
            (RewindScope::Files, "files"),
            (RewindScope::Conversation, "conversation"),
        ];
        let scopes: Vec<String> = names
            .iter()
            .filter(|(s, _)| self.scopes().contains(s))
            .map(|(s, name)| {
                if *s == self.scope {
                    format!("[{name}]")
                } else {
                    (*name).to_owned()
                }
            })
            .collect();
        lines.push((format!("scope: {}", scopes.join(" ")), theme.accent()));
        lines.push(if self.scope.conversation() {
            let turns = if self.going == 1 { "turn" } else { "turns" };
            (
                format!("conversation: {} {turns} go", self.going),
                theme.plain(),
            )
        } else {
            ("conversation: kept".to_owned(), theme.dim())
        });
        match (&self.files, self.scope.files()) {
            (Err(why), _) => lines.push((format!("files: cannot rewind: {why}"), theme.warning())),
            (Ok(_), false) => lines.push(("files: left as they are".to_owned(), theme.dim())),
            (Ok(p), true) if p.diff.is_empty() => {
                lines.push(("files: nothing to change".to_owned(), theme.plain()))
            }
            (Ok(p), true) => {
                let d = &p.diff;
                lines.push((
                    format!(
                        "files: {} restored · {} removed · {} recreated",
                        d.changed.len(),
                        d.deleted.len(),
                        d.created.len()
                    ),
                    theme.plain(),
                ));
                if !p.changed_outside.is_empty() {
                    lines.push((
                        format!("changed outside the session ({}):", p.changed_outside.len()),
                        theme.warning(),
                    ));
                    for path in &p.changed_outside {
                        lines.push((format!("  ! {path}"), theme.warning()));
                    }
                }
                for (mark, paths, style) in [
                    ('~', &d.changed, theme.plain()),
                    ('-', &d.deleted, theme.removed()),
                    ('+', &d.created, theme.added()),
                ] {
                    for path in paths {
                        lines.push((format!("{mark} {path}"), style));
                    }
                }
            }
        }
        lines
    }

    fn keys(&self, theme: Theme) -> Line<'static> {
        if self.confirming {
            let n = self.overwrites().len();
            return Line::from(Span::styled(
                format!(" y overwrites {n} · n keeps them "),
                theme.warning(),
            ));
        }
        Line::from(Span::styled(
            " Enter rewinds · Tab scope · Esc ",
            theme.bold(),
        ))
    }
}

impl Modal for RewindPanel {
    fn render(&self, screen: Rect, buf: &mut Buffer, theme: Theme) {
        // Long paths and counts wrap (a path is named whole, never cut),
        // continuation rows indented.
        let paras: Vec<Para> = self
            .lines(theme)
            .into_iter()
            .map(|(text, style)| {
                Para::hanging(
                    Line::from(Span::styled(text, style)),
                    vec![Span::raw("    ")],
                )
            })
            .collect();
        let width = usize::from(centered(screen, 72, 3).width.saturating_sub(2));
        let mut rows = Vec::new();
        wrap_all(&paras, width, &mut rows);
        let area = centered(
            screen,
            72,
            u16::try_from(rows.len() + 2).unwrap_or(u16::MAX),
        );
        let inner = boxed(area, buf, theme, " Rewind ", self.keys(theme));
        let view = usize::from(inner.height);
        let bottom = rows.len().saturating_sub(view);
        self.bottom.set(bottom);
        let top = self.top.min(bottom);
        for (i, line) in rows.iter().skip(top).take(view).enumerate() {
            buf.set_line(inner.x, inner.y + i as u16, line, inner.width);
        }
    }

    fn on_key(&mut self, key: KeyEvent) -> Outcome {
        if self.confirming {
            return match key.code {
                KeyCode::Char('y') => self.apply(true),
                KeyCode::Char('n') | KeyCode::Esc => {
                    self.confirming = false;
                    Outcome::Keep
                }
                _ => Outcome::Keep,
            };
        }
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => Outcome::Close,
            KeyCode::Tab | KeyCode::Right => {
                self.cycle(1);
                Outcome::Keep
            }
            KeyCode::BackTab | KeyCode::Left => {
                self.cycle(-1);
                Outcome::Keep
            }
            KeyCode::Char('b') => {
                self.choose(RewindScope::Both);
                Outcome::Keep
            }
            KeyCode::Char('f') => {
                self.choose(RewindScope::Files);
                Outcome::Keep
            }
            KeyCode::Char('c') => {
                self.choose(RewindScope::Conversation);
                Outcome::Keep
            }
            KeyCode::Down | KeyCode::Char('j') => {
                self.top = (self.top + 1).min(self.bottom.get());
                Outcome::Keep
            }
            KeyCode::Up | KeyCode::Char('k') => {
                self.top = self.top.min(self.bottom.get()).saturating_sub(1);
                Outcome::Keep
            }
            KeyCode::Enter if self.overwrites().is_empty() => self.apply(false),
            KeyCode::Enter => {
                self.confirming = true;
                Outcome::Keep
            }
            _ => Outcome::Keep,
        }
    }
}
