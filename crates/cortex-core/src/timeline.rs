//! The session's event log: persist first, then fan out.

use crate::CoreError;
use cortex_protocol::{Event, EventKind, SessionId, TurnId};
use cortex_store::{EncodedKind, Store};
use std::ops::Deref;
use std::sync::Arc;
use tokio::sync::broadcast;

/// Subscribers that fall this far behind miss live events and must catch up
/// from the store (`Store::events(after)`); the turn never waits for them.
/// Each slot is one pointer, and the ring is allocated with the session, so
/// it stays small: a lagging subscriber is cheap to serve from the store.
const FANOUT_CAPACITY: usize = 256;

/// A persisted event as subscribers get it: the event and its JSON text
/// (exactly `serde_json::to_string(&event)`), serialised once, together with
/// the store's copy, and shared by every subscriber.
#[derive(Debug)]
pub struct Published {
    /// The stored event, with its seq and timestamp.
    pub event: Event,
    /// Its wire JSON, exactly `serde_json::to_string(&event)`.
    pub json: String,
}

impl Deref for Published {
    type Target = Event;

    fn deref(&self) -> &Event {
        &self.event
    }
}

/// A session's append-only log: every event is persisted in the store
/// before any subscriber sees it. Cheap to clone (all clones share the
/// fan-out).
#[derive(Clone)]
pub struct Timeline {
    store: Arc<dyn Store>,
    session: SessionId,
    fanout: broadcast::Sender<Arc<Published>>,
}

impl Timeline {
    /// The timeline of `session` in `store`.
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
        let encoded = EncodedKind::new(kind)?;
        let stamp = self
            .store
            .append_encoded(&self.session, turn, &encoded)
            .await?;
        // Only events sent after a subscription reach it: with no subscriber
        // now, nobody will see this one live (it is in the store).
        if self.fanout.receiver_count() == 0 {
            return Ok(encoded.into_event(&self.session, turn, stamp));
        }
        let json = encoded.event_json(&self.session, turn, &stamp);
        let event = encoded.into_event(&self.session, turn, stamp);
        let published = Arc::new(Published {
            event: event.clone(),
            json,
        });
        // A subscriber gone since the check is not an error either.
        let _ = self.fanout.send(published);
        Ok(event)
    }

    /// Live events from now on; each is already persisted.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Published>> {
        self.fanout.subscribe()
    }

    /// The store the timeline persists to.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// The session whose timeline this is.
    pub fn session(&self) -> &SessionId {
        &self.session
    }
}
