//! Bearer tokens, each mapped to a principal. A request's [`Principal`] is
//! who it acts as; sessions belong to the principal that created them.

use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::FromRequestParts;
use axum::http::header;
use axum::http::request::Parts;
use std::collections::HashMap;
use std::sync::Arc;

/// Who a request acts as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal(pub String);

/// The accepted tokens.
#[derive(Debug, Clone, Default)]
pub struct Tokens {
    by_token: HashMap<String, String>,
}

impl Tokens {
    pub fn new() -> Self {
        Self::default()
    }

    /// Accept `token` as `principal`. Empty tokens are ignored: they would
    /// match a bare `Bearer ` header.
    pub fn with(mut self, token: impl Into<String>, principal: impl Into<String>) -> Self {
        let token = token.into();
        if !token.is_empty() {
            self.by_token.insert(token, principal.into());
        }
        self
    }

    pub fn is_empty(&self) -> bool {
        self.by_token.is_empty()
    }

    fn principal(&self, token: &str) -> Option<Principal> {
        // Compare every token in full so the time taken does not depend on
        // how much of a guess matched.
        let mut found = None;
        for (known, principal) in &self.by_token {
            if constant_time_eq(known.as_bytes(), token.as_bytes()) {
                found = Some(Principal(principal.clone()));
            }
        }
        found
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_map_to_their_principal_only() {
        let tokens = Tokens::new()
            .with("t-alice", "alice")
            .with("t-bob", "bob")
            .with("", "x");
        assert_eq!(tokens.principal("t-alice"), Some(Principal("alice".into())));
        assert_eq!(tokens.principal("t-bob"), Some(Principal("bob".into())));
        assert_eq!(tokens.principal("t-alic"), None);
        assert_eq!(tokens.principal(""), None);
    }
}
