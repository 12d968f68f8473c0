//! The composer's text: a multi-line buffer with a cursor, and large pastes
//! kept whole behind a one-line placeholder (`[paste #1 · 240 lines]`) that
//! edits as one character and is expanded when the message is sent.

/// A paste of more lines or bytes than this becomes a placeholder.
const PASTE_LINES: usize = 5;
const PASTE_BYTES: usize = 1_000;

/// The composer's text and cursor (multi-line; large pastes folded to a
/// placeholder until sent).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Editor {
    text: String,
    /// Byte offset into `text`, always at a character boundary.
    cursor: usize,
    /// `(placeholder, content)` of large pastes.
    pastes: Vec<(String, String)>,
    next_paste: usize,
}

impl Editor {
    /// The text as shown (pastes as their placeholders).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The cursor, a byte offset at a character boundary.
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// Whether there is no text.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Replace everything (a history entry, a completion).
    pub fn set(&mut self, text: &str) {
        self.text = text.to_owned();
        self.cursor = self.text.len();
        self.pastes
            .retain(|(label, _)| text.contains(label.as_str()));
    }

    /// Empty it.
    pub fn clear(&mut self) {
        *self = Editor {
            next_paste: self.next_paste,
            ..Editor::default()
        };
    }

    /// The message to send, placeholders expanded, and the editor cleared.
    pub fn take(&mut self) -> String {
        let mut message = std::mem::take(&mut self.text);
        for (label, content) in self.pastes.drain(..) {
            message = message.replacen(&label, &content, 1);
        }
        self.clear();
        message
    }

    /// Insert `text` at the cursor.
    pub fn insert(&mut self, text: &str) {
        self.text.insert_str(self.cursor, text);
        self.cursor += text.len();
    }

    /// Insert `c` at the cursor.
    pub fn insert_char(&mut self, c: char) {
        self.text.insert(self.cursor, c);
        self.cursor += c.len_utf8();
    }

    /// A paste: inline when small, else a placeholder.
    pub fn paste(&mut self, text: &str) {
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        let lines = text.lines().count();
        if lines <= PASTE_LINES && text.len() <= PASTE_BYTES {
            self.insert(&text);
            return;
        }
        self.next_paste += 1;
        let label = format!("[paste #{} · {lines} lines]", self.next_paste);
        self.insert(&label);
        self.pastes.push((label, text));
    }

    /// The placeholder that ends at the cursor, as a byte range.
    fn placeholder_before(&self) -> Option<std::ops::Range<usize>> {
        let before = &self.text[..self.cursor];
        self.pastes
            .iter()
            .find(|(label, _)| before.ends_with(label.as_str()))
            .map(|(label, _)| self.cursor - label.len()..self.cursor)
    }

    fn placeholder_after(&self) -> Option<std::ops::Range<usize>> {
        let after = &self.text[self.cursor..];
        self.pastes
            .iter()
            .find(|(label, _)| after.starts_with(label.as_str()))
            .map(|(label, _)| self.cursor..self.cursor + label.len())
    }

    fn remove(&mut self, range: std::ops::Range<usize>) {
        let removed = self.text[range.clone()].to_owned();
        self.text.replace_range(range.clone(), "");
        self.cursor = range.start;
        self.pastes.retain(|(label, _)| *label != removed);
    }

    /// Delete the character before the cursor.
    pub fn backspace(&mut self) {
        if let Some(range) = self.placeholder_before() {
            return self.remove(range);
        }
        if let Some(prev) = self.prev_boundary(self.cursor) {
            self.remove(prev..self.cursor);
        }
    }

    /// Delete the character at the cursor.
    pub fn delete(&mut self) {
        if let Some(range) = self.placeholder_after() {
            return self.remove(range);
        }
        if let Some(next) = self.next_boundary(self.cursor) {
            let at = self.cursor;
            self.remove(at..next);
        }
    }

    fn prev_boundary(&self, at: usize) -> Option<usize> {
        self.text[..at].char_indices().next_back().map(|(i, _)| i)
    }

    fn next_boundary(&self, at: usize) -> Option<usize> {
        self.text[at..].chars().next().map(|c| at + c.len_utf8())
    }

    /// Move the cursor one character left.
    pub fn left(&mut self) {
        if let Some(range) = self.placeholder_before() {
            self.cursor = range.start;
        } else if let Some(prev) = self.prev_boundary(self.cursor) {
            self.cursor = prev;
        }
    }

    /// Move the cursor one character right.
    pub fn right(&mut self) {
        if let Some(range) = self.placeholder_after() {
            self.cursor = range.end;
        } else if let Some(next) = self.next_boundary(self.cursor) {
            self.cursor = next;
        }
    }

    fn line_start(&self) -> usize {
        self.text[..self.cursor].rfind('\n').map_or(0, |i| i + 1)
    }

    fn line_end(&self) -> usize {
        self.text[self.cursor..]
            .find('\n')
            .map_or(self.text.len(), |i| self.cursor + i)
    }

    /// Move the cursor to the start of its line.
    pub fn home(&mut self) {
        self.cursor = self.line_start();
    }

    /// Move the cursor to the end of its line.
    pub fn end(&mut self) {
        self.cursor = self.line_end();
    }

