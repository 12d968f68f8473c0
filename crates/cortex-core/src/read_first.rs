//! Read before write: an edit of a file the model has not seen as it is
//! now is refused, and the refusal shows the file.
//!
//! Small models edit before reading: an `old_string` invented from another
//! language, an import line that is not in the file (docs/BENCHMARKS.md,
//! the task set). Claude Code refuses unread edits the same way. For models
//! with `verify_answers`, an `edit_file` — or a `write_file` over an existing
//! file — whose file differs from what the model last read or wrote (or was
//! never read in this session) is answered with the file's current content
//! with line numbers, and counts as a read: the next try quotes from text
//! the model has just been shown.
//!
//! What the model saw is the file's `read_file` output, taken by the
//! harness after each successful read, write or edit; any change since (a
//! command, the user, an edit of another session) makes it differ. Kept for
//! the session's life in memory: a resumed session asks for one more read
//! per file, never one less. The same texts are what the `quoted` edit
//! format lets an `old_string` quote ([`Session::quotable`]).

use crate::Session;
use crate::answer::Answer;
use cortex_model::QuotableFile;
use cortex_protocol::{EditFormat, ReadFileArgs, ToolArgs, ToolCallRequest, ToolName, ToolStatus};
use std::collections::HashMap;

/// What the model has seen of the workspace.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    /// Each file's `read_file` output as the model last saw it, by path.
    files: HashMap<String, String>,
    /// The workspace's files as the turn's context listed them, when the
    /// listing was complete.
    listed: Option<Vec<String>>,
}

impl Session {
    pub(crate) fn reads_first(&self) -> bool {
        self.model.info().is_some_and(|i| i.verify_answers)
    }

    /// The file a write or edit would change, as `read_file` shows it now:
    /// what the checks before a write look at ([`Session::unread_write`],
    /// `unwanted_write.rs`). `None` for other calls, for models without
    /// `verify_answers`, and for a file that does not exist yet (or no guest
    /// to read it with).
    pub(crate) async fn written_file_now(&self, args: &ToolArgs) -> Option<String> {
        let path = args.written_path()?;
        if !self.reads_first() {
            return None;
        }
        self.read_whole(path).await
    }

    /// The refusal for a write or edit of a file the model has not seen as
    /// it is (`current`, from [`Session::written_file_now`]), or `None` to
    /// let the call run.
    pub(crate) fn unread_write(&mut self, args: &ToolArgs, current: &str) -> Option<Answer> {
        let path = args.written_path()?;
        let how = match args {
            ToolArgs::EditFile(_) => {
                "quote old_string exactly from these lines (without the line numbers and the \
                 tab after them) and call edit_file again"
            }
            ToolArgs::EditLines(_) => {
                "call edit_file again with start_line and end_line as these lines are numbered \
                 now"
            }
            _ => "call write_file again with the whole new content if you still mean to replace it",
        };
        let tool = args.tool();
        let key = key(path);
        if self
            .seen
            .files
            .get(&key)
            .is_some_and(|seen| seen == current)
        {
            return None;
        }
        self.seen.files.insert(key, current.to_owned());
        Some(Answer::error(format!(
            "`{path}` has changed since you last read it, or you have not read it in this \
             session, so this {tool} was not made. Its current content:\n{current}\n\
             Now {how}."
        )))
    }

    /// After a call was answered: remember what a successful read, write or
    /// edit left the model knowing.
    pub(crate) async fn note_seen(&mut self, call: &ToolCallRequest, status: ToolStatus) {
        if status != ToolStatus::Ok || !self.reads_first() {
            return;
        }
        let Ok(tool) = call.name.parse::<ToolName>() else {
            return;
        };
        if !matches!(
            tool,
            ToolName::ReadFile | ToolName::EditFile | ToolName::WriteFile
        ) {
            return;
        }
        let path = serde_json::from_str::<serde_json::Value>(&call.arguments)
            .ok()
            .and_then(|v| v.get("path")?.as_str().map(str::to_owned));
        let Some(path) = path else { return };
        if let Some(current) = self.read_whole(&path).await {
            self.seen.files.insert(key(&path), current);
        }
    }

    /// Notes that the model was shown `text`, the `read_file` output of
    /// `path` (the files in the turn's context).
    pub(crate) fn note_shown(&mut self, path: &str, text: &str) {
        self.seen.files.insert(key(path), text.to_owned());
    }

    /// Notes the workspace's files as the turn's context lists them
    /// (`complete`: all of them).
    pub(crate) fn note_listed(&mut self, paths: &[String], complete: bool) {
        self.seen.listed = complete.then(|| paths.iter().map(|p| key(p)).collect());
    }

    /// The files an edit may name this round ([`ModelRequest::quotable`]):
    /// with the `quoted` edit format and a complete listing, the listed
    /// files and those the model has seen since, each with the text it
    /// saw when it saw it whole; otherwise none (nothing is constrained).
    /// Right after a reminder that says what to change, only that: the
    /// files the task names and the turn left untouched, or the lines where
    /// a renamed name still occurs ([`crate::coach::Focus`]). A file the
    /// gates refuse every write to stays quotable: held to the other files,
    /// the 1.5B made its edit of the test in `calc.py` instead — the fix
    /// undone; the refusal is what tells it why.
    ///
    /// [`ModelRequest::quotable`]: cortex_model::ModelRequest::quotable
    pub(crate) fn quotable(&self) -> Vec<QuotableFile> {
        let Some(listed) = &self.seen.listed else {
            return Vec::new();
        };
        if self.edit_format() != EditFormat::Quoted {
            return Vec::new();
        }
        let mut paths: Vec<&String> = listed.iter().chain(self.seen.files.keys()).collect();
        paths.sort();
        paths.dedup();
        paths.retain(|p| self.turn_work.focus().in_focus(p));
        paths
            .into_iter()
            .map(|path| QuotableFile {
                path: path.clone(),
                text: match self.turn_work.focus().lines(path) {
                    // Only those lines may be quoted (one run of lines each
                    // when they are apart: an edit joining two is refused).
                    Some(lines) => Some(lines.iter().map(|l| format!("{l}\n")).collect()),
                    None => self
                        .seen
                        .files
                        .get(path)
                        .and_then(|shown| cortex_tools::shown_file(shown))
                        .map(|text| {
                            text.split_inclusive('\n')
                                .filter(|line| !self.turn_work.focus().unquotable(path, line))
                                .collect()
                        }),
                },
            })
            .collect()
    }

    /// The file's `read_file` output, read by the harness in the guest.
    pub(crate) async fn read_whole(&self, path: &str) -> Option<String> {
        self.harness_call(ToolArgs::ReadFile(ReadFileArgs {
            path: path.to_owned(),
            offset: None,
            limit: None,
        }))
        .await
    }
}

fn key(path: &str) -> String {
    path.trim().trim_start_matches("./").to_owned()
}
