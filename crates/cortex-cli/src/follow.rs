//! Following a session's event stream: print each event through a
//! renderer until one ends what is followed, reopening a dropped stream
//! where it stopped; and Ctrl-C while it runs. Shared by `exec`, `exec
//! --goal` and the plan and spec verdict commands.

use crate::render::Render;
use anyhow::{Context, bail};
use cortex_client::Client;
use cortex_protocol::{Event, SessionId};

/// How many times a dropped event stream is reopened before giving up.
const RECONNECTS: u32 = 5;

/// First Ctrl-C stops the turn cleanly; a second exits at once. A SIGINT
/// within [`SAME_INTERRUPT`] of the first is that one delivered again: GNU
/// `timeout` signals the command and then its whole process group.
pub(crate) async fn watch_interrupts(client: Client, id: SessionId) {
    if tokio::signal::ctrl_c().await.is_err() {
        return;
    }
    let first = std::time::Instant::now();
    eprintln!("\nstopping… (Ctrl-C again to quit now)");
    // Listening again at once, not after the stop request: a Ctrl-C while
    // it is under way still quits.
    tokio::spawn(async move {
        if let Err(e) = client.stop(&id).await {
            tracing::warn!("stop: {e}");
        }
    });
    while tokio::signal::ctrl_c().await.is_ok() {
        if first.elapsed() >= SAME_INTERRUPT {
            std::process::exit(130);
        }
    }
}

/// Far shorter than two presses of a key, far longer than two signals sent
/// back to back.
const SAME_INTERRUPT: std::time::Duration = std::time::Duration::from_millis(100);

/// Print events after `after` until `until` says one is the last; returns
/// that one. A dropped stream is reopened where it stopped, so nothing is
/// missed or printed twice.
pub(crate) async fn follow(
    client: &Client,
    id: &SessionId,
    mut after: u64,
    mut events: cortex_client::EventStream,
    mut renderer: Box<dyn Render>,
    mut until: impl FnMut(&Event) -> bool,
) -> anyhow::Result<Event> {
    let mut reconnects = 0;
    loop {
        match events.next().await {
            Some(Ok(event)) => {
                if event.seq <= after {
                    continue;
                }
                after = event.seq;
                renderer.event(&event);
                if until(&event) {
                    return Ok(event);
                }
            }
            Some(Err(e)) if reconnects >= RECONNECTS => {
                return Err(e).context("the event stream failed");
            }
            None if reconnects >= RECONNECTS => bail!("the server closed the event stream"),
            Some(Err(_)) | None => {
                reconnects += 1;
                events = client.events(id, after).await?;
            }
        }
    }
}
