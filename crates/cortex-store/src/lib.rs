//! Persistence of sessions, turns and the timeline.
//!
//! The timeline is append-only. [`Store::append`] assigns the event's
//! per-session `seq` and timestamp and commits it in one transaction; callers
//! show an event to clients only after `append` returned it. Turn status is
//! derived from the events themselves (`turn.started` opens a turn, a
//! `turn.completed|stopped|failed` closes it), so there is one write path.
//!
//! Two implementations share one schema (`migrations.rs`, written once and
//! applied by both) and one contract, [`Store`]: [`SqliteStore`], a file in
//! the data folder, and [`PgStore`], a PostgreSQL database a team's servers
//! share. The crate's tests run one contract suite against both.

#![warn(missing_docs)]

mod blobs;
mod encoded;
mod error;
mod migrations;
mod postgres;
mod private_file;
mod rows;
mod rules;
mod sqlite;
mod turn_rules;

pub use blobs::Blob;
pub use encoded::{EncodedKind, Stamp};
pub use error::{Corruption, OpenError, Refused, StoreError};
pub use postgres::PgStore;
pub use sqlite::SqliteStore;

use cortex_protocol::{Event, EventKind, Mode, ParentLink, Rule, SessionId, StopRule, TurnId};

/// A session as stored and listed.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRecord {
    /// The session's id, unique in the store.
    pub id: SessionId,
    /// The repository the session works on, as the user gave it.
    pub repository: String,
    /// The current mode: the newest `mode.changed` event's, else the one
    /// the session was created with.
    pub mode: Mode,
    /// `provider:name`.
    pub model: String,
    /// When a turn counts as done.
    pub stop_rule: StopRule,
    /// RFC 3339 UTC with milliseconds (`now_rfc3339`): listings sort by its
    /// text, so every writer must use that one fixed-width form.
    pub created_at: String,
    /// Seq of the newest event (0 when none).
    pub last_seq: u64,
    /// First user message, for listings.
    pub title: Option<String>,
    /// The `task` call a subagent's session answers; `None` for a session
    /// of its own. Listings ([`Store::list_owned`]) leave children out.
    pub parent: Option<ParentLink>,
}

/// Where a turn is, as its events left it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnStatus {
    /// `turn.started` and no closing event yet: running now, or its process
    /// died mid-turn.
    Running,
    /// Closed by `turn.completed`.
    Completed,
    /// Closed by `turn.stopped` (the user's Stop).
    Stopped,
    /// Closed by `turn.failed`.
    Failed,
}

/// A turn of a session.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnRecord {
    /// The turn's id, unique in the store.
    pub id: TurnId,
    /// The session it belongs to.
    pub session_id: SessionId,
    /// Its status after the newest of its events.
    pub status: TurnStatus,
    /// The timestamp of its `turn.started` event.
    pub started_at: String,
    /// The timestamp of the event that closed it; `None` while running.
    pub ended_at: Option<String>,
}

/// Where sessions, their timelines and approval rules are kept.
///
/// # What every method may assume and guarantees
///
/// - **Concurrency.** Methods may be called at once from many tasks and,
///   for one database, from several processes. Each write is one
///   transaction: it is applied entirely or not at all, and no read sees
///   half of it. A read returns what was committed before it; one made of
///   two statements (a page after a cursor) may see a write that committed
///   between them.
/// - **Errors.** An `Err` from a write means that write's transaction was
///   rolled back: nothing of it is stored. [`StoreError::Sqlite`] and
///   [`StoreError::Postgres`] carry the driver's error (a database busy
///   past the timeout, a connection the server closed: the next call on a
///   [`PgStore`] connects again); [`StoreError::NoSession`] names a session
///   that does not exist; [`StoreError::Invalid`] is a request the store
///   refuses (a duplicate id, a turn rule); [`StoreError::Corrupt`] is a
///   stored row this build cannot read, named by its key.
/// - **Cancellation** (the returned future dropped before it finished).
///   [`SqliteStore`] does a call's whole work in its first poll, so a
///   dropped call either never ran or finished. [`PgStore`] awaits the
///   server: a write dropped before its statement (for an append, its
///   `COMMIT`) reached the server is not applied; one dropped after that
///   may have been. Either way it is never half-applied, and the
///   connection stays usable for the next call. A caller that dropped a write learns its outcome
///   by reading (the events after the last seq it knew, the session, the
///   rules) and must not simply repeat it: appends are not idempotent.
/// - **Durability.** A write that returned `Ok` survives the process being
///   killed. SQLite runs with `synchronous = NORMAL` in WAL mode: an
///   operating system crash or a power loss may lose the newest commits,
///   never the database. PostgreSQL's durability is its server's.
/// - **Isolation between principals.** Methods that take an owner or a
///   principal never return, reveal or change another's data.
#[async_trait::async_trait]
pub trait Store: Send + Sync {
    /// Insert a session with no events and no owner; the caller then
    /// appends `session.created` and, for the API, calls
    /// [`Store::set_owner`].
    ///
    /// Stores `session` as given except `last_seq`, which starts at 0.
    /// An id that already exists is [`StoreError::Invalid`] and leaves the
    /// stored session unchanged: not idempotent.
    async fn create_session(&self, session: &SessionRecord) -> Result<(), StoreError>;

