//! Writes a small model makes that the task did not ask for, refused once
//! before they run: any write when the task only asks a question, a write
//! to the test the task says to run, a write that would drop a definition
//! the task does not name, and one that would leave a JSON, TOML or YAML
//! file that parses now no longer parsing.
//!
//! Asked to add a function beside another, small models write the file with the
//! new function only (run after run: docs/BENCHMARKS.md, "The task set"). The
//! note in the tool's result (`cortex_tools::defs`) and the answer check
//! (`coach`) come after the file has lost it, and a model that must then
//! restore text it no longer sees rarely does. So for models with
//! `verify_answers`, a `write_file` over an existing file, or an `edit_file` by
//! exact strings, whose result would no longer define a function, class or type
//! that the file defines now and the task does not name, is not made: the
//! refusal names what would go and shows the file as it is. Once per file and
//! name in a turn: a model that repeats the call has it made, since the task
//! may ask for the removal in words this check does not read.
//!
//! Asked "What does Square.describe() return for a square of side 2?", the
//! 1.5B edited `shapes.py` to return `2`. When the task has none of the
//! verbs of a change (`coach::words::asks_for_work`), the first
//! `write_file` or `edit_file` of the turn is refused with a reminder that
//! the task is a question.
//!
//! Told "Fix ages.py and run test_ages.py", it changed the test's assert
//! instead. A write to a file the task says to run (`coach::files_to_run`)
//! is refused once per file.
//!
//! Told to fix "the add function", the 1.5B rewrote `mul` (scripts/setup's
//! own turn). An edit that lies only in definitions the task does not
//! name, when it names one the file defines, is refused once per file
//! with the file shown; so is an insertion on the wrong side of the text
//! the task places it by ("after Install"), with the edit that puts it on
//! the right one.
//!
//! After the task's test passed, a change to a file the turn changed
//! already is refused, holding while it comes back unchanged: greedy, the
//! 1.5B undid its fix there.
//! A new file in another folder named as a file the task names is refused
//! every time once the named file is there.
//!
//! A refusal that hands over the call to make instead holds while the
//! refused call comes back unchanged, and the next reply must call the
//! handed tool (the result's [`CallSteer::Hands`]): the 1.5B gave its
//! refused call back, or recited the handed one as its answer.

use crate::Session;
use crate::answer::Answer;
use crate::coach::{Held, Refusal};
use cortex_protocol::{CallSteer, ToolArgs, ToolName};

/// How a refusal hands over the call to make instead: "call", the tool,
/// these words, then the arguments as a JSON object.
const WITH_ARGUMENTS: &str = " with these arguments: ";

/// The words of a refusal that hand over the call of `tool` with
/// `arguments`.
fn handed_call(tool: ToolName, arguments: &serde_json::Value) -> String {
    format!("call {tool}{WITH_ARGUMENTS}{arguments}")
}

/// A refusal's words, and the tool and arguments of the call they hand
/// over ([`handed_call`]), if any: kept as values for the next request
/// (its tool choice, [`cortex_model::RefusedCall::instead`]), never read
/// back from the words.
#[derive(Debug, Clone, PartialEq)]
struct Refused {
    words: String,
    handed: Option<(ToolName, serde_json::Value)>,
}

/// The decision a refusal that hands over a call of `tool` records.
fn hands(handed: &Option<(ToolName, serde_json::Value)>) -> Option<CallSteer> {
    handed
        .as_ref()
        .map(|(tool, _)| CallSteer::Hands { tool: *tool })
}

impl Refused {
    /// Words that hand over no call.
    fn plain(words: String) -> Refused {
        Refused {
            words,
            handed: None,
        }
    }
}

