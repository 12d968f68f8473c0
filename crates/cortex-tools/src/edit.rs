//! `write_file` and `edit_file`: changing files, recording a unified diff of
//! each change for the model and the UI.

use crate::cap::cap_middle;
use crate::open::{Opened, open_no_block, write_regular};
use crate::read::{looks_binary, read_text};
use crate::{ToolError, Workspace, Written};
use cortex_protocol::{EditFileArgs, WriteFileArgs};
use std::io::Read as _;
use std::path::Path;
use std::time::Duration;

/// A recorded diff is at most this many bytes.
pub const MAX_DIFF_BYTES: usize = 8 * 1024;

/// Time allowed for computing one diff.
const DIFF_TIMEOUT: Duration = Duration::from_millis(500);

/// Unified diff of `old` → `new` for the file shown as `shown`, capped.
pub(crate) fn unified_diff(shown: &str, old: &str, new: &str) -> String {
    // A deadline keeps a pathological diff from stalling the tool; past it the
    // diff is coarser but still correct.
    let diff = similar::TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{shown}"), &format!("b/{shown}"))
        .to_string();
    cap_middle(&diff, MAX_DIFF_BYTES)
}

fn line_count(text: &str) -> usize {
    text.lines().count()
}

pub(crate) fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {many}")
    }
}

/// How the error for an edit whose `new_string` is its `old_string` starts
/// (the core keeps such a quote out of the model's next edits of the file).
pub const IDENTICAL_EDIT: &str = "old_string and new_string are identical";

/// The summary, then each note (the syntax check's, the names used and
/// not imported, the definitions the change removed) on a line of its own.
pub(crate) fn with_notes(summary: String, notes: Vec<String>) -> String {
    notes
        .into_iter()
        .fold(summary, |text, note| format!("{text}\n{note}"))
}

impl Workspace {
    /// What the harness says after replacing `old` (if any) with `new` at
    /// `path` (shown to the model as `shown`): the checks after a write,
    /// without the write (public for `examples/check_bench.rs`, which times
    /// them).
    pub fn notes_after_write(
        &self,
        path: &Path,
        shown: &str,
        old: Option<&str>,
        new: &str,
    ) -> Vec<String> {
        // Parsed once, for the syntax check and the names, from the old
        // text's tree when this process parsed it.
        let tree = crate::check::Lang::of(path)
            .and_then(|lang| crate::check::recent::tree_after(lang, old, new));
        let broke = crate::syntax::after_write_parsed(path, old, new, tree.as_ref());
        // A file that does not parse has no names to judge.
        let unbound = broke
            .is_none()
            .then(|| crate::python_lint::note_parsed(self.root(), path, old, new, tree.as_ref()))
            .flatten();
        let removed = old.and_then(|old| crate::defs::note(shown, old, new));
        [broke, unbound, removed].into_iter().flatten().collect()
    }
}

impl Workspace {
    /// Create or replace a file; parent folders created.
    pub fn write_file(&self, args: &WriteFileArgs) -> Result<Written, ToolError> {
        let path = self.resolve_for_write(&args.path)?;
        let shown = self.display(&path);
        let io_err = |source| ToolError::Io {
            path: path.clone(),
            source,
        };
        let old = match open_no_block(&path, false) {
            Ok(Opened::Folder) => {
                return Err(ToolError::Invalid(format!(
                    "`{shown}` is a folder; give the path of a file inside it"
                )));
            }
            Ok(Opened::Special) => return Err(ToolError::not_regular(&shown)),
            Ok(Opened::File(mut file, _)) => {
                let mut bytes = Vec::new();
                file.read_to_end(&mut bytes).map_err(io_err)?;
                Some(bytes)
            }
            Err(_) => None,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| ToolError::Io {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        let completed = crate::syntax::json_object_completed(&args.path, &args.content);
        let content = completed.as_deref().unwrap_or(&args.content);
        write_regular(&path, &shown, content)?;
        let lines = plural(line_count(content), "line", "lines");
        let old_text = old.map(|bytes| {
            String::from_utf8(bytes)
                .ok()
                .filter(|t| !looks_binary(t.as_bytes()))
        });
        let (verb, diff) = match &old_text {
            None => ("Created", unified_diff(&shown, "", content)),
            Some(Some(old)) => ("Updated", unified_diff(&shown, old, content)),
            Some(None) => (
                "Updated",
                format!("(the previous content of `{shown}` was binary)\n"),
            ),
        };
        let unchanged =
            matches!(&old_text, Some(Some(old)) if old.trim_end() == content.trim_end());
        let mut notes =
            self.notes_after_write(&path, &shown, old_text.flatten().as_deref(), content);
        if completed.is_some() {
            notes.insert(0, crate::syntax::BRACE_ADDED.to_owned());
        }
        // Said in words: the 1.5B wrote the same broken test again at each
        // reminder, read "Updated" and answered.
        let summary = if unchanged {
            format!("Rewrote {shown} ({lines}) with the same text it had")
        } else {
            format!("{verb} {shown} ({lines})")
        };
        Ok(Written {
            summary: with_notes(summary, notes),
            diff,
        })
    }

    /// Exact-match replacement; zero or ambiguous matches are errors that say
    /// how many matched.
    pub fn edit_file(&self, args: &EditFileArgs) -> Result<Written, ToolError> {
        let path = self.resolve_for_write(&args.path)?;
        let shown = self.display(&path);
        if args.old_string.is_empty() {
            return Err(ToolError::Invalid(
                "old_string is empty; give the exact text to replace (use write_file to create a file)"
                    .to_owned(),
            ));
        }
        let old = match read_text(&path, &shown) {
            Err(ToolError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                return Err(self.not_found(shown));
            }
            other => other?,
        };
        let matches = old.matches(args.old_string.as_str()).count();
        let replace_all = args.replace_all.unwrap_or(false);
        if matches == 0 {
            return Err(ToolError::Invalid(format!(
                "old_string not found in {shown}; copy the text exactly (whitespace and indentation included).{}",
                crate::near_miss::where_it_may_be(&old, &args.old_string)
            )));
        }
        // After the match check: an identical pair the file does not even
        // contain needs the file's text more than this message.
        if args.old_string == args.new_string {
            return Err(ToolError::Invalid(format!(
                "{IDENTICAL_EDIT}; nothing would change. To add lines, give new_string as the \
                 quoted lines with the new ones before or after them (an import at the top: \
                 old_string the first line, new_string the import, a line break and that line), \
                 or call write_file with the whole new file."
            )));
        }
        if matches > 1 && !replace_all {
            return Err(ToolError::Invalid(format!(
                "old_string matches {matches} times in {shown}; add surrounding lines to make it unique or set replace_all"
            )));
        }
        let new = if replace_all {
            old.replace(&args.old_string, &args.new_string)
        } else {
            old.replacen(&args.old_string, &args.new_string, 1)
        };
        write_regular(&path, &shown, &new)?;
        let summary = format!(
            "Edited {shown} ({})",
            plural(matches, "replacement", "replacements")
        );
        Ok(Written {
            summary: with_notes(
                summary,
                self.notes_after_write(&path, &shown, Some(&old), &new),
            ),
            diff: unified_diff(&shown, &old, &new),
        })
    }
}
