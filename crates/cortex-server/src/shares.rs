//! Read-only share links: tokens of their own, each scoped to one session,
//! with an expiry, revocable by the session's owner.
//!
//! Only a token's SHA-256 is held, as for principals' tokens. A share is
//! not a principal: the [`crate::auth::Principal`] extractor refuses its
//! token (403), so no route that acts or lists can take it; the two routes
//! that read one session (its resource and its events) take a [`Reader`],
//! which is its owner or a share of that very session (404 for any other).
//! Shares live in the server's memory: a restart revokes them all, which
//! fails closed.

use cortex_protocol::SessionId;
use cortex_protocol::calendar::format_rfc3339_ms;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Shortest and longest life of a share.
pub(crate) const MIN_LIFE: Duration = Duration::from_secs(60);
pub(crate) const MAX_LIFE: Duration = Duration::from_secs(30 * 24 * 3600);
pub(crate) const DEFAULT_LIFE: Duration = Duration::from_secs(24 * 3600);
/// Most live shares per session: a client cannot fill the server's memory.
pub(crate) const MAX_PER_SESSION: usize = 100;

/// One share.
#[derive(Debug, Clone)]
pub(crate) struct Share {
    pub id: String,
    pub session: SessionId,
    pub created_ms: i64,
    pub expires: SystemTime,
}

impl Share {
    pub(crate) fn view(&self) -> cortex_api::ShareView {
        cortex_api::ShareView {
            id: self.id.clone(),
            session_id: self.session.0.clone(),
            created_at: format_rfc3339_ms(self.created_ms),
            expires_at: format_rfc3339_ms(unix_ms(self.expires)),
        }
    }

    fn live(&self, now: SystemTime) -> bool {
        self.expires > now
    }
}

/// The server's shares by token hash.
#[derive(Debug, Default)]
pub(crate) struct Shares {
    by_hash: Mutex<HashMap<[u8; 32], Share>>,
}

/// Why a share was not made.
#[derive(Debug)]
pub(crate) enum ShareRefusal {
    TooMany,
    NoRandomness(std::io::Error),
}

impl Shares {
    /// A new share of `session` (its owner checked by the caller), living
    /// `life`: the share and its token.
    pub(crate) fn create(
        &self,
        session: &SessionId,
        life: Duration,
    ) -> Result<(Share, String), ShareRefusal> {
        let token = crate::tokens::new_token().map_err(ShareRefusal::NoRandomness)?;
        let id_bytes = crate::tokens::new_token().map_err(ShareRefusal::NoRandomness)?;
        let now = SystemTime::now();
        let share = Share {
            id: format!("sh_{}", &id_bytes[..24]),
            session: session.clone(),
            created_ms: unix_ms(now),
            expires: now + life,
        };
        let mut map = self.by_hash.lock().unwrap_or_else(PoisonError::into_inner);
        map.retain(|_, s| s.live(now));
        if map.values().filter(|s| s.session == *session).count() >= MAX_PER_SESSION {
            return Err(ShareRefusal::TooMany);
        }
        map.insert(hash(&token), share.clone());
        Ok((share, token))
    }

    /// The live share `token` names, if any.
    pub(crate) fn find(&self, token: &str) -> Option<Share> {
        let presented = hash(token);
        let map = self.by_hash.lock().unwrap_or_else(PoisonError::into_inner);
        // Map lookup by hash: the hash of a guess tells nothing of a token.
        map.get(&presented)
            .filter(|s| s.live(SystemTime::now()))
            .cloned()
    }

    /// Whether share `id` of `session` still works.
    pub(crate) fn is_live(&self, session: &SessionId, id: &str) -> bool {
        let now = SystemTime::now();
        let map = self.by_hash.lock().unwrap_or_else(PoisonError::into_inner);
        map.values()
            .any(|s| s.session == *session && s.id == id && s.live(now))
    }

    /// The live shares of `session`, oldest first.
    pub(crate) fn of_session(&self, session: &SessionId) -> Vec<Share> {
        let now = SystemTime::now();
        let map = self.by_hash.lock().unwrap_or_else(PoisonError::into_inner);
        let mut shares: Vec<Share> = map
            .values()
            .filter(|s| s.session == *session && s.live(now))
            .cloned()
            .collect();
        shares.sort_by(|a, b| (a.created_ms, &a.id).cmp(&(b.created_ms, &b.id)));
        shares
    }

    /// Revoke share `id` of `session`; whether there was one.
    pub(crate) fn revoke(&self, session: &SessionId, id: &str) -> bool {
        let mut map = self.by_hash.lock().unwrap_or_else(PoisonError::into_inner);
        let before = map.len();
        map.retain(|_, s| !(s.session == *session && s.id == id));
        map.len() != before
    }
}

fn hash(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

fn unix_ms(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_is_found_by_its_token_until_revoked() {
        let shares = Shares::default();
        let session = SessionId("s1".into());
        let (share, token) = shares.create(&session, DEFAULT_LIFE).expect("share");
        assert_eq!(shares.find(&token).expect("share").id, share.id);
        assert!(shares.find("not-a-token").is_none());
        assert_eq!(shares.of_session(&session).len(), 1);
        assert!(!shares.revoke(&SessionId("s2".into()), &share.id));
        assert!(shares.revoke(&session, &share.id));
        assert!(shares.find(&token).is_none());
    }

    #[test]
    fn an_expired_share_reads_nothing() {
        let shares = Shares::default();
        let session = SessionId("s1".into());
        let (_, token) = shares.create(&session, Duration::ZERO).expect("share");
        assert!(shares.find(&token).is_none());
        assert!(shares.of_session(&session).is_empty());
    }
}
