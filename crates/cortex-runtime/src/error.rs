/// Why starting or talking to a guest failed. `Display` is a message for the
/// user.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// No ready guest: [`crate::GuestProvider::start`] failed.
    #[error("cannot start the guest ({program}): {reason}")]
    Start {
        /// What was being started: the agent's program, `docker image
        /// NAME`, or `remote guest at ADDR`.
        program: String,
        /// What went wrong, including the agent's last stderr lines when a
        /// local child died before answering.
        reason: String,
    },
    /// The connection to the agent has ended (see
    /// [`crate::Guest::ended_because`] for why); the guest will not answer
    /// again.
    #[error("the guest exited")]
    Exited,
    /// The agent did not answer a protocol request in time, refused it
    /// (`ok: false`, with its message), or answered something unreadable.
    #[error("the guest did not answer: {0}")]
    Protocol(String),
    /// Writing to a live connection failed, or a local path could not be
    /// resolved while starting.
    #[error("guest I/O: {0}")]
    Io(#[from] std::io::Error),
}
