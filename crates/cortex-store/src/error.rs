//! What a store operation can fail with. Database errors carry the driver's
//! own error, so a caller can look at it (a PostgreSQL SQLSTATE, a SQLite
//! busy database) rather than at a message.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("database error: {0}")]
    Postgres(#[from] tokio_postgres::Error),
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    #[error("no session `{0}`")]
    NoSession(String),
    #[error("cannot open the store at {path}: {reason}")]
    Open {
        /// The file, or the URL without its password.
        path: String,
        #[source]
        reason: OpenError,
    },
    /// The caller asked for something the timeline cannot record, e.g. a
    /// `turn.started` without a turn id, or closing a turn that is not running.
    /// Nothing was written.
    #[error("rejected: {0}")]
    Invalid(String),
}

/// Why a store could not be opened (`StoreError::Open`).
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("cannot create {}: {source}", path.display())]
    CreateFolder {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Sqlite(#[from] rusqlite::Error),
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
        found: i64,
        known: i64,
        /// What to use instead: `data folder` or `database`.
        elsewhere: &'static str,
    },
    /// A schema step failed; the schema stays at the version before it.
    #[error("migration failed: {0}")]
    SqliteMigration(#[source] rusqlite::Error),
    #[error("migration {step} failed: {source}")]
    PostgresMigration {
        step: usize,
        source: tokio_postgres::Error,
    },
}
