//! SQLite implementation: WAL, migrations, one connection behind a mutex.
//!
//! Every call is short, so the async methods take the mutex and run the
//! statement on the calling thread; the lock is never held across an await.
//! Writes use `BEGIN IMMEDIATE` so that two processes on one file serialise
//! on the write lock (waiting up to the busy timeout) instead of failing on a
//! read-to-write upgrade.

use crate::error::OpenError;
use crate::migrations;
use crate::private_file;
use crate::rows::{self, RawEvent, RawSession, RawTurn};
use crate::turn_rules::{self, RowChange};
use crate::{
    Blob, EncodedKind, Refused, SessionRecord, Stamp, Store, StoreError, TurnRecord, TurnStatus,
};
use cortex_protocol::{Event, EventKind, Rule, SessionId, TurnId, now_rfc3339};
use rusqlite::config::DbConfig;
use rusqlite::{
    Connection, ErrorCode, OptionalExtension, Transaction, TransactionBehavior, params,
};
use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// How long a statement waits for another connection's lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// Room for every statement this module prepares.
const STATEMENT_CACHE: usize = 32;

/// The default store: one SQLite file in the data folder (or memory). Its
/// contract is [`Store`]'s. A call does all its work, without awaiting, in
/// its future's first poll (so a dropped call never ran or finished); it
/// blocks its thread for as long as the statement and, when another process
/// holds the file's write lock, up to five seconds more.
pub struct SqliteStore {
    conn: Mutex<rusqlite::Connection>,
    /// Past this many bytes, appends are refused ([`StoreError::Full`])
    /// but those that end a turn; `u64::MAX`: no quota.
    quota: std::sync::atomic::AtomicU64,
}

/// Room past the quota for the events that end a turn (SQLite's own hard
/// limit, `max_page_count`, sits this far above it).
const TURN_END_RESERVE: u64 = 4 << 20;

