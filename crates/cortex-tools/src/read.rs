//! `read_file`: a text file as numbered lines (`cat -n` style).
//!
//! The file is streamed line by line so that a huge log costs only the lines
//! shown (plus a fast newline count of the rest, for the "of N" note).

use crate::cap::{MAX_OUTPUT_BYTES, cap_middle, floor_char_boundary};
use crate::open::{Opened, open_no_block, open_regular};
use crate::{ToolError, Workspace};
use cortex_protocol::ReadFileArgs;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// Lines shown when the model does not say.
pub(crate) const DEFAULT_LIMIT: u64 = 2000;
/// Characters of one line shown before it is cut.
pub(crate) const MAX_LINE_CHARS: usize = 2000;
/// How much of a file's start is checked for NUL bytes.
pub(crate) const BINARY_SNIFF_BYTES: usize = 8 * 1024;
/// Room kept at the end of the output for the closing note.
const NOTE_ROOM: usize = 256;

/// Whether `bytes` (a file's content or its start) looks binary.
pub(crate) fn looks_binary(bytes: &[u8]) -> bool {
    memchr::memchr(0, &bytes[..bytes.len().min(BINARY_SNIFF_BYTES)]).is_some()
}

/// The refusal for a binary file.
pub(crate) fn binary_error(shown: &str, size: u64) -> ToolError {
    ToolError::Invalid(format!(
        "`{shown}` is a binary file ({size} bytes); only text files can be read or edited"
    ))
}

impl Workspace {
    /// Numbered lines (`cat -n` style), default 2000 lines from `offset`;
    /// long lines cut; binary files refused with a clear message.
    pub fn read_file(&self, args: &ReadFileArgs) -> Result<String, ToolError> {
        let path = self.resolve(&args.path)?;
        let shown = self.display(&path);
        let io_err = |source| ToolError::Io {
            path: path.clone(),
            source,
        };
        // Opened without blocking and checked on the descriptor: a FIFO
        // (even one swapped in after a check) is an error at once.
        let (file, meta) = match open_no_block(&path, false) {
            Ok(Opened::File(file, meta)) => (file, meta),
            Ok(Opened::Folder) => {
                return Err(ToolError::Invalid(format!(
                    "`{shown}` is a folder, not a file; use glob with path `{shown}` (e.g. pattern `*`) to list its files"
                )));
            }
            Ok(Opened::Special) => return Err(ToolError::not_regular(&shown)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(self.not_found(shown));
            }
            Err(e) => return Err(io_err(e)),
        };
        let offset = args.offset.unwrap_or(1).max(1);
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT).max(1);
        let out = number_lines(file, offset, limit, &shown, meta.len(), &path)?;
        // An edit usually follows: its check then starts from this tree.
        crate::check::recent::warm(&path);
        Ok(cap_middle(&out, MAX_OUTPUT_BYTES))
    }
}

/// Render lines `offset..offset+limit` (1-based) of `file`.
fn number_lines(
    file: File,
    offset: u64,
    limit: u64,
    shown: &str,
    size: u64,
    path: &Path,
) -> Result<String, ToolError> {
    let io_err = |source| ToolError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    if looks_binary(reader.fill_buf().map_err(io_err)?) {
        return Err(binary_error(shown, size));
    }
    let mut out = String::new();
    let mut line = Vec::new();
    let mut number: u64 = 0;
    // Last line number actually shown (0 when none).
    let mut last_shown: u64 = 0;
    loop {
        if number >= offset.saturating_add(limit).saturating_sub(1) {
            number += count_lines(&mut reader).map_err(io_err)?;
            break;
        }
        line.clear();
        if reader.read_until(b'\n', &mut line).map_err(io_err)? == 0 {
            break;
        }
        number += 1;
        if number < offset {
            continue;
        }
        let text = std::str::from_utf8(&line).map_err(|_| binary_error(shown, size))?;
        let text = text.strip_suffix('\n').unwrap_or(text);
        let text = text.strip_suffix('\r').unwrap_or(text);
        let rendered = render_line(number, text);
        if out.len() + rendered.len() > MAX_OUTPUT_BYTES - NOTE_ROOM && last_shown > 0 {
            // Stop at the output cap; the note says where to continue.
            number += count_lines(&mut reader).map_err(io_err)?;
            break;
        }
        out.push_str(&rendered);
        last_shown = number;
    }
    let total = number;
    if total == 0 {
        return Ok(format!("`{shown}` is empty (0 lines)."));
    }
    if last_shown == 0 {
        return Err(ToolError::Invalid(format!(
            "`{shown}` has {total} lines; offset {offset} is past the end"
        )));
    }
    let first = offset;
    if first > 1 || last_shown < total {
        let more = if last_shown < total {
            "; use offset to read more"
        } else {
            ""
        };
        out.push_str(&format!(
            "(showing lines {first}-{last_shown} of {total}{more})\n"
        ));
    }
    Ok(out)
}

