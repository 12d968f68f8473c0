//! What a store operation can fail with. Database errors carry the driver's
//! own error, so a caller can look at it (a PostgreSQL SQLSTATE, a SQLite
//! busy database) rather than at a message.

use cortex_protocol::{SessionId, TurnId};
use std::path::PathBuf;

/// Why a [`crate::Store`] call failed. A failed write wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite failed the statement (a database busy past the timeout, a
    /// full disk, an unreadable file).
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// PostgreSQL failed the statement, or the connection to it ended.
    #[error("database error: {0}")]
    Postgres(#[from] tokio_postgres::Error),
    /// A stored row this build cannot read.
    #[error("stored data is corrupt: {row}: {reason}")]
    Corrupt {
        /// Which row, by its key: ``event seq 2 of session `s` ``.
        row: String,
        /// What is wrong with it.
        #[source]
        reason: Corruption,
    },
    /// There is no session with this id.
    #[error("no session `{0}`")]
    NoSession(String),
    /// The store could not be opened (or created, or migrated).
    #[error("cannot open the store at {path}: {reason}")]
    Open {
        /// The file, or the URL without its password.
        path: String,
        /// Why.
        #[source]
        reason: OpenError,
    },
    /// The caller asked for something the store refuses. Nothing was
    /// written.
    #[error("rejected: {0}")]
    Invalid(#[from] Refused),
    /// The store is at its size quota: the event was not written. What the
    /// timeline holds stays; the events that end a turn are still written
    /// (from a reserve past the quota), so the turn ends with this error.
    #[error(
        "the session store is full: it holds {size} bytes, its quota is {quota} bytes; \
         delete old sessions or raise the quota"
    )]
    Full {
        /// The database's size now.
        size: u64,
        /// The quota it reached.
        quota: u64,
    },
}

/// Why a store could not be opened (`StoreError::Open`).
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The folder for the SQLite file could not be created.
    #[error("cannot create {}: {source}", path.display())]
    CreateFolder {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// SQLite could not open or set up the file.
    #[error("{0}")]
    Sqlite(#[from] rusqlite::Error),
    /// PostgreSQL refused the connection or a set-up statement.
    #[error("{0}")]
    Postgres(#[from] tokio_postgres::Error),
    /// The SQLite file could not be put in write-ahead-log mode.
    #[error("cannot switch to WAL (journal mode is {0})")]
    NotWal(String),
    /// The database was written by a newer build than this one.
    #[error(
        "the database has schema version {found}, newer than this build knows \
         (up to {known}); upgrade Cortex or use another {elsewhere}"
    )]
    TooNew {
        /// The database's schema version.
        found: i64,
        /// The newest version this build knows.
        known: i64,
        /// What to use instead: `data folder` or `database`.
        elsewhere: &'static str,
    },
    /// A schema step failed on SQLite; the schema stays at the version
    /// before it.
    #[error("migration failed: {0}")]
    SqliteMigration(#[source] rusqlite::Error),
    /// A schema step failed on PostgreSQL; the schema stays at the version
    /// it had before the store was opened.
    #[error("migration {step} failed: {source}")]
    PostgresMigration {
        /// The schema version the failed step leads to.
        step: usize,
        /// Why it failed.
        source: tokio_postgres::Error,
    },
}

/// What the store refused to write ([`StoreError::Invalid`]).
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    /// A session with this id exists.
    #[error("session `{0}` already exists")]
    SessionExists(SessionId),
    /// A rule with this id exists (anyone's).
    #[error("rule `{0}` already exists")]
    RuleExists(String),
    /// A turn event (named) came without a turn id.
    #[error("`{0}` needs a turn id")]
    NoTurnId(&'static str),
    /// A `turn.started` for a turn id that already has a turn.
    #[error("turn `{0}` has already started")]
    TurnStarted(TurnId),
    /// A turn-ending event for a turn this session never started.
    #[error("turn `{turn}` was never started in session `{session}`")]
    TurnNotStarted {
        /// The turn.
        turn: TurnId,
        /// The session the event was for.
        session: SessionId,
    },
    /// A turn-ending event for a turn that has ended.
    #[error("turn `{turn}` has already ended ({status})")]
    TurnEnded {
        /// The turn.
        turn: TurnId,
        /// How it ended.
        status: &'static str,
    },
    /// The value (an event kind's type name, `rule`) cannot be turned into
    /// JSON.
    #[error("cannot serialize {what}: {source}")]
    Unserializable {
        /// What was being serialised.
        what: &'static str,
        /// Why serde refused.
        source: serde_json::Error,
    },
    /// An event kind serialised to something other than a tagged object.
    #[error("{what} serialized as {json}, not a tagged object")]
    NotTagged {
        /// The kind's type name.
        what: &'static str,
        /// What it serialised as.
        json: String,
    },
}

/// What is wrong with a stored row ([`StoreError::Corrupt`]).
#[derive(Debug, thiserror::Error)]
pub enum Corruption {
    /// A seq column below zero.
    #[error("negative seq {0}")]
    NegativeSeq(i64),
    /// An event's payload is not JSON.
    #[error("payload is not JSON: {0}")]
    PayloadNotJson(#[source] serde_json::Error),
    /// An event's payload is JSON but not of its type.
    #[error("`{type_name}`: {source}")]
    NotItsKind {
        /// The stored type name.
        type_name: String,
        /// Why the payload does not fit it.
        source: serde_json::Error,
    },
    /// A column holds a value this build does not know.
    #[error("unknown {column} `{value}`")]
    Unknown {
        /// The column.
        column: &'static str,
        /// Its value.
        value: String,
    },
    /// A rule's `matches` column is not a rule match.
    #[error("not a rule match: {0}")]
    RuleMatch(#[source] serde_json::Error),
}
