//! Writes a small model makes that the task did not ask for, refused once
//! before they run: any write when the task only asks a question, a write
//! to the test the task says to run, and a write that would drop a
//! definition the task does not name.
//!
//! Asked to add a function beside another, small models write the file
//! with the new function only (add-a-function failed that way in every run
//! of the task set from C to G, docs/BENCHMARKS.md). The note in the tool's
//! result (`cortex_tools::defs`) and the answer check (`coach`) come
//! after the file has lost it, and a model that must then restore text it
//! no longer sees rarely does. So for models with `verify_answers`, a
//! `write_file` over an existing file, or an `edit_file` by exact strings,
//! whose result would no longer define a function, class or type that the
//! file defines now and the task does not name, is not made: the refusal
//! names what would go and shows the file as it is. Once per file and name
//! in a turn: a model that repeats the call has it made, since the task
//! may ask for the removal in words this check does not read.
//!
//! Asked "What does Square.describe() return for a square of side 2?", the
//! 1.5B edited `shapes.py` to return `2` (the extended set, run H). When
//! the task has none of the verbs of a change (`coach::words::asks_for_work`), the
//! first `write_file` or `edit_file` of the turn is refused with a reminder
//! that the task is a question.
//!
//! Told "Fix ages.py and run test_ages.py", it changed the test's assert
//! instead (run H). A write to a file the task says to run
//! (`coach::files_to_run`) is refused once per file.

use crate::Session;
use crate::answer::Answer;
use cortex_protocol::ToolArgs;

impl Session {
    /// The refusal of a write the task did not ask for (see the module
    /// docs), or `None` to let the call go on. `current` is the file as
    /// `read_file` shows it now (`Session::written_file_now`; `None` for a
    /// new file).
    pub(crate) fn unwanted_write(
        &mut self,
        args: &ToolArgs,
        current: Option<&str>,
    ) -> Option<Answer> {
        let path = args.written_path()?;
        if !self.reads_first() {
            return None;
        }
        if self.turn_work.first_unasked_write() {
            return Some(Answer::error(format!(
                "not made: the task asks a question and no change, so {path} stays as it is. \
                 Answer the question from the code as it is (read_file shows it); change files \
                 only when the user asks for it."
            )));
        }
        if self.turn_work.first_write_to_run(path) {
            return Some(Answer::error(format!(
                "not made: the task says to run {path}, not to change it. Fix the code it runs \
                 so that it passes; if {path} itself is wrong, make this call again."
            )));
        }
        let shown = current?;
        let old = unnumbered(shown)?;
        let new = match args {
            ToolArgs::WriteFile(a) => a.content.clone(),
            ToolArgs::EditFile(a) if old.contains(&a.old_string) && !a.old_string.is_empty() => {
                if a.replace_all == Some(true) {
                    old.replace(&a.old_string, &a.new_string)
                } else {
                    old.replacen(&a.old_string, &a.new_string, 1)
                }
            }
            // The tool itself explains an edit that cannot be made.
            _ => return None,
        };
        let gone: Vec<String> = cortex_tools::defs::removed(path, &old, &new)
            .into_iter()
            .filter(|name| !self.turn_work.asks_to_remove(name))
            .collect();
        let gone: Vec<String> = gone
            .into_iter()
            .filter(|name| self.turn_work.first_drop(path, name))
            .collect();
        if gone.is_empty() {
            return None;
        }
        let names: Vec<String> = gone.iter().map(|n| format!("`{n}`")).collect();
        let names = names.join(", ");
        let how = match args {
            ToolArgs::WriteFile(_) => {
                "write_file replaces the whole file: give it the whole new content, what is there \
                 now with your change added"
            }
            _ => "keep it in new_string, or edit next to it instead of over it",
        };
        Some(Answer::error(format!(
            "not made: this {} would remove the definition of {names} from {path}, and the task \
             does not ask to remove it. To keep {names}, {how}. {path} now:\n{shown}",
            args.tool()
        )))
    }
}

/// A file's text from its `read_file` output (each line `N\ttext`), or
/// `None` when the output is not the whole file as it is (a cut line, a
/// window of a long file, an empty file's note).
fn unnumbered(shown: &str) -> Option<String> {
    let mut text = String::with_capacity(shown.len());
    for line in shown.lines() {
        let rest = line.trim_start_matches(' ');
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let body = rest
            .get(digits..)?
            .strip_prefix('\t')
            .filter(|_| digits > 0)?;
        if body.ends_with("[line cut]") || body.contains("… [line cut:") {
            return None;
        }
        text.push_str(body);
        text.push('\n');
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_whole_numbered_file_is_read_back() {
        assert_eq!(
            unnumbered("     1\tdef add(a, b):\n     2\t    return a + b\n").as_deref(),
            Some("def add(a, b):\n    return a + b\n")
        );
        assert_eq!(unnumbered("     1\tx\n(showing lines 1-1 of 9)\n"), None);
        assert_eq!(unnumbered("`a.py` is empty (0 lines)."), None);
        assert_eq!(
            unnumbered("     1\tx… [line cut: 3000 chars, first 2000 shown]\n"),
            None
        );
    }
}
