//! Checks on an answer that ends a turn, for models that need them: a tool's
//! output echoed as the answer, advice instead of action, a question left unanswered, a definition removed by
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

mod focus;
mod words;

pub(crate) use focus::Focus;

use words::lists_files;
use words::{
    NUMBER_WORDS, asks_for_work, asks_what_code_does, call_now, has_fence, mentions_word,
    normalise, rename_pairs, shows_code, test_command,
};
pub(crate) use words::{chosen_tool, files_to_run, named_files, run_command, same_file};

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
    /// The last `bash` command that succeeded, and its output.
    last_output: Option<(String, String)>,
    /// Definitions the turn's changes removed and did not put back, with
    /// the file they were in (read from the changes' diffs).
    removed: BTreeMap<String, String>,
    /// Files a change of the turn left not parsing (the tool's warning),
    /// until a later change of the file leaves it parsing.
    broken: BTreeSet<String>,
    /// Files a change of the turn left unable to run as written (the
    /// tool's [`cortex_tools::WONT_RUN`] warnings: a name neither imported
    /// nor defined, tests nothing calls, a dataclass's field order), until
    /// a later change clears it.
    wont_run: BTreeSet<String>,
    /// Checks already sent this turn.
    sent: Vec<Check>,
    /// The writes refused before they ran (`unwanted_write.rs`), each once.
    refused_writes: BTreeSet<RefusedWrite>,
    /// The model's edit format: which tool a reminder to change a file
    /// names (`write_file` when `edit_file` is not offered).
    edit_format: EditFormat,
    /// What the next edit may change and quote ([`Focus`]).
    focus: Focus,
}

/// Why a write was refused before it ran.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum RefusedWrite {
    /// The task asks a question and no change.
    Question,
    /// The task says to run this file.
    ToRun(String),
    /// The write would drop this definition from this file.
    Drop(String, String),
    /// The write would leave this data file no longer parsing.
    Break(String),
}

/// The checks, in the order they are tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    Echo,
    Broken,
    Advice,
    Unanswered,
    Output,
    Evaluate,
    Removed,
    NamedFiles,
    RenameLeft,
    WontRun,
    Untested,
    TestFails,
    Empty,
}

impl TurnWork {
    /// A turn that starts with `prompt`.
    pub(crate) fn new(prompt: &str) -> Self {
        TurnWork {
            prompt: prompt.to_owned(),
            ..TurnWork::default()
        }
    }

    /// The model's edit format, for the tool reminders name.
    pub(crate) fn with_edit_format(mut self, format: EditFormat) -> Self {
        self.edit_format = format;
        self
    }

    /// The tool a reminder to change a file names.
    fn edit_tool(&self) -> ToolName {
        match self.edit_format {
            // A forced call cannot be a SEARCH/REPLACE block: the whole
            // file is the call such a model can make.
            EditFormat::Whole | EditFormat::Blocks => ToolName::WriteFile,
            EditFormat::String | EditFormat::Lines | EditFormat::Quoted => ToolName::EditFile,
        }
    }

    /// What the next edit may change and quote.
    pub(crate) fn focus(&self) -> &Focus {
        &self.focus
    }

    /// The turn's message.
    pub(crate) fn prompt(&self) -> &str {
        &self.prompt
    }

    /// Whether the task may ask to remove `word`: it names it and says a
    /// verb of removal (remove, delete, rename, replace…). Named only as a
    /// place ("a section after Install"), it is to be kept (run J).
    pub(crate) fn asks_to_remove(&self, word: &str) -> bool {
        const VERBS: &[&str] = &[
            "remove", "delete", "drop", "rename", "replace", "move", "merge", "inline",
        ];
        let lower = self.prompt.to_lowercase();
        mentions_word(&self.prompt, word) && VERBS.iter().any(|v| mentions_word(&lower, v))
    }

    /// Whether the task asks to write or add the file `path` ("Write a test
    /// file test_slug.py…", "Add test_divide.py with…").
    fn asks_to_write(&self, path: &str) -> bool {
        const VERBS: &[&str] = &["write", "add", "create", "make"];
        let lower = self.prompt.to_lowercase();
        named_files(&self.prompt)
            .iter()
            .any(|named| same_file(&normalise(path), named))
            && VERBS.iter().any(|v| mentions_word(&lower, v))
    }

