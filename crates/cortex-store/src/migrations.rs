//! Schema migrations, tracked by SQLite's `user_version`.
//!
//! `MIGRATIONS[i]` takes the schema from version `i` to `i + 1`. Each runs in
//! its own transaction together with the `user_version` bump, so a crash
//! mid-migration leaves the previous version intact. Append new steps; never
//! edit a step that has shipped.

use crate::error::OpenError;
use rusqlite::{Connection, TransactionBehavior};

/// Why a migration could not run.
#[derive(Debug)]
pub(crate) enum MigrateError {
    /// The file was written by a newer build than this one.
    TooNew {
        found: i64,
        known: i64,
    },
    Sqlite(rusqlite::Error),
}

impl From<MigrateError> for OpenError {
    fn from(e: MigrateError) -> Self {
        match e {
            MigrateError::TooNew { found, known } => OpenError::TooNew {
                found,
                known,
                elsewhere: "data folder",
            },
            MigrateError::Sqlite(e) => OpenError::SqliteMigration(e),
        }
    }
}

impl From<rusqlite::Error> for MigrateError {
    fn from(e: rusqlite::Error) -> Self {
        MigrateError::Sqlite(e)
    }
}

const V1: &str = "
CREATE TABLE sessions (
    id         TEXT PRIMARY KEY NOT NULL,
    repository TEXT NOT NULL,
    mode       TEXT NOT NULL,
    model      TEXT NOT NULL,
    stop_rule  TEXT NOT NULL,
    created_at TEXT NOT NULL,
    title      TEXT,
    last_seq   INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE INDEX sessions_by_created ON sessions (created_at DESC, id DESC);

CREATE TABLE turns (
    id         TEXT PRIMARY KEY NOT NULL,
    session_id TEXT NOT NULL REFERENCES sessions (id),
    status     TEXT NOT NULL,
    started_at TEXT NOT NULL,
    ended_at   TEXT,
    error      TEXT
) STRICT;

CREATE INDEX turns_by_session ON turns (session_id, started_at);
CREATE INDEX turns_running ON turns (status) WHERE status = 'running';

CREATE TABLE events (
    session_id TEXT NOT NULL REFERENCES sessions (id),
    seq        INTEGER NOT NULL,
    ts         TEXT NOT NULL,
    turn_id    TEXT,
    type       TEXT NOT NULL,
    payload    TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
) STRICT;
";

/// Sessions belong to the API principal that created them. Sessions made
/// before the API were made by the local `cortex` CLI, whose principal is
/// `local`: they stay visible to `cortex sessions` and `--session`.
const V2: &str = "
ALTER TABLE sessions ADD COLUMN owner TEXT;
UPDATE sessions SET owner = 'local';
CREATE INDEX sessions_by_owner ON sessions (owner, created_at DESC, id DESC);
";

/// Every step, oldest first. The schema version is the length of this list.
/// Step 3 adds the approval rules (`rules.rs`).
const MIGRATIONS: &[&str] = &[V1, V2, crate::rules::TABLE];

/// The schema version this build writes.
pub(crate) fn latest_version() -> i64 {
    MIGRATIONS.len() as i64
}

pub(crate) fn user_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
}

/// Bring the schema up to date. Idempotent.
pub(crate) fn migrate(conn: &mut Connection) -> Result<(), MigrateError> {
    let known = latest_version();
    let found = user_version(conn)?;
    if found > known {
        return Err(MigrateError::TooNew { found, known });
    }
    for (index, sql) in MIGRATIONS.iter().enumerate() {
        let target = index as i64 + 1;
        if found >= target {
            continue;
        }
        // Immediate: take the write lock first, so two processes opening the
        // same new file cannot both run a step.
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        // Another process may have run this step since we looked.
        let current = user_version(&tx)?;
        if current > known {
            return Err(MigrateError::TooNew {
                found: current,
                known,
            });
        }
        if current >= target {
            continue;
        }
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", target)?;
        tx.commit()?;
        tracing::debug!(version = target, "store schema migrated");
    }
    Ok(())
}