    /// The session with this id, `Ok(None)` when there is none. Its
    /// `last_seq`, `mode` and `title` reflect every append committed before
    /// the call.
    async fn get_session(&self, id: &SessionId) -> Result<Option<SessionRecord>, StoreError>;

    /// Record the principal a session belongs to. Called once, by the API,
    /// right after [`Store::create_session`]; calling it again replaces the
    /// owner (so repeating it is harmless). [`StoreError::NoSession`] when
    /// the session does not exist.
    async fn set_owner(&self, id: &SessionId, owner: &str) -> Result<(), StoreError>;

    /// The session's owner: `Ok(None)` when it has none (a session run by
    /// `cortex exec` directly, not through the API), [`StoreError::NoSession`]
    /// when it does not exist. Sessions from before owners existed belong
    /// to `local`, the local CLI's principal.
    async fn owner(&self, id: &SessionId) -> Result<Option<String>, StoreError>;

    /// One page of `owner`'s sessions, at most `limit`, newest first
    /// (`created_at`, then id, both descending), starting after the session
    /// `after` in that order (`None`: from the newest); subagents' sessions
    /// (with a [`SessionRecord::parent`]) are not listed.
    ///
    /// `after` must be one of `owner`'s sessions: otherwise
    /// [`StoreError::NoSession`], exactly as for a session that does not
    /// exist, so a cursor reveals nothing of another principal. Pages are
    /// keyed by the cursor's position, not an offset: a session created
    /// between two calls does not shift the later pages (being the newest,
    /// it is on a first page). `limit` 0 is an empty page.
    async fn list_owned(
        &self,
        owner: &str,
        after: Option<&SessionId>,
        limit: usize,
    ) -> Result<Vec<SessionRecord>, StoreError>;

    /// Persist one event and return it as stored: see
    /// [`Store::append_encoded`], which this calls after encoding `kind`.
    /// An event kind that cannot be serialised is [`StoreError::Invalid`].
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

    /// Persist one event whose kind is already serialised (its JSON is also
    /// what the caller sends to clients) and return the seq and timestamp
    /// it got.
    ///
    /// In one transaction: the event gets seq = the session's `last_seq` +
    /// 1 (gapless and strictly increasing per session, however many tasks
    /// and processes append at once) and the current UTC time (RFC 3339,
    /// milliseconds); `last_seq` moves to it; a `turn.started` opens a
    /// [`TurnRecord`] and, if the session has no title yet, gives it one
    /// from the message; a `mode.changed` sets the session's mode; a
    /// `turn.completed|stopped|failed` closes its turn.
    ///
    /// Refused with nothing written: an unknown session
    /// ([`StoreError::NoSession`]); a turn event without a turn id, a
    /// `turn.started` for a turn id that already started, closing a turn
    /// that never started in this session or has already ended
    /// ([`StoreError::Invalid`]). Not idempotent: each call that returns
    /// `Ok` added one event.
    async fn append_encoded(
        &self,
        session: &SessionId,
        turn: Option<&TurnId>,
        kind: &EncodedKind,
    ) -> Result<Stamp, StoreError>;

    /// The session's events with `seq > after`, in seq order, exactly as
    /// appended; empty when there are none (also when `after` is past the
    /// newest). [`StoreError::NoSession`] when the session does not exist.
    async fn events(&self, session: &SessionId, after: u64) -> Result<Vec<Event>, StoreError>;

    /// The session's turns in the order they started (the seq of their
    /// `turn.started`). [`StoreError::NoSession`] when the session does not
    /// exist.
    async fn turns(&self, session: &SessionId) -> Result<Vec<TurnRecord>, StoreError>;

    /// Turns still [`TurnStatus::Running`], across all sessions, oldest
    /// start first. At start-up these are turns a process that died
    /// mid-turn left open; while other processes run, some are live.
    async fn running_turns(&self) -> Result<Vec<TurnRecord>, StoreError>;

    /// Persist an approval rule of `principal`. Its id must be new in the
    /// whole store: an id that exists (anyone's) is [`StoreError::Invalid`],
    /// nothing written. What it matches is stored as JSON, so any
    /// [`cortex_protocol::RuleMatch`] round-trips.
    async fn add_rule(&self, principal: &str, rule: &Rule) -> Result<(), StoreError>;

    /// `principal`'s rules, oldest first (`created_at`, then id); never
    /// another principal's. Empty for a principal with none.
    async fn rules(&self, principal: &str) -> Result<Vec<Rule>, StoreError>;

    /// Remove one of `principal`'s rules: `true` when it was removed,
    /// `false` when `principal` has no rule with that id (so a repeated call
    /// answers `false`; another principal's rule is neither removed nor
    /// revealed).
    async fn delete_rule(&self, principal: &str, id: &str) -> Result<bool, StoreError>;

    /// Keep `blob` under its sha256 (the caller computed it from the
    /// decoded bytes). Storing content that is there already changes
    /// nothing: idempotent. A store at its quota is [`StoreError::Full`].
    async fn put_blob(&self, blob: &Blob) -> Result<(), StoreError>;

    /// The blob stored under `sha256`, `Ok(None)` when there is none.
    async fn blob(&self, sha256: &str) -> Result<Option<Blob>, StoreError>;
}
