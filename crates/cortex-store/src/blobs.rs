//! Content-addressed blobs: the images a user attaches to a turn, stored
//! once under their sha256 however many turns (or sessions) attach them.
//! The timeline names a blob (`turn.images`); the bytes stay out of the
//! events, so a client following a session is never sent them.

use crate::error::StoreError;
use crate::postgres::PgStore;
use crate::sqlite::SqliteStore;
use rusqlite::params;

/// One stored blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob {
    /// The sha256 of the decoded bytes, lower-case hex: its key.
    pub sha256: String,
    /// `image/png`, `image/jpeg`, …
    pub mime_type: String,
    /// The bytes, base64 (standard alphabet, padded).
    pub data: String,
}

impl SqliteStore {
    pub(crate) fn put_blob_sync(&self, blob: &Blob) -> Result<(), StoreError> {
        self.write(|tx| {
            self.check_room(tx)?;
            tx.prepare_cached(
                "INSERT INTO blobs (sha256, mime_type, data, bytes) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (sha256) DO NOTHING",
            )?
            .execute(params![
                blob.sha256,
                blob.mime_type,
                blob.data,
                blob.data.len() as i64
            ])?;
            Ok(())
        })
    }

    pub(crate) fn blob_sync(&self, sha256: &str) -> Result<Option<Blob>, StoreError> {
        let conn = self.lock();
        let mut stmt =
            conn.prepare_cached("SELECT sha256, mime_type, data FROM blobs WHERE sha256 = ?1")?;
        let mut rows = stmt.query(params![sha256])?;
        match rows.next()? {
            Some(row) => Ok(Some(Blob {
                sha256: row.get(0)?,
                mime_type: row.get(1)?,
                data: row.get(2)?,
            })),
            None => Ok(None),
        }
    }
}

impl PgStore {
    pub(crate) async fn put_blob_pg(&self, blob: &Blob) -> Result<(), StoreError> {
        self.writer()
            .await?
            .execute(
                "INSERT INTO blobs (sha256, mime_type, data, bytes) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (sha256) DO NOTHING",
                &[
                    &blob.sha256,
                    &blob.mime_type,
                    &blob.data,
                    &(blob.data.len() as i64),
                ],
            )
            .await?;
        Ok(())
    }

    pub(crate) async fn blob_pg(&self, sha256: &str) -> Result<Option<Blob>, StoreError> {
        let row = self
            .reader()
            .await?
            .query_opt(
                "SELECT sha256, mime_type, data FROM blobs WHERE sha256 = $1",
                &[&sha256],
            )
            .await?;
        Ok(row.map(|row| Blob {
            sha256: row.get(0),
            mime_type: row.get(1),
            data: row.get(2),
        }))
    }
}
