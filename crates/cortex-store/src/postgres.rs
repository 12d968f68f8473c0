//! PostgreSQL implementation of [`Store`], for teams sharing one server.
//!
//! Same rules as the SQLite store: `append` assigns the next `seq` under a
//! row lock on the session (`SELECT … FOR UPDATE`), so concurrent writers,
//! even in several processes, get gapless sequences; turn status is derived
//! from the events in the same transaction. Writes go through one connection
//! behind an async mutex (a transaction needs it exclusively); reads use a
//! second connection and run concurrently. A connection the server closed
//! (restart, failover) is opened again by the next call. The schema is
//! `migrations.rs`'s, its version kept in `cortex_schema`.

use crate::migrations;
use crate::rows::{self, RawEvent, RawSession, RawTurn};
use crate::turn_rules::{self, RowChange};
use crate::{
    Blob, EncodedKind, Refused, SessionRecord, Stamp, Store, StoreError, TurnRecord, TurnStatus,
};
use cortex_protocol::{Event, Rule, SessionId, TurnId, now_rfc3339};
use std::sync::Arc;
use tokio::sync::MutexGuard;
use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, NoTls, Row, Transaction};

/// The store in a PostgreSQL database, shared by the servers of a team.
/// Its contract is [`Store`]'s; a dropped call may leave its write
/// committed or not (see there), never half-done.
pub struct PgStore {
    url: String,
    writer: tokio::sync::Mutex<Client>,
    reader: tokio::sync::Mutex<Arc<Client>>,
}

fn pg(e: tokio_postgres::Error) -> StoreError {
    StoreError::Postgres(e)
}

pub(crate) fn is_unique_violation(e: &tokio_postgres::Error) -> bool {
    e.code() == Some(&SqlState::UNIQUE_VIOLATION)
}

async fn connect(url: &str) -> Result<Client, StoreError> {
    let (client, connection) =
        tokio_postgres::connect(url, NoTls)
            .await
            .map_err(|e| StoreError::Open {
                path: redact(url),
                reason: e.into(),
            })?;
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::error!("postgres connection ended: {e}");
        }
    });
    Ok(client)
}

/// The URL without its password, for messages.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            let user = userinfo.split(':').next().unwrap_or_default();
            format!("{}{user}{}", &url[..scheme + 3], &url[at..])
        }
        _ => url.to_owned(),
    }
}

impl PgStore {
    /// Connect (`postgres://user[:password]@host[:port]/db`) and migrate.
    /// Must be called inside a Tokio runtime; the connections' tasks run on it.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let mut writer = connect(url).await?;
        migrations::migrate_postgres(&mut writer)
            .await
            .map_err(|reason| StoreError::Open {
                path: redact(url),
                reason,
            })?;
        let reader = connect(url).await?;
        Ok(PgStore {
            url: url.to_owned(),
            writer: tokio::sync::Mutex::new(writer),
            reader: tokio::sync::Mutex::new(Arc::new(reader)),
        })
    }

    /// The write connection, opened again first if the server closed it (a
    /// restart, a failover, an idle timeout). A call that was in flight when
    /// it closed fails; the next one reconnects.
    pub(crate) async fn writer(&self) -> Result<MutexGuard<'_, Client>, StoreError> {
        let mut writer = self.writer.lock().await;
        if writer.is_closed() {
            *writer = self.reconnect().await?;
        }
        Ok(writer)
    }

    /// The read connection (shared: reads run concurrently on it), opened
    /// again first if the server closed it.
    pub(crate) async fn reader(&self) -> Result<Arc<Client>, StoreError> {
        let mut reader = self.reader.lock().await;
        if reader.is_closed() {
            *reader = Arc::new(self.reconnect().await?);
        }
        Ok(Arc::clone(&reader))
    }

    async fn reconnect(&self) -> Result<Client, StoreError> {
        tracing::warn!("the PostgreSQL connection was closed; connecting again");
        connect(&self.url).await
    }

    /// The schema version of the database.
    pub async fn schema_version(&self) -> Result<i64, StoreError> {
        Ok(migrations::pg_version(&*self.reader().await?).await?)
    }
}

