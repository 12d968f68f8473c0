//! The store schema, written once and applied by both backends.
//!
//! `STEPS[i]` takes the schema from version `i` to `i + 1`; the schema
//! version is the number of steps applied. SQLite records it in its
//! `user_version`, PostgreSQL in a one-row `cortex_schema` table. Both run
//! the same text, rendered by [`Dialect::render`], which is the only place
//! the two SQL dialects differ:
//!
//! - `{int}`: a 64-bit integer column. SQLite's `STRICT` tables accept only
//!   `INTEGER` (always 64-bit there); PostgreSQL's `INTEGER` is 32-bit, so
//!   it gets `BIGINT`.
//! - `{strict}`: SQLite checks column types only in a `STRICT` table;
//!   PostgreSQL always does and has no such keyword.
//!
//! A step runs in one transaction with the version bump, so a crash
//! mid-migration leaves the previous version intact; two processes opening
//! one database serialise on a lock (SQLite's write lock, a PostgreSQL
//! advisory lock) and the second finds the work done. Append new steps;
//! never change what a shipped step does to a database.
//!
//! History: until step 4 each backend had its own copy of steps 1 and 2,
//! and they differed. PostgreSQL's `turns` had an `ord BIGSERIAL` column
//! (it has no `rowid` to order by) and its step 2 did not give existing
//! sessions to `local`. Step 2 below is SQLite's, and it changes nothing
//! for a PostgreSQL database that already ran the old one: PostgreSQL runs
//! every step of a fresh database in one transaction, and steps 1 and 2
//! shipped together, so its step 2 only ever ran on an empty `sessions`
//! table. Step 4 rebuilds `turns` for both, so every database, whatever
//! its history, has the same tables and columns after it.

use crate::error::OpenError;
use rusqlite::{Connection, TransactionBehavior};

/// A SQL dialect the schema is rendered for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// `sql` with the dialect's words in place of `{int}` and `{strict}`.
    pub(crate) fn render(self, sql: &str) -> String {
        let (int, strict) = match self {
            Dialect::Sqlite => ("INTEGER", " STRICT"),
            Dialect::Postgres => ("BIGINT", ""),
        };
        sql.replace("{int}", int).replace("{strict}", strict)
    }

    /// Where a newer schema can be avoided, for [`OpenError::TooNew`].
    fn elsewhere(self) -> &'static str {
        match self {
            Dialect::Sqlite => "data folder",
            Dialect::Postgres => "database",
        }
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
    last_seq   {int} NOT NULL DEFAULT 0
){strict};

CREATE INDEX sessions_by_created ON sessions (created_at DESC, id DESC);

CREATE TABLE turns (
    id         TEXT PRIMARY KEY NOT NULL,
    session_id TEXT NOT NULL REFERENCES sessions (id),
    status     TEXT NOT NULL,
    started_at TEXT NOT NULL,
    ended_at   TEXT,
    error      TEXT
){strict};

CREATE INDEX turns_by_session ON turns (session_id, started_at);
CREATE INDEX turns_running ON turns (status) WHERE status = 'running';

CREATE TABLE events (
    session_id TEXT NOT NULL REFERENCES sessions (id),
    seq        {int} NOT NULL,
    ts         TEXT NOT NULL,
    turn_id    TEXT,
    type       TEXT NOT NULL,
    payload    TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
){strict};
";

/// Sessions belong to the API principal that created them. Sessions made
/// before the API were made by the local `cortex` CLI, whose principal is
/// `local`: they stay visible to `cortex sessions` and `--session`.
const V2: &str = "
ALTER TABLE sessions ADD COLUMN owner TEXT;
UPDATE sessions SET owner = 'local';
CREATE INDEX sessions_by_owner ON sessions (owner, created_at DESC, id DESC);
";

