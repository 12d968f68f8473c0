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

use crate::api::EventsQuery;
use crate::auth::Principal;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{Path, Query};
use crate::state::AppState;
use axum::Router;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::routing::get;
use cortex_protocol::{Event, SessionId};
use futures::Stream;
use std::convert::Infallible;
use std::sync::Arc;
use tokio::sync::broadcast::error::RecvError;

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/sessions/{id}/events", get(stream))
}

/// The session's events after `after` (or `Last-Event-ID`), then live ones.
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
    principal: Principal,
    Path(id): Path<SessionId>,
    Query(query): Query<EventsQuery>,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, ApiError> {
    state.check_owner(&principal, &id).await?;
    let after = match headers.get("last-event-id") {
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
    Ok(Sse::new(events(state, id, after)).keep_alive(KeepAlive::new().interval(heartbeat)))
}

/// A stored event (read back from the store) as an SSE message.
fn to_sse(event: &Event) -> SseEvent {
    let data = serde_json::to_string(event).unwrap_or_else(|e| {
        tracing::error!("cannot encode event {}: {e}", event.seq);
        String::from("{}")
    });
    sse(event.seq, &data)
}

/// `id:` the seq, `data:` the event's JSON (one line: JSON text never holds
/// a raw newline).
fn sse(seq: u64, json: &str) -> SseEvent {
    SseEvent::default().id(seq.to_string()).data(json)
}

/// Stored then live events after `after`, forever (the client hangs up).
fn events(
    state: Arc<AppState>,
    id: SessionId,
    mut after: u64,
) -> impl Stream<Item = Result<SseEvent, Infallible>> {
    async_stream::stream! {
        loop {
            let live = state.live(&id).map(|actor| actor.subscribe());
            match state.store.events(&id, after).await {
                Ok(backlog) => {
                    for event in backlog {
                        if event.seq > after {
                            after = event.seq;
                            yield Ok(to_sse(&event));
                        }
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
            loop {
                match live.recv().await {
                    Ok(published) if published.seq <= after => {}
                    // A gap: fill it from the store.
                    Ok(published) if published.seq > after + 1 => break,
                    Ok(published) => {
                        after = published.seq;
                        yield Ok(sse(published.seq, &published.json));
                    }
                    Err(RecvError::Lagged(_)) | Err(RecvError::Closed) => break,
                }
            }
        }
    }
}
