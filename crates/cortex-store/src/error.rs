//! What a store operation can fail with. Database errors carry the driver's
//! own error, so a caller can look at it (a PostgreSQL SQLSTATE, a SQLite
//! busy database) rather than at a message.

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
    /// A stored row this build cannot read; the message names its key
    /// (session, seq, turn or rule id) and what is wrong with it.
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
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
    /// The caller asked for something the store refuses: an id that exists
    /// (session, rule), a `turn.started` without a turn id, closing a turn
    /// that is not running. Nothing was written.
    #[error("rejected: {0}")]
    Invalid(String),
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