/// One numbered line, cut if very long.
pub(crate) fn render_line(number: u64, text: &str) -> String {
    let cut_at = text
        .char_indices()
        .nth(MAX_LINE_CHARS)
        .map(|(i, _)| floor_char_boundary(text, i));
    match cut_at {
        Some(end) => {
            let total = text.chars().count();
            format!(
                "{number:>6}\t{}… [line cut: {total} chars, first {MAX_LINE_CHARS} shown]\n",
                &text[..end]
            )
        }
        None => format!("{number:>6}\t{text}\n"),
    }
}

/// One line as `read_file` shows it (`{number:>6}\t{text}`) without its
/// number and tab; `None` for a line that is not numbered so. The line's
/// own newline, if any, is kept.
pub fn shown_line(line: &str) -> Option<&str> {
    let rest = line.trim_start_matches(' ');
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    (digits > 0).then_some(())?;
    rest[digits..].strip_prefix('\t')
}

/// A file's text back from its whole `read_file` output (each line
/// numbered, each ending in a newline), or `None` when the output is not
/// the whole file as it is: a cut line, a window of a long file, an empty
/// file's note.
pub fn shown_file(shown: &str) -> Option<String> {
    let mut text = String::with_capacity(shown.len());
    for line in shown.lines() {
        let body = shown_line(line)?;
        if body.ends_with("[line cut]") || body.contains("… [line cut:") {
            return None;
        }
        text.push_str(body);
        text.push('\n');
    }
    Some(text)
}

/// The number of lines left in `reader` (a final line without a newline
/// counts).
fn count_lines(reader: &mut impl BufRead) -> std::io::Result<u64> {
    let mut count = 0u64;
    let mut last = b'\n';
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        count += memchr::memchr_iter(b'\n', buf).count() as u64;
        last = buf[buf.len() - 1];
        let n = buf.len();
        reader.consume(n);
    }
    if last != b'\n' {
        count += 1;
    }
    Ok(count)
}

/// Read a whole text file for editing; binary files refused.
pub(crate) fn read_text(path: &Path, shown: &str) -> Result<String, ToolError> {
    let mut bytes = Vec::new();
    let folder = format!("`{shown}` is a folder, not a file");
    open_regular(path, shown, &folder)?
        .read_to_end(&mut bytes)
        .map_err(|source| ToolError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    let size = bytes.len() as u64;
    if looks_binary(&bytes) {
        return Err(binary_error(shown, size));
    }
    String::from_utf8(bytes).map_err(|_| binary_error(shown, size))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_whole_numbered_file_is_read_back() {
        let shown = format!(
            "{}{}",
            render_line(1, "def add(a, b):"),
            render_line(2, "    return a + b")
        );
        assert_eq!(
            shown_file(&shown).as_deref(),
            Some("def add(a, b):\n    return a + b\n")
        );
        assert_eq!(shown_file("     1\tx\n(showing lines 1-1 of 9)\n"), None);
        assert_eq!(shown_file("`a.py` is empty (0 lines)."), None);
        assert_eq!(shown_file(&render_line(1, &"x".repeat(3000))), None);
        assert_eq!(shown_line("    12\t  y = 2\n"), Some("  y = 2\n"));
        assert_eq!(shown_line("\tno number"), None);
    }
}
