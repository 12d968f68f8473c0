//! `GET /v1/sessions/{id}/events`: the timeline as Server-Sent Events.
//!
//! The event id is the event's `seq`. A stream first sends stored events
//! after the requested position, then live ones from the session's
//! broadcast; it subscribes *before* reading the store, so nothing falls in
//! between, and skips what it already sent, so nothing is sent twice. A gap
//! in the live events (the subscriber lagged behind the bounded broadcast)
//! is filled from the store: a slow client never holds up the turn or other
//! clients. Events are persisted before they are broadcast, so the store
//! always has whatever the broadcast shows.

use crate::auth::Reader;
use crate::error::ApiError;
use crate::extract::{Path, Query};
use crate::state::AppState;
use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use bytes::Bytes;
use cortex_api::ErrorBody;
use cortex_api::events::{self, EventsQuery};
use cortex_protocol::{Event, SessionId};
use futures::{Stream, StreamExt};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::error::TryRecvError;

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/sessions/{id}/events", get(stream))
}

/// The session's events after `after` (or `Last-Event-ID`), then live ones;
/// for its owner or a share link of this session.
#[utoipa::path(get, path = "/v1/sessions/{id}/events",
    params(("id" = String, Path, description = "session id"), EventsQuery,
        ("Last-Event-ID" = Option<String>, Header, description = "seq of the last event received; wins over `after`")),
    responses(
        (status = 200, content_type = "text/event-stream", body = String,
         description = "one SSE message per event: `id` is its seq, `data` the event's JSON"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn stream(
    State(state): State<Arc<AppState>>,
    reader: Reader,
    Path(id): Path<SessionId>,
    Query(query): Query<EventsQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    reader.check(&state, &id).await?;
    let after = match headers.get(events::LAST_EVENT_ID) {
        Some(value) => value
            .to_str()
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .ok_or_else(|| {
                ApiError::bad_request("Last-Event-ID must be an event seq (an integer)")
            })?,
        None => query.after.unwrap_or(0),
    };
    let heartbeat = state.config.heartbeat;
    // A share link's stream ends once the share is revoked or expires,
    // checked at each batch and heartbeat.
    let share = match reader {
        Reader::Share(session, share) => Some((state.clone(), session, share)),
        Reader::Owner(_) => None,
    };
    let allowed = move || {
        share
            .as_ref()
            .is_none_or(|(state, session, id)| state.shares.is_live(session, id))
    };
    let body = Body::from_stream(with_heartbeats(
        batches(state, id, after),
        heartbeat,
        allowed,
    ));
    Ok((
        [
            (header::CONTENT_TYPE, events::CONTENT_TYPE),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response())
}

/// A stored event (read back from the store) as an SSE message.
fn push_stored(batch: &mut Vec<u8>, event: &Event) {
    let json = serde_json::to_string(event).unwrap_or_else(|e| {
        tracing::error!("cannot encode event {}: {e}", event.seq);
        String::from("{}")
    });
    events::push_message(batch, event.seq, &json);
}

/// Stored then live events after `after`, forever (the client hangs up).
///
/// Each item holds every message ready at that moment (up to
/// [`BATCH_BYTES`]): a turn emits events in bursts, and one write, one read
/// and one wake-up of the client per burst instead of per event saves most
/// of the transport's cost per event.
fn batches(state: Arc<AppState>, id: SessionId, mut after: u64) -> impl Stream<Item = Bytes> {
    async_stream::stream! {
        loop {
            let live = state.live(&id).map(|actor| actor.subscribe());
            match state.store.events(&id, after).await {
                Ok(backlog) => {
                    let mut batch = Vec::new();
                    for event in backlog {
                        if event.seq > after {
                            after = event.seq;
                            push_stored(&mut batch, &event);
                            if batch.len() >= BATCH_BYTES {
                                yield Bytes::from(std::mem::take(&mut batch));
                            }
                        }
                    }
                    if !batch.is_empty() {
                        yield Bytes::from(batch);
                    }
                }
                Err(e) => {
                    tracing::error!(session = %id, "cannot read the timeline: {e}");
                    break;
                }
            }
            let Some(mut live) = live else {
                // Not live in this process: wait until it is (a turn is
                // posted), looking at the store now and then for writes by
                // other processes. Another session going live wakes every
                // waiting stream; only this one's makes it read the store.
                let deadline = tokio::time::Instant::now() + state.config.heartbeat;
                loop {
                    // Armed before looking, so a session going live in
                    // between still wakes us.
                    let spawned = state.registry.spawned.notified();
                    tokio::pin!(spawned);
                    spawned.as_mut().enable();
                    if state.live(&id).is_some() {
                        break;
                    }
                    tokio::select! {
                        _ = &mut spawned => {}
                        _ = tokio::time::sleep_until(deadline) => break,
                    }
                }
                continue;
            };
            // Live events until a gap (the subscriber lagged behind the
            // bounded broadcast: fill it from the store) or the end of the
            // session's actor.
            let mut resync = false;
            while !resync {
                let mut next = live.recv().await.ok();
                resync = next.is_none();
                let mut batch = Vec::new();
                while let Some(published) = next.take() {
                    if published.seq > after + 1 {
                        resync = true;
                        break;
                    }
                    if published.seq == after + 1 {
                        after = published.seq;
                        events::push_message(&mut batch, published.seq, &published.json);
                    }
                    if batch.len() >= BATCH_BYTES {
                        break;
                    }
                    match live.try_recv() {
                        Ok(published) => next = Some(published),
                        Err(TryRecvError::Empty) => {}
                        Err(TryRecvError::Lagged(_) | TryRecvError::Closed) => resync = true,
                    }
                }
                if !batch.is_empty() {
                    yield Bytes::from(batch);
                }
            }
        }
    }
}

/// Most bytes of messages sent in one write.
const BATCH_BYTES: usize = 64 * 1024;

/// `batches` with an SSE comment line every `every`, so proxies keep an
/// idle stream open and a client notices a dead server. A fixed interval
/// rather than one reset after every message: nothing to do per message.
fn with_heartbeats(
    batches: impl Stream<Item = Bytes> + Send + 'static,
    every: Duration,
    allowed: impl Fn() -> bool + Send + 'static,
) -> impl Stream<Item = Result<Bytes, Infallible>> {
    async_stream::stream! {
        let mut batches = std::pin::pin!(batches);
        let mut beat = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let next = tokio::select! {
                batch = batches.next() => match batch {
                    Some(batch) => batch,
                    None => break,
                },
                _ = beat.tick() => Bytes::from_static(events::HEARTBEAT),
            };
            // Checked before anything goes out, so a revoked share reads
            // nothing more.
            if !allowed() {
                break;
            }
            yield Ok(next);
        }
    }
}