fn sessions(rows: Vec<Row>) -> Result<Vec<SessionRecord>, StoreError> {
    rows.iter()
        .map(|row| RawSession::from_pg(row).into_record())
        .collect()
}

async fn session_exists(client: &Client, id: &SessionId) -> Result<bool, StoreError> {
    Ok(client
        .query_opt("SELECT 1 FROM sessions WHERE id = $1", &[&id.as_str()])
        .await
        .map_err(pg)?
        .is_some())
}

async fn append_in(
    tx: &Transaction<'_>,
    session: &SessionId,
    turn: Option<&TurnId>,
    encoded: &EncodedKind,
) -> Result<Stamp, StoreError> {
    let stamp = insert_event(tx, session, turn, encoded).await?;
    match turn_rules::row_change(encoded.kind(), turn)? {
        Some(RowChange::OpenTurn { turn, title }) => {
            start_turn(tx, session, turn, title, &stamp).await?;
        }
        Some(RowChange::SetMode(mode)) => {
            tx.execute(
                "UPDATE sessions SET mode = $2 WHERE id = $1",
                &[&session.as_str(), &mode],
            )
            .await
            .map_err(pg)?;
        }
        Some(RowChange::CloseTurn {
            turn,
            status,
            error,
        }) => close_turn(tx, session, turn, status, error, &stamp.ts).await?,
        None => {}
    }
    Ok(stamp)
}

/// The event's row, at the session's next seq (its row locked until the
/// transaction ends, so writers in other processes wait).
async fn insert_event(
    tx: &Transaction<'_>,
    session: &SessionId,
    turn: Option<&TurnId>,
    encoded: &EncodedKind,
) -> Result<Stamp, StoreError> {
    let last: i64 = tx
        .query_opt(
            "SELECT last_seq FROM sessions WHERE id = $1 FOR UPDATE",
            &[&session.as_str()],
        )
        .await
        .map_err(pg)?
        .ok_or_else(|| StoreError::NoSession(session.to_string()))?
        .get(0);
    let seq = rows::seq_from_db(last, &format!("session `{session}`"))? + 1;
    let ts = now_rfc3339();
    let turn_id = turn.map(TurnId::as_str);
    tx.execute(
        "INSERT INTO events (session_id, seq, ts, turn_id, type, payload)
         VALUES ($1, $2, $3, $4, $5, $6)",
        &[
            &session.as_str(),
            &rows::seq_to_db(seq),
            &ts,
            &turn_id,
            &encoded.type_name(),
            &encoded.payload(),
        ],
    )
    .await
    .map_err(pg)?;
    tx.execute(
        "UPDATE sessions SET last_seq = $2 WHERE id = $1",
        &[&session.as_str(), &rows::seq_to_db(seq)],
    )
    .await
    .map_err(pg)?;
    Ok(Stamp { seq, ts })
}

/// `turn.started`: the turn's row (a second start of the same turn is
/// refused), and the session's title from its first message.
async fn start_turn(
    tx: &Transaction<'_>,
    session: &SessionId,
    turn: &TurnId,
    title: Option<String>,
    stamp: &Stamp,
) -> Result<(), StoreError> {
    let inserted = tx
        .execute(
            "INSERT INTO turns (id, session_id, status, started_at, started_seq)
             VALUES ($1, $2, $3, $4, $5)",
            &[
                &turn.as_str(),
                &session.as_str(),
                &TurnStatus::Running.as_str(),
                &stamp.ts,
                &rows::seq_to_db(stamp.seq),
            ],
        )
        .await;
    match inserted {
        Ok(_) => {}
        Err(e) if is_unique_violation(&e) => {
            return Err(turn_rules::already_started(turn));
        }
        Err(e) => return Err(pg(e)),
    }
    if let Some(title) = title {
        tx.execute(
            "UPDATE sessions SET title = $2 WHERE id = $1 AND title IS NULL",
            &[&session.as_str(), &title],
        )
        .await
        .map_err(pg)?;
    }
    Ok(())
}

