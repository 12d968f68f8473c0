//! Reading a session's timeline: stored events from the start, then live
//! ones; a dropped stream is reopened after the last seq seen, so nothing
//! is missed or applied twice.

use crate::runtime::Input;
use cortex_client::{Client, ClientError};
use cortex_protocol::SessionId;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Waits between reconnection attempts: doubling from the first, capped.
const FIRST_RETRY: Duration = Duration::from_millis(200);
const LAST_RETRY: Duration = Duration::from_secs(5);

/// Forward `id`'s events after `after` as [`Input::Event`] tagged with
/// `generation` (so events of a session no longer shown are dropped),
/// until the receiver goes away.
pub fn spawn(
    client: Client,
    id: SessionId,
    mut after: u64,
    generation: u64,
    tx: mpsc::Sender<Input>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut retry = FIRST_RETRY;
        let mut told = false;
        loop {
            match client.events(&id, after).await {
                Ok(mut events) => {
                    if told {
                        let _ = tx.send(Input::Note("reconnected".into())).await;
                        told = false;
                    }
                    retry = FIRST_RETRY;
                    loop {
                        match events.next().await {
                            Some(Ok(event)) => {
                                after = after.max(event.seq);
                                let input = Input::Event {
                                    generation,
                                    event: Box::new(event),
                                };
                                if tx.send(input).await.is_err() {
                                    return;
                                }
                            }
                            // An event this client cannot read (a newer
                            // server): skip it, keep the stream.
                            Some(Err(ClientError::Decode(e))) => {
                                tracing::warn!("skipped an event: {e}");
                            }
                            Some(Err(_)) | None => break,
                        }
                    }
                }
                Err(e) if e.status() == Some(404) => {
                    let _ = tx.send(Input::Note(format!("no session `{id}`"))).await;
                    return;
                }
                Err(e) => tracing::debug!("event stream: {e}"),
            }
            if !told {
                told = true;
                if tx
                    .send(Input::Note("event stream lost · reconnecting…".into()))
                    .await
                    .is_err()
                {
                    return;
                }
            }
            tokio::time::sleep(retry).await;
            retry = (retry * 2).min(LAST_RETRY);
        }
    })
}
