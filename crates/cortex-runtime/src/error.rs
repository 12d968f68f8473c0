#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("cannot start the guest ({program}): {reason}")]
    Start { program: String, reason: String },
    #[error("the guest exited")]
    Exited,
    #[error("the guest did not answer: {0}")]
    Protocol(String),
    #[error("guest I/O: {0}")]
    Io(#[from] std::io::Error),
}