    /// Whether a write that leaves the data file `path` no longer parsing
    /// is refused: only the first time in the turn (see `unwanted_write.rs`).
    pub(crate) fn first_break(&mut self, path: &str) -> bool {
        self.refused_writes
            .insert(RefusedWrite::Break(normalise(path)))
    }

    /// Whether a write that drops `name` from `path` is refused: only the
    /// first time in the turn (see `unwanted_write.rs`).
    pub(crate) fn first_drop(&mut self, path: &str, name: &str) -> bool {
        self.refused_writes
            .insert(RefusedWrite::Drop(normalise(path), name.to_owned()))
    }

    /// Whether a write is refused because the task asks a question and no
    /// change: only the first time in the turn (see `unwanted_write.rs`).
    pub(crate) fn first_unasked_write(&mut self) -> bool {
        !asks_for_work(&self.prompt) && self.refused_writes.insert(RefusedWrite::Question)
    }

    /// Whether a write to `path` is refused because the task says to run
    /// it: only the first time in the turn.
    pub(crate) fn first_write_to_run(&mut self, path: &str) -> bool {
        let path = normalise(path);
        files_to_run(&self.prompt)
            .iter()
            .any(|f| same_file(&path, f))
            && self.refused_writes.insert(RefusedWrite::ToRun(path))
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
        self.focus.release();
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

    /// A call answered with `status` and `output`, for what the output
    /// says: a write or edit's, whether it left its file parsing (see
    /// [`cortex_tools::BROKE_THE_FILE`]) and runnable
    /// ([`cortex_tools::WONT_RUN`]),
    /// or, refused as an identical edit, what it quoted; a command's, what
    /// it printed.
    pub(crate) fn note_result(&mut self, call: &ToolCallRequest, status: ToolStatus, output: &str) {
        let Ok(tool) = call.name.parse::<ToolName>() else {
            return;
        };
        let Ok(args) = ToolArgs::parse(tool, &call.arguments) else {
            return;
        };
        if let ToolArgs::Bash(bash) = &args
            && status == ToolStatus::Ok
        {
            self.last_output = Some((bash.command.clone(), output.to_owned()));
        }
        let Some(path) = args.written_path().map(normalise) else {
            return;
        };
        if let ToolArgs::EditFile(edit) = &args
            && status == ToolStatus::Error
            && output.contains(cortex_tools::IDENTICAL_EDIT)
        {
            self.focus.gave_back(&path, &edit.old_string);
        }
        if status != ToolStatus::Ok {
            return;
        }
        self.focus.changed(&path);
        if output.contains(cortex_tools::WONT_RUN) {
            self.wont_run.insert(path.clone());
        } else if !output.contains(cortex_tools::STILL_WONT_RUN) {
            self.wont_run.remove(&path);
        }
        if output.contains(cortex_tools::BROKE_THE_FILE) {
            self.broken.insert(path);
        } else if !output.contains(cortex_tools::STILL_BROKEN) {
            self.broken.remove(&path);
        }
    }

    /// The first check that applies to `answer` and was not sent yet, as
    /// the reminder to send; marks it sent. `left` is what a rename the
    /// task asked for left behind ([`TurnWork::rename_to_check`]), looked
    /// up by the caller in the workspace.
    fn next_reminder(&mut self, answer: &str, left: Option<String>) -> Option<String> {
        let checks = [
            (Check::Echo, self.echo(answer)),
            (Check::Broken, self.broken()),
            (Check::Advice, self.advice(answer)),
            (Check::Unanswered, self.unanswered(answer)),
            (Check::Output, self.output_left_out(answer)),
            (Check::Evaluate, self.evaluate()),
            (Check::Removed, self.removed_by_mistake()),
            (Check::TestFails, self.test_fails(answer)),
            (Check::NamedFiles, self.untouched_files()),
            (Check::RenameLeft, left),
            (Check::WontRun, self.wont_run()),
            (Check::Untested, self.untested()),
            (Check::Empty, self.empty(answer)),
        ];
        let (check, text) = checks.into_iter().find_map(|(check, text)| {
            text.filter(|_| !self.sent.contains(&check))
                .map(|t| (check, t))
        })?;
        self.sent.push(check);
        match check {
            Check::NamedFiles if chosen_tool(&text).is_some() => {
                self.focus.on_files(self.untouched().1);
            }
            Check::RenameLeft => self.focus.on_grep_lines(&text),
            _ => self.focus.release(),
        }
        Some(text)
    }

    /// A reply with no text and no call ends the turn saying nothing (run
    /// Q: after its third identical write was refused).
    fn empty(&self, answer: &str) -> Option<String> {
        answer.trim().is_empty().then(|| {
            format!(
                "Your reply was empty. Carry on with the task: call a tool for its next step, \
                 or answer with what you did. The task: {}",
                self.prompt
            )
        })
    }

    /// A tool's output given back as the answer: small models copy the
    /// chat template's `<tool_response>` block, a refusal's words included,
    /// instead of answering (runs J and K, answer-return-type).
    fn echo(&self, answer: &str) -> Option<String> {
        let lower = answer.to_lowercase();
        if !lower.contains("<tool_response>") && !lower.contains("</tool_response>") {
            return None;
        }
        Some(format!(
            "Your reply repeats a tool's output (the <tool_response> text): that is not an \
             answer. Answer the task in your own words, from what the tools showed you. The \
             task: {}",
            self.prompt
        ))
    }

    /// A file the turn's change left not parsing, and an answer anyway
    /// (run K, add-method: the whole fixed file as advice after an edit
    /// that broke its indentation). Rewriting a small file whole is what a
    /// small model gets right most often.
    fn broken(&self) -> Option<String> {
        let path = self.broken.first()?;
        Some(format!(
            "{DO_IT_PREFIX} {path} no longer parses since your change (the warning above), so \
             the task is not done. {} with the whole corrected content of {path}, then answer.",
            call_now(ToolName::WriteFile)
        ))
    }

    /// A file the turn's change left unable to run as written, and an
    /// answer anyway (run Q: a test that never imports the function it
    /// tests; a constant used and never defined). Written whole, with what
    /// the warning names, as for a file that does not parse.
    fn wont_run(&self) -> Option<String> {
        let path = self.wont_run.first()?;
        Some(format!(
            "{DO_IT_PREFIX} {path} cannot run as it should (the warning above). {} with the \
             whole corrected content of {path}, with what the warning says is missing, then \
             answer.",
            call_now(ToolName::WriteFile)
        ))
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
                call_now(self.edit_tool())
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
            || shows_code(answer)
            || has_fence(&lower, &["diff"]);
        // Code shown for the user to paste is a file's new text: writing it
        // whole is the call a small model gets right (run K,
        // fix-missing-import: edits identical to the file, then the fixed
        // file as advice).
        let code = shows_code(answer);
        let (tool, or) = match (change, command) {
            (true, _) if code => (
                ToolName::WriteFile,
                " with the whole new content of the file, the code your answer shows,",
            ),
            (true, _) if self.edit_tool() == ToolName::WriteFile => (ToolName::WriteFile, ""),
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

    /// A task that asks what a command prints, answered after running it
    /// without any line of its output (run R, run-and-report: the command
    /// given back as a code block after it printed 55).
    fn output_left_out(&self, answer: &str) -> Option<String> {
        const ASKS: &[&str] = &[
            "what it prints",
            "what it outputs",
            "the output",
            "what it says",
        ];
        let prompt = self.prompt.to_lowercase();
        if !ASKS.iter().any(|a| prompt.contains(a)) {
            return None;
        }
        let (command, output) = self.last_output.as_ref()?;
        let printed: Vec<&str> = output
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("[exit code"))
            .collect();
        if printed.is_empty() || printed.iter().any(|line| answer.contains(line)) {
            return None;
        }
        Some(format!(
            "Your answer does not give what `{command}` printed, which the task asks for. Answer \
             again with its output (shown above), not a command."
        ))
    }

    /// A question about what Python code returns, prints or raises,
    /// answered from reading alone: small models describe the code instead
    /// of working out the value (run Q, answer-return-type: "a dictionary
    /// with two keys" where `{'kind': 'square', 'side': 2}` was asked).
    /// Running it gives the value; the guest is where that is safe.
    fn evaluate(&self) -> Option<String> {
        if !asks_what_code_does(&self.prompt)
            || asks_for_work(&self.prompt)
            || !self.changed.is_empty()
            || !self.commands_since_change.is_empty()
            || !self.files.iter().any(|f| f.ends_with(".py"))
        {
            return None;
        }
        Some(format!(
            "{DO_IT_PREFIX} the question asks what the code does; run it rather than work it out \
             by reading. {} with a command that prints it (python3 -c \"from MODULE import NAME; \
             print(...)\"), then answer with what it printed.",
            call_now(ToolName::Bash)
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
        // "Which exception does parse_age raise…?" answered "I found the
        // exception at line 4" (run R).
        let wants_exception = (prompt.contains("which exception")
            || prompt.contains("what exception"))
            && !answer.split(|c: char| !c.is_alphanumeric()).any(|w| {
                w.starts_with(|c: char| c.is_ascii_uppercase())
                    && [
                        "Error",
                        "Exception",
                        "Warning",
                        "Exit",
                        "Interrupt",
                        "Iteration",
                    ]
                    .iter()
                    .any(|end| w.ends_with(end))
            });
        let missing = if wants_file && !names_file {
            "the file's path"
        } else if wants_count && !has_number {
            "the number"
        } else if wants_exception {
            "the exception's name"
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
            .find(|(name, _)| !self.asks_to_remove(name))?;
        Some(format!(
            "{DO_IT_PREFIX} your change to {path} removed the definition of `{name}`, which the \
             task does not ask to remove. {} to put `{name}` back in {path}, beside what you \
             added. Then answer.",
            call_now(self.edit_tool())
        ))
    }

    /// The old name of a rename the task asks for, when files changed and
    /// the check was not sent yet: the caller looks it up in the workspace.
    pub(crate) fn rename_to_check(&self) -> Vec<(String, String)> {
        if self.changed.is_empty() || self.sent.contains(&Check::RenameLeft) {
            return Vec::new();
        }
        rename_pairs(&self.prompt)
    }

    /// A task that names several files, some changed and some not.
    fn untouched_files(&self) -> Option<String> {
        let (named, untouched) = self.untouched();
        if untouched.is_empty() {
            return None;
        }
        // Files listed together ("in both client.py and worker.py") are
        // each to change: the next reply must edit. A file named otherwise
        // ("mean lives in stats/mathutils.py") may be only a reference (run
        // R, fix-import: made to edit it, the model broke it).
        if !lists_files(&self.prompt, &named) {
            return Some(format!(
                "The task names {} and you have changed {} only. If {} need{} a change too, \
                 make it now (read it first); otherwise answer again.",
                named.join(", "),
                self.changed.join(", "),
                untouched.join(" and "),
                if untouched.len() == 1 { "s" } else { "" },
            ));
        }
        Some(format!(
            "{DO_IT_PREFIX} the task names {} and you have changed {} only. {} to make the \
             change the task asks for in {}, then answer.",
            named.join(", "),
            self.changed.join(", "),
            call_now(self.edit_tool()),
            untouched.join(" and "),
        ))
    }

    /// The files the task names to change (not those it says to run) and,
    /// of those, the ones the turn has neither changed nor run a command
    /// on; both empty before the first change or when it names fewer than
    /// two.
    fn untouched(&self) -> (Vec<String>, Vec<String>) {
        if self.changed.is_empty() {
            return Default::default();
        }
        // A test the prompt says to run is named, but not to be changed.
        let to_run = files_to_run(&self.prompt);
        let named: Vec<String> = named_files(&self.prompt)
            .into_iter()
            .filter(|n| !to_run.iter().any(|r| same_file(r, n)))
            .collect();
        if named.len() < 2 {
            return Default::default();
        }
        let untouched = named
            .iter()
            .filter(|n| !self.changed.iter().any(|c| same_file(c, n)))
            .filter(|n| {
                !self
                    .commands_since_change
                    .iter()
                    .any(|c| c.contains(n.as_str()))
            })
            .cloned()
            .collect();
        (named, untouched)
    }

    /// Files changed, and the test the task or the workspace names failed
    /// the last time it ran: an answer now gives up on it ("you need to
    /// ensure that…") or claims what it did not see.
    /// With the fixed code in the answer, the call to make is a `write_file`
    /// of it (run N, fix-missing-import: the file with its import as
    /// advice, then a forced edit that quoted the wrong lines).
    fn test_fails(&self, answer: &str) -> Option<String> {
        let failed = self.last_failed.as_deref()?;
        if self.changed.is_empty() {
            return None;
        }
        let known = test_command(&self.prompt, &self.files)?;
        let key = known.rsplit(' ').next().unwrap_or(&known);
        if !failed.contains(key) {
            return None;
        }
        let (tool, what) = if shows_code(answer) {
            (
                ToolName::WriteFile,
                " with the whole new content of the file, the code your answer shows,",
            )
        } else {
            (self.edit_tool(), "")
        };
        // A test the task asks to write is the turn's own work: it may be
        // what is wrong (run Q, write-a-test: it imported nothing).
        let whose = if self.asks_to_write(key) {
            "the test you wrote or the code it tests"
        } else {
            "the code (not the test, unless the task asks for that)"
        };
        Some(format!(
            "{DO_IT_PREFIX} `{failed}` failed the last time you ran it, so the task is not done. \
             Its output above says why. {}{what} to fix {whose} so that it passes, then run it \
             again.",
            call_now(tool)
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
        let pairs = self.turn_work.rename_to_check();
        let left = if pairs.is_empty() {
            None
        } else {
            self.rename_left(&pairs).await
        };
        self.turn_work.next_reminder(answer, left)
    }

    /// Where the old names of the renames the task asks for still occur as
    /// words (the files the task names, else the whole workspace), as the
    /// reminder; `None` when nowhere.
    async fn rename_left(&self, pairs: &[(String, String)]) -> Option<String> {
        let named = named_files(&self.turn_work.prompt);
        let places: Vec<Option<String>> = if named.is_empty() {
            vec![None]
        } else {
            named.into_iter().map(Some).collect()
        };
        let mut lines = Vec::new();
        let mut left = Vec::new();
        for (old, new) in pairs {
            let mut occurs = false;
            for path in &places {
                let found = self
                    .harness_call(ToolArgs::Grep(GrepArgs {
                        // `old` is an identifier (see `rename_pairs`): no regex syntax.
                        pattern: format!(r"\b{old}\b"),
                        path: path.clone(),
                        glob: None,
                        mode: Some(GrepMode::Content),
                        context: None,
                        ignore_case: None,
                    }))
                    .await
                    .unwrap_or_default();
                // Two old names on one line: the line once.
                for line in found.lines().filter(|l| l.contains(old.as_str())) {
                    occurs = true;
                    if !lines.iter().any(|l| l == line) {
                        lines.push(line.to_owned());
                    }
                }
            }
            if occurs {
                left.push(format!("`{old}` to `{new}`"));
            }
        }
        if lines.is_empty() {
            return None;
        }
        let total = lines.len();
        lines.truncate(MAX_LEFT_LINES);
        let how = match self.edit_format() {
            EditFormat::String | EditFormat::Quoted => {
                "edit_file with replace_all: true changes all in a file"
            }
            EditFormat::Lines => "path:line:text above; edit_file each line",
            EditFormat::Whole | EditFormat::Blocks => {
                "write_file each file with every one of them changed"
            }
        };
        Some(format!(
            "{DO_IT_PREFIX} the task renames {}, but the old name still occurs ({total} \
             line{}):\n{}\n{} to change every one of them ({how}), then answer.",
            left.join(" and "),
            if total == 1 { "" } else { "s" },
            lines.join("\n"),
            call_now(self.turn_work.edit_tool())
        ))
    }
}

#[cfg(test)]
mod tests;
