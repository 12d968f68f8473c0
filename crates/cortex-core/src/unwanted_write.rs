//! Writes a small model makes that the task did not ask for, refused once
//! before they run: any write when the task only asks a question, a write
//! to the test the task says to run, a write that would drop a definition
//! the task does not name, and one that would leave a JSON, TOML or YAML
//! file that parses now no longer parsing.
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
        if let ToolArgs::EditFile(edit) = args
            && let Some(refusal) = misplaced_insertion(self.turn_work.prompt(), edit)
            && self.turn_work.first_misplaced(path)
        {
            return Some(Answer::error(refusal));
        }
        let shown = current?;
        let old = cortex_tools::shown_file(shown)?;
        let new = match args {
            // Judged as the tool will write it.
            ToolArgs::WriteFile(a) => cortex_tools::json_object_completed(&a.path, &a.content)
                .unwrap_or_else(|| a.content.clone()),
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
        // A JSON, TOML or YAML file that parses now and would not (run N,
        // json-add-key: `package.json` overwritten with a fragment).
        if let Some((kind, problem)) = cortex_tools::data_problem(path, &new)
            && cortex_tools::data_problem(path, &old).is_none()
            && self.turn_work.first_break(path)
        {
            let or_edit = self.or_add_with_edit(args, &old, &new);
            return Some(Answer::error(format!(
                "not made: this {} would leave {path} no longer parsing as {kind} ({problem}). \
                 Give the whole file, as it is now with your change made.{or_edit} {path} \
                 now:\n{shown}",
                args.tool()
            )));
        }
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
        let or_edit = self.or_add_with_edit(args, &old, &new);
        Some(Answer::error(format!(
            "not made: this {} would remove the definition of {names} from {path}, and the task \
             does not ask to remove it. To keep {names}, {how}.{or_edit} {path} now:\n{shown}",
            args.tool()
        )))
    }

    /// For a `write_file` shorter than the file, a fragment meant as an
    /// addition (runs N–R: the new JSON key alone, written again at every
    /// reminder; run Y: the new README section alone, then the whole file
    /// in the wrong order), how to add it with `edit_file` (with a space
    /// before it); empty otherwise, or when the format has no `edit_file`.
    fn or_add_with_edit(&self, args: &ToolArgs, old: &str, new: &str) -> &'static str {
        if matches!(args, ToolArgs::WriteFile(_))
            && new.len() < old.len()
            && self.edit_format().offers_edit_file()
        {
            " Or, to add to it, call edit_file: quote the line your addition goes after and \
             give that line back followed by the new ones."
        } else {
            ""
        }
    }
}

/// Why `edit` inserts on the wrong side of the text the task places its
/// addition by ("Add a section '## Usage' to README.md, after Install":
/// `new_string` the new section followed by the quoted `## Install` lines,
/// run AE), or `None`: the edit is a pure insertion before (or after) its
/// `old_string`, and the task says "after" (or "before") a word the quote
/// holds.
fn misplaced_insertion(prompt: &str, edit: &cortex_protocol::EditFileArgs) -> Option<String> {
    let (old, new) = (edit.old_string.as_str(), edit.new_string.as_str());
    if old.trim().is_empty() || new.len() <= old.len() || edit.replace_all == Some(true) {
        return None;
    }
    let (put, asked) = if new.ends_with(old) && !new.starts_with(old) {
        ("before", "after")
    } else if new.starts_with(old) && !new.ends_with(old) {
        ("after", "before")
    } else {
        return None;
    };
    let words: Vec<&str> = prompt
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_')))
        .collect();
    let quoted = old.to_lowercase();
    // The word after "after" ("before"), past an article.
    let anchor = words.iter().enumerate().find_map(|(i, word)| {
        if !word.eq_ignore_ascii_case(asked) {
            return None;
        }
        let next = words[i + 1..]
            .iter()
            .find(|w| !matches!(w.to_lowercase().as_str(), "the" | "a" | "an"))?;
        (!next.is_empty() && quoted.contains(&next.to_lowercase())).then_some(*next)
    })?;
    let first = old.lines().find(|l| !l.trim().is_empty()).unwrap_or(old);
    let fix = if asked == "after" {
        "give old_string back first in new_string, then the new text"
    } else {
        "give the new text first in new_string, then old_string as it is"
    };
    Some(format!(
        "not made: this edit puts its new text {put} `{first}`, and the task says {asked} \
         {anchor}. To put it {asked}, {fix}."
    ))
}

impl Answer {
    /// This result as the turn so far reads it: without the tool's note
    /// that the change removed definitions (`cortex_tools::defs::REMOVED_NOTE`)
    /// when the task asks to remove or rename each of them (the note says
    /// "put it back", and the 1.5B undid the rename it was asked for: run M,
    /// rename-across-files); and a file that "did not parse before this
    /// change either" said to have been broken by the turn, when it was
    /// (run B5: the 0.5B broke calc.py, then was told each later edit found
    /// it so).
    pub(crate) fn read_in_turn(mut self, work: &crate::coach::TurnWork) -> Answer {
        if self.output.contains(cortex_tools::NOT_BEFORE_EITHER)
            && self
                .output
                .lines()
                .next()
                .is_some_and(|summary| work.broke_file_named_in(summary))
        {
            self.output = self.output.replace(
                cortex_tools::NOT_BEFORE_EITHER,
                "; it did before an earlier change of this turn broke it. Fix it before going on.",
            );
        }
        let asked = |line: &str| {
            let names = cortex_tools::defs::noted_removals(line);
            !names.is_empty() && names.iter().all(|n| work.asks_to_remove(n))
        };
        if self.output.lines().any(asked) {
            let kept: Vec<&str> = self.output.lines().filter(|l| !asked(l)).collect();
            self.output = kept.join("\n");
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::misplaced_insertion;
    use cortex_protocol::EditFileArgs;

    fn edit(old: &str, new: &str) -> EditFileArgs {
        EditFileArgs {
            path: "README.md".into(),
            old_string: old.into(),
            new_string: new.into(),
            replace_all: None,
        }
    }

    #[test]
    fn an_insertion_on_the_wrong_side_of_the_anchor_is_named() {
        let prompt = "Add a section '## Usage' to README.md, after Install, that says: run it.";
        let quote = "## Install\n\npip install tool";
        let before = edit(quote, &format!("## Usage\n\nrun it\n{quote}"));
        let said = misplaced_insertion(prompt, &before).expect("before Install");
        assert!(
            said.contains("puts its new text before `## Install`")
                && said.contains("the task says after Install")
                && said.contains("give old_string back first"),
            "{said}"
        );
        let after = edit(quote, &format!("{quote}\n\n## Usage\n\nrun it"));
        assert_eq!(misplaced_insertion(prompt, &after), None);
        // A task that places nothing, or by a word the quote lacks: nothing.
        assert_eq!(misplaced_insertion("Add a Usage section.", &before), None);
        let elsewhere = edit("# tool", "## Usage\n\nrun it\n# tool");
        assert_eq!(misplaced_insertion(prompt, &elsewhere), None);
        // "before" asks the other side.
        let prompt = "Insert a line before the return in calc.py.";
        let line = edit("    return a", "    return a\n    print(a)");
        assert!(
            misplaced_insertion(prompt, &line).is_some_and(|s| s.contains("after `    return a`"))
        );
    }
}
