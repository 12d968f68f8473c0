//! Mapping between table rows and the protocol types.
//!
//! Rows are first read as plain columns (`Raw*`, inside rusqlite's row
//! closure), then converted with [`StoreError::Corrupt`] for anything that
//! does not parse, so one bad row names itself instead of failing as a
//! generic SQLite error.

use crate::{Corruption, SessionRecord, StoreError, TurnRecord, TurnStatus};
use cortex_protocol::{Event, EventKind, ParentLink, SessionId, TurnId};
use rusqlite::Row;
use serde_json::Value;

/// Most characters of a session title.
pub(crate) const TITLE_MAX_CHARS: usize = 80;

/// Convert a seq read from SQLite (always >= 0 as we write it).
pub(crate) fn seq_from_db(value: i64, what: &str) -> Result<u64, StoreError> {
    u64::try_from(value).map_err(|_| StoreError::Corrupt {
        row: what.to_owned(),
        reason: Corruption::NegativeSeq(value),
    })
}

/// Convert a seq for a query bound; values past `i64::MAX` clamp (no row has one).
pub(crate) fn seq_to_db(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

// ---- events ---------------------------------------------------------------

/// Rebuild an `EventKind` from its stored columns.
pub(crate) fn decode_kind(type_name: &str, payload: &str) -> Result<EventKind, Corruption> {
    let payload: Value = serde_json::from_str(payload).map_err(Corruption::PayloadNotJson)?;
    let mut map = serde_json::Map::new();
    map.insert("type".to_owned(), Value::String(type_name.to_owned()));
    // A unit-like variant has no `payload` key on the wire.
    if !payload.is_null() {
        map.insert("payload".to_owned(), payload);
    }
    serde_json::from_value(Value::Object(map)).map_err(|source| Corruption::NotItsKind {
        type_name: type_name.to_owned(),
        source,
    })
}

/// An `events` row as stored: `seq, ts, turn_id, type, payload`.
pub(crate) struct RawEvent {
    pub(crate) seq: i64,
    pub(crate) ts: String,
    pub(crate) turn_id: Option<String>,
    pub(crate) type_name: String,
    pub(crate) payload: String,
}

impl RawEvent {
    /// Columns, in this order: `seq, ts, turn_id, type, payload`.
    pub(crate) const COLUMNS: &'static str = "seq, ts, turn_id, type, payload";

    pub(crate) fn from_row(row: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            seq: row.get(0)?,
            ts: row.get(1)?,
            turn_id: row.get(2)?,
            type_name: row.get(3)?,
            payload: row.get(4)?,
        })
    }

    /// The same columns from a PostgreSQL row.
    pub(crate) fn from_pg(row: &tokio_postgres::Row) -> Self {
        Self {
            seq: row.get(0),
            ts: row.get(1),
            turn_id: row.get(2),
            type_name: row.get(3),
            payload: row.get(4),
        }
    }

    pub(crate) fn into_event(self, session: &SessionId) -> Result<Event, StoreError> {
        let seq = seq_from_db(self.seq, &format!("event of session `{session}`"))?;
        let kind =
            decode_kind(&self.type_name, &self.payload).map_err(|reason| StoreError::Corrupt {
                row: format!("event seq {seq} of session `{session}`"),
                reason,
            })?;
        Ok(Event {
            seq,
            ts: self.ts,
            session_id: session.clone(),
            turn_id: self.turn_id.map(TurnId),
            kind,
        })
    }
}

// ---- sessions -------------------------------------------------------------

pub(crate) struct RawSession {
    pub(crate) id: String,
    pub(crate) repository: String,
    pub(crate) mode: String,
    pub(crate) model: String,
    pub(crate) stop_rule: String,
    pub(crate) created_at: String,
    pub(crate) title: Option<String>,
    pub(crate) last_seq: i64,
    pub(crate) parent: Option<String>,
    pub(crate) parent_call: Option<String>,
}

impl RawSession {
    pub(crate) const COLUMNS: &'static str =
        "id, repository, mode, model, stop_rule, created_at, title, last_seq, parent, parent_call";

    pub(crate) fn from_row(row: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            id: row.get(0)?,
            repository: row.get(1)?,
            mode: row.get(2)?,
            model: row.get(3)?,
            stop_rule: row.get(4)?,
            created_at: row.get(5)?,
            title: row.get(6)?,
            last_seq: row.get(7)?,
            parent: row.get(8)?,
            parent_call: row.get(9)?,
        })
    }

    /// The same columns from a PostgreSQL row.
    pub(crate) fn from_pg(row: &tokio_postgres::Row) -> Self {
        Self {
            id: row.get(0),
            repository: row.get(1),
            mode: row.get(2),
            model: row.get(3),
            stop_rule: row.get(4),
            created_at: row.get(5),
            title: row.get(6),
            last_seq: row.get(7),
            parent: row.get(8),
            parent_call: row.get(9),
        }
    }

    pub(crate) fn into_record(self) -> Result<SessionRecord, StoreError> {
        let unknown = |column, value: &str| StoreError::Corrupt {
            row: format!("session `{}`", self.id),
            reason: Corruption::Unknown {
                column,
                value: value.to_owned(),
            },
        };
        let mode = self.mode.parse().map_err(|_| unknown("mode", &self.mode))?;
        let stop_rule =
            (self.stop_rule.parse()).map_err(|_: String| unknown("stop_rule", &self.stop_rule))?;
        let last_seq = seq_from_db(self.last_seq, &format!("session `{}`", self.id))?;
        Ok(SessionRecord {
            id: SessionId(self.id),
            repository: self.repository,
            mode,
            model: self.model,
            stop_rule,
            created_at: self.created_at,
            last_seq,
            title: self.title,
            parent: match (self.parent, self.parent_call) {
                (Some(session), Some(call_id)) => Some(ParentLink {
                    session: SessionId(session),
                    call_id: call_id.as_str().into(),
                }),
                _ => None,
            },
        })
    }
}

