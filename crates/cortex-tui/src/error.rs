//! What can end the UI with an error.

/// Why the UI ended with an error.
#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    /// The terminal UI draws on a terminal only.
    #[error("{0} is not a terminal")]
    NotATerminal(&'static str),
    /// Reading keys from or drawing to the terminal failed.
    #[error("terminal: {0}")]
    Terminal(#[source] std::io::Error),
}
