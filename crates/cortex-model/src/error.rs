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
    /// 401/403: the message names the variable that holds the key.
    #[error("{0}")]
    Auth(String),
    /// 404: the model (or the endpoint) does not exist on that server.
    #[error("{0}")]
    NoSuchModel(String),
    /// The prompt does not fit the model's context window.
    #[error(
        "the conversation is too long for the model's context window ({0}); \
         the history has to be compacted before the next request, or a new session started"
    )]
    ContextTooLong(String),
    /// The provider refused or filtered the answer.
    #[error("the model's answer was blocked by the provider's content filter: {0}")]
    ContentFiltered(String),
    /// No response headers within the first-byte timeout.
    #[error("the model server did not answer in time: {0}")]
    Timeout(String),
}

impl ModelError {
    /// Whether trying the same request again may succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            ModelError::Connect(_) | ModelError::Stream(_) | ModelError::Timeout(_) => true,
            ModelError::Http { status, .. } => *status == 429 || *status >= 500,
            _ => false,
        }
    }
}
