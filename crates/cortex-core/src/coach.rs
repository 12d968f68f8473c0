//! Checks on an answer that ends a turn, for models that need them: advice
//! instead of action, a question left unanswered, a definition removed by
//! mistake, a named file left untouched, a rename left half done, a change
//! never tested.
//!
//! Small local models stop too early in recognisable ways
//! (docs/BENCHMARKS.md, the task set): they tell the user what to run or
//! change instead of doing it; they say they found the file without naming
//! it; they replace the function they were asked to add a sibling to; they
//! change one of the two files a task names and answer; they rename one of
//! two occurrences; they claim a fix works without running the test the
//! task named. Each answer is checked for these in that order; the first
//! that applies goes back to the model once per turn as a `turn.reminder`
//! (advice and untested changes with a reply that must call a tool), and
//! the turn ends normally when the model answers again. Only for models
//! whose info has `verify_answers` (the embedded model by default): a strong
//! model's "you can run `make`" after its own work is not worth a round.
//!
//! What the turn did is read from its calls as they are answered
//! ([`TurnWork::record`]), so a resumed session, which starts a new turn,
//! starts from nothing as the live one does.

use crate::Session;
use cortex_protocol::{
    EditFormat, GrepArgs, GrepMode, Mode, ToolArgs, ToolCallRequest, ToolName, ToolStatus,
};
use std::collections::{BTreeMap, BTreeSet};

/// Lines of remaining occurrences a rename reminder quotes.
const MAX_LEFT_LINES: usize = 8;

/// The start of every coach reminder that requires the next reply to call
/// a tool (see [`crate::verify::tool_choice`]).
pub(crate) const DO_IT_PREFIX: &str = "Do it with the tools:";

/// What the running turn did so far, for the answer checks.
#[derive(Debug, Default, Clone)]
pub(crate) struct TurnWork {
    /// The turn's message.
    prompt: String,
    /// The workspace's files as the turn's context listed them.
    files: Vec<String>,
    /// Paths written or edited successfully, in order, without repeats.
    changed: Vec<String>,
    /// Every `bash` command that ran after the last change.
    commands_since_change: Vec<String>,
    /// The last `bash` command, when it failed (an exit code other than 0).
    last_failed: Option<String>,
    /// Definitions the turn's changes removed and did not put back, with
    /// the file they were in (read from the changes' diffs).
    removed: BTreeMap<String, String>,
    /// Checks already sent this turn.
    sent: Vec<Check>,
    /// (file, name) of the writes refused for dropping a definition.
    drops_refused: BTreeSet<(String, String)>,
    /// A write was refused because the task asks for none.
    unasked_refused: bool,
    /// Files the task says to run whose write was refused.
    run_writes_refused: BTreeSet<String>,
}

/// The checks, in the order they are tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    Advice,
    Unanswered,
    Removed,
    NamedFiles,
    RenameLeft,
    Untested,
    TestFails,
}

impl TurnWork {
    /// A turn that starts with `prompt`.
    pub(crate) fn new(prompt: &str) -> Self {
        TurnWork {
            prompt: prompt.to_owned(),
            ..TurnWork::default()
        }
    }

    /// The turn's message.
    pub(crate) fn prompt(&self) -> &str {
        &self.prompt
    }

    /// Whether the task names `word` (a removal or a rename of it).
    pub(crate) fn names(&self, word: &str) -> bool {
        mentions_word(&self.prompt, word)
    }

    /// Whether a write that drops `name` from `path` is refused: only the
    /// first time in the turn (see `unwanted_write.rs`).
    pub(crate) fn first_drop(&mut self, path: &str, name: &str) -> bool {
        self.drops_refused
            .insert((normalise(path), name.to_owned()))
    }

    /// Whether a write is refused because the task asks a question and no
    /// change: only the first time in the turn (see `unwanted_write.rs`).
    pub(crate) fn first_unasked_write(&mut self) -> bool {
        if asks_for_work(&self.prompt) || self.unasked_refused {
            return false;
        }
        self.unasked_refused = true;
        true
    }

    /// Whether a write to `path` is refused because the task says to run
    /// it: only the first time in the turn.
    pub(crate) fn first_write_to_run(&mut self, path: &str) -> bool {
        let path = normalise(path);
        files_to_run(&self.prompt)
            .iter()
            .any(|f| same_file(&path, f))
            && self.run_writes_refused.insert(path)
    }

