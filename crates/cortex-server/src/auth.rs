//! A request's [`Principal`], from its bearer token (see [`crate::tokens`]).
//! Sessions belong to the principal that created them. A share link's token
//! ([`crate::shares`]) is no principal: it is a [`Reader`] of one session.

use crate::error::ApiError;
use crate::state::AppState;
pub use crate::tokens::Principal;
use axum::extract::FromRequestParts;
use axum::http::StatusCode;
use axum::http::header;
use axum::http::request::Parts;
use cortex_protocol::SessionId;
use std::sync::Arc;

fn bearer(parts: &Parts) -> Option<&str> {
    parts
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(str::trim)
}

/// 403 for a share link's token on a route that only a principal may use.
fn read_only() -> ApiError {
    ApiError::new(
        StatusCode::FORBIDDEN,
        "share_read_only",
        "a share link's token only reads its one session (its resource and events)",
    )
}

impl FromRequestParts<Arc<AppState>> for Principal {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<AppState>,
    ) -> Result<Self, Self::Rejection> {
        match holder(parts, state)? {
            Reader::Owner(principal) => Ok(principal),
            Reader::Share(..) => Err(read_only()),
        }
    }
}

/// Who reads a session: a principal (who must own it) or a share link
/// (which reads only the session it was made for).
#[derive(Debug, Clone)]
pub(crate) enum Reader {
    Owner(Principal),
    /// A share link: the session it reads and the share's id.
    Share(SessionId, String),
}

impl Reader {
    /// Whether this reader may read session `id`: the same 404 as for a
    /// session that does not exist otherwise.
    pub(crate) async fn check(&self, state: &AppState, id: &SessionId) -> Result<(), ApiError> {
        match self {
            Reader::Owner(principal) => state.check_owner(principal, id).await,
            Reader::Share(session, _) if session == id => Ok(()),
            Reader::Share(..) => Err(ApiError::no_session(id.as_str())),
        }
    }
}

impl FromRequestParts<Arc<AppState>> for Reader {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<AppState>,
    ) -> Result<Self, Self::Rejection> {
        holder(parts, state)
    }
}

/// Who holds the request's bearer token: a principal, or a live share
/// link; 401 for no token or one that is neither.
fn holder(parts: &Parts, state: &AppState) -> Result<Reader, ApiError> {
    let token = bearer(parts).ok_or_else(ApiError::unauthorized)?;
    if let Some(principal) = state.tokens.principal(token) {
        return Ok(Reader::Owner(principal));
    }
    match state.shares.find(token) {
        Some(share) => Ok(Reader::Share(share.session, share.id)),
        None => Err(ApiError::unauthorized()),
    }
}
