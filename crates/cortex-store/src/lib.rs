//! Persistence of sessions, turns and the timeline.
//!
//! The timeline is append-only. [`Store::append`] assigns the event's
//! per-session `seq` and timestamp and commits it in one transaction; callers
//! show an event to clients only after `append` returned it. Turn status is
//! derived from the events themselves (`turn.started` opens a turn, a
//! `turn.completed|stopped|failed` closes it), so there is one write path.

mod encoded;
mod error;
mod migrations;
mod postgres;
mod rows;
mod rules;
mod sqlite;
mod turn_rules;

pub use encoded::{EncodedKind, Stamp};
pub use error::{OpenError, StoreError};
pub use postgres::PgStore;
pub use sqlite::SqliteStore;

use cortex_protocol::{Event, EventKind, Mode, Rule, SessionId, StopRule, TurnId};

/// A session as listed.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRecord {
    pub id: SessionId,
    pub repository: String,
    pub mode: Mode,
    /// `provider:name`.
    pub model: String,
    pub stop_rule: StopRule,
    pub created_at: String,
    /// Seq of the newest event (0 when none).
    pub last_seq: u64,
    /// First user message, for listings.
    pub title: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnStatus {
    Running,
    Completed,
    Stopped,
    Failed,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TurnRecord {
    pub id: TurnId,
    pub session_id: SessionId,
    pub status: TurnStatus,
    pub started_at: String,
    pub ended_at: Option<String>,
}

#[async_trait::async_trait]
pub trait Store: Send + Sync {
    /// Insert a session (without events; the caller appends `session.created`).
    async fn create_session(&self, session: &SessionRecord) -> Result<(), StoreError>;
    async fn get_session(&self, id: &SessionId) -> Result<Option<SessionRecord>, StoreError>;
    /// Newest first.
    async fn list_sessions(&self) -> Result<Vec<SessionRecord>, StoreError>;
    async fn set_mode(&self, id: &SessionId, mode: Mode) -> Result<(), StoreError>;

    /// Record the principal a session belongs to (set once, by the API,
    /// right after creation).
    async fn set_owner(&self, id: &SessionId, owner: &str) -> Result<(), StoreError>;
    /// The session's owner; `Ok(None)` when it has none, `NoSession` when it
    /// does not exist.
    async fn owner(&self, id: &SessionId) -> Result<Option<String>, StoreError>;
    /// One page of `owner`'s sessions, newest first, starting after the
    /// session `after` in that order. `after` must be one of `owner`'s
    /// sessions (`NoSession` otherwise, so a cursor reveals nothing of others).
    async fn list_owned(
        &self,
        owner: &str,
        after: Option<&SessionId>,
        limit: usize,
    ) -> Result<Vec<SessionRecord>, StoreError>;

    /// Persist one event: assign seq (last + 1) and timestamp, update the turn
    /// table when the event opens or closes a turn, commit, return the event.
    async fn append(
        &self,
        session: &SessionId,
        turn: Option<&TurnId>,
        kind: EventKind,
    ) -> Result<Event, StoreError> {
        let encoded = EncodedKind::new(kind)?;
        let stamp = self.append_encoded(session, turn, &encoded).await?;
        Ok(encoded.into_event(session, turn, stamp))
    }
    /// [`Store::append`] of a kind already serialised (whose JSON the caller
    /// also sends to clients): returns the seq and timestamp it got.
    async fn append_encoded(
        &self,
        session: &SessionId,
        turn: Option<&TurnId>,
        kind: &EncodedKind,
    ) -> Result<Stamp, StoreError>;
    /// Events with `seq > after`, in order.
    async fn events(&self, session: &SessionId, after: u64) -> Result<Vec<Event>, StoreError>;
    async fn turns(&self, session: &SessionId) -> Result<Vec<TurnRecord>, StoreError>;
    /// Turns still `running` (a process died mid-turn), across all sessions.
    async fn running_turns(&self) -> Result<Vec<TurnRecord>, StoreError>;

    /// Persist an approval rule of `principal` (its id must be new).
    async fn add_rule(&self, principal: &str, rule: &Rule) -> Result<(), StoreError>;
    /// `principal`'s rules, oldest first; never another principal's.
    async fn rules(&self, principal: &str) -> Result<Vec<Rule>, StoreError>;
    /// Remove one of `principal`'s rules: `false` when it has none with
    /// that id (another principal's rule is not removed and not revealed).
    async fn delete_rule(&self, principal: &str, id: &str) -> Result<bool, StoreError>;
}
