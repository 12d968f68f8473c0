/// Why a model call failed. `Display` is a message for the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    #[error("cannot reach the model server: {0}")]
    Connect(String),
    #[error("the model server answered {status}: {body}")]
    Http { status: u16, body: String },
    #[error("the model stream was cut mid-way: {0}")]
    Stream(String),
    #[error("the model server sent something unreadable: {0}")]
    Protocol(String),
    #[error("model configuration: {0}")]
    Config(String),
    #[error("scripted model: {0}")]
    Script(String),
}

impl ModelError {
    /// Whether trying the same request again may succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            ModelError::Connect(_) | ModelError::Stream(_) => true,
            ModelError::Http { status, .. } => *status == 429 || *status >= 500,
            _ => false,
        }
    }
}
