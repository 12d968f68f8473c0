//! What every HTTP wire format shares: SSE framing ([`sse`]), sending with
//! retries and timeouts ([`driver`]) and turning error statuses into clear
//! messages ([`status`]). A wire format only supplies a [`StreamParser`].

pub(crate) mod driver;
pub(crate) mod sse;
pub(crate) mod status;

use crate::{ModelError, ModelEvent};

/// Turns the `data` of each SSE event of one response into events.
pub(crate) trait StreamParser: Send + 'static {
    /// One event's data (possibly several JSON lines for lenient servers).
    fn event(&mut self, data: &str) -> Result<Vec<ModelEvent>, ModelError>;
    /// Whether the response is complete; later data is ignored.
    fn is_done(&self) -> bool;
    /// The body ended: the last events, or a cut stream.
    fn end_of_stream(&mut self) -> Result<Vec<ModelEvent>, ModelError>;
    /// A server answered one JSON document instead of an event stream.
    fn whole_response(&mut self, body: &[u8]) -> Result<Vec<ModelEvent>, ModelError> {
        Err(ModelError::Protocol(format!(
            "expected an event stream, got a JSON document: {}",
            excerpt(&String::from_utf8_lossy(body))
        )))
    }
}

/// The start of `text`, for error messages.
pub(crate) fn excerpt(text: &str) -> String {
    const MAX: usize = 200;
    if text.len() <= MAX {
        return text.to_owned();
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}
