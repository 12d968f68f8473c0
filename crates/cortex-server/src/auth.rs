//! A request's [`Principal`], from its bearer token (see [`crate::tokens`]).
//! Sessions belong to the principal that created them.

use crate::error::ApiError;
use crate::state::AppState;
pub use crate::tokens::Principal;
use axum::extract::FromRequestParts;
use axum::http::header;
use axum::http::request::Parts;
use std::sync::Arc;

impl FromRequestParts<Arc<AppState>> for Principal {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<AppState>,
    ) -> Result<Self, Self::Rejection> {
        let token = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            })
            .map(str::trim)
            .ok_or_else(ApiError::unauthorized)?;
        state
            .tokens
            .principal(token)
            .ok_or_else(ApiError::unauthorized)
    }
}