    /// Whether the cursor is on the first line.
    pub fn on_first_line(&self) -> bool {
        !self.text[..self.cursor].contains('\n')
    }

    /// Whether the cursor is on the last line.
    pub fn on_last_line(&self) -> bool {
        !self.text[self.cursor..].contains('\n')
    }

    /// One line up, at the same column as far as it goes.
    pub fn up(&mut self) {
        if self.on_first_line() {
            return;
        }
        let column = self.text[self.line_start()..self.cursor].chars().count();
        let prev_end = self.line_start() - 1;
        let prev_start = self.text[..prev_end].rfind('\n').map_or(0, |i| i + 1);
        self.cursor = advance(&self.text, prev_start, prev_end, column);
    }

    /// Move the cursor one line down.
    pub fn down(&mut self) {
        if self.on_last_line() {
            return;
        }
        let column = self.text[self.line_start()..self.cursor].chars().count();
        let next_start = self.line_end() + 1;
        let next_end = self.text[next_start..]
            .find('\n')
            .map_or(self.text.len(), |i| next_start + i);
        self.cursor = advance(&self.text, next_start, next_end, column);
    }

    /// Move the cursor to the start of the previous word.
    pub fn word_left(&mut self) {
        let before = &self.text[..self.cursor];
        let trimmed = before.trim_end();
        self.cursor = trimmed.rfind(|c: char| c.is_whitespace()).map_or(0, |i| {
            i + trimmed[i..].chars().next().map_or(1, char::len_utf8)
        });
    }

    /// Move the cursor past the end of the next word.
    pub fn word_right(&mut self) {
        let after = &self.text[self.cursor..];
        let skip = after.len() - after.trim_start().len();
        let rest = &after[skip..];
        let word = rest.find(char::is_whitespace).unwrap_or(rest.len());
        self.cursor += skip + word;
    }

    /// Ctrl+W: the word before the cursor.
    pub fn delete_word(&mut self) {
        let end = self.cursor;
        self.word_left();
        let start = self.cursor;
        self.cursor = end;
        if start < end {
            self.remove(start..end);
        }
    }

    /// Ctrl+U: to the start of the line.
    pub fn kill_to_start(&mut self) {
        let start = self.line_start();
        let end = self.cursor;
        self.remove(start..end);
    }

    /// Ctrl+K: to the end of the line.
    pub fn kill_to_end(&mut self) {
        let (start, end) = (self.cursor, self.line_end());
        self.remove(start..end);
        self.cursor = start;
    }

    /// The word the cursor ends (for `@path` and `/command` completion):
    /// its byte range.
    pub fn current_word(&self) -> (usize, &str) {
        let before = &self.text[..self.cursor];
        let start = before.rfind(char::is_whitespace).map_or(0, |i| {
            i + before[i..].chars().next().map_or(1, char::len_utf8)
        });
        (start, &before[start..])
    }

    /// Replace the current word with `with`.
    pub fn replace_word(&mut self, with: &str) {
        let (start, _) = self.current_word();
        self.text.replace_range(start..self.cursor, with);
        self.cursor = start + with.len();
    }
}

/// The offset `column` characters into `start..end` (or `end`).
fn advance(text: &str, start: usize, end: usize, column: usize) -> usize {
    text[start..end]
        .char_indices()
        .nth(column)
        .map_or(end, |(i, _)| start + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_lines_and_moves() {
        let mut e = Editor::default();
        e.insert("hello");
        e.insert_char('\n');
        e.insert("wörld");
        assert!(!e.on_first_line());
        e.up();
        assert_eq!(e.cursor(), 5);
        e.home();
        e.down();
        assert_eq!(e.cursor(), 6);
        e.end();
        e.backspace();
        assert_eq!(e.text(), "hello\nwörl");
        e.left();
        e.left();
        e.backspace();
        assert_eq!(e.text(), "hello\nwrl");
        e.delete_word();
        assert_eq!(e.text(), "hello\nrl");
        e.kill_to_end();
        assert_eq!(e.text(), "hello\n");
        assert_eq!(e.take(), "hello\n");
        assert!(e.is_empty());
    }

    #[test]
    fn large_pastes_are_one_placeholder() {
        let mut e = Editor::default();
        e.insert("see ");
        let big: String = (0..50).map(|i| format!("line {i}\n")).collect();
        e.paste(&big);
        assert_eq!(e.text(), "see [paste #1 · 50 lines]");
        e.insert(" please");
        let sent = e.take();
        assert!(sent.starts_with("see line 0\n") && sent.ends_with("line 49\n please"));
        e.paste(&big);
        e.backspace();
        assert!(e.is_empty(), "one backspace removes the placeholder");
        e.paste("small\r\npaste");
        assert_eq!(e.text(), "small\npaste");
    }

    #[test]
    fn words_for_completion() {
        let mut e = Editor::default();
        e.insert("fix @src/ma");
        assert_eq!(e.current_word(), (4, "@src/ma"));
        e.replace_word("@src/main.rs ");
        assert_eq!(e.text(), "fix @src/main.rs ");
        e.word_left();
        assert_eq!(e.cursor(), 4);
    }
}