    /// The turn's context listed these files.
    pub(crate) fn set_files(&mut self, listing: &str) {
        self.files = listing.lines().map(str::to_owned).collect();
    }

    /// A call of the turn was answered with `status` (and, for a change,
    /// its `diff`).
    pub(crate) fn record(
        &mut self,
        call: &ToolCallRequest,
        status: ToolStatus,
        diff: Option<&str>,
    ) {
        let Ok(tool) = call.name.parse::<ToolName>() else {
            return;
        };
        let args: serde_json::Value = serde_json::from_str(&call.arguments).unwrap_or_default();
        let text = |key: &str| args.get(key).and_then(|v| v.as_str()).map(str::to_owned);
        match tool {
            ToolName::WriteFile | ToolName::EditFile if status == ToolStatus::Ok => {
                if let Some(path) = text("path").map(|p| normalise(&p)) {
                    let (gone, added) =
                        cortex_tools::defs::changed_by_diff(&path, diff.unwrap_or_default());
                    for name in added {
                        self.removed.remove(&name);
                    }
                    for name in gone {
                        self.removed.insert(name, path.clone());
                    }
                    if !self.changed.contains(&path) {
                        self.changed.push(path);
                    }
                    self.commands_since_change.clear();
                }
            }
            ToolName::Bash if status != ToolStatus::Refused => {
                self.commands_since_change.extend(text("command"));
                self.last_failed = text("command").filter(|_| status == ToolStatus::Error);
            }
            _ => {}
        }
    }

    /// The first check that applies to `answer` and was not sent yet, as
    /// the reminder to send; marks it sent. `left` is what a rename the
    /// task asked for left behind ([`TurnWork::rename_to_check`]), looked
    /// up by the caller in the workspace.
    fn next_reminder(&mut self, answer: &str, left: Option<String>) -> Option<String> {
        let checks = [
            (Check::Advice, self.advice(answer)),
            (Check::Unanswered, self.unanswered(answer)),
            (Check::Removed, self.removed_by_mistake()),
            (Check::TestFails, self.test_fails()),
            (Check::NamedFiles, self.untouched_files()),
            (Check::RenameLeft, left),
            (Check::Untested, self.untested()),
        ];
        let (check, text) = checks.into_iter().find_map(|(check, text)| {
            text.filter(|_| !self.sent.contains(&check))
                .map(|t| (check, t))
        })?;
        self.sent.push(check);
        Some(text)
    }

    /// Advice instead of action: nothing changed, and the answer hands the
    /// user a command to run or a change to make.
    fn advice(&self, answer: &str) -> Option<String> {
        if !asks_for_work(&self.prompt) {
            return None;
        }
        let lower = answer.to_lowercase();
        // Describing a call to one of its own tools instead of making it is
        // advice even after a change ("you can use the `write_file`
        // function. Here's the updated code: …").
        if let Some(tool) = [ToolName::WriteFile, ToolName::EditFile]
            .into_iter()
            .find(|t| lower.contains("you can use") && lower.contains(t.as_str()))
        {
            return Some(format!(
                "{DO_IT_PREFIX} your answer describes a {tool} call instead of making it. {} \
                 with the change, then answer with what you did.",
                call_now(tool)
            ));
        }
        // Steps for the user to follow are advice even after a change
        // ("1. Open the `stack.py` file in a text editor.", run H).
        if ["in a text editor", "follow these steps"]
            .iter()
            .any(|p| lower.contains(p))
        {
            return Some(format!(
                "{DO_IT_PREFIX} your answer gives the user steps to follow instead of doing \
                 them. {} to make the change, then answer with what you did.",
                call_now(ToolName::EditFile)
            ));
        }
        if !self.changed.is_empty() {
            return None;
        }
        let command = has_fence(&lower, &["sh", "bash", "shell", "console", "zsh"])
            || [
                "you can run",
                "run the following",
                "you should run",
                "try running",
                "execute the following",
            ]
            .iter()
            .any(|p| lower.contains(p));
        let change = [
            "replace ",
            "change the ",
            "you can use write_file",
            "you can use edit_file",
            "update the file",
            "modify the",
            "add the following",
            "you should change",
            "you need to change",
        ]
        .iter()
        .any(|p| lower.contains(p))
            || has_fence(
                &lower,
                &["python", "py", "json", "toml", "yaml", "js", "rust", "diff"],
            );
        let (tool, or) = match (change, command) {
            (true, _) => (ToolName::EditFile, " (write_file for a new file)"),
            (false, true) => (ToolName::Bash, ""),
            (false, false) => return None,
        };
        Some(format!(
            "{DO_IT_PREFIX} your answer tells the user to do work in the repository, but you \
             have the tools to do it yourself and nothing has been changed yet. {}{or} to do \
             it, then answer with what you did.",
            call_now(tool)
        ))
    }