/// Approval rules (see `rules.rs`). Shipped without `{strict}`; it stays so.
const V3: &str = "
CREATE TABLE rules (
    id         TEXT PRIMARY KEY NOT NULL,
    principal  TEXT NOT NULL,
    repository TEXT,
    matches    TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX rules_by_principal ON rules (principal, created_at, id);
";

/// One `turns` table for both backends: the order of a session's turns is
/// the seq of their `turn.started` event (`started_seq`, taken from the
/// timeline for existing turns), not a backend's row order (SQLite's
/// `rowid`, PostgreSQL's former `ord`, which this drops).
const V4: &str = "
CREATE TABLE turns_v4 (
    id          TEXT PRIMARY KEY NOT NULL,
    session_id  TEXT NOT NULL REFERENCES sessions (id),
    status      TEXT NOT NULL,
    started_at  TEXT NOT NULL,
    ended_at    TEXT,
    error       TEXT,
    started_seq {int} NOT NULL
){strict};
INSERT INTO turns_v4 (id, session_id, status, started_at, ended_at, error, started_seq)
SELECT t.id, t.session_id, t.status, t.started_at, t.ended_at, t.error,
       COALESCE((SELECT MIN(e.seq) FROM events e
                 WHERE e.session_id = t.session_id AND e.turn_id = t.id
                   AND e.type = 'turn.started'), 0)
FROM turns t;
DROP TABLE turns;
ALTER TABLE turns_v4 RENAME TO turns;
CREATE INDEX turns_by_session ON turns (session_id, started_seq);
CREATE INDEX turns_running ON turns (status) WHERE status = 'running';
";

/// Content-addressed blobs (`blobs.rs`): images attached to turns, stored
/// once; `data` is base64 text, so both backends store it the same way.
const V5: &str = "
CREATE TABLE blobs (
    sha256    TEXT PRIMARY KEY NOT NULL,
    mime_type TEXT NOT NULL,
    data      TEXT NOT NULL,
    bytes     {int} NOT NULL
){strict};
";

/// Subagents: a child session names the session and `task` call it
/// answers; listings leave children out.
const V6: &str = "
ALTER TABLE sessions ADD COLUMN parent TEXT;
ALTER TABLE sessions ADD COLUMN parent_call TEXT;
";

/// Every step, oldest first.
const STEPS: &[&str] = &[V1, V2, V3, V4, V5, V6];

/// The schema version this build writes.
pub(crate) fn latest_version() -> i64 {
    STEPS.len() as i64
}

/// Refuse a database written by a newer build.
fn check_not_newer(found: i64, dialect: Dialect) -> Result<(), OpenError> {
    let known = latest_version();
    if found > known {
        return Err(OpenError::TooNew {
            found,
            known,
            elsewhere: dialect.elsewhere(),
        });
    }
    Ok(())
}

/// The steps a database at version `found` still needs: (version after the
/// step, its SQL for `dialect`).
fn pending(found: i64, dialect: Dialect) -> impl Iterator<Item = (i64, String)> {
    STEPS
        .iter()
        .enumerate()
        .map(move |(index, sql)| (index as i64 + 1, dialect.render(sql)))
        .filter(move |(target, _)| *target > found)
}

/// The schema version of a SQLite database.
pub(crate) fn user_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
}

/// Bring a SQLite database up to date, one transaction per step.
/// Idempotent.
pub(crate) fn migrate_sqlite(conn: &mut Connection) -> Result<(), OpenError> {
    let found = user_version(conn)?;
    check_not_newer(found, Dialect::Sqlite)?;
    for (target, sql) in pending(found, Dialect::Sqlite) {
        match sqlite_step(conn, target, &sql).map_err(OpenError::SqliteMigration)? {
            Some(current) => check_not_newer(current, Dialect::Sqlite)?,
            None => tracing::debug!(version = target, "store schema migrated"),
        }
    }
    Ok(())
}

/// Run one step unless another process already has: `Some(version)` when
/// the database was at `target` or later once the write lock was taken.
fn sqlite_step(conn: &mut Connection, target: i64, sql: &str) -> rusqlite::Result<Option<i64>> {
    // Immediate: take the write lock first, so two processes opening the
    // same new file cannot both run a step.
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Another process may have run this step since we looked.
    let current = user_version(&tx)?;
    if current >= target {
        return Ok(Some(current));
    }
    tx.execute_batch(sql)?;
    tx.pragma_update(None, "user_version", target)?;
    tx.commit()?;
    Ok(None)
}

/// Any value: only this module takes it, to serialise migrations.
const PG_MIGRATION_LOCK: i64 = 0x636f_7274_6578;

/// The schema version of a PostgreSQL database.
pub(crate) async fn pg_version(
    client: &tokio_postgres::Client,
) -> Result<i64, tokio_postgres::Error> {
    let row = client
        .query_one("SELECT version FROM cortex_schema", &[])
        .await?;
    Ok(row.get(0))
}

/// Bring a PostgreSQL database up to date: every pending step and the
/// version bump in one transaction, under an advisory lock. Idempotent.
pub(crate) async fn migrate_postgres(client: &mut tokio_postgres::Client) -> Result<(), OpenError> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&PG_MIGRATION_LOCK])
        .await?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS cortex_schema (version BIGINT NOT NULL)")
        .await?;
    let found: i64 = match tx
        .query_opt("SELECT version FROM cortex_schema", &[])
        .await?
    {
        Some(row) => row.get(0),
        None => {
            tx.execute("INSERT INTO cortex_schema (version) VALUES (0)", &[])
                .await?;
            0
        }
    };
    check_not_newer(found, Dialect::Postgres)?;
    for (target, sql) in pending(found, Dialect::Postgres) {
        tx.batch_execute(&sql)
            .await
            .map_err(|source| OpenError::PostgresMigration {
                step: target as usize,
                source,
            })?;
    }
    tx.execute(
        "UPDATE cortex_schema SET version = $1",
        &[&latest_version()],
    )
    .await?;
    Ok(tx.commit().await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dialects_differ_only_in_the_two_words() {
        for sql in STEPS {
            let sqlite = Dialect::Sqlite.render(sql);
            let postgres = Dialect::Postgres.render(sql);
            assert!(!sqlite.contains('{') && !postgres.contains('{'));
            assert_eq!(
                sqlite.replace(" STRICT", "").replace("INTEGER", "BIGINT"),
                postgres
            );
        }
    }

    #[test]
    fn pending_steps_start_after_the_found_version() {
        let targets: Vec<i64> = pending(2, Dialect::Sqlite).map(|(t, _)| t).collect();
        assert_eq!(targets, [3, 4, 5, 6]);
        assert_eq!(pending(latest_version(), Dialect::Postgres).count(), 0);
    }
}
