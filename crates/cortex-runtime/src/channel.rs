//! What the harness accepts from a guest agent's channel.
//!
//! A process in the guest can reach the agent's own file descriptors, so
//! every frame may have been written by the model. The rules, each enforced
//! here on the harness's side whatever the guest did:
//!
//! - **Strict framing.** A frame is one JSON line of at most
//!   [`MAX_FRAME_BYTES`]. A line that is too long, not UTF-8 or not a
//!   response means the framing can no longer be trusted: the connection
//!   ends, every open call ends with that reason, and the session attaches a
//!   fresh guest for its next call.
//! - **Only answers to what was asked.** A frame for a call the harness did
//!   not send (or has given up on) is dropped.
//! - **Bounded per call.** A tool call's streamed output is kept up to
//!   [`MAX_STREAMED_BYTES`]; past that it is counted, not queued, and one
//!   note says how much was cut. Its result is cut to
//!   [`MAX_OUTPUT_BYTES`] (the diff to [`MAX_DIFF_BYTES`]) before anyone
//!   reads it, so no guest can make the harness keep or store more.

use cortex_protocol::{GuestReply, GuestResponse, OutputStream, ToolOutcome};
use cortex_tools::{MAX_DIFF_BYTES, MAX_OUTPUT_BYTES, MAX_STREAMED_BYTES, cap_middle};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use tokio::sync::{Notify, mpsc};

/// A response line longer than this ends the connection. Results are capped
/// far below by the guest; the room is for JSON escaping of binary output.
pub(crate) const MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;

/// How much of a call's replies the harness keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Budget {
    /// A tool call: streamed output and the result are capped.
    Tool,
    /// A long-lived process (an MCP server) or a protocol request: every
    /// frame is passed on, each already bounded by [`MAX_FRAME_BYTES`].
    Unbounded,
}

/// One open call: where its replies go and what it may still stream.
struct Waiter {
    tx: mpsc::UnboundedSender<GuestReply>,
    budget: Budget,
    streamed: usize,
    cut: usize,
}

type Pending = HashMap<u64, Waiter>;

/// The connection's state, shared by the [`crate::Guest`], its reader task,
/// its process task and its heartbeat.
pub(crate) struct Shared {
    /// Calls awaiting replies. `alive` is only changed with this lock held, so
    /// a call is either registered while alive or refused.
    pending: Mutex<Pending>,
    alive: AtomicBool,
    /// Why the connection ended, once it has.
    ended: Mutex<Option<String>>,
    /// Signalled once the reader task has seen the end of the agent's output.
    pub(crate) reader_done: Notify,
    /// Signalled when the harness gave up on the agent (a broken frame, no
    /// heartbeat): the process task kills the child.
    pub(crate) kill: Notify,
}

impl Shared {
    pub(crate) fn new() -> Shared {
        Shared {
            pending: Mutex::new(HashMap::new()),
            alive: AtomicBool::new(true),
            ended: Mutex::new(None),
            reader_done: Notify::new(),
            kill: Notify::new(),
        }
    }