    /// A question asking for a file or a count, answered without one:
    /// "I found the file that defines it."
    fn unanswered(&self, answer: &str) -> Option<String> {
        let prompt = self.prompt.to_lowercase();
        let wants_file = [
            "which file",
            "what file",
            "which files",
            "where is",
            "where are",
        ]
        .iter()
        .any(|p| prompt.contains(p))
            || prompt.contains("answer with its path")
            || prompt.contains("answer with the path");
        let wants_count = prompt.contains("how many");
        let names_file =
            !named_files(answer).is_empty() || answer.split_whitespace().any(|w| w.contains('/'));
        let has_number = answer.chars().any(|c| c.is_ascii_digit())
            || NUMBER_WORDS.iter().any(|w| {
                answer
                    .to_lowercase()
                    .split(|c: char| !c.is_alphabetic())
                    .any(|x| x == *w)
            });
        let missing = if wants_file && !names_file {
            "the file's path"
        } else if wants_count && !has_number {
            "the number"
        } else {
            return None;
        };
        Some(format!(
            "Your answer does not give {missing} the question asks for. Answer again with it, \
             stated plainly (take it from what the tools showed you)."
        ))
    }

    /// A definition the turn's changes removed, which the task does not
    /// name (a removal or rename names it).
    fn removed_by_mistake(&self) -> Option<String> {
        let (name, path) = self
            .removed
            .iter()
            .find(|(name, _)| !mentions_word(&self.prompt, name))?;
        Some(format!(
            "{DO_IT_PREFIX} your change to {path} removed the definition of `{name}`, which the \
             task does not ask to remove. {} to put `{name}` back in {path}, beside what you \
             added. Then answer.",
            call_now(ToolName::EditFile)
        ))
    }

    /// The old name of a rename the task asks for, when files changed and
    /// the check was not sent yet: the caller looks it up in the workspace.
    pub(crate) fn rename_to_check(&self) -> Option<(String, String)> {
        if self.changed.is_empty() || self.sent.contains(&Check::RenameLeft) {
            return None;
        }
        rename_pair(&self.prompt)
    }

    /// A task that names several files, some changed and some not.
    fn untouched_files(&self) -> Option<String> {
        if self.changed.is_empty() {
            return None;
        }
        // A test the prompt says to run is named, but not to be changed.
        let to_run = files_to_run(&self.prompt);
        let named: Vec<String> = named_files(&self.prompt)
            .into_iter()
            .filter(|n| !to_run.iter().any(|r| same_file(r, n)))
            .collect();
        if named.len() < 2 {
            return None;
        }
        let untouched: Vec<&String> = named
            .iter()
            .filter(|n| !self.changed.iter().any(|c| same_file(c, n)))
            .filter(|n| {
                !self
                    .commands_since_change
                    .iter()
                    .any(|c| c.contains(n.as_str()))
            })
            .collect();
        if untouched.is_empty() {
            return None;
        }
        let list: Vec<&str> = untouched.iter().map(|s| s.as_str()).collect();
        Some(format!(
            "The task names {} and you have changed {} only. If {} need{} a change too, make it \
             now (read it first); otherwise answer again.",
            named.join(", "),
            self.changed.join(", "),
            list.join(" and "),
            if list.len() == 1 { "s" } else { "" },
        ))
    }

