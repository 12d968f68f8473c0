//! Reading the event stream: SSE messages (`id:` and `data:` fields;
//! comment lines are heartbeats) decoded into timeline events.

use crate::ClientError;
use cortex_api::events;
use cortex_protocol::Event;
use http_body_util::BodyExt;
use hyper::body::Incoming;

/// A session's timeline events as the server streams them (SSE), in seq
/// order. Dropping it closes the stream's connection.
pub struct EventStream {
    body: Incoming,
    buffer: Vec<u8>,
    /// Where the first unread message starts in `buffer`: a frame holds many
    /// messages, and moving the rest forward after each one would be
    /// quadratic in the frame's size.
    start: usize,
}

impl EventStream {
    pub(crate) fn new(body: Incoming) -> Self {
        EventStream {
            body,
            buffer: Vec::new(),
            start: 0,
        }
    }

    /// The next event; `None` when the server closed the stream.
    pub async fn next(&mut self) -> Option<Result<Event, ClientError>> {
        loop {
            if let Some(len) = events::message_end(&self.buffer[self.start..]) {
                let message = self.start..self.start + len;
                self.start += len;
                match decode(&self.buffer[message]) {
                    // A comment (heartbeat) or a message without data.
                    None => continue,
                    Some(result) => return Some(result),
                }
            }
            match self.body.frame().await {
                None => return None,
                Some(Err(e)) => return Some(Err(ClientError::Http(e.to_string()))),
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        self.buffer.drain(..self.start);
                        self.start = 0;
                        self.buffer.extend_from_slice(&data);
                    }
                }
            }
        }
    }
}

/// The event in one SSE message; `None` when it has no data (a heartbeat).
fn decode(message: &[u8]) -> Option<Result<Event, ClientError>> {
    let data = events::message_data(message)?;
    Some(crate::wire::decode_event(&data).map_err(|e| ClientError::Decode(e.to_string())))
}

#[cfg(test)]
mod tests {
    use super::*;

    const EVENT: &str = r#"{"seq":3,"ts":"2026-11-30T17:00:00.000Z","session_id":"s","type":"turn.completed","payload":{"rounds":1}}"#;

    #[test]
    fn messages_decode_to_events() {
        let message = format!("id: 3\ndata: {EVENT}\n\n");
        let event = decode(message.as_bytes()).expect("data").expect("event");
        assert_eq!(event.seq, 3);
        let crlf = format!("id: 3\r\ndata:{EVENT}\r\n\r\n");
        assert_eq!(
            decode(crlf.as_bytes()).expect("data").expect("event").seq,
            3
        );
    }

    #[test]
    fn data_lines_join_and_comments_are_skipped() {
        let (head, tail) = EVENT.split_at(9);
        let message = format!("data: {head}\ndata: {tail}\n\n");
        // The join adds a newline inside the JSON, between tokens here.
        assert!(decode(message.as_bytes()).expect("data").is_ok());
        assert!(decode(b": heartbeat\n\n").is_none());
        assert!(decode(b"data: not json\n\n").expect("data").is_err());
    }
}
