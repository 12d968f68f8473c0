//! Keys and the mouse wheel.
//!
//! Enter sends; Alt+Enter, Shift+Enter (where the terminal reports it) and
//! Ctrl+J start a new line; Shift+Tab cycles the mode; Esc stops the turn;
//! Ctrl+C clears the composer and quits when pressed twice in a row; Esc
//! twice on an empty composer between turns opens `/rewind`. While
//! a call waits for approval and the composer is empty, `y` allows it once,
//! `n` denies it and `a` allows it always, and Up/Down/PgUp/PgDn scroll
//! the approval panel when it is taller than its space (`approval.rs`).
//! Between turns, while a plan or spec phase waits, Ctrl+Y accepts it and
//! Ctrl+R rejects it: the next message is the feedback (Esc cancels).

use crate::app::overlay::Outcome as ModalOutcome;
use crate::app::{App, Command};
use crate::view::help::Help;
use cortex_protocol::Mode;
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind};

/// Rows one notch of the mouse wheel scrolls.
const WHEEL_ROWS: usize = 3;

impl App {
    /// Handle one key press; the commands it asks of the runtime.
    pub fn on_key(&mut self, key: KeyEvent) -> Vec<Command> {
        if key.kind == KeyEventKind::Release {
            return Vec::new();
        }
        let ctrl_c =
            key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL);
        let was_armed = std::mem::replace(&mut self.ctrl_c, false);
        let esc_armed = std::mem::replace(&mut self.esc, false);
        self.flash = None;
        if let Some(modal) = &mut self.overlay {
            if ctrl_c {
                self.overlay = None;
                return Vec::new();
            }
            return match modal.on_key(key) {
                ModalOutcome::Keep => Vec::new(),
                ModalOutcome::Close => {
                    self.overlay = None;
                    Vec::new()
                }
                ModalOutcome::Run(command) => {
                    self.overlay = None;
                    vec![command]
                }
            };
        }
        if ctrl_c {
            return self.ctrl_c(was_armed);
        }
        if key.code == KeyCode::Esc && esc_armed && self.editor.is_empty() {
            return self.open_rewind();
        }
        self.key(key)
    }

    /// Clear the composer; a second Ctrl+C in a row quits.
    fn ctrl_c(&mut self, was_armed: bool) -> Vec<Command> {
        if was_armed {
            return vec![Command::Quit];
        }
        self.ctrl_c = true;
        if self.editor.is_empty() {
            self.flash("Ctrl+C again to quit");
        } else {
            self.editor.clear();
            self.completion = Default::default();
            self.flash("cleared · Ctrl+C again to quit");
        }
        Vec::new()
    }

    fn key(&mut self, key: KeyEvent) -> Vec<Command> {
        let mods = key.modifiers;
        let ctrl = mods.contains(KeyModifiers::CONTROL);
        let alt = mods.contains(KeyModifiers::ALT);
        let shift = mods.contains(KeyModifiers::SHIFT);
        if let Some(answer) = self.approval_key(key.code, ctrl || alt) {
            return answer;
        }
        match key.code {
            KeyCode::Enter if alt || shift => self.newline(),
            KeyCode::Char('j') if ctrl => self.newline(),
            KeyCode::Enter => self.enter(),
            KeyCode::BackTab => self.cycle_mode(),
            KeyCode::Tab => self.tab(),
            KeyCode::Esc => self.escape(),
            KeyCode::Up => self.up(),
            KeyCode::Down => self.down(),
            KeyCode::PageUp => {
                self.transcript.scroll_up(self.transcript.page());
                Vec::new()
            }
            KeyCode::PageDown => {
                self.transcript.scroll_down(self.transcript.page());
                Vec::new()
            }
            KeyCode::Char('y') if ctrl && self.state.review.is_some() => self.decide(None, false),
            KeyCode::Char('r') if ctrl && self.state.review.is_some() => self.decide(None, true),
            KeyCode::Char('o') if ctrl => {
                self.expanded = !self.expanded;
                Vec::new()
            }
            KeyCode::Char('l') if ctrl => {
                self.repaint = true;
                Vec::new()
            }
            KeyCode::Char('?') if self.editor.is_empty() => {
                self.overlay = Some(Box::new(Help::default()));
                Vec::new()
            }
            KeyCode::End if self.editor.is_empty() || ctrl => {
                self.transcript.to_bottom();
                Vec::new()
            }
            KeyCode::Home if ctrl => {
                self.transcript.scroll_up(usize::MAX / 2);
                Vec::new()
            }
            _ => self.edit(key.code, ctrl, alt),
        }
    }

    /// Keys that edit the composer's text.
    fn edit(&mut self, code: KeyCode, ctrl: bool, alt: bool) -> Vec<Command> {
        let e = &mut self.editor;
        match code {
            KeyCode::Char('a') if ctrl => e.home(),
            KeyCode::Char('e') if ctrl => e.end(),
            KeyCode::Char('u') if ctrl => e.kill_to_start(),
            KeyCode::Char('k') if ctrl => e.kill_to_end(),
            KeyCode::Char('w') if ctrl => e.delete_word(),
            KeyCode::Char('b') if alt => e.word_left(),
            KeyCode::Char('f') if alt => e.word_right(),
            KeyCode::Left if ctrl || alt => e.word_left(),
            KeyCode::Right if ctrl || alt => e.word_right(),
            KeyCode::Backspace if ctrl || alt => e.delete_word(),
            KeyCode::Char(_) if ctrl || alt => return Vec::new(),
            KeyCode::Char(c) => e.insert_char(c),
            KeyCode::Backspace => e.backspace(),
            KeyCode::Delete => e.delete(),
            KeyCode::Left => e.left(),
            KeyCode::Right => e.right(),
            KeyCode::Home => e.home(),
            KeyCode::End => e.end(),
            _ => return Vec::new(),
        }
        self.edited()
    }

    fn newline(&mut self) -> Vec<Command> {
        self.editor.insert_char('\n');
        self.edited()
    }

    fn enter(&mut self) -> Vec<Command> {
        if let Some(item) = self.completion_shown().and_then(|c| c.selected()).cloned() {
            let slash = item.replacement.starts_with('/');
            let whole = self.editor.text() == item.replacement.trim_end();
            if !(slash && whole) {
                self.editor.replace_word(&item.replacement);
                self.completion = Default::default();
                // A command that takes no argument runs at once.
                if !slash || item.replacement.ends_with(' ') {
                    return self.edited();
                }
            }
        }
        self.submit()
    }

    fn tab(&mut self) -> Vec<Command> {
        match self.completion_shown().and_then(|c| c.selected()).cloned() {
            Some(item) => {
                self.editor.replace_word(&item.replacement);
                self.edited()
            }
            None => Vec::new(),
        }
    }

    fn escape(&mut self) -> Vec<Command> {
        if self.completion_shown().is_some() {
            self.completion_closed = true;
            return Vec::new();
        }
        if self.cancel_reject() {
            self.flash("not rejected");
            return Vec::new();
        }
        if self.state.running() {
            self.flash("stopping…");
            return vec![Command::Stop];
        }
        if !self.transcript.following() {
            self.transcript.to_bottom();
        }
        // Esc Esc on an empty composer between turns: `/rewind`.
        self.esc = self.editor.is_empty();
        Vec::new()
    }

    /// Shift+Tab: Ask → Plan → Spec → Agent → Ask.
    fn cycle_mode(&mut self) -> Vec<Command> {
        let next = match self.mode() {
            Mode::Ask => Mode::Plan,
            Mode::Plan => Mode::Spec,
            Mode::Spec => Mode::Agent,
            Mode::Agent => Mode::Ask,
        };
        self.choose_mode(next)
    }

    fn up(&mut self) -> Vec<Command> {
        if self.completion_shown().is_some() {
            self.completion.prev();
        } else if self.editor.on_first_line() {
            self.history(-1);
        } else {
            self.editor.up();
        }
        Vec::new()
    }

    fn down(&mut self) -> Vec<Command> {
        if self.completion_shown().is_some() {
            self.completion.next();
        } else if self.editor.on_last_line() {
            self.history(1);
        } else {
            self.editor.down();
        }
        Vec::new()
    }

    /// Step through the session's messages (oldest first); past the newest
    /// comes back what was being written.
    fn history(&mut self, step: isize) {
        let messages = &self.state.messages;
        if messages.is_empty() {
            return;
        }
        let next = match (self.history_pos, step < 0) {
            (None, true) => {
                self.draft = self.editor.text().to_owned();
                Some(messages.len() - 1)
            }
            (None, false) => None,
            (Some(0), true) => Some(0),
            (Some(pos), true) => Some(pos - 1),
            (Some(pos), false) if pos + 1 < messages.len() => Some(pos + 1),
            (Some(_), false) => None,
        };
        match next {
            Some(pos) => self.editor.set(&messages[pos]),
            None if self.history_pos.is_some() => {
                let draft = std::mem::take(&mut self.draft);
                self.editor.set(&draft);
            }
            None => {}
        }
        self.history_pos = next;
    }

    /// Handle one mouse event (the wheel scrolls); the commands it asks for.
    pub fn on_mouse(&mut self, mouse: MouseEvent) -> Vec<Command> {
        match mouse.kind {
            MouseEventKind::ScrollUp => self.transcript.scroll_up(WHEEL_ROWS),
            MouseEventKind::ScrollDown => self.transcript.scroll_down(WHEEL_ROWS),
            _ => {}
        }
        Vec::new()
    }
}