    /// Files changed, and the test the task or the workspace names failed
    /// the last time it ran: an answer now gives up on it ("you need to
    /// ensure that…") or claims what it did not see.
    fn test_fails(&self) -> Option<String> {
        let failed = self.last_failed.as_deref()?;
        if self.changed.is_empty() {
            return None;
        }
        let known = test_command(&self.prompt, &self.files)?;
        let key = known.rsplit(' ').next().unwrap_or(&known);
        if !failed.contains(key) {
            return None;
        }
        Some(format!(
            "{DO_IT_PREFIX} `{failed}` failed the last time you ran it, so the task is not done. \
             Its output above says why. {} to fix the code so that it passes (not the test, \
             unless the task asks for that), then run it again.",
            call_now(ToolName::EditFile)
        ))
    }

    /// Files changed, a test command known, and no command run since.
    fn untested(&self) -> Option<String> {
        if self.changed.is_empty() || !self.commands_since_change.is_empty() {
            return None;
        }
        let command = test_command(&self.prompt, &self.files)?;
        Some(format!(
            "{DO_IT_PREFIX} you changed {} but have not run the tests since. {} to run \
             `{command}` and check that it passes before you answer.",
            self.changed.join(", "),
            call_now(ToolName::Bash)
        ))
    }
}

impl Session {
    /// The reminder for an answer that ends the turn too early, if any (see
    /// the module docs); `None` also for models without `verify_answers`
    /// and outside Agent mode.
    pub(crate) async fn coach(&mut self, answer: &str) -> Option<String> {
        if self.mode() != Mode::Agent || !self.model.info().is_some_and(|i| i.verify_answers) {
            return None;
        }
        let left = match self.turn_work.rename_to_check() {
            Some((old, new)) => self.rename_left(&old, &new).await,
            None => None,
        };
        self.turn_work.next_reminder(answer, left)
    }

    /// Where `old` still occurs as a word after a rename to `new` (the
    /// files the task names, else the whole workspace), as the reminder.
    async fn rename_left(&self, old: &str, new: &str) -> Option<String> {
        let named = named_files(&self.turn_work.prompt);
        let places: Vec<Option<String>> = if named.is_empty() {
            vec![None]
        } else {
            named.into_iter().map(Some).collect()
        };
        let mut lines = Vec::new();
        for path in places {
            let found = self
                .harness_call(ToolArgs::Grep(GrepArgs {
                    // `old` is an identifier (see `rename_pair`): no regex syntax.
                    pattern: format!(r"\b{old}\b"),
                    path,
                    glob: None,
                    mode: Some(GrepMode::Content),
                    context: None,
                    ignore_case: None,
                }))
                .await
                .unwrap_or_default();
            lines.extend(found.lines().filter(|l| l.contains(old)).map(str::to_owned));
        }
        if lines.is_empty() {
            return None;
        }
        let total = lines.len();
        lines.truncate(MAX_LEFT_LINES);
        let how = match self.edit_format() {
            EditFormat::String => "edit_file with replace_all: true changes all in a file",
            EditFormat::Lines => "path:line:text above; edit_file each line",
        };
        Some(format!(
            "{DO_IT_PREFIX} the task renames `{old}` to `{new}`, but `{old}` still occurs \
             ({total} line{}):\n{}\n{} to change every one of them to `{new}` ({how}), then \
             answer.",
            if total == 1 { "" } else { "s" },
            lines.join("\n"),
            call_now(ToolName::EditFile)
        ))
    }
}

/// Files the task says to run, not to change: `run test_x.py`, `python3
/// x.py`, `test_x.py fails`.
pub(crate) fn files_to_run(prompt: &str) -> Vec<String> {
    let words: Vec<&str> = prompt.split_whitespace().collect();
    let bare = |w: &str| {
        w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'))
            .to_lowercase()
    };
    let mut out = Vec::new();
    for (i, word) in words.iter().enumerate() {
        let verb = bare(word);
        let target = match verb.as_str() {
            "run" | "execute" => {
                let next = words.get(i + 1).map(|w| bare(w)).unwrap_or_default();
                let skip = matches!(next.as_str(), "python3" | "python" | "bash" | "sh");
                words.get(i + 1 + usize::from(skip))
            }
            "python3" | "python" | "bash" | "sh" => words.get(i + 1),
            "fails" | "failed" | "failing" if i > 0 => words.get(i - 1),
            _ => None,
        };
        out.extend(target.map(|w| named_files(w)).unwrap_or_default());
    }
    out.dedup();
    out
}

/// How a reminder names the one tool the next reply must call: the words
/// [`chosen_tool`] reads back from the history.
fn call_now(tool: ToolName) -> String {
    format!("Call {tool} now")
}

