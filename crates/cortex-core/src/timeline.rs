//! The session's event log: persist first, then fan out.

use crate::CoreError;
use cortex_protocol::{Event, EventKind, SessionId, TurnId};
use cortex_store::Store;
use std::sync::Arc;
use tokio::sync::broadcast;

/// Subscribers that fall this far behind miss live events and must catch up
/// from the store (`Store::events(after)`); the turn never waits for them.
const FANOUT_CAPACITY: usize = 4096;

#[derive(Clone)]
pub struct Timeline {
    store: Arc<dyn Store>,
    session: SessionId,
    fanout: broadcast::Sender<Event>,
}

impl Timeline {
    pub fn new(store: Arc<dyn Store>, session: SessionId) -> Self {
        let (fanout, _) = broadcast::channel(FANOUT_CAPACITY);
        Timeline {
            store,
            session,
            fanout,
        }
    }

    /// Append `kind` to the store, then show it to subscribers.
    pub async fn emit(&self, turn: Option<&TurnId>, kind: EventKind) -> Result<Event, CoreError> {
        let event = self.store.append(&self.session, turn, kind).await?;
        // No subscriber is not an error: the event is in the store.
        let _ = self.fanout.send(event.clone());
        Ok(event)
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.fanout.subscribe()
    }

    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    pub fn session(&self) -> &SessionId {
        &self.session
    }
}