impl std::ops::Deref for Refused {
    type Target = str;
    fn deref(&self) -> &str {
        &self.words
    }
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.words)
    }
}

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
        if self.turn_work.refuses_write_to_run(path) {
            return Some(Answer::error(self.turn_work.to_run_refusal(path)));
        }
        if current.is_none()
            && let Some(named) = self.turn_work.second_copy_of(path)
        {
            // Every time: the model that wrote the named file went on to
            // write its fix into a copy elsewhere (a test written again
            // under `tests/`).
            let refused = elsewhere_refusal(&named, path, args, ", which is there already");
            let steer = hands(&refused.handed);
            let handed = refused.handed.map(|(_, call)| call.to_string());
            self.turn_work.note_handed_over(args, handed);
            return Some(Answer::error(refused.words).steering(steer));
        }
        // Owned: the refusals below are worked out one at a time, between
        // updates of the turn's record.
        let prompt = self.turn_work.prompt().to_owned();
        let prompt = prompt.as_str();
        let edit = match args {
            ToolArgs::EditFile(edit) => Some(edit),
            _ => None,
        };
        let product = || {
            producer_of(prompt, path).map(|producer| {
                Refused::plain(format!(
                    "not made: the task says {producer} should write {path}; writing {path} \
                     yourself leaves {producer} as it is, and its next run undoes it. Change \
                     {producer} so that it writes what the task asks, then run it."
                ))
            })
        };
        let after_pass = self.turn_work.change_after_pass(path).map(Refused::plain);
        let refusals: [(Refusal, &dyn Fn() -> Option<Refused>); 5] = [
            (Refusal::AfterPass, &|| after_pass.clone()),
            (Refusal::Misplaced, &|| {
                edit.and_then(|e| misplaced_insertion(prompt, e))
            }),
            (Refusal::Replacement, &|| {
                edit.and_then(|e| replacement_and_more(prompt, e))
            }),
            (Refusal::Product, &product),
            (Refusal::Elsewhere, &|| {
                current
                    .is_none()
                    .then(|| elsewhere_named(prompt, args))
                    .flatten()
            }),
        ];
        // Each is worked out only when none before it refused.
        for (why, refusal) in refusals {
            let Some(Refused {
                words: refusal,
                handed,
            }) = refusal()
            else {
                continue;
            };
            let steer = hands(&handed);
            let handed = handed.map(|(_, call)| call.to_string());
            match self.turn_work.refusal_holds(why, path, args, handed) {
                Held::No => {}
                Held::First => return Some(Answer::error(refusal).steering(steer)),
                Held::Unchanged => {
                    let why = refusal.strip_prefix("not made: ").unwrap_or(&refusal);
                    return Some(
                        Answer::error(format!(
                            "not made again (the same call as the one refused above): {why}"
                        ))
                        .steering(steer),
                    );
                }
            }
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
        if let ToolArgs::EditFile(edit) = args
            && self.turn_work.refuses_quote_swap(edit)
        {
            // Every time: a quote swap never fixes anything (refused once,
            // the model made it again).
            let not_made = if self.turn_work.first_refusal(Refusal::Quotes, path) {
                "not made"
            } else {
                "not made again"
            };
            return Some(Answer::error(format!(
                "{not_made}: this edit only changes quotes (`{}` to `{}`), and in {path} a \
                 string in single quotes is the same as in double quotes: the code would do what \
                 it does now. Find what is wrong (the task and the output above say what fails) \
                 and change that.",
                edit.old_string.trim(),
                edit.new_string.trim()
            )));
        }
        if let ToolArgs::EditFile(edit) = args
            && let Some((line, number)) = import_again(&old, edit)
            && self.turn_work.first_refusal(Refusal::Again, path)
        {
            return Some(Answer::error(format!(
                "not made: {path} has `{line}` already (line {number}), and this edit would \
                 add it again. {path} now:\n{shown}"
            )));
        }
        if let ToolArgs::EditFile(edit) = args
            && let Some((changed, named)) =
                unnamed_definition(self.turn_work.prompt(), path, &old, edit)
            && self.turn_work.first_refusal(Refusal::Unnamed, path)
        {
            return Some(Answer::error(format!(
                "not made: this edit changes {changed}, and the task names {named}. Make the \
                 change the task asks for in {named} (quote its lines as they are below). \
                 {path} now:\n{shown}"
            )));
        }
        // A JSON, TOML or YAML file that parses now and would not
        // (`package.json` overwritten with a fragment).
        if let Some((kind, problem)) = cortex_tools::data_problem(path, &new)
            && cortex_tools::data_problem(path, &old).is_none()
            && self.turn_work.first_refusal(Refusal::Break, path)
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
    /// addition (the new JSON key alone, written again at every reminder;
    /// the new README section alone, then the whole file in the wrong
    /// order), how to add it with `edit_file` (with a space before it);
    /// empty otherwise, or when the format has no `edit_file`.
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

/// An insertion whose lines the file has already, an import among them
/// (`import os` inserted three times): the first such import and its line
/// number.
fn import_again(old: &str, edit: &cortex_protocol::EditFileArgs) -> Option<(String, usize)> {
    if edit.old_string.trim().is_empty() {
        return None;
    }
    let (before, after) = edit.new_string.split_once(&edit.old_string)?;
    let has = |line: &str| old.lines().position(|l| l.trim() == line).map(|i| i + 1);
    let inserted: Vec<&str> = before
        .lines()
        .chain(after.lines())
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if inserted.is_empty() || inserted.iter().any(|l| has(l).is_none()) {
        return None;
    }
    inserted.iter().find_map(|line| {
        let import =
            line.starts_with("import ") || (line.starts_with("from ") && line.contains(" import "));
        import
            .then(|| has(line).map(|n| ((*line).to_owned(), n)))
            .flatten()
    })
}

/// Why `edit` inserts on the wrong side of the text the task places its
/// addition by ("Add a section '## Usage' to README.md, after Install":
/// `new_string` the new section followed by the quoted `## Install` lines,
/// a small model's edit), or `None`: the edit is a pure insertion before
/// (or after) its `old_string`, and the task says "after" (or "before") a
/// word the quote holds.
fn misplaced_insertion(prompt: &str, edit: &cortex_protocol::EditFileArgs) -> Option<Refused> {
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
    // The same edit with the new text on the side the task asks for, as
    // the call to make (told how in words, the 1.5B made the same edit
    // again).
    let added = if put == "before" {
        &new[..new.len() - old.len()]
    } else {
        &new[old.len()..]
    };
    let added = added.trim_matches('\n');
    let quote = old.trim_end_matches('\n');
    let gap = if old.contains("\n\n") || added.contains("\n\n") {
        "\n\n"
    } else {
        "\n"
    };
    let tail = &old[quote.len()..];
    let fixed = if asked == "after" {
        format!("{quote}{gap}{added}{tail}")
    } else {
        format!("{added}{gap}{quote}{tail}")
    };
    let call = serde_json::json!({
        "path": edit.path,
        "old_string": old,
        "new_string": fixed,
    });
    Some(Refused {
        words: format!(
            "not made: this edit puts its new text {put} `{first}`, and the task says {asked} \
             {anchor}. To put it {asked}, {}",
            handed_call(ToolName::EditFile, &call)
        ),
        handed: Some((ToolName::EditFile, call)),
    })
}

/// The file the task says writes `path` ("build.sh should write the word
/// ok into out/stamp": build.sh), or `None`. Told that, the 1.5B wrote
/// out/stamp itself, then ran build.sh, which wrote "done" over it. Read
/// per sentence: a file, a verb of writing, then `path`.
fn producer_of(prompt: &str, path: &str) -> Option<String> {
    const WRITES: &[&str] = &[
        "write",
        "writes",
        "create",
        "creates",
        "produce",
        "produces",
        "generate",
        "generates",
    ];
    let path = crate::coach::normalise_path(path);
    let file = |word: &str| {
        let word = prompt_word(word);
        let named = !crate::coach::named_files(word).is_empty() || word.contains('/');
        (named && !word.contains("://")).then(|| crate::coach::normalise_path(word))
    };
    // Between the file and its verb only these: "build.sh should write", not
    // "Fix calc.py and write test_calc.py".
    const BETWEEN: &[&str] = &[
        "should", "must", "will", "would", "can", "is", "supposed", "to", "needs", "always", "only",
    ];
    let (mut producer, mut writes) = (None::<String>, false);
    for word in prompt.split_whitespace() {
        let lower = word.to_lowercase();
        match file(word) {
            Some(named) if writes && named == path => return producer,
            Some(named) if !writes => producer = Some(named),
            _ if producer.is_some() && !writes && WRITES.contains(&lower.as_str()) => writes = true,
            _ if !writes && !BETWEEN.contains(&lower.as_str()) => producer = None,
            _ => {}
        }
        if word.ends_with(['.', '!', '?']) {
            (producer, writes) = (None, false);
        }
    }
    None
}

/// Why the new file `args` writes is meant to be a file the task names:
/// same name, another folder ("Add test_divide.py": the 1.5B created
/// `tests/test_divide.py`, and running it from there could not import the
/// module under test); with the call that writes the named one, for a
/// `write_file`.
fn elsewhere_named(prompt: &str, args: &ToolArgs) -> Option<Refused> {
    let path = crate::coach::normalise_path(args.written_path()?);
    let named = crate::coach::named_elsewhere(prompt, &path)?;
    Some(elsewhere_refusal(&named, &path, args, ""))
}

/// The refusal of `args`, which would create `path` where the task names
/// `named`; `there` says more of `named` (empty, or ", which is there
/// already").
fn elsewhere_refusal(named: &str, path: &str, args: &ToolArgs, there: &str) -> Refused {
    let (instead, handed) = match args {
        ToolArgs::WriteFile(write) => {
            let call = serde_json::json!({"path": named, "content": write.content});
            let words = format!(
                "To write it there, {}",
                handed_call(ToolName::WriteFile, &call)
            );
            (words, Some((ToolName::WriteFile, call)))
        }
        _ => (format!("Give the path as the task has it: {named}."), None),
    };
    Refused {
        words: format!(
            "not made: the task names {named}{there}, and this call would create {path}. \
             {instead}"
        ),
        handed,
    }
}

/// Why `edit` loses text besides the replacement the task states ("--verbse
/// should be --verbose": `[--verbse]` became `--verbose`, its brackets
/// dropped), with the edit that makes the
/// replacement alone; `None` when it makes no stated replacement, or makes
/// it and loses nothing else (it may add: a comment beside a new value).
fn replacement_and_more(prompt: &str, edit: &cortex_protocol::EditFileArgs) -> Option<Refused> {
    let (old, new) = (edit.old_string.as_str(), edit.new_string.as_str());
    let (from, to, alone) = replacements(prompt).into_iter().find_map(|(from, to)| {
        let alone = old.replace(&from, &to);
        (old.contains(&from) && new.contains(&to) && new != alone && new.len() < alone.len())
            .then_some((from, to, alone))
    })?;
    let call = serde_json::json!({
        "path": edit.path,
        "old_string": old,
        "new_string": alone,
    });
    Some(Refused {
        words: format!(
            "not made: the task changes `{from}` to `{to}`, and this edit also removes other \
             text of old_string. To change only that, {}",
            handed_call(ToolName::EditFile, &call)
        ),
        handed: Some((ToolName::EditFile, call)),
    })
}

/// A word of the prompt without the punctuation of the sentence around it
/// and the quotes or backticks around it: "`--verbose`." is `--verbose`.
fn prompt_word(word: &str) -> &str {
    word.trim_end_matches(['.', ',', ';', ':', '!', '?', ')'])
        .trim_matches(|c| matches!(c, '`' | '\'' | '"' | '('))
}

/// The replacements a prompt states, as (from, to): "X should be Y",
/// "replace X with Y", "Y (not X)", and "from X to Y" where X and Y are
/// written as code or values (quoted, or with a character other than a
/// letter: `--verbose`, `45`), as plain words mostly are not.
fn replacements(prompt: &str) -> Vec<(String, String)> {
    let words: Vec<&str> = prompt.split_whitespace().collect();
    let clean = |w: &str| prompt_word(w).to_owned();
    let literal =
        |w: &str| w.starts_with(['`', '\'', '"']) || clean(w).chars().any(|c| !c.is_alphabetic());
    let mut pairs: Vec<(String, String)> = words
        .windows(3)
        .filter(|w| w[1].eq_ignore_ascii_case("(not"))
        .map(|w| (clean(w[2]), clean(w[0])))
        .collect();
    for pair in words.windows(4) {
        let lower: Vec<String> = pair.iter().map(|w| w.to_lowercase()).collect();
        let found = match lower.iter().map(String::as_str).collect::<Vec<_>>()[..] {
            [_, "should", "be", _] if literal(pair[0]) && literal(pair[3]) => {
                Some((pair[0], pair[3]))
            }
            ["replace", _, "with", _] => Some((pair[1], pair[3])),
            ["from", _, "to", _] if literal(pair[1]) && literal(pair[3]) => {
                Some((pair[1], pair[3]))
            }
            _ => None,
        };
        pairs.extend(found.map(|(a, b)| (clean(a), clean(b))));
    }
    pairs.retain(|(a, b)| !a.is_empty() && !b.is_empty() && a != b);
    pairs
}

/// What an edit of `old` (the file `path` as it is) changes instead of
/// what the task names, and what the task names (as "`mul`", "`add`"), or
/// `None` unless the task names a definition of the file, and the edit
/// lies in none of them and quotes none of their names (scripts/setup's turn: told to fix
/// the add function, the 1.5B rewrote `mul` to `math.sqrt(a * b)`). A
/// name counts as named when the prompt has it as a word, case and all.
fn unnamed_definition(
    prompt: &str,
    path: &str,
    old: &str,
    edit: &cortex_protocol::EditFileArgs,
) -> Option<(String, String)> {
    let words: std::collections::BTreeSet<&str> = prompt
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .collect();
    let named: Vec<String> = cortex_tools::defs::defined(path, old)
        .into_iter()
        .filter(|name| words.contains(name.as_str()))
        .collect();
    let start = old
        .find(&edit.old_string)
        .filter(|_| !edit.old_string.is_empty())?;
    let within = cortex_tools::defs::enclosing(path, old, start, start + edit.old_string.len());
    let quotes = |text: &str| {
        text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|w| named.iter().any(|n| n == w))
    };
    if named.is_empty()
        || within.is_empty()
        || within.iter().any(|w| named.contains(w))
        || quotes(&edit.old_string)
        || quotes(&edit.new_string)
    {
        return None;
    }
    let list = |names: &[String]| {
        let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
        quoted.join(", ")
    };
    Some((list(&within), list(&named)))
}

impl Answer {
    /// This result as the turn so far reads it: without the tool's note
    /// that the change removed definitions (`cortex_tools::defs::REMOVED_NOTE`)
    /// when the task asks to remove or rename each of them (the note says
    /// "put it back", and the 1.5B undid the rename it was asked for); and
    /// a file that "did not parse before this change either" said to have
    /// been broken by the turn, when it was (the 0.5B broke calc.py, then
    /// was told each later edit found it so).
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
mod tests;