/// The tool a reminder of [`call_now`] names; `None` for any other text.
pub(crate) fn chosen_tool(reminder: &str) -> Option<ToolName> {
    let (_, rest) = reminder.split_once("Call ")?;
    let (name, tail) = rest.split_once(' ')?;
    if !tail.starts_with("now") {
        return None;
    }
    name.parse().ok()
}

/// Number words a count may be given in.
const NUMBER_WORDS: &[&str] = &[
    "zero", "no", "none", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
    "ten", "eleven", "twelve",
];

/// Whether `word` occurs in `text` as a whole word.
fn mentions_word(text: &str, word: &str) -> bool {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|w| w == word)
}

/// `rename X to Y` in the prompt (backticks, quotes, `()` and a kind word
/// such as "function" allowed), as (X, Y).
fn rename_pair(prompt: &str) -> Option<(String, String)> {
    const KINDS: &[&str] = &[
        "the", "function", "method", "variable", "class", "constant", "field", "type",
    ];
    let clean = |w: &str| -> String {
        w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'))
            .trim_end_matches("()")
            .trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'))
            .to_owned()
    };
    let words: Vec<&str> = prompt.split_whitespace().collect();
    let start = words
        .iter()
        .position(|w| w.to_lowercase().trim_matches(|c: char| !c.is_alphabetic()) == "rename")?;
    let mut rest = words[start + 1..]
        .iter()
        .skip_while(|w| KINDS.contains(&w.to_lowercase().as_str()));
    let old = clean(rest.next()?);
    if rest.next().map(|w| w.to_lowercase()) != Some("to".to_owned()) {
        return None;
    }
    let new = clean(rest.next()?);
    let identifier = |s: &str| {
        !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_') && !s.contains('.')
    };
    (identifier(&old) && identifier(&new) && old != new).then_some((old, new))
}

/// Whether the prompt asks for a change rather than an answer: one of the
/// usual verbs of a coding task appears as a word.
fn asks_for_work(prompt: &str) -> bool {
    const VERBS: &[&str] = &[
        "fix",
        "add",
        "change",
        "rename",
        "create",
        "write",
        "remove",
        "delete",
        "update",
        "make",
        "implement",
        "bump",
        "turn",
        "replace",
        "move",
        "refactor",
        "set",
    ];
    // A word written as code (`add()`, `make.py`) names something; it asks
    // for nothing.
    prompt
        .split_whitespace()
        .filter(|w| {
            !w.contains(['(', '`', '_'])
                && !w
                    .trim_end_matches(['.', ',', '?', '!', ':', ';'])
                    .contains('.')
        })
        .flat_map(|w| w.split(|c: char| !c.is_ascii_alphabetic()))
        .any(|w| VERBS.contains(&w.to_lowercase().as_str()))
}

/// A fenced block in one of `langs` (the text is lower-cased).
fn has_fence(lower: &str, langs: &[&str]) -> bool {
    lower.split("```").skip(1).step_by(2).any(|block| {
        let lang = block.lines().next().unwrap_or("").trim();
        langs.contains(&lang)
    })
}

/// `./a.py` and `a.py` are one file.
fn normalise(path: &str) -> String {
    path.trim().trim_start_matches("./").to_owned()
}

pub(crate) fn same_file(changed: &str, named: &str) -> bool {
    changed == named || changed.ends_with(&format!("/{named}"))
}

/// Words of the prompt that look like file names (`name.ext`), in order,
/// without repeats; trailing punctuation dropped.
pub(crate) fn named_files(prompt: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in
        prompt.split(|c: char| c.is_whitespace() || matches!(c, ',' | '`' | '\'' | '"' | '(' | ')'))
    {
        let word = normalise(word.trim_end_matches(['.', ':', ';', '?', '!']));
        let Some((stem, ext)) = word.rsplit_once('.') else {
            continue;
        };
        // `e.g` and `i.e` are not files; `main.c` is; `1..n` is a range.
        let plausible = !stem.is_empty()
            && !stem.ends_with('.')
            && (ext.len() >= 2 || stem.len() >= 2)
            && (1..=5).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
            && ext.chars().any(|c| c.is_ascii_alphabetic())
            && !word.contains("://");
        if plausible && !out.contains(&word) {
            out.push(word);
        }
    }
    out
}

