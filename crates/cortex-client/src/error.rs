//! What a call of the API can fail with.

use cortex_api::ErrorBody;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("`{0}` is not a server address (expected http://HOST:PORT or unix:PATH)")]
    BadUrl(String),
    #[error("cannot connect to the server at {0}")]
    Connect(String),
    #[error("HTTP error: {0}")]
    Http(String),
    /// The server's JSON error answer.
    #[error("{message} ({status} {code})")]
    Api {
        status: u16,
        code: String,
        message: String,
    },
    #[error("unexpected answer from the server: {0}")]
    Decode(String),
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
