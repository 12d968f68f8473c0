//! Reading the event stream: SSE messages (`id:` and `data:` fields;
//! comment lines are heartbeats) decoded into timeline events.

use crate::ClientError;
use cortex_protocol::Event;
use http_body_util::BodyExt;
use hyper::body::Incoming;

pub struct EventStream {
    body: Incoming,
    buffer: Vec<u8>,
}

impl EventStream {
    pub(crate) fn new(body: Incoming) -> Self {
        EventStream {
            body,
            buffer: Vec::new(),
        }
    }

    /// The next event; `None` when the server closed the stream.
    pub async fn next(&mut self) -> Option<Result<Event, ClientError>> {
        loop {
            if let Some(end) = find_blank_line(&self.buffer) {
                let block: Vec<u8> = self.buffer.drain(..end).collect();
                let text = String::from_utf8_lossy(&block);
                let mut data = String::new();
                for line in text.lines() {
                    if let Some(value) = line.strip_prefix("data:") {
                        if !data.is_empty() {
                            data.push('\n');
                        }
                        data.push_str(value.strip_prefix(' ').unwrap_or(value));
                    }
                }
                if data.is_empty() {
                    continue;
                }
                return Some(
                    serde_json::from_str(&data).map_err(|e| ClientError::Decode(e.to_string())),
                );
            }
            match self.body.frame().await {
                None => return None,
                Some(Err(e)) => return Some(Err(ClientError::Http(e.to_string()))),
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        self.buffer.extend_from_slice(&data);
                    }
                }
            }
        }
    }
}

/// The end (exclusive of nothing: including the separator) of the first
/// message in `buffer`, if a whole one is there.
fn find_blank_line(buffer: &[u8]) -> Option<usize> {
    buffer.windows(2).position(|w| w == b"\n\n").map(|i| i + 2)
}
