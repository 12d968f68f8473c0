//! The interactive terminal UI of Cortex Code, a client of the session API
//! like `cortex exec`.
//!
//! - `state`: the session as a fold of its timeline events; the only source
//!   of what the transcript shows, so `cortex attach` and a reconnect that
//!   replays from the last seq show the same screen.
//! - `app`: that state plus this screen's own (composer, scroll, overlay),
//!   changed by keys, events and API answers, with no I/O.
//! - `view`: one widget per concern (transcript, tool row, diff, composer,
//!   status line, help, session picker), drawing the app.
//! - `runtime`: the event loop, the terminal's modes, the event stream and
//!   the API calls.
//!
//! Everything the model or a tool produced is sanitised when the fold
//! stores it (`text::clean`), before any widget sees it.

#![warn(missing_docs)]

pub mod app;
mod error;
#[cfg(feature = "runtime")]
pub mod runtime;
#[doc(hidden)]
pub mod script;
pub mod state;
pub mod text;
pub mod time;
pub mod view;

pub use error::TuiError;
#[cfg(feature = "runtime")]
pub use runtime::{Exit, NewSessions};

use std::io::IsTerminal;

/// The context window of a model by its `PROVIDER:NAME`, when known.
pub type ContextWindow = Box<dyn Fn(&str) -> Option<u64> + Send>;

/// `/doctor`: the embedding program's checks (`cortex doctor`) for the
/// shown session's repository, as lines.
pub type Doctor = Box<
    dyn Fn(
            String,
        ) -> std::pin::Pin<
            Box<dyn std::future::Future<Output = Vec<app::command::ReportLine>> + Send>,
        > + Send,
>;

/// What the UI starts with.
#[cfg(feature = "runtime")]
pub struct Launch {
    /// The API client the UI drives the session through.
    pub client: cortex_client::Client,
    /// The session to show (its whole timeline is replayed).
    pub session: cortex_protocol::SessionId,
    /// How `/new` creates a session like this one.
    pub new_sessions: NewSessions,
    /// The context window of a model by its `PROVIDER:NAME`, when the
    /// client knows it (the status line's fill until an event says).
    pub context_window: ContextWindow,
    /// What `/doctor` runs.
    pub doctor: Doctor,
    /// The user's own project instructions (`AGENTS.md` in Cortex's config
    /// folder), which the first screen names before any turn read them.
    pub user_instructions: Option<std::path::PathBuf>,
}

/// Whether stdin and stdout are terminals; the UI needs both.
pub fn check_terminal() -> Result<(), TuiError> {
    if !std::io::stdin().is_terminal() {
        return Err(TuiError::NotATerminal("stdin"));
    }
    if !std::io::stdout().is_terminal() {
        return Err(TuiError::NotATerminal("stdout"));
    }
    Ok(())
}

/// Run the UI until the user quits; the terminal is restored on return,
/// on error and on panic.
#[cfg(feature = "runtime")]
pub async fn run(launch: Launch) -> Result<Exit, TuiError> {
    check_terminal()?;
    runtime::run(launch).await
}
