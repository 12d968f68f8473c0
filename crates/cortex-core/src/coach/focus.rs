//! What the next edit may change, right after a reminder that says what
//! is left to change, and what it may not quote again: read by
//! `Session::quotable` (`read_first.rs`), so that the quoted format's
//! grammar holds the model's next `edit_file` to it.

use super::TurnWork;
use super::words::{normalise, same_file};

/// A file the next edit is to change and, when only some lines of it are
/// to change, those lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Focus {
    pub(super) path: String,
    /// Empty: any line.
    pub(super) lines: Vec<String>,
}

impl TurnWork {
    /// Whether the next edit may change `path`: any file, except right
    /// after the reminder that names the files the task asks to change and
    /// the turn left untouched: only those. The quoted format's grammar then
    /// lets `edit_file` name only those (run Q, constant-in-two-files: told
    /// in words that worker.py was untouched, the 1.5B repeated its answer).
    pub(crate) fn in_focus(&self, path: &str) -> bool {
        self.focus.is_empty() || self.focused(path).is_some()
    }

    /// The lines of `path` the next edit may quote, when only some may:
    /// right after the rename reminder, those where an old name still
    /// occurs (run Q, rename-variable: made to edit, the 1.5B quoted the
    /// line it had renamed and renamed it back).
    pub(crate) fn focus_lines(&self, path: &str) -> Option<&[String]> {
        self.focused(path)
            .map(|f| f.lines.as_slice())
            .filter(|lines| !lines.is_empty())
    }

    /// Whether the next edit of `path` may not quote `line`: an edit of
    /// the turn quoted it and gave it back unchanged, and the file has not
    /// changed since (run Q, fix-readme-typo: `# Todo` quoted as itself
    /// twice while the misspelt heading was the other one).
    pub(crate) fn unquotable(&self, path: &str, line: &str) -> bool {
        let path = normalise(path);
        !line.trim().is_empty()
            && self
                .identical
                .iter()
                .filter(|(p, _)| *p == path)
                .any(|(_, quote)| quote.lines().any(|q| q.trim() == line.trim()))
    }

    fn focused(&self, path: &str) -> Option<&Focus> {
        let path = normalise(path);
        self.focus.iter().find(|f| same_file(&path, &f.path))
    }
}

/// The files and lines of grep's `path:line:text` lines in `text`.
pub(super) fn focus_on_grep_lines(text: &str) -> Vec<Focus> {
    let mut focus: Vec<Focus> = Vec::new();
    for line in text.lines() {
        let Some((path, rest)) = line.split_once(':') else {
            continue;
        };
        let Some((number, found)) = rest.split_once(':') else {
            continue;
        };
        if path.is_empty() || number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let path = normalise(path);
        match focus.iter_mut().find(|f| f.path == path) {
            Some(f) => f.lines.push(found.to_owned()),
            None => focus.push(Focus {
                path,
                lines: vec![found.to_owned()],
            }),
        }
    }
    focus
}