/// The title a session gets from its first user message: the first non-blank
/// line, trimmed, at most [`TITLE_MAX_CHARS`] characters. `None` when the
/// message is blank.
pub(crate) fn title_from_message(message: &str) -> Option<String> {
    let line = message.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(line.chars().take(TITLE_MAX_CHARS).collect())
}

// ---- turns ----------------------------------------------------------------

impl TurnStatus {
    /// The name stored in the `turns` table.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            TurnStatus::Running => "running",
            TurnStatus::Completed => "completed",
            TurnStatus::Stopped => "stopped",
            TurnStatus::Failed => "failed",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Self> {
        [
            TurnStatus::Running,
            TurnStatus::Completed,
            TurnStatus::Stopped,
            TurnStatus::Failed,
        ]
        .into_iter()
        .find(|status| status.as_str() == s)
    }

    /// The status a turn-ending event leaves the turn in, and its error.
    pub(crate) fn after(kind: &EventKind) -> Option<(Self, Option<&str>)> {
        match kind {
            EventKind::TurnCompleted { .. } => Some((TurnStatus::Completed, None)),
            EventKind::TurnStopped { .. } => Some((TurnStatus::Stopped, None)),
            EventKind::TurnFailed { error, .. } => Some((TurnStatus::Failed, Some(error.as_str()))),
            _ => None,
        }
    }
}

pub(crate) struct RawTurn {
    pub(crate) id: String,
    pub(crate) session_id: String,
    pub(crate) status: String,
    pub(crate) started_at: String,
    pub(crate) ended_at: Option<String>,
}

impl RawTurn {
    pub(crate) const COLUMNS: &'static str = "id, session_id, status, started_at, ended_at";

    pub(crate) fn from_row(row: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            id: row.get(0)?,
            session_id: row.get(1)?,
            status: row.get(2)?,
            started_at: row.get(3)?,
            ended_at: row.get(4)?,
        })
    }

    /// The same columns from a PostgreSQL row.
    pub(crate) fn from_pg(row: &tokio_postgres::Row) -> Self {
        Self {
            id: row.get(0),
            session_id: row.get(1),
            status: row.get(2),
            started_at: row.get(3),
            ended_at: row.get(4),
        }
    }

    pub(crate) fn into_record(self) -> Result<TurnRecord, StoreError> {
        let status = TurnStatus::parse(&self.status).ok_or_else(|| StoreError::Corrupt {
            row: format!("turn `{}`", self.id),
            reason: Corruption::Unknown {
                column: "status",
                value: self.status.clone(),
            },
        })?;
        Ok(TurnRecord {
            id: TurnId(self.id),
            session_id: SessionId(self.session_id),
            status,
            started_at: self.started_at,
            ended_at: self.ended_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn title_is_first_nonblank_line_capped() {
        assert_eq!(
            title_from_message("  \n  fix the build \nmore"),
            Some("fix the build".into())
        );
        assert_eq!(title_from_message(" \n\t"), None);
        let long = "é".repeat(200);
        assert_eq!(
            title_from_message(&long).map(|t| t.chars().count()),
            Some(80)
        );
    }

    #[test]
    fn kind_encoding_strips_the_tag() {
        let kind = EventKind::TurnCompleted {
            rounds: 3,
            finish: None,
            unverified: Vec::new(),
        };
        let encoded = crate::EncodedKind::new(kind.clone()).expect("encode");
        assert_eq!(encoded.type_name(), "turn.completed");
        assert_eq!(encoded.payload(), r#"{"rounds":3}"#);
        assert_eq!(
            decode_kind(encoded.type_name(), encoded.payload()).expect("decode"),
            kind
        );
    }

    #[test]
    fn bad_payloads_are_reported() {
        assert!(decode_kind("turn.completed", "{not json").is_err());
        assert!(decode_kind("turn.completed", r#"{"rounds":"x"}"#).is_err());
        assert!(decode_kind("no.such.type", "{}").is_err());
    }

    #[test]
    fn turn_status_names_round_trip() {
        for status in [
            TurnStatus::Running,
            TurnStatus::Completed,
            TurnStatus::Stopped,
            TurnStatus::Failed,
        ] {
            assert_eq!(TurnStatus::parse(status.as_str()), Some(status));
        }
        assert_eq!(TurnStatus::parse("done"), None);
    }
}