    fn pending(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn is_alive(&self) -> bool {
        self.alive.load(Ordering::SeqCst)
    }

    /// Why the connection ended; `None` while it is alive.
    pub(crate) fn ended_because(&self) -> Option<String> {
        self.ended
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Open a call; `None` once the connection has ended.
    pub(crate) fn register(
        &self,
        id: u64,
        budget: Budget,
    ) -> Option<mpsc::UnboundedReceiver<GuestReply>> {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut pending = self.pending();
        if !self.is_alive() {
            return None;
        }
        let waiter = Waiter {
            tx,
            budget,
            streamed: 0,
            cut: 0,
        };
        pending.insert(id, waiter);
        Some(rx)
    }

    /// Stop waiting for a call (its request failed or timed out): later
    /// frames for it are dropped.
    pub(crate) fn forget(&self, id: u64) {
        self.pending().remove(&id);
    }

    /// The guest is gone: every open call ends without a result. The first
    /// reason given is the one kept.
    pub(crate) fn die(&self, why: &str) {
        let mut pending = self.pending();
        if self.alive.swap(false, Ordering::SeqCst) {
            tracing::debug!("guest connection ended: {why}");
            let mut ended = self.ended.lock().unwrap_or_else(PoisonError::into_inner);
            *ended = Some(why.to_owned());
        }
        pending.clear();
    }

    /// The harness no longer trusts the agent: end the connection and have
    /// the process killed.
    pub(crate) fn give_up(&self, why: &str) {
        tracing::warn!("giving up on the guest: {why}");
        self.die(why);
        self.kill.notify_one();
    }

    /// Pass one frame to the call it answers, within that call's budget.
    pub(crate) fn route(&self, response: GuestResponse) {
        let mut pending = self.pending();
        let id = response.id;
        match response.reply {
            GuestReply::Result(outcome) => match pending.remove(&id) {
                Some(waiter) => waiter.finish(outcome),
                None => tracing::debug!(id, "the guest answered no open call"),
            },
            GuestReply::Delta { stream, text } => match pending.get_mut(&id) {
                Some(waiter) => waiter.stream(stream, text),
                None => tracing::debug!(id, "the guest streamed for no open call"),
            },
        }
    }
}

impl Waiter {
    fn stream(&mut self, stream: OutputStream, mut text: String) {
        if self.budget == Budget::Tool {
            let room = MAX_STREAMED_BYTES.saturating_sub(self.streamed);
            if text.len() > room {
                let keep = floor_char_boundary(&text, room);
                self.cut += text.len() - keep;
                text.truncate(keep);
            }
            self.streamed += text.len();
            if text.is_empty() {
                return;
            }
        }
        // A closed receiver means the caller stopped listening: nothing to do.
        let _ = self.tx.send(GuestReply::Delta { stream, text });
    }

    fn finish(self, mut outcome: ToolOutcome) {
        if self.budget == Budget::Tool {
            if self.cut > 0 {
                let note = format!(
                    "\n[cortex: {} more bytes of output were not kept; at most {} are streamed per call]\n",
                    self.cut, MAX_STREAMED_BYTES
                );
                let _ = self.tx.send(GuestReply::Delta {
                    stream: OutputStream::Stderr,
                    text: note,
                });
            }
            cap_outcome(&mut outcome);
        }
        let _ = self.tx.send(GuestReply::Result(outcome));
    }
}

/// A tool result as the harness keeps it: output and diff within the caps
/// the guest is meant to apply, whether or not it did.
fn cap_outcome(outcome: &mut ToolOutcome) {
    // One image of a `read_file`: more, or a bigger one, is dropped (the
    // guest sends at most one within the cap).
    let image_bytes: usize = outcome
        .attachments
        .iter()
        .map(|a| a.inline().map_or(0, |(mime, data)| mime.len() + data.len()))
        .sum();
    if outcome.attachments.len() > 1 || image_bytes > MAX_ATTACHMENT_BYTES {
        outcome.attachments.clear();
        outcome
            .output
            .push_str("\n[cortex: the guest's image was over the cap and was not kept]");
    }
    if outcome.output.len() > MAX_OUTPUT_BYTES {
        outcome.output = cap_middle(&outcome.output, MAX_OUTPUT_BYTES);
    }
    if let Some(diff) = &mut outcome.diff
        && diff.len() > MAX_DIFF_BYTES
    {
        *diff = cap_middle(diff, MAX_DIFF_BYTES);
    }
}

/// Base64 bytes of the image one call may carry (what
/// [`cortex_tools::MAX_IMAGE_BYTES`] encodes to, and its type).
const MAX_ATTACHMENT_BYTES: usize = (cortex_tools::MAX_IMAGE_BYTES as usize).div_ceil(3) * 4 + 64;

/// The largest char boundary `<= index` (clamped to the text).
fn floor_char_boundary(text: &str, index: usize) -> usize {
    let mut i = index.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delta(id: u64, text: &str) -> GuestResponse {
        GuestResponse {
            id,
            reply: GuestReply::Delta {
                stream: OutputStream::Stdout,
                text: text.to_owned(),
            },
        }
    }

    fn result(id: u64, outcome: ToolOutcome) -> GuestResponse {
        GuestResponse {
            id,
            reply: GuestReply::Result(outcome),
        }
    }

    fn drain(rx: &mut mpsc::UnboundedReceiver<GuestReply>) -> Vec<GuestReply> {
        let mut out = Vec::new();
        while let Ok(reply) = rx.try_recv() {
            out.push(reply);
        }
        out
    }

    #[test]
    fn a_flood_of_deltas_is_kept_to_the_budget_and_the_cut_is_said() {
        let shared = Shared::new();
        let mut rx = shared.register(1, Budget::Tool).expect("open");
        let chunk = "é".repeat(50_000); // 100 000 bytes, two per char
        for _ in 0..30 {
            shared.route(delta(1, &chunk));
        }
        shared.route(result(1, ToolOutcome::ok("done")));
        let replies = drain(&mut rx);
        let streamed: usize = replies
            .iter()
            .filter_map(|r| match r {
                GuestReply::Delta {
                    stream: OutputStream::Stdout,
                    text,
                } => Some(text.len()),
                _ => None,
            })
            .sum();
        assert_eq!(streamed, MAX_STREAMED_BYTES);
        let note = replies.iter().find_map(|r| match r {
            GuestReply::Delta {
                stream: OutputStream::Stderr,
                text,
            } => Some(text.clone()),
            _ => None,
        });
        let cut = 30 * chunk.len() - MAX_STREAMED_BYTES;
        assert!(note.expect("a note").contains(&format!("{cut} more bytes")));
        assert_eq!(
            replies.last(),
            Some(&GuestReply::Result(ToolOutcome::ok("done")))
        );
    }

    #[test]
    fn an_oversized_result_is_capped_by_the_harness() {
        let shared = Shared::new();
        let mut rx = shared.register(7, Budget::Tool).expect("open");
        let mut outcome = ToolOutcome::ok("x".repeat(5 * MAX_OUTPUT_BYTES));
        outcome.diff = Some("d".repeat(3 * MAX_DIFF_BYTES));
        shared.route(result(7, outcome));
        match drain(&mut rx).pop() {
            Some(GuestReply::Result(outcome)) => {
                assert!(outcome.output.len() <= MAX_OUTPUT_BYTES);
                assert!(outcome.output.contains("bytes cut from the middle"));
                assert!(outcome.diff.expect("diff").len() <= MAX_DIFF_BYTES);
            }
            other => panic!("expected a result, got {other:?}"),
        }
    }

    #[test]
    fn more_than_one_image_or_an_oversized_one_is_dropped_by_the_harness() {
        let image = |bytes: usize| cortex_protocol::Attachment::Image {
            mime_type: "image/png".into(),
            data: "A".repeat(bytes),
        };
        for (attachments, kept) in [
            (vec![image(1000)], true),
            (vec![image(1000), image(1000)], false),
            (vec![image(MAX_ATTACHMENT_BYTES + 1)], false),
        ] {
            let shared = Shared::new();
            let mut rx = shared.register(7, Budget::Tool).expect("open");
            let outcome = ToolOutcome {
                attachments,
                ..ToolOutcome::ok("x".repeat(2 * MAX_OUTPUT_BYTES))
            };
            shared.route(result(7, outcome));
            match drain(&mut rx).pop() {
                Some(GuestReply::Result(outcome)) => {
                    assert_eq!(outcome.attachments.len() == 1, kept);
                    assert!(outcome.output.len() <= MAX_OUTPUT_BYTES);
                    assert_eq!(outcome.output.contains("was not kept"), !kept);
                }
                other => panic!("expected a result, got {other:?}"),
            }
        }
    }

    #[test]
    fn a_long_lived_process_streams_without_a_budget() {
        let shared = Shared::new();
        let mut rx = shared.register(3, Budget::Unbounded).expect("open");
        let line = "m".repeat(MAX_STREAMED_BYTES);
        shared.route(delta(3, &line));
        shared.route(delta(3, &line));
        assert_eq!(drain(&mut rx).len(), 2);
    }

    #[test]
    fn frames_for_calls_never_sent_or_given_up_on_are_dropped() {
        let shared = Shared::new();
        let mut rx = shared.register(1, Budget::Tool).expect("open");
        shared.route(result(2, ToolOutcome::ok("forged")));
        shared.route(delta(2, "forged"));
        shared.forget(1);
        shared.route(result(1, ToolOutcome::ok("late")));
        assert!(drain(&mut rx).is_empty());
    }

    #[test]
    fn the_first_reason_to_end_is_kept_and_no_call_opens_after() {
        let shared = Shared::new();
        let _rx = shared.register(1, Budget::Tool).expect("open");
        shared.give_up("a malformed frame");
        shared.die("end of output");
        assert_eq!(shared.ended_because().as_deref(), Some("a malformed frame"));
        assert!(shared.register(2, Budget::Tool).is_none());
    }
}
