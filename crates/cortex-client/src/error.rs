//! What a call of the API can fail with.

use cortex_api::ErrorBody;

/// What a call of the API can fail with. Only [`ClientError::Api`] means the
/// server answered; the others mean the request (or its answer) did not get
/// through, and the server may or may not have acted on it.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The endpoint is neither `http://HOST:PORT` nor `unix:PATH`.
    #[error("`{0}` is not a server address (expected http://HOST:PORT or unix:PATH)")]
    BadUrl(String),
    /// No connection to the server could be opened.
    #[error("cannot connect to the server at {0}")]
    Connect(String),
    /// The connection failed while the request or its answer was under way.
    #[error("HTTP error: {0}")]
    Http(String),
    /// The server's JSON error answer.
    #[error("{message} ({status} {code})")]
    Api {
        /// The HTTP status (4xx or 5xx).
        status: u16,
        /// The error body's `code` (`not_found`, `conflict`, …), or `unknown`
        /// when the body was not the API's error body.
        code: String,
        /// The error body's message (or the body itself, when it was not one).
        message: String,
    },
    /// A success answer whose body is not what the call expects.
    #[error("unexpected answer from the server: {0}")]
    Decode(String),
    /// The request's body could not be encoded as JSON.
    #[error("cannot encode the request: {0}")]
    Encode(#[source] serde_json::Error),
}

impl ClientError {
    pub(crate) fn from_answer(status: u16, body: &[u8]) -> ClientError {
        match serde_json::from_slice::<ErrorBody>(body) {
            Ok(b) => ClientError::Api {
                status,
                code: b.error.code,
                message: b.error.message,
            },
            Err(_) => ClientError::Api {
                status,
                code: "unknown".into(),
                message: String::from_utf8_lossy(body).into_owned(),
            },
        }
    }

    /// The API's status, for callers that treat some (404, 409) specially.
    pub fn status(&self) -> Option<u16> {
        match self {
            ClientError::Api { status, .. } => Some(*status),
            _ => None,
        }
    }
}
