//! The terminal's modes while the UI runs, and their restoration on every
//! way out: a normal exit, an error, a panic, a signal.
//!
//! Entering: raw mode (no echo, keys one by one), the alternate screen,
//! bracketed paste, mouse reporting (for the wheel), and where the terminal
//! supports it the keyboard protocol that tells Shift+Enter from Enter.
//! Restoring undoes each, in reverse, at most once.

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    KeyboardEnhancementFlags, PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use crossterm::{cursor, execute};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use std::io::{Stdout, Write, stdout};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

/// The terminal the UI draws on.
pub type Term = Terminal<CrosstermBackend<Stdout>>;

/// Set while the terminal is in the UI's modes.
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Whether keyboard enhancement flags were pushed (1) or not (0).
static ENHANCED: AtomicU8 = AtomicU8::new(0);

/// Restores the terminal when dropped.
pub struct Guard(());

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}

/// Put the terminal in the UI's modes; the guard puts it back.
pub fn enter() -> std::io::Result<(Term, Guard)> {
    install_panic_hook();
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let guard = Guard(());
    let mut out = stdout();
    execute!(
        out,
        EnterAlternateScreen,
        EnableBracketedPaste,
        EnableMouseCapture
    )?;
    if matches!(
        crossterm::terminal::supports_keyboard_enhancement(),
        Ok(true)
    ) {
        execute!(
            out,
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        )?;
        ENHANCED.store(1, Ordering::SeqCst);
    }
    let terminal = Terminal::new(CrosstermBackend::new(stdout()))?;
    Ok((terminal, guard))
}

/// Leave the UI's modes (idempotent; errors are ignored: there is nothing
/// better to do with a terminal that cannot be written to).
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = stdout();
    if ENHANCED.swap(0, Ordering::SeqCst) == 1 {
        let _ = execute!(out, PopKeyboardEnhancementFlags);
    }
    let _ = execute!(
        out,
        DisableMouseCapture,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        cursor::Show
    );
    let _ = disable_raw_mode();
    let _ = out.flush();
}

/// A panic restores the terminal before its message is printed, so the
/// message is readable and the shell usable.
fn install_panic_hook() {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
}
