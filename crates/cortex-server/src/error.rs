//! The API's one error shape: `{"error": {"code", "message"}}` with a 4xx or
//! 5xx status. Every extractor rejection is mapped here, so malformed input
//! never reaches a handler and never answers with axum's plain-text bodies.

use axum::Json;
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use cortex_api::{ErrorBody, ErrorDetail};
use cortex_core::checkpoint::CheckpointError;
use cortex_core::{CoreError, RewindError};
use cortex_store::StoreError;

/// An error answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status (4xx or 5xx).
    pub status: StatusCode,
    /// The error body's machine-readable code (`bad_request`, `not_found`, …).
    pub code: &'static str,
    /// The error body's message, for humans.
    pub message: String,
    /// The paths the error is about (a rewind's `changed_outside`).
    pub paths: Vec<String>,
}

impl ApiError {
    /// An answer with `status`, `code` and `message`.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
            paths: Vec::new(),
        }
    }

    /// 400 `bad_request`: the request itself is wrong.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    /// The same answer whether the session does not exist or belongs to
    /// someone else: no existence leak.
    pub fn no_session(id: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no session `{id}`"),
        )
    }

    /// 409 `conflict`: the request does not fit the session's state now (a
    /// turn runs, nothing waits for a verdict).
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, "conflict", message)
    }

    /// 401 `unauthorized`: no bearer token, or one the server does not know.
    pub fn unauthorized() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "missing or unknown bearer token (send `Authorization: Bearer TOKEN`)",
        )
    }

    /// 500 `internal`: the server failed (a store error); not the client's doing.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code.to_owned(),
                message: self.message,
                paths: self.paths,
            },
        };
        let mut response = (self.status, Json(body)).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer"),
            );
        }
        response
    }
}

impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> Self {
        let status = rejection.status();
        let code = match status {
            StatusCode::PAYLOAD_TOO_LARGE => "payload_too_large",
            StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
            StatusCode::UNPROCESSABLE_ENTITY => "invalid_body",
            _ => "bad_request",
        };
        // Anything a client sent is a client error, whatever axum thinks.
        let status = if status.is_client_error() {
            status
        } else {
            StatusCode::BAD_REQUEST
        };
        ApiError::new(status, code, rejection.body_text())
    }
}

impl From<QueryRejection> for ApiError {
    fn from(rejection: QueryRejection) -> Self {
        ApiError::bad_request(rejection.body_text())
    }
}

impl From<PathRejection> for ApiError {
    fn from(rejection: PathRejection) -> Self {
        ApiError::bad_request(rejection.body_text())
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NoSession(id) => ApiError::no_session(&id),
            StoreError::Invalid(refused) => ApiError::bad_request(refused.to_string()),
            other => {
                tracing::error!("store: {other}");
                ApiError::internal(format!("the store failed: {other}"))
            }
        }
    }
}

/// A rewind that was not done, as the client sees it.
impl From<RewindError> for ApiError {
    fn from(e: RewindError) -> Self {
        match e {
            RewindError::NotInConversation(_)
            | RewindError::NoTurn
            | RewindError::Checkpoint(CheckpointError::NotFound(_)) => {
                ApiError::new(StatusCode::NOT_FOUND, "not_found", e.to_string())
            }
            RewindError::Unavailable(_) => ApiError::new(
                StatusCode::CONFLICT,
                "checkpoints_unavailable",
                e.to_string(),
            ),
            RewindError::Conflict(ref paths) => {
                let mut error =
                    ApiError::new(StatusCode::CONFLICT, "changed_outside", e.to_string());
                error.paths = paths.clone();
                error
            }
            RewindError::Checkpoint(e) => ApiError::internal(format!("rewind: {e}")),
            RewindError::Core(e) => e.into(),
        }
    }
}

impl From<CoreError> for ApiError {
    fn from(e: CoreError) -> Self {
        match e {
            CoreError::Repository(_) | CoreError::Workspace(_) | CoreError::HarnessFolder(_) => {
                ApiError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "bad_repository",
                    e.to_string(),
                )
            }
            CoreError::NoSession(id) => ApiError::no_session(&id),
            CoreError::Store(e) => e.into(),
            CoreError::Model(e) => {
                ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "bad_model", e.to_string())
            }
        }
    }
}