/// A `turn.completed|stopped|failed`: the turn, which must be running,
/// ends with `status` (and `error`).
async fn close_turn(
    tx: &Transaction<'_>,
    session: &SessionId,
    turn: &TurnId,
    status: TurnStatus,
    error: Option<&str>,
    ts: &str,
) -> Result<(), StoreError> {
    let current: Option<String> = tx
        .query_opt(
            "SELECT status FROM turns WHERE id = $1 AND session_id = $2",
            &[&turn.as_str(), &session.as_str()],
        )
        .await
        .map_err(pg)?
        .map(|row| row.get(0));
    turn_rules::check_may_end(session, turn, current.as_deref())?;
    tx.execute(
        "UPDATE turns SET status = $2, ended_at = $3, error = $4 WHERE id = $1",
        &[&turn.as_str(), &status.as_str(), &ts, &error],
    )
    .await
    .map_err(pg)?;
    Ok(())
}

#[async_trait::async_trait]
impl Store for PgStore {
    async fn create_session(&self, session: &SessionRecord) -> Result<(), StoreError> {
        let writer = self.writer().await?;
        let inserted = writer
            .execute(
                "INSERT INTO sessions
                 (id, repository, mode, model, stop_rule, created_at, title, last_seq,
                  parent, parent_call)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, 0, $8, $9)",
                &[
                    &session.id.as_str(),
                    &session.repository,
                    &session.mode.as_str(),
                    &session.model,
                    &session.stop_rule.as_str(),
                    &session.created_at,
                    &session.title,
                    &session.parent.as_ref().map(|p| p.session.as_str()),
                    &session.parent.as_ref().map(|p| p.call_id.as_str()),
                ],
            )
            .await;
        match inserted {
            Ok(_) => Ok(()),
            Err(e) if is_unique_violation(&e) => {
                Err(Refused::SessionExists(session.id.clone()).into())
            }
            Err(e) => Err(pg(e)),
        }
    }

    async fn get_session(&self, id: &SessionId) -> Result<Option<SessionRecord>, StoreError> {
        let sql = format!("SELECT {} FROM sessions WHERE id = $1", RawSession::COLUMNS);
        let row = self
            .reader()
            .await?
            .query_opt(&sql, &[&id.as_str()])
            .await
            .map_err(pg)?;
        row.map(|row| RawSession::from_pg(&row).into_record())
            .transpose()
    }

    async fn set_owner(&self, id: &SessionId, owner: &str) -> Result<(), StoreError> {
        let writer = self.writer().await?;
        let changed = writer
            .execute(
                "UPDATE sessions SET owner = $2 WHERE id = $1",
                &[&id.as_str(), &owner],
            )
            .await
            .map_err(pg)?;
        if changed == 0 {
            return Err(StoreError::NoSession(id.to_string()));
        }
        Ok(())
    }

    async fn owner(&self, id: &SessionId) -> Result<Option<String>, StoreError> {
        self.reader()
            .await?
            .query_opt("SELECT owner FROM sessions WHERE id = $1", &[&id.as_str()])
            .await
            .map_err(pg)?
            .map(|row| row.get::<_, Option<String>>(0))
            .ok_or_else(|| StoreError::NoSession(id.to_string()))
    }

    async fn list_owned(
        &self,
        owner: &str,
        after: Option<&SessionId>,
        limit: usize,
    ) -> Result<Vec<SessionRecord>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = match after {
            None => {
                let sql = format!(
                    "SELECT {} FROM sessions WHERE owner = $1 AND parent IS NULL
                     ORDER BY created_at DESC, id DESC LIMIT $2",
                    RawSession::COLUMNS
                );
                self.reader().await?.query(&sql, &[&owner, &limit]).await
            }
            Some(cursor) => {
                let position = self
                    .reader()
                    .await?
                    .query_opt(
                        "SELECT created_at, id FROM sessions WHERE id = $1 AND owner = $2",
                        &[&cursor.as_str(), &owner],
                    )
                    .await
                    .map_err(pg)?
                    .ok_or_else(|| StoreError::NoSession(cursor.to_string()))?;
                let (created_at, id): (String, String) = (position.get(0), position.get(1));
                let sql = format!(
                    "SELECT {} FROM sessions
                     WHERE owner = $1 AND parent IS NULL AND (created_at, id) < ($2, $3)
                     ORDER BY created_at DESC, id DESC LIMIT $4",
                    RawSession::COLUMNS
                );
                self.reader()
                    .await?
                    .query(&sql, &[&owner, &created_at, &id, &limit])
                    .await
            }
        };
        sessions(rows.map_err(pg)?)
    }

    async fn append_encoded(
        &self,
        session: &SessionId,
        turn: Option<&TurnId>,
        kind: &EncodedKind,
    ) -> Result<Stamp, StoreError> {
        let mut writer = self.writer().await?;
        let tx = writer.transaction().await.map_err(pg)?;
        // An error drops `tx`, which rolls back: nothing is written.
        let stamp = append_in(&tx, session, turn, kind).await?;
        tx.commit().await.map_err(pg)?;
        Ok(stamp)
    }

    async fn events(&self, session: &SessionId, after: u64) -> Result<Vec<Event>, StoreError> {
        let sql = format!(
            "SELECT {} FROM events WHERE session_id = $1 AND seq > $2 ORDER BY seq",
            RawEvent::COLUMNS
        );
        let rows = self
            .reader()
            .await?
            .query(&sql, &[&session.as_str(), &rows::seq_to_db(after)])
            .await
            .map_err(pg)?;
        if rows.is_empty() && !session_exists(&*self.reader().await?, session).await? {
            return Err(StoreError::NoSession(session.to_string()));
        }
        rows.iter()
            .map(|row| RawEvent::from_pg(row).into_event(session))
            .collect()
    }

    async fn turns(&self, session: &SessionId) -> Result<Vec<TurnRecord>, StoreError> {
        let sql = format!(
            "SELECT {} FROM turns WHERE session_id = $1 ORDER BY started_seq",
            RawTurn::COLUMNS
        );
        let rows = self
            .reader()
            .await?
            .query(&sql, &[&session.as_str()])
            .await
            .map_err(pg)?;
        if rows.is_empty() && !session_exists(&*self.reader().await?, session).await? {
            return Err(StoreError::NoSession(session.to_string()));
        }
        rows.iter()
            .map(|row| RawTurn::from_pg(row).into_record())
            .collect()
    }

    async fn running_turns(&self) -> Result<Vec<TurnRecord>, StoreError> {
        let sql = format!(
            // A literal, so the partial index `turns_running` applies.
            "SELECT {} FROM turns WHERE status = 'running'
             ORDER BY started_at, session_id, started_seq",
            RawTurn::COLUMNS
        );
        let rows = self.reader().await?.query(&sql, &[]).await.map_err(pg)?;
        rows.iter()
            .map(|row| RawTurn::from_pg(row).into_record())
            .collect()
    }

    async fn add_rule(&self, principal: &str, rule: &Rule) -> Result<(), StoreError> {
        self.add_rule_pg(principal, rule).await
    }

    async fn rules(&self, principal: &str) -> Result<Vec<Rule>, StoreError> {
        self.rules_pg(principal).await
    }

    async fn delete_rule(&self, principal: &str, id: &str) -> Result<bool, StoreError> {
        self.delete_rule_pg(principal, id).await
    }

    async fn put_blob(&self, blob: &Blob) -> Result<(), StoreError> {
        self.put_blob_pg(blob).await
    }

    async fn blob(&self, sha256: &str) -> Result<Option<Blob>, StoreError> {
        self.blob_pg(sha256).await
    }
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn passwords_stay_out_of_messages() {
        assert_eq!(
            redact("postgres://me:secret@db:5432/cortex"),
            "postgres://me@db:5432/cortex"
        );
        assert_eq!(redact("postgres://db/cortex"), "postgres://db/cortex");
    }
}
