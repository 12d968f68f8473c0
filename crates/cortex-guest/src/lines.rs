//! Reading JSON lines with a bound on their length, so a peer that never sends
//! a newline cannot make us hold unbounded memory.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// One line read by [`read_bounded_line`].
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A complete line, without its `\n`.
    Text(Vec<u8>),
    /// A line longer than the limit; its bytes were read and discarded.
    TooLong(usize),
    /// The reader is exhausted.
    Eof,
}

/// Read one `\n`-terminated line of at most `max` bytes. A longer line is
/// consumed up to its newline and reported as [`Line::TooLong`] with its length.
/// A last line without a newline is still returned.
///
/// Not cancel safe: dropping the future mid-line loses what was read of it.
pub async fn read_bounded_line<R>(reader: &mut R, max: usize) -> std::io::Result<Line>
where
    R: AsyncBufRead + Unpin + ?Sized,
{
    let mut line = Vec::new();
    let mut length = 0usize;
    let mut too_long = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if too_long {
                Line::TooLong(length)
            } else if length == 0 {
                Line::Eof
            } else {
                Line::Text(line)
            });
        }
        let newline = available.iter().position(|&b| b == b'\n');
        let chunk = match newline {
            Some(i) => &available[..i],
            None => available,
        };
        length = length.saturating_add(chunk.len());
        if !too_long {
            if length > max {
                too_long = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let consumed = newline.map_or(available.len(), |i| i + 1);
        reader.consume(consumed);
        if newline.is_some() {
            return Ok(if too_long {
                Line::TooLong(length)
            } else {
                Line::Text(line)
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::BufReader;

    #[tokio::test]
    async fn splits_bounds_and_ends() {
        let data: &[u8] = b"one\n\ntoo long line\nlast";
        let mut reader = BufReader::with_capacity(4, data);
        let mut lines = Vec::new();
        loop {
            let line = read_bounded_line(&mut reader, 8).await.expect("read");
            if line == Line::Eof {
                break;
            }
            lines.push(line);
        }
        assert_eq!(
            lines,
            vec![
                Line::Text(b"one".to_vec()),
                Line::Text(Vec::new()),
                Line::TooLong(13),
                Line::Text(b"last".to_vec()),
            ]
        );
    }
}
