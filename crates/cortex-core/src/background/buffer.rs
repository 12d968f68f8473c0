//! A background process's output as the harness keeps it: the last
//! [`KEEP_BYTES`] of everything it printed (stdout and stderr in arrival
//! order, as a terminal shows them), and a read cursor, so each read returns
//! only what is new and says what it could not return.

/// The most output kept per process: a server that logs for hours must not
/// grow the harness; what falls out before it is read is counted.
pub(crate) const KEEP_BYTES: usize = 256 * 1024;

/// The output and the cursor of one process.
#[derive(Debug, Default)]
pub(crate) struct OutputBuffer {
    /// The kept tail of the output.
    text: String,
    /// Bytes dropped from the front of `text` (the cap).
    dropped: u64,
    /// Where the last read ended, in bytes since the process started.
    cursor: u64,
}

/// One read: the new output, and how many new bytes it leaves out.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Read {
    pub text: String,
    /// New bytes not returned: fallen out of the buffer before this read,
    /// or cut to fit the read's limit (the oldest go first).
    pub skipped: u64,
}

impl OutputBuffer {
    /// Everything printed so far, in bytes.
    pub(crate) fn total(&self) -> u64 {
        self.dropped + self.text.len() as u64
    }

    /// Whether anything was printed that has not been read.
    pub(crate) fn has_unread(&self) -> bool {
        self.total() > self.cursor
    }

    pub(crate) fn push(&mut self, text: &str) {
        self.text.push_str(text);
        if self.text.len() > KEEP_BYTES {
            let cut = ceil_char_boundary(&self.text, self.text.len() - KEEP_BYTES);
            self.text.drain(..cut);
            self.dropped += cut as u64;
        }
    }

    /// What was printed since the last read, at most `limit` bytes (the
    /// newest: for a server or a watcher the latest lines say where it
    /// stands); the cursor moves to the end.
    pub(crate) fn read_new(&mut self, limit: usize) -> Read {
        let start = self.cursor.max(self.dropped);
        let mut skipped = start - self.cursor;
        let offset = usize::try_from(start - self.dropped).unwrap_or(self.text.len());
        let mut new = self.text.get(offset..).unwrap_or_default();
        if new.len() > limit {
            let cut = ceil_char_boundary(new, new.len() - limit);
            skipped += cut as u64;
            new = &new[cut..];
        }
        self.cursor = self.total();
        Read {
            text: new.to_owned(),
            skipped,
        }
    }
}

/// The first char boundary of `text` at or after `index`.
fn ceil_char_boundary(text: &str, index: usize) -> usize {
    (index..text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_read_returns_only_what_is_new() {
        let mut buffer = OutputBuffer::default();
        buffer.push("one\n");
        assert!(buffer.has_unread());
        let first = buffer.read_new(1024);
        assert_eq!((first.text.as_str(), first.skipped), ("one\n", 0));
        assert!(!buffer.has_unread());
        assert_eq!(buffer.read_new(1024).text, "");
        buffer.push("two\n");
        assert_eq!(buffer.read_new(1024).text, "two\n");
    }

    #[test]
    fn a_read_over_its_limit_keeps_the_newest_and_counts_the_rest() {
        let mut buffer = OutputBuffer::default();
        buffer.push("aaaa");
        buffer.push("bbbb");
        let read = buffer.read_new(4);
        assert_eq!((read.text.as_str(), read.skipped), ("bbbb", 4));
        // Never inside a character.
        buffer.push("é1234");
        let read = buffer.read_new(5);
        assert_eq!((read.text.as_str(), read.skipped), ("1234", 2));
    }

    #[test]
    fn output_past_the_cap_is_dropped_and_counted_at_the_next_read() {
        let mut buffer = OutputBuffer::default();
        buffer.push(&"x".repeat(KEEP_BYTES));
        buffer.push("tail");
        assert_eq!(buffer.total(), KEEP_BYTES as u64 + 4);
        let read = buffer.read_new(usize::MAX);
        assert_eq!(read.skipped, 4);
        assert!(read.text.ends_with("tail"));
        assert_eq!(read.text.len(), KEEP_BYTES);
    }
}
