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
//! What the model saw is a hash of the file's `read_file` output, taken by
//! the harness after each successful read, write or edit; any change since
//! (a command, the user, an edit of another session) makes the hashes
//! differ. Kept for the session's life in memory: a resumed session asks for
//! one more read per file, never one less.

use crate::Session;
use crate::answer::Answer;
use cortex_protocol::{ReadFileArgs, ToolArgs, ToolCallRequest, ToolName, ToolStatus};
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

/// The hash of each file's content as the model last saw it, by path.
#[derive(Debug, Default)]
pub(crate) struct Seen(HashMap<String, u64>);

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
        let hash = digest(current);
        if self.seen.0.get(&key) == Some(&hash) {
            return None;
        }
        self.seen.0.insert(key, hash);
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
            self.seen.0.insert(key(&path), digest(&current));
        }
    }

    /// Notes that the model was shown `text`, the `read_file` output of
    /// `path` (the files in the turn's context).
    pub(crate) fn note_shown(&mut self, path: &str, text: &str) {
        self.seen.0.insert(key(path), digest(text));
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

fn digest(text: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}
