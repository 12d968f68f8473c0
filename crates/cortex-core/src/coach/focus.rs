//! What the next edit may change, right after a reminder that says what
//! is left to change, and what it may not quote again: kept by the turn's
//! `TurnWork` and read by `Session::quotable` (`read_first.rs`), so that the
//! quoted format's grammar holds the model's next `edit_file` to it.

use super::words::{normalise, same_file};

/// The files (and lines) the next edit is to change, and the quotes the
/// turn's edits gave back unchanged.
#[derive(Debug, Default, Clone)]
pub(crate) struct Focus {
    /// From the reminder that asks for them to the next call; empty: any.
    files: Vec<FocusFile>,
    /// Quotes an edit gave back unchanged, with their file, until a change
    /// of that file.
    identical: Vec<(String, String)>,
}

/// A file the next edit is to change and, when only some lines of it are
/// to change, those lines.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FocusFile {
    path: String,
    /// Empty: any line.
    lines: Vec<String>,
}

impl Focus {
    /// Whether the next edit may change `path`: any file, except right
    /// after the reminder that names the files the task asks to change and
    /// the turn left untouched, or the lines a rename left: only those
    /// (told in words that a file was untouched, the 1.5B repeated its
    /// answer).
    pub(crate) fn in_focus(&self, path: &str) -> bool {
        self.files.is_empty() || self.focused(path).is_some()
    }

    /// The lines of `path` the next edit may quote, when only some may:
    /// right after the rename reminder, those where an old name still
    /// occurs (made to edit, the 1.5B quoted the line it had renamed and
    /// renamed it back).
    pub(crate) fn lines(&self, path: &str) -> Option<&[String]> {
        self.focused(path)
            .map(|f| f.lines.as_slice())
            .filter(|lines| !lines.is_empty())
    }

    /// Whether the next edit of `path` may not quote `line`: an edit of
    /// the turn quoted it and gave it back unchanged, and the file has not
    /// changed since (a small model quoted a correct heading as itself
    /// twice while the misspelt one was another).
    pub(crate) fn unquotable(&self, path: &str, line: &str) -> bool {
        let path = normalise(path);
        !line.trim().is_empty()
            && self
                .identical
                .iter()
                .filter(|(p, _)| *p == path)
                .any(|(_, quote)| quote.lines().any(|q| q.trim() == line.trim()))
    }

    /// The next edit is to change these files, any line of them.
    pub(super) fn on_files(&mut self, paths: Vec<String>) {
        self.files = paths
            .into_iter()
            .map(|path| FocusFile {
                path,
                lines: Vec::new(),
            })
            .collect();
    }

    /// The next edit is to change the files and lines of grep's
    /// `path:line:text` `lines` (those a rename reminder quotes).
    pub(super) fn on_grep_lines(&mut self, lines: &[String]) {
        self.files.clear();
        for line in lines {
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
            match self.files.iter_mut().find(|f| f.path == path) {
                Some(f) => f.lines.push(found.to_owned()),
                None => self.files.push(FocusFile {
                    path,
                    lines: vec![found.to_owned()],
                }),
            }
        }
    }

    /// A call was made: any file again.
    pub(super) fn release(&mut self) {
        self.files.clear();
    }

    /// An edit of `path` gave `quote` back unchanged.
    pub(super) fn gave_back(&mut self, path: &str, quote: &str) {
        self.identical.push((normalise(path), quote.to_owned()));
    }

    /// `path` changed: its quotes may be quoted again.
    pub(super) fn changed(&mut self, path: &str) {
        let path = normalise(path);
        self.identical.retain(|(p, _)| *p != path);
    }

    fn focused(&self, path: &str) -> Option<&FocusFile> {
        let path = normalise(path);
        self.files.iter().find(|f| same_file(&path, &f.path))
    }
}
