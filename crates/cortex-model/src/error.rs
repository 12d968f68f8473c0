/// Why a model call failed. `Display` is a message for the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// The request could not be sent (DNS, refused, TLS, connect timeout).
    /// Retryable.
    #[error("cannot reach the model server: {0}")]
    Connect(String),
    /// An error status not given a variant of its own. Retryable when 429
    /// or 5xx.
    #[error("the model server answered {status}: {body}")]
    Http {
        /// The HTTP status code.
        status: u16,
        /// The start of the response body (about 2 KiB at most).
        body: String,
    },
    /// The response broke off: the connection closed before the response
    /// finished, a read failed, no data within the idle timeout, or the
    /// server reported an overload or server error mid-stream; also the
    /// embedded model failing to decode or its thread being gone. Retryable
    /// (the turn loop retries the round).
    #[error("the model stream was cut mid-way: {0}")]
    Stream(String),
    /// The server answered something that is not the wire format (bad JSON,
    /// not an event stream), or the request could not be encoded. Not
    /// retryable.
    #[error("the model server sent something unreadable: {0}")]
    Protocol(String),
    /// The provider cannot be built or used as configured (bad base URL,
    /// no API key, the embedded model cannot load or render).
    #[error("model configuration: {0}")]
    Config(String),
    /// The scripted provider's script is malformed or exhausted.
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
