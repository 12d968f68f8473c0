//! `/v1/sessions/{id}/shares`: read-only share links. A share is a token of
//! its own, scoped to one session: it reads that session's resource and
//! timeline and nothing else, until it expires or its owner revokes it.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// `POST /v1/sessions/{id}/shares`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateShare {
    /// Seconds until the link stops working: 60 to 2,592,000 (30 days);
    /// 86,400 (a day) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_in_secs: Option<u64>,
}

/// One share of a session, as listed (its token is never shown again).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ShareView {
    /// The share's id, for `DELETE …/shares/{share}`.
    pub id: String,
    /// The session it reads.
    pub session_id: String,
    /// When it was made (RFC 3339).
    pub created_at: String,
    /// When it stops working (RFC 3339).
    pub expires_at: String,
}

/// The answer to `POST …/shares`: the share and, this once, its token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ShareCreated {
    /// The share.
    pub share: ShareView,
    /// The bearer token that reads the session; shown only here.
    pub token: String,
    /// The web client's link, relative to the server: the token rides in
    /// the fragment, which a browser never sends to a server.
    pub link: String,
}

/// `GET /v1/sessions/{id}/shares`: the session's shares that have not
/// expired.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ShareList {
    /// Oldest first.
    pub shares: Vec<ShareView>,
}