impl SqliteStore {
    /// Open (creating and migrating) the database file. A folder it
    /// creates is `0700`, the file and its `-wal` and `-shm` are `0600`
    /// (see `private_file.rs`).
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let fail = |reason: OpenError| StoreError::Open {
            path: path.display().to_string(),
            reason,
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            private_file::create_folder(parent).map_err(|source| {
                fail(OpenError::CreateFolder {
                    path: parent.to_path_buf(),
                    source,
                })
            })?;
        }
        private_file::create_file(path);
        let conn = Connection::open(path).map_err(|e| fail(e.into()))?;
        let store = Self::init(conn, true).map_err(fail)?;
        // After init: WAL mode has made the companions by now.
        for file in private_file::companions(path) {
            if let Err(e) = private_file::restrict(&file) {
                tracing::warn!("cannot make {} private: {e}", file.display());
            }
        }
        Ok(store)
    }

    /// An in-memory store (tests, benchmarks).
    pub fn in_memory() -> Result<Self, StoreError> {
        let conn = Connection::open_in_memory()?;
        Self::init(conn, false).map_err(|reason| StoreError::Open {
            path: ":memory:".to_owned(),
            reason,
        })
    }

    /// The schema version of the open database.
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        Ok(migrations::user_version(&self.lock())?)
    }

    fn init(mut conn: Connection, wal: bool) -> Result<Self, OpenError> {
        conn.busy_timeout(BUSY_TIMEOUT)?;
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        if wal {
            let mode: String =
                conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
            if !mode.eq_ignore_ascii_case("wal") {
                return Err(OpenError::NotWal(mode));
            }
        }
        // Plans that do not depend on bound values: otherwise this build of
        // SQLite (STAT4) re-prepares a statement whose range bound changed,
        // such as `events` (`seq > ?2`), every time it runs.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        migrations::migrate_sqlite(&mut conn)?;
        Ok(Self {
            conn: Mutex::new(conn),
            quota: std::sync::atomic::AtomicU64::new(u64::MAX),
        })
    }

    /// Bound the database's size: past `bytes`, an append is refused with
    /// [`StoreError::Full`] unless it ends a turn; those get a reserve of a
    /// few MiB, past which SQLite itself refuses to grow the file. Sessions
    /// and turns already stored stay readable.
    pub fn set_quota(&self, bytes: u64) -> Result<(), StoreError> {
        let conn = self.lock();
        let page_size: i64 = conn.query_row("PRAGMA page_size", [], |row| row.get(0))?;
        let page_size = u64::try_from(page_size).unwrap_or(1).max(1);
        let pages = bytes.saturating_add(TURN_END_RESERVE) / page_size;
        let pages = i64::try_from(pages).unwrap_or(i64::MAX);
        let _: i64 = conn.query_row(&format!("PRAGMA max_page_count = {pages}"), [], |row| {
            row.get(0)
        })?;
        self.quota
            .store(bytes, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    /// Refuse an append past the quota unless `kind` ends a turn.
    fn check_quota(&self, tx: &Transaction<'_>, kind: &EventKind) -> Result<(), StoreError> {
        if TurnStatus::after(kind).is_some() {
            return Ok(());
        }
        self.check_room(tx)
    }

    /// Refuse a write once the database is at its quota.
    pub(crate) fn check_room(&self, tx: &Transaction<'_>) -> Result<(), StoreError> {
        let quota = self.quota.load(std::sync::atomic::Ordering::Relaxed);
        if quota == u64::MAX {
            return Ok(());
        }
        let size: i64 = tx.query_row(
            "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()",
            [],
            |row| row.get(0),
        )?;
        let size = u64::try_from(size).unwrap_or(0);
        if size >= quota {
            return Err(StoreError::Full { size, quota });
        }
        Ok(())
    }

    /// The connection. A panic while holding the lock cannot leave a
    /// transaction open (a dropped `Transaction` rolls back), so a poisoned
    /// lock is still safe to use.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn write<T>(
        &self,
        f: impl FnOnce(&Transaction<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut conn = self.lock();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let value = f(&tx)?;
        tx.commit()?;
        Ok(value)
    }

    fn session_exists(conn: &Connection, id: &SessionId) -> Result<bool, StoreError> {
        let mut stmt = conn.prepare_cached("SELECT 1 FROM sessions WHERE id = ?1")?;
        Ok(stmt.exists(params![id.as_str()])?)
    }

    fn append_in(
        tx: &Transaction<'_>,
        session: &SessionId,
        turn: Option<&TurnId>,
        encoded: &EncodedKind,
    ) -> Result<Stamp, StoreError> {
        let last: i64 = tx
            .prepare_cached("SELECT last_seq FROM sessions WHERE id = ?1")?
            .query_row(params![session.as_str()], |row| row.get(0))
            .optional()?
            .ok_or_else(|| StoreError::NoSession(session.to_string()))?;
        let seq = rows::seq_from_db(last, &format!("session `{session}`"))? + 1;
        let ts = now_rfc3339();

        tx.prepare_cached(
            "INSERT INTO events (session_id, seq, ts, turn_id, type, payload)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?
        .execute(params![
            session.as_str(),
            rows::seq_to_db(seq),
            ts,
            turn.map(TurnId::as_str),
            encoded.type_name(),
            encoded.payload(),
        ])?;
        tx.prepare_cached("UPDATE sessions SET last_seq = ?2 WHERE id = ?1")?
            .execute(params![session.as_str(), rows::seq_to_db(seq)])?;

        match turn_rules::row_change(encoded.kind(), turn)? {
            Some(RowChange::OpenTurn { turn, title }) => {
                open_turn(tx, session, turn, seq, &ts)?;
                if let Some(title) = title {
                    tx.prepare_cached(
                        "UPDATE sessions SET title = ?2 WHERE id = ?1 AND title IS NULL",
                    )?
                    .execute(params![session.as_str(), title])?;
                }
            }
            Some(RowChange::SetMode(mode)) => {
                tx.prepare_cached("UPDATE sessions SET mode = ?2 WHERE id = ?1")?
                    .execute(params![session.as_str(), mode])?;
            }
            Some(RowChange::CloseTurn {
                turn,
                status,
                error,
            }) => close_turn(tx, session, turn, status, error, &ts)?,
            None => {}
        }

        Ok(Stamp { seq, ts })
    }
}

fn open_turn(
    tx: &Transaction<'_>,
    session: &SessionId,
    turn: &TurnId,
    seq: u64,
    ts: &str,
) -> Result<(), StoreError> {
    let inserted = tx
        .prepare_cached(
            "INSERT INTO turns (id, session_id, status, started_at, started_seq)
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )?
        .execute(params![
            turn.as_str(),
            session.as_str(),
            TurnStatus::Running.as_str(),
            ts,
            rows::seq_to_db(seq),
        ]);
    match inserted {
        Ok(_) => Ok(()),
        Err(e) if e.sqlite_error_code() == Some(ErrorCode::ConstraintViolation) => {
            Err(turn_rules::already_started(turn))
        }
        Err(e) => Err(e.into()),
    }
}

fn close_turn(
    tx: &Transaction<'_>,
    session: &SessionId,
    turn: &TurnId,
    status: TurnStatus,
    error: Option<&str>,
    ts: &str,
) -> Result<(), StoreError> {
    let current: Option<String> = tx
        .prepare_cached("SELECT status FROM turns WHERE id = ?1 AND session_id = ?2")?
        .query_row(params![turn.as_str(), session.as_str()], |row| row.get(0))
        .optional()?;
    turn_rules::check_may_end(session, turn, current.as_deref())?;
    tx.prepare_cached("UPDATE turns SET status = ?2, ended_at = ?3, error = ?4 WHERE id = ?1")?
        .execute(params![turn.as_str(), status.as_str(), ts, error])?;
    Ok(())
}

#[async_trait::async_trait]
impl Store for SqliteStore {
    async fn create_session(&self, session: &SessionRecord) -> Result<(), StoreError> {
        self.write(|tx| {
            // A new session has no events, whatever `last_seq` says.
            let inserted = tx
                .prepare_cached(
                    "INSERT INTO sessions
                     (id, repository, mode, model, stop_rule, created_at, title, last_seq,
                      parent, parent_call)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 0, ?8, ?9)",
                )?
                .execute(params![
                    session.id.as_str(),
                    session.repository,
                    session.mode.as_str(),
                    session.model,
                    session.stop_rule.as_str(),
                    session.created_at,
                    session.title,
                    session.parent.as_ref().map(|p| p.session.as_str()),
                    session.parent.as_ref().map(|p| p.call_id.as_str()),
                ]);
            match inserted {
                Ok(_) => Ok(()),
                Err(e) if e.sqlite_error_code() == Some(ErrorCode::ConstraintViolation) => {
                    Err(Refused::SessionExists(session.id.clone()).into())
                }
                Err(e) => Err(e.into()),
            }
        })
    }

    async fn get_session(&self, id: &SessionId) -> Result<Option<SessionRecord>, StoreError> {
        let conn = self.lock();
        let sql = format!("SELECT {} FROM sessions WHERE id = ?1", RawSession::COLUMNS);
        let raw = conn
            .prepare_cached(&sql)?
            .query_row(params![id.as_str()], RawSession::from_row)
            .optional()?;
        raw.map(RawSession::into_record).transpose()
    }

    async fn set_owner(&self, id: &SessionId, owner: &str) -> Result<(), StoreError> {
        self.write(|tx| {
            let changed = tx
                .prepare_cached("UPDATE sessions SET owner = ?2 WHERE id = ?1")?
                .execute(params![id.as_str(), owner])?;
            if changed == 0 {
                return Err(StoreError::NoSession(id.to_string()));
            }
            Ok(())
        })
    }

    async fn owner(&self, id: &SessionId) -> Result<Option<String>, StoreError> {
        let conn = self.lock();
        conn.prepare_cached("SELECT owner FROM sessions WHERE id = ?1")?
            .query_row(params![id.as_str()], |row| row.get::<_, Option<String>>(0))
            .optional()?
            .ok_or_else(|| StoreError::NoSession(id.to_string()))
    }

    async fn list_owned(
        &self,
        owner: &str,
        after: Option<&SessionId>,
        limit: usize,
    ) -> Result<Vec<SessionRecord>, StoreError> {
        let conn = self.lock();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let raws = match after {
            None => {
                let sql = format!(
                    "SELECT {} FROM sessions WHERE owner = ?1 AND parent IS NULL
                     ORDER BY created_at DESC, id DESC LIMIT ?2",
                    RawSession::COLUMNS
                );
                conn.prepare_cached(&sql)?
                    .query_map(params![owner, limit], RawSession::from_row)?
                    .collect::<rusqlite::Result<Vec<_>>>()?
            }
            Some(cursor) => {
                let position: Option<(String, String)> = conn
                    .prepare_cached(
                        "SELECT created_at, id FROM sessions WHERE id = ?1 AND owner = ?2",
                    )?
                    .query_row(params![cursor.as_str(), owner], |row| {
                        Ok((row.get(0)?, row.get(1)?))
                    })
                    .optional()?;
                let (created_at, id) =
                    position.ok_or_else(|| StoreError::NoSession(cursor.to_string()))?;
                let sql = format!(
                    "SELECT {} FROM sessions WHERE owner = ?1 AND parent IS NULL
                     AND (created_at, id) < (?2, ?3)
                     ORDER BY created_at DESC, id DESC LIMIT ?4",
                    RawSession::COLUMNS
                );
                conn.prepare_cached(&sql)?
                    .query_map(params![owner, created_at, id, limit], RawSession::from_row)?
                    .collect::<rusqlite::Result<Vec<_>>>()?
            }
        };
        raws.into_iter().map(RawSession::into_record).collect()
    }

    async fn append_encoded(
        &self,
        session: &SessionId,
        turn: Option<&TurnId>,
        kind: &EncodedKind,
    ) -> Result<Stamp, StoreError> {
        self.write(|tx| {
            self.check_quota(tx, kind.kind())?;
            Self::append_in(tx, session, turn, kind)
        })
    }

    async fn events(&self, session: &SessionId, after: u64) -> Result<Vec<Event>, StoreError> {
        let conn = self.lock();
        let sql = format!(
            "SELECT {} FROM events WHERE session_id = ?1 AND seq > ?2 ORDER BY seq",
            RawEvent::COLUMNS
        );
        let mut stmt = conn.prepare_cached(&sql)?;
        let raws = stmt
            .query_map(
                params![session.as_str(), rows::seq_to_db(after)],
                RawEvent::from_row,
            )?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        if raws.is_empty() && !Self::session_exists(&conn, session)? {
            return Err(StoreError::NoSession(session.to_string()));
        }
        raws.into_iter()
            .map(|raw| raw.into_event(session))
            .collect()
    }

    async fn turns(&self, session: &SessionId) -> Result<Vec<TurnRecord>, StoreError> {
        let conn = self.lock();
        let sql = format!(
            "SELECT {} FROM turns WHERE session_id = ?1 ORDER BY started_seq",
            RawTurn::COLUMNS
        );
        let mut stmt = conn.prepare_cached(&sql)?;
        let raws = stmt
            .query_map(params![session.as_str()], RawTurn::from_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        if raws.is_empty() && !Self::session_exists(&conn, session)? {
            return Err(StoreError::NoSession(session.to_string()));
        }
        raws.into_iter().map(RawTurn::into_record).collect()
    }

    async fn running_turns(&self) -> Result<Vec<TurnRecord>, StoreError> {
        let conn = self.lock();
        let sql = format!(
            // A literal, so the partial index `turns_running` applies.
            "SELECT {} FROM turns WHERE status = 'running'
             ORDER BY started_at, session_id, started_seq",
            RawTurn::COLUMNS
        );
        let mut stmt = conn.prepare_cached(&sql)?;
        let raws = stmt
            .query_map([], RawTurn::from_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        raws.into_iter().map(RawTurn::into_record).collect()
    }

    async fn add_rule(&self, principal: &str, rule: &Rule) -> Result<(), StoreError> {
        self.add_rule_sync(principal, rule)
    }

    async fn rules(&self, principal: &str) -> Result<Vec<Rule>, StoreError> {
        self.rules_sync(principal)
    }

    async fn delete_rule(&self, principal: &str, id: &str) -> Result<bool, StoreError> {
        self.delete_rule_sync(principal, id)
    }

    async fn put_blob(&self, blob: &Blob) -> Result<(), StoreError> {
        self.put_blob_sync(blob)
    }

    async fn blob(&self, sha256: &str) -> Result<Option<Blob>, StoreError> {
        self.blob_sync(sha256)
    }
}
