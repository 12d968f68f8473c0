//! Server-sent events: bytes in, the `data` of each event out.
//!
//! Lines may be split anywhere across network chunks (even inside a UTF-8
//! sequence); they end with `\n` or `\r\n`. `data:` lines of one event are
//! joined with `\n`; a blank line ends the event. Comments (`: …`) and the
//! other fields (`event`, `id`, `retry`) are ignored.

use crate::ModelError;

#[derive(Debug, Default)]
pub(crate) struct SseDecoder {
    buf: Vec<u8>,
    /// Where to resume looking for a newline in `buf`.
    scanned: usize,
    /// `data` of the event being read, if it has any.
    data: Option<String>,
    /// Whether any `data:` line was seen at all.
    saw_data: bool,
    /// The first line that was not SSE, kept for the error message.
    stray: Option<String>,
}

impl SseDecoder {
    /// Feeds bytes; returns the data of every event they completed.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Result<Vec<String>, ModelError> {
        self.buf.extend_from_slice(bytes);
        let mut events = Vec::new();
        let mut start = 0;
        while let Some(offset) = self.buf[start.max(self.scanned)..]
            .iter()
            .position(|b| *b == b'\n')
        {
            let end = start.max(self.scanned) + offset;
            let line = trim_cr(&self.buf[start..end]);
            let line = std::str::from_utf8(line)
                .map_err(|_| ModelError::Protocol("the event stream is not UTF-8".into()))?
                .to_owned();
            self.line(&line, &mut events);
            start = end + 1;
            self.scanned = start;
        }
        self.buf.drain(..start);
        self.scanned = self.buf.len();
        Ok(events)
    }

    /// The body ended: returns what was still pending (a last line without
    /// a newline, an event without its blank line).
    pub(crate) fn finish(&mut self) -> Result<Vec<String>, ModelError> {
        let mut events = Vec::new();
        if !self.buf.is_empty() {
            let rest = std::mem::take(&mut self.buf);
            let line = std::str::from_utf8(trim_cr(&rest))
                .map_err(|_| ModelError::Protocol("the event stream is not UTF-8".into()))?;
            self.line(line, &mut events);
        }
        self.scanned = 0;
        events.extend(self.data.take());
        Ok(events)
    }

    /// The first non-SSE line, when the body never carried any event data:
    /// the server is not speaking SSE at all.
    pub(crate) fn not_sse(&self) -> Option<&str> {
        if self.saw_data {
            None
        } else {
            self.stray.as_deref()
        }
    }

    fn line(&mut self, line: &str, events: &mut Vec<String>) {
        if line.is_empty() {
            events.extend(self.data.take());
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => {
                self.saw_data = true;
                match &mut self.data {
                    Some(data) => {
                        data.push('\n');
                        data.push_str(value);
                    }
                    None => self.data = Some(value.to_owned()),
                }
            }
            "event" | "id" | "retry" => {}
            _ => {
                tracing::debug!(line, "ignoring a line that is not an SSE field");
                if self.stray.is_none() {
                    self.stray = Some(line.chars().take(200).collect());
                }
            }
        }
    }
}

fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed_all(parts: &[&[u8]]) -> Vec<String> {
        let mut d = SseDecoder::default();
        let mut out = Vec::new();
        for p in parts {
            out.extend(d.feed(p).expect("utf-8"));
        }
        out.extend(d.finish().expect("utf-8"));
        out
    }

    #[test]
    fn splits_events_across_any_boundary() {
        let body = "data: {\"a\":1}\n\n: keep-alive\n\ndata: {\"b\":\"é\"}\r\n\r\nevent: x\nid: 3\ndata: [DONE]\n\n";
        let whole = feed_all(&[body.as_bytes()]);
        assert_eq!(whole, ["{\"a\":1}", "{\"b\":\"é\"}", "[DONE]"]);
        let bytes = body.as_bytes();
        for cut in 0..bytes.len() {
            assert_eq!(
                feed_all(&[&bytes[..cut], &bytes[cut..]]),
                whole,
                "cut at {cut}"
            );
        }
        let singles: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(feed_all(&singles), whole);
    }

    #[test]
    fn joins_multi_line_data_and_flushes_at_end() {
        assert_eq!(
            feed_all(&[b"data: a\ndata:b\n\ndata: tail"]),
            ["a\nb", "tail"]
        );
    }

    #[test]
    fn reports_non_sse_bodies() {
        let mut d = SseDecoder::default();
        assert!(d.feed(b"<html>oops</html>\n").expect("utf-8").is_empty());
        assert_eq!(d.not_sse(), Some("<html>oops</html>"));
        let mut d = SseDecoder::default();
        d.feed(b"data: x\n\nweird\n").expect("utf-8");
        assert_eq!(d.not_sse(), None);
        assert!(SseDecoder::default().feed(b"data: \xff\n").is_err());
    }
}
