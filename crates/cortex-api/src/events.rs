//! `GET /v1/sessions/{id}/events`: the timeline as Server-Sent Events.
//!
//! The envelope: each message is `id: SEQ`, `data: EVENT` and a blank line,
//! where `EVENT` is one `cortex_protocol::Event` as JSON on one line (JSON
//! text never holds a raw newline) and `SEQ` its `seq`. A line starting with
//! `:` is a heartbeat comment. A reconnecting client sends the last seq it
//! received as `Last-Event-ID` (or `?after=`) and gets only later events.
//!
//! The server writes messages with [`push_message`] and [`HEARTBEAT`]; the
//! client splits a body with [`message_end`] and reads one with
//! [`message_data`], which also accepts what other SSE writers send (`\r\n`
//! line ends, `data:` without the space, several `data:` lines).

use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use utoipa::IntoParams;

/// The stream's content type.
pub const CONTENT_TYPE: &str = "text/event-stream";

/// The header a reconnecting client sends: the seq of the last event it has.
pub const LAST_EVENT_ID: &str = "last-event-id";

/// A heartbeat: a comment line and the blank line that ends a message.
pub const HEARTBEAT: &[u8] = b":\n\n";

/// The query of `GET …/events`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// Send events with `seq` greater than this (default 0: everything).
    /// A `Last-Event-ID` header, sent by reconnecting clients, wins.
    pub after: Option<u64>,
}

/// Appends one message to `batch`: the event whose seq is `seq` and whose
/// JSON text (one line) is `json`.
pub fn push_message(batch: &mut Vec<u8>, seq: u64, json: &str) {
    batch.extend_from_slice(b"id: ");
    batch.extend_from_slice(seq.to_string().as_bytes());
    batch.extend_from_slice(b"\ndata: ");
    batch.extend_from_slice(json.as_bytes());
    batch.extend_from_slice(b"\n\n");
}

/// The length of the first whole message at the start of `buffer`,
/// including the blank line that ends it; `None` until one is complete.
pub fn message_end(buffer: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = buffer[from..].iter().position(|&b| b == b'\n') {
        let end = from + i + 1;
        if buffer.get(end) == Some(&b'\n') {
            return Some(end + 1);
        }
        from = end;
    }
    None
}

/// The data of one message (its `data:` lines joined by newlines); `None`
/// for a message without data (a heartbeat) or with empty data. Borrowed
/// when the message has one `data:` line, as every message the server writes.
pub fn message_data(message: &[u8]) -> Option<Cow<'_, [u8]>> {
    let mut data: Option<Cow<'_, [u8]>> = None;
    for line in message.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(value) = line.strip_prefix(b"data:") else {
            continue;
        };
        let value = value.strip_prefix(b" ").unwrap_or(value);
        data = Some(match data {
            None => Cow::Borrowed(value),
            Some(first) => {
                let mut joined = first.into_owned();
                joined.push(b'\n');
                joined.extend_from_slice(value);
                Cow::Owned(joined)
            }
        });
    }
    data.filter(|d| !d.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_message_reads_back() {
        let mut batch = Vec::new();
        push_message(&mut batch, 7, r#"{"seq":7}"#);
        batch.extend_from_slice(HEARTBEAT);
        push_message(&mut batch, 8, r#"{"seq":8}"#);
        let mut rest = batch.as_slice();
        let mut read = Vec::new();
        while let Some(end) = message_end(rest) {
            if let Some(data) = message_data(&rest[..end]) {
                read.push(String::from_utf8(data.into_owned()).expect("utf-8"));
            }
            rest = &rest[end..];
        }
        assert_eq!(read, [r#"{"seq":7}"#, r#"{"seq":8}"#]);
        assert!(rest.is_empty());
    }

    #[test]
    fn other_writers_messages_read_too() {
        assert_eq!(
            message_data(b"id: 3\r\ndata:{}\r\n\r\n").as_deref(),
            Some(&b"{}"[..])
        );
        assert_eq!(
            message_data(b"data: {\"a\":\ndata: 1}\n\n").as_deref(),
            Some(&b"{\"a\":\n1}"[..])
        );
        assert_eq!(message_data(b": heartbeat\n\n"), None);
        assert_eq!(message_data(b"data:\n\n"), None);
    }

    #[test]
    fn a_message_ends_at_the_first_blank_line() {
        assert_eq!(message_end(b"id: 1\ndata: {}\n\nid: 2\n"), Some(16));
        assert_eq!(message_end(b"\n\n"), Some(2));
        assert_eq!(message_end(b"id: 1\ndata: {}\n"), None);
        assert_eq!(message_end(b""), None);
    }
}