/// The test command the prompt names, else one the workspace implies.
fn test_command(prompt: &str, files: &[String]) -> Option<String> {
    let words: Vec<&str> = prompt.split_whitespace().collect();
    for (i, word) in words.iter().enumerate() {
        let word = word.trim_matches(|c: char| matches!(c, '`' | '\'' | '"'));
        let next = words
            .get(i + 1)
            .map(|w| w.trim_matches(|c: char| matches!(c, '`' | '\'' | '"' | '.' | ',')));
        match (word, next) {
            ("python3" | "python", Some(script)) if script.ends_with(".py") => {
                return Some(format!("python3 {script}"));
            }
            ("cargo" | "npm" | "go" | "make", Some("test")) => return Some(format!("{word} test")),
            ("pytest", _) => return Some("pytest".to_owned()),
            _ => {}
        }
    }
    let name = |f: &String| f.rsplit('/').next().unwrap_or(f).to_owned();
    if let Some(test) = files.iter().find(|f| {
        let n = name(f);
        n.ends_with(".py") && (n.starts_with("test_") || n.ends_with("_test.py"))
    }) {
        return Some(format!("python3 {test}"));
    }
    let has = |n: &str| files.iter().any(|f| f == n);
    if has("Cargo.toml") {
        Some("cargo test".to_owned())
    } else if has("go.mod") {
        Some("go test ./...".to_owned())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cortex_protocol::CallId;

    fn call(name: &str, args: serde_json::Value) -> ToolCallRequest {
        ToolCallRequest {
            id: CallId("c".into()),
            name: name.into(),
            arguments: args.to_string(),
        }
    }

    #[test]
    fn work_is_asked_for_in_words_not_in_names() {
        for prompt in [
            "Fix the bug in calc.py.",
            "Turn debug off in config.json.",
            "python3 test_calc.py fails. Fix it.",
            "Add a function sub(a, b) to calc.py.",
        ] {
            assert!(asks_for_work(prompt), "{prompt}");
        }
        for prompt in [
            "What does add() in calc.py return for 2 and 3?",
            "Which function calls vat()?",
            "What does `make_user` return?",
            "Run check.py and tell me what it prints.",
        ] {
            assert!(!asks_for_work(prompt), "{prompt}");
        }
    }

    #[test]
    fn files_to_run_are_those_after_run_or_before_fails() {
        assert_eq!(
            files_to_run("Fix ages.py and run test_ages.py."),
            ["test_ages.py"]
        );
        assert_eq!(
            files_to_run("python3 test_calc.py fails. Fix the bug in calc.py."),
            ["test_calc.py"]
        );
        assert_eq!(
            files_to_run("test_loop.py fails. Fix first_n in loop.py, then run the test."),
            ["test_loop.py"]
        );
        assert!(files_to_run("Rename old_name to double in util.py and main.py.").is_empty());
    }

    #[test]
    fn a_test_that_failed_last_is_met_until_it_passes() {
        let prompt = "Fix ages.py and run test_ages.py.";
        let mut work = TurnWork::new(prompt);
        work.set_files("ages.py\ntest_ages.py");
        work.record(
            &call("edit_file", serde_json::json!({"path": "ages.py"})),
            ToolStatus::Ok,
            None,
        );
        let run = call(
            "bash",
            serde_json::json!({"command": "python3 test_ages.py"}),
        );
        work.record(&run, ToolStatus::Error, None);
        let text = work
            .next_reminder("You need to ensure that is_adult returns True.", None)
            .expect("the test failed");
        assert!(text.contains("`python3 test_ages.py` failed"), "{text}");
        assert_eq!(chosen_tool(&text), Some(ToolName::EditFile));
        // Once it passes, nothing is said; another command's failure is not the test's.
        let mut passed = TurnWork::new(prompt);
        passed.set_files("ages.py\ntest_ages.py");
        passed.record(
            &call("edit_file", serde_json::json!({"path": "ages.py"})),
            ToolStatus::Ok,
            None,
        );
        passed.record(&run, ToolStatus::Error, None);
        passed.record(&run, ToolStatus::Ok, None);
        assert_eq!(passed.test_fails(), None);
        passed.record(
            &call("bash", serde_json::json!({"command": "cargo test"})),
            ToolStatus::Error,
            None,
        );
        assert_eq!(passed.test_fails(), None);
    }

    #[test]
    fn only_a_reminder_naming_a_tool_chooses_it() {
        for tool in ToolName::ALL {
            assert_eq!(chosen_tool(&call_now(tool)), Some(tool));
        }
        for text in [
            "Call it now.",
            "Call edit_file (or write_file) now.",
            "Call nothing_known now.",
            crate::verify::VERIFY_ANSWER,
        ] {
            assert_eq!(chosen_tool(text), None, "{text}");
        }
    }

    #[test]
    fn advice_is_met_once_and_only_before_any_change() {
        let mut work = TurnWork::new("python3 test_calc.py fails. Fix calc.py.");
        let advice = "Change the minus to a plus:\n```python\nreturn a + b\n```";
        let text = work.next_reminder(advice, None).expect("advice");
        assert!(text.starts_with(DO_IT_PREFIX), "{text}");
        assert_eq!(chosen_tool(&text), Some(ToolName::EditFile), "{text}");
        assert_eq!(work.next_reminder(advice, None), None);
        let mut work = TurnWork::new("Make the tests pass.");
        let text = work
            .next_reminder("You can run `pytest` to see them fail.", None)
            .expect("command advice");
        assert_eq!(chosen_tool(&text), Some(ToolName::Bash), "{text}");
        // Steps for the user are advice even after a change.
        let mut work = TurnWork::new("Add an is_empty() method to Stack in stack.py.");
        work.record(
            &call("edit_file", serde_json::json!({"path": "stack.py"})),
            ToolStatus::Ok,
            None,
        );
        let steps = "You can follow these steps:\n1. Open the `stack.py` file in a text editor.";
        let text = work.next_reminder(steps, None).expect("steps");
        assert_eq!(chosen_tool(&text), Some(ToolName::EditFile), "{text}");
        // A question is answered, even with code in the answer.
        let mut work = TurnWork::new("How do I run the app?");
        assert_eq!(work.next_reminder("```sh\npython3 app.py\n```", None), None);
        // A described call is advice even after a change.
        let mut work = TurnWork::new("Add a function sub to calc.py.");
        work.record(
            &call("write_file", serde_json::json!({"path": "calc.py"})),
            ToolStatus::Ok,
            None,
        );
        let text = work
            .next_reminder(
                "You can use the `write_file` function. Here's the updated code: ...",
                None,
            )
            .expect("a described call");
        assert!(text.contains("describes a write_file call"), "{text}");
        let mut work = TurnWork::new("What does greet() return?");
        assert_eq!(
            work.next_reminder("It returns 'Hello, Cortex'.", None),
            None
        );
    }

    #[test]
    fn a_named_file_left_untouched_is_listed() {
        let mut work =
            TurnWork::new("Change the timeout from 30 to 45 in both client.py and worker.py.");
        work.record(
            &call("edit_file", serde_json::json!({"path": "client.py"})),
            ToolStatus::Ok,
            None,
        );
        let text = work.next_reminder("Done.", None).expect("untouched");
        assert!(
            text.contains("changed client.py only") && text.contains("worker.py needs"),
            "{text}"
        );
        work.record(
            &call("edit_file", serde_json::json!({"path": "./worker.py"})),
            ToolStatus::Ok,
            None,
        );
        let mut both = work.clone();
        both.sent.clear();
        assert_eq!(both.untouched_files(), None);
    }

    #[test]
    fn a_change_never_tested_is_met_with_the_command_the_task_named() {
        let mut work =
            TurnWork::new("python3 test_calc.py fails. Fix the bug in calc.py and run the test.");
        work.record(
            &call("edit_file", serde_json::json!({"path": "calc.py"})),
            ToolStatus::Ok,
            None,
        );
        // test_calc.py is named, but it is the test to run, not a file to change.
        work.record(
            &call("edit_file", serde_json::json!({"path": "x"})),
            ToolStatus::Error,
            None,
        );
        let text = work.next_reminder("Fixed.", None).expect("a reminder");
        assert!(text.contains("test_calc.py"), "{text}");
        let mut ran = TurnWork::new("python3 test_calc.py fails. Fix calc.py.");
        ran.record(
            &call("edit_file", serde_json::json!({"path": "calc.py"})),
            ToolStatus::Ok,
            None,
        );
        ran.record(
            &call(
                "bash",
                serde_json::json!({"command": "python3 test_calc.py"}),
            ),
            ToolStatus::Ok,
            None,
        );
        assert_eq!(ran.next_reminder("Fixed.", None), None);
    }

    #[test]
    fn test_commands_come_from_the_prompt_or_the_workspace() {
        assert_eq!(
            test_command("Run `cargo test` after.", &[]),
            Some("cargo test".into())
        );
        assert_eq!(test_command("then run pytest", &[]), Some("pytest".into()));
        let files = vec!["src/app.py".to_owned(), "tests/test_app.py".to_owned()];
        assert_eq!(
            test_command("Fix app.py", &files),
            Some("python3 tests/test_app.py".into())
        );
        assert_eq!(test_command("Fix app.py", &["app.py".to_owned()]), None);
    }

    #[test]
    fn a_question_for_a_file_or_a_count_needs_one_in_the_answer() {
        let mut work =
            TurnWork::new("Which file defines the function parse_config? Answer with its path.");
        let text = work
            .next_reminder(
                "I found the file that defines the function `parse_config`.",
                None,
            )
            .expect("unanswered");
        assert!(text.contains("the file's path"), "{text}");
        let mut work = TurnWork::new("Which file defines parse_config?");
        assert_eq!(work.next_reminder("src/config/loader.py", None), None);
        let mut work = TurnWork::new("How many TODO comments are there?");
        assert!(work.next_reminder("I counted them.", None).is_some());
        let mut work = TurnWork::new("How many TODO comments are there?");
        assert_eq!(work.next_reminder("There are three.", None), None);
    }

    #[test]
    fn a_definition_replaced_instead_of_kept_is_met_until_it_is_back() {
        let mut work = TurnWork::new("Add a function sub(a, b) to calc.py.");
        let replaced = "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n-def add(a, b):\n+def sub(a, b):\n     return a + b\n";
        work.record(
            &call("edit_file", serde_json::json!({"path": "calc.py"})),
            ToolStatus::Ok,
            Some(replaced),
        );
        let text = work.next_reminder("Added sub.", None).expect("removed");
        assert!(
            text.starts_with(DO_IT_PREFIX) && text.contains("`add`"),
            "{text}"
        );
        assert_eq!(chosen_tool(&text), Some(ToolName::EditFile), "{text}");
        let restored = "--- a/calc.py\n+++ b/calc.py\n@@ -1,0 +1,3 @@\n+def add(a, b):\n+    return a + b\n+\n";
        let mut back = work.clone();
        back.sent.clear();
        back.record(
            &call("edit_file", serde_json::json!({"path": "calc.py"})),
            ToolStatus::Ok,
            Some(restored),
        );
        assert_eq!(back.removed_by_mistake(), None);
        // A removal the task asks for is not a mistake.
        let mut asked = TurnWork::new("Remove the unused function add from calc.py.");
        asked.record(
            &call("edit_file", serde_json::json!({"path": "calc.py"})),
            ToolStatus::Ok,
            Some(replaced),
        );
        assert_eq!(asked.removed_by_mistake(), None);
    }

    #[test]
    fn renames_are_read_from_the_prompt() {
        let pair = |a: &str, b: &str| Some((a.to_owned(), b.to_owned()));
        assert_eq!(
            rename_pair("Rename old_name to double in util.py and main.py."),
            pair("old_name", "double")
        );
        assert_eq!(
            rename_pair("Please rename the function `fetch()` to `load` everywhere"),
            pair("fetch", "load")
        );
        assert_eq!(rename_pair("Rename a.py to b.py"), None);
        assert_eq!(rename_pair("Fix the rename logic"), None);
    }

    #[test]
    fn file_names_are_read_from_the_prompt() {
        assert_eq!(
            named_files(
                "Rename old_name to double in util.py and main.py. See https://x.io/a.html"
            ),
            ["util.py", "main.py"]
        );
        assert_eq!(
            named_files("Version 1.2 of e.g. the app"),
            Vec::<String>::new()
        );
        assert_eq!(
            named_files("Fix first_n in loop.py so it returns 1..n inclusive"),
            ["loop.py"]
        );
    }
}
