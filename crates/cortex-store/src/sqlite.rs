//! SQLite implementation: WAL, migrations, one connection behind a mutex.

use crate::{SessionRecord, Store, StoreError, TurnRecord};
use cortex_protocol::{Event, EventKind, Mode, SessionId, TurnId};
use std::path::Path;
use std::sync::Mutex;

pub struct SqliteStore {
    conn: Mutex<rusqlite::Connection>,
}

impl SqliteStore {
    /// Open (creating and migrating) the database file.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let _ = path;
        unimplemented!()
    }

    /// An in-memory store (tests, benchmarks).
    pub fn in_memory() -> Result<Self, StoreError> {
        unimplemented!()
    }
}

#[async_trait::async_trait]
impl Store for SqliteStore {
    async fn create_session(&self, session: &SessionRecord) -> Result<(), StoreError> {
        let _ = (session, &self.conn);
        unimplemented!()
    }
    async fn get_session(&self, id: &SessionId) -> Result<Option<SessionRecord>, StoreError> {
        let _ = id;
        unimplemented!()
    }
    async fn list_sessions(&self) -> Result<Vec<SessionRecord>, StoreError> {
        unimplemented!()
    }
    async fn set_mode(&self, id: &SessionId, mode: Mode) -> Result<(), StoreError> {
        let _ = (id, mode);
        unimplemented!()
    }
    async fn append(
        &self,
        session: &SessionId,
        turn: Option<&TurnId>,
        kind: EventKind,
    ) -> Result<Event, StoreError> {
        let _ = (session, turn, kind);
        unimplemented!()
    }
    async fn events(&self, session: &SessionId, after: u64) -> Result<Vec<Event>, StoreError> {
        let _ = (session, after);
        unimplemented!()
    }
    async fn turns(&self, session: &SessionId) -> Result<Vec<TurnRecord>, StoreError> {
        let _ = session;
        unimplemented!()
    }
    async fn running_turns(&self) -> Result<Vec<TurnRecord>, StoreError> {
        unimplemented!()
    }
}
