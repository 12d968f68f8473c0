//! Checks on an answer that ends a turn, for models that need them: a tool's
//! output echoed as the answer, advice instead of action, a question left
//! unanswered, a count of files the turn's listing contradicts, a
//! definition removed by mistake, a named file left untouched, a rename left half done, a change
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
//! of its kind, with what it asks of the next reply ([`Said`]: advice and
//! untested changes with a reply that must call a tool). When every check
//! that applies was sent as often as it may be, the answer stands and
//! those checks are its doubts: the turn completes unverified
//! ([`TurnWork::take_doubts`]). Only for models whose info has
//! `verify_answers` (the embedded model by default): a strong model's "you
//! can run `make`" after its own work is not worth a round.
//!
//! What the turn did is read from its calls as they are answered
//! ([`TurnWork::record`]), so a resumed session, which starts a new turn,
//! starts from nothing as the live one does. The catalogue of every rule
//! of the small-model help, this module's and its neighbours', is
//! `README.md` beside this file.

use crate::Session;
use crate::steer::{Reminder, Said};
use cortex_protocol::{
    CallSteer, EditFormat, Mode, ReminderKind, ToolArgs, ToolCallRequest, ToolName, ToolStatus,
};
use std::collections::{BTreeMap, BTreeSet};

mod claims;
mod count;
mod echo;
mod focus;
mod grounded;
mod named;
mod refused;
mod rename;
mod runs;
mod testing;
mod traceback;
mod words;

pub(crate) use focus::Focus;
use refused::RefusedWrite;
pub(crate) use refused::{Held, Refusal, named_elsewhere};
pub(crate) use traceback::ErrorSite;

use words::{
    SHELLS, asks_for_work, asks_what_code_does, asks_with, call_now, has_fence, imagined_output,
    mentions_word, missing_from_answer, normalise, rename_pairs, shows_code,
};
pub(crate) use words::{
    counted_files_pattern, failing_files, files_to_run, named_files, normalise as normalise_path,
    run_command, same_file,
};

/// How a coach reminder that requires the next reply to call a tool starts
/// (the requirement itself is the reminder's [`Said`]).
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
    /// Every `bash` command that ran in the turn.
    commands: Vec<String>,
    /// Every `bash` command that ran (succeeded or failed), with its
    /// output, in order (`runs.rs`).
    runs: Vec<(String, String)>,
    /// The checks that still doubt the answer the turn ends with: every
    /// one that applies to it once each was sent as many times as allowed.
    doubts: Vec<cortex_protocol::Doubt>,
    /// Commands an answer said the output of without running them, whose
    /// claim the harness found true (`claims.rs`).
    checked_claims: Vec<String>,
    /// The turn's context shows every file of the workspace
    /// (`grounded.rs`).
    workspace_shown: bool,
    /// The last `bash` command, when it failed (an exit code other than 0).
    last_failed: Option<String>,
    /// What the harness added to the last failed command's output about
    /// its cause ([`cortex_tools::KEY_HINT`]), if anything.
    failure_hint: Option<String>,
    /// The last `bash` command that succeeded, and its output.
    last_output: Option<(String, String)>,
    /// The paths the last successful `glob` listed (`count.rs`).
    listing: Option<Vec<String>>,
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
    sent: Vec<ReminderKind>,
    /// A check was sent since the last `bash` command ran.
    reminded_since_command: bool,
    /// The writes refused before they ran (`unwanted_write.rs`), each once.
    refused_writes: BTreeSet<RefusedWrite>,
    /// The arguments (JSON) of the call each refusal that holds handed
    /// over, by the refused call's `ToolArgs` debug text.
    handed_over: BTreeMap<String, String>,
    /// The model's edit format: which tool a reminder to change a file
    /// names (`write_file` when `edit_file` is not offered).
    edit_format: EditFormat,
    /// What the next edit may change and quote ([`Focus`]).
    focus: Focus,
    /// A call was refused as a repeat since the last round's check.
    repeated: bool,
    /// How many times [`TurnWork::after_repeat`] named the next step.
    unstuck: usize,
    /// The calls the last round's gates will refuse if made again
    /// ([`TurnWork::refused_calls`]).
    refused_calls: Vec<cortex_model::RefusedCall>,
    /// Where the failure the task reports lies, as the harness's run of it
    /// showed (`reported_failure.rs`).
    error_site: Option<ErrorSite>,
    /// What the harness told the model this turn: reminders, refusals and
    /// failed calls' outputs ([`TurnWork::note_harness_words`]).
    harness_words: Vec<String>,
    /// The calls of the turn that ran and succeeded.
    made: Vec<ToolCallRequest>,
}

/// At most this many reminders after repeated calls in a turn.
const MAX_UNSTICK: usize = 2;

/// How the reminder after a call refused as a repeat says why (after
/// [`DO_IT_PREFIX`] when it names the tool to call).
pub(crate) const NO_MORE: &str = "The same call again cannot show more than it did.";

/// How the reminder after a repeat, in a turn that asks a question, ends
/// (the reply to it must be the answer: its [`Said::answer`]).
pub(crate) const ANSWER_NOW: &str = "Answer the question now from what the tools showed you.";

/// How many times a turn may send the check of `kind`: a file left broken
/// or unable to run is met again while it stays so (a second write of a
/// test can fix the import and leave the tests uncalled), the others once.
fn limit(kind: ReminderKind) -> usize {
    match kind {
        ReminderKind::Broken | ReminderKind::WontRun => 2,
        _ => 1,
    }
}

/// What a rename the task asks for left behind: the reminder, and the
/// lines (`path:line:text`, as grep shows them) where the old name is.
#[derive(Debug, Clone)]
pub(crate) struct RenameLeft {
    pub said: Said,
    pub lines: Vec<String>,
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
    /// place ("a section after Install"), it is to be kept.
    pub(crate) fn asks_to_remove(&self, word: &str) -> bool {
        const VERBS: &[&str] = &[
            "remove", "delete", "drop", "rename", "replace", "move", "merge", "inline",
        ];
        let lower = self.prompt.to_lowercase();
        mentions_word(&self.prompt, word) && VERBS.iter().any(|v| mentions_word(&lower, v))
    }

    /// Whether the task asks to write or add the file `path` ("Write a test
    /// file test_slug.py…", "Add test_divide.py with…").
    pub(super) fn asks_to_write(&self, path: &str) -> bool {
        const VERBS: &[&str] = &["write", "add", "create", "make"];
        named_files(&self.prompt)
            .iter()
            .any(|named| same_file(&normalise(path), named))
            && asks_with(&self.prompt, VERBS)
    }

    /// Whether `summary` (a write's first line, `Updated calc.py (2
    /// lines)`) names a file a change of this turn left not parsing.
    pub(crate) fn broke_file_named_in(&self, summary: &str) -> bool {
        summary
            .split_whitespace()
            .any(|word| self.broken.contains(&normalise(word)))
    }

    /// The turn's context listed these files.
    pub(crate) fn set_files(&mut self, listing: &str) {
        self.files = listing.lines().map(str::to_owned).collect();
    }

    /// A call of the turn was answered with `status`: `diff` is what a
    /// change changed, `output` what the answer said (`None` for a call
    /// stopped before it ran). The call's arguments are parsed here once;
    /// a call whose arguments do not parse never ran and is not recorded.
    pub(crate) fn record(
        &mut self,
        call: &ToolCallRequest,
        status: ToolStatus,
        diff: Option<&str>,
        output: Option<&str>,
    ) {
        self.focus.release();
        if status == ToolStatus::Ok {
            self.made.push(call.clone());
        } else if let Some(output) = output {
            self.note_harness_words(output);
        }
        let Ok(tool) = call.name.parse::<ToolName>() else {
            return;
        };
        let Ok(args) = ToolArgs::parse(tool, &call.arguments) else {
            return;
        };
        self.note_change(&args, status, diff);
        if let Some(output) = output {
            self.note_output(&args, status, output);
        }
    }

    /// A call of the round was refused deciding `steer`: after a repeat,
    /// the round's check names the task's next step ([`Self::after_repeat`]).
    pub(crate) fn note_steer(&mut self, steer: Option<CallSteer>) {
        if matches!(steer, Some(CallSteer::Bars { .. })) {
            self.repeated = true;
        }
    }

    /// What a call did to the files and the commands run since a change.
    fn note_change(&mut self, args: &ToolArgs, status: ToolStatus, diff: Option<&str>) {
        match args {
            ToolArgs::Bash(bash) if status != ToolStatus::Refused => {
                self.reminded_since_command = false;
                self.commands_since_change.push(bash.command.clone());
                self.commands.push(bash.command.clone());
                self.last_failed = (status == ToolStatus::Error).then(|| bash.command.clone());
            }
            _ if status == ToolStatus::Ok => {
                let Some(path) = args.written_path().map(normalise) else {
                    return;
                };
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
            _ => {}
        }
    }

    /// What a call's `output` says: a command's output (for the answer
    /// checks that read it); a write or edit's, whether it left its file
    /// parsing (see [`cortex_tools::BROKE_THE_FILE`]) and runnable
    /// ([`cortex_tools::WONT_RUN`]), and a quote given back unchanged
    /// ([`cortex_tools::IDENTICAL_EDIT`]).
    fn note_output(&mut self, args: &ToolArgs, status: ToolStatus, output: &str) {
        if let ToolArgs::Glob(_) = args
            && status == ToolStatus::Ok
        {
            self.listing = count::listed_paths(output);
        }
        if let ToolArgs::Bash(bash) = args {
            if status == ToolStatus::Ok {
                self.last_output = Some((bash.command.clone(), output.to_owned()));
            }
            if matches!(status, ToolStatus::Ok | ToolStatus::Error) {
                self.runs.push((bash.command.clone(), output.to_owned()));
            }
            self.failure_hint = output
                .lines()
                .find(|l| l.starts_with(cortex_tools::KEY_HINT))
                .filter(|_| status == ToolStatus::Error)
                .map(|l| l.trim_start_matches("Note: ").to_owned());
        }
        let Some(path) = args.written_path().map(normalise) else {
            return;
        };
        if let ToolArgs::EditFile(edit) = args
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

    /// After a round in which a call was refused as a repeat, the reminder
    /// that names the task's next step, at most [`MAX_UNSTICK`] times a
    /// turn: the 0.5B, the repeated tool withheld, went on to repeat
    /// another (`todo_write`), never making the change it read the file
    /// for. A change not made yet is forced (the edit tool), a change not
    /// tested is the test run, a question is to be answered now (the next
    /// reply still may not repeat the tool: `verify::tool_choice`).
    pub(crate) fn after_repeat(&mut self) -> Option<Reminder> {
        if !std::mem::take(&mut self.repeated) || self.unstuck >= MAX_UNSTICK {
            return None;
        }
        let said = if !asks_for_work(&self.prompt) {
            Said::answer(format!("{NO_MORE} {ANSWER_NOW}"))
        } else if self.changed.is_empty() {
            // A file the task names that is not there yet is written whole
            // (the 0.5B read another file until refused, never writing it).
            let listed = |f: &String| self.files.iter().any(|l| same_file(l, f));
            let new_file = !self.files.is_empty() && !named_files(&self.prompt).iter().all(listed);
            let tool = if new_file {
                ToolName::WriteFile
            } else {
                self.edit_tool()
            };
            Said::call(
                tool,
                format!(
                    "{DO_IT_PREFIX} {NO_MORE} The task asks for a change not made yet: {} to \
                     make it, then answer.",
                    call_now(tool)
                ),
            )
        } else {
            self.untested()?
        };
        self.unstuck += 1;
        self.focus.release();
        Some(said.into_reminder(ReminderKind::AfterRepeat))
    }

    /// The first check that applies to `answer` and was not sent yet, as
    /// the reminder to send; marks it sent. `left` is what a rename the
    /// task asked for left behind ([`TurnWork::rename_to_check`]), looked
    /// up by the caller in the workspace.
    fn next_reminder(&mut self, answer: &str, left: Option<RenameLeft>) -> Option<Reminder> {
        let grep_lines = left.as_ref().map(|l| l.lines.clone()).unwrap_or_default();
        let applying: Vec<(ReminderKind, Said)> = self
            .checks(answer, left.map(|l| l.said))
            .into_iter()
            .filter_map(|(kind, said)| said.map(|s| (kind, s)))
            .collect();
        let unsent = applying
            .iter()
            .position(|(kind, _)| self.sent.iter().filter(|c| *c == kind).count() < limit(*kind));
        let Some(at) = unsent else {
            // Each was said as often as it may be: the answer stands, and
            // what still applies to it is recorded as doubt.
            self.doubts = applying
                .iter()
                .map(|(kind, _)| cortex_protocol::Doubt::of(*kind))
                .collect();
            return None;
        };
        let (kind, said) = applying.into_iter().nth(at)?;
        self.doubts.clear();
        self.sent.push(kind);
        self.reminded_since_command = true;
        match (kind, said.next) {
            (ReminderKind::NamedFiles, cortex_protocol::NextReply::Tool { .. }) => {
                self.focus.on_files(self.untouched().1);
            }
            (ReminderKind::RenameLeft, _) => self.focus.on_grep_lines(&grep_lines),
            _ => self.focus.release(),
        }
        Some(said.into_reminder(kind))
    }

    /// Every check and what it says of `answer`, in the order they are
    /// tried; `left` is what the rename check says.
    fn checks(&self, answer: &str, left: Option<Said>) -> [(ReminderKind, Option<Said>); 16] {
        [
            (ReminderKind::Echo, self.echo(answer)),
            (ReminderKind::Broken, self.broken()),
            (ReminderKind::Advice, self.advice(answer)),
            (ReminderKind::Imagined, self.imagined(answer)),
            (ReminderKind::WrongOutput, self.wrong_output(answer)),
            (ReminderKind::Unanswered, self.unanswered(answer)),
            (ReminderKind::Miscounted, self.miscounted(answer)),
            (ReminderKind::OutputLeftOut, self.output_left_out(answer)),
            (ReminderKind::Evaluate, self.evaluate()),
            (ReminderKind::Removed, self.removed_by_mistake()),
            (ReminderKind::TestFails, self.test_fails(answer)),
            (ReminderKind::NamedFiles, self.untouched_files()),
            (ReminderKind::RenameLeft, left),
            (ReminderKind::WontRun, self.wont_run()),
            (ReminderKind::Untested, self.untested()),
            (ReminderKind::Empty, self.empty(answer)),
        ]
    }

    /// A reply with no text and no call ends the turn saying nothing (a
    /// small model's reply after its third identical write was refused).
    fn empty(&self, answer: &str) -> Option<Said> {
        answer.trim().is_empty().then(|| {
            Said::words(format!(
                "Your reply was empty. Carry on with the task: call a tool for its next step, \
                 or answer with what you did. The task: {}",
                self.prompt
            ))
        })
    }

    /// A file the turn's change left not parsing, and an answer anyway
    /// (the whole fixed file as advice after an edit that broke its
    /// indentation). Rewriting a small file whole is what a small model
    /// gets right most often.
    fn broken(&self) -> Option<Said> {
        let path = self.broken.first()?;
        Some(Said::call(
            ToolName::WriteFile,
            format!(
                "{DO_IT_PREFIX} {path} no longer parses since your change (the warning above), \
                 so the task is not done. {} with the whole corrected content of {path}, then \
                 answer.",
                call_now(ToolName::WriteFile)
            ),
        ))
    }

    /// A file the turn's change left unable to run as written, and an
    /// answer anyway (a test that never imports the function it
    /// tests; a constant used and never defined). Written whole, with what
    /// the warning names, as for a file that does not parse.
    fn wont_run(&self) -> Option<Said> {
        let path = self.wont_run.first()?;
        Some(Said::call(
            ToolName::WriteFile,
            format!(
                "{DO_IT_PREFIX} {path} cannot run as it should (the warning above). {} with the \
                 whole corrected content of {path}, with what the warning says is missing, then \
                 answer.",
                call_now(ToolName::WriteFile)
            ),
        ))
    }

    /// Advice instead of action: nothing changed, and the answer hands the
    /// user a command to run or a change to make.
    fn advice(&self, answer: &str) -> Option<Said> {
        if !asks_for_work(&self.prompt) {
            return None;
        }
        let lower = answer.to_lowercase();
        // Describing a call to one of its own tools instead of making it is
        // advice even after a change ("you can use the `write_file`
        // function. Here's the updated code: …").
        // Not the words that came with its own call, said again after the
        // change with nothing to paste ("you can use the `edit_file`
        // function. Here's how you can do it:").
        // Nor a call the turn made, written out again (made to "make" it,
        // the model broke the file).
        let narrates_own_call =
            !self.changed.is_empty() && (!shows_code(answer) || self.recites_made_call(answer));
        if let Some(tool) = [ToolName::WriteFile, ToolName::EditFile]
            .into_iter()
            .find(|t| {
                // Or the call a refusal handed over, given back as text.
                (lower.contains("you can use") && lower.contains(t.as_str()))
                    || lower.contains(&format!("call {t} with"))
            })
            .filter(|_| !narrates_own_call)
        {
            return Some(Said::call(
                tool,
                format!(
                    "{DO_IT_PREFIX} your answer describes a {tool} call instead of making it. {} \
                     with the change, then answer with what you did.",
                    call_now(tool)
                ),
            ));
        }
        // Steps for the user to follow are advice even after a change
        // ("1. Open the `stack.py` file in a text editor.").
        if ["in a text editor", "follow these steps"]
            .iter()
            .any(|p| lower.contains(p))
        {
            return Some(Said::call(
                self.edit_tool(),
                format!(
                    "{DO_IT_PREFIX} your answer gives the user steps to follow instead of doing \
                     them. {} to make the change, then answer with what you did.",
                    call_now(self.edit_tool())
                ),
            ));
        }
        if !self.changed.is_empty() {
            return None;
        }
        let command = has_fence(&lower, SHELLS)
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
        // whole is the call a small model gets right (it made edits
        // identical to the file, then gave the fixed file as advice).
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
        Some(Said::call(
            tool,
            format!(
                "{DO_IT_PREFIX} your answer tells the user to do work in the repository, but you \
                 have the tools to do it yourself and nothing has been changed yet. {}{or} to do \
                 it, then answer with what you did.",
                call_now(tool)
            ),
        ))
    }

    /// An answer that says what a command prints without having run it
    /// ([`imagined_output`]): the command is to be run.
    fn imagined(&self, answer: &str) -> Option<Said> {
        let command = imagined_output(answer, &self.known_commands())?;
        Some(Said::call(
            ToolName::Bash,
            format!(
                "{DO_IT_PREFIX} your answer says what `{command}` prints, but it did not run in \
                 this turn. {} with it, then answer from what it printed.",
                call_now(ToolName::Bash)
            ),
        ))
    }

    /// A task that asks what a command prints, answered after running it
    /// without any line of its output (the command given back as a code
    /// block after it printed 55).
    fn output_left_out(&self, answer: &str) -> Option<Said> {
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
        Some(Said::words(format!(
            "Your answer does not give what `{command}` printed, which the task asks for. Answer \
             again with its output (shown above), not a command."
        )))
    }

    /// A question about what Python code returns, prints or raises,
    /// answered from reading alone: small models describe the code instead
    /// of working out the value ("a dictionary with two keys" where
    /// `{'kind': 'square', 'side': 2}` was asked).
    /// Running it gives the value; the guest is where that is safe.
    fn evaluate(&self) -> Option<Said> {
        if !asks_what_code_does(&self.prompt)
            || asks_for_work(&self.prompt)
            || !self.changed.is_empty()
            || !self.commands_since_change.is_empty()
            || !self.files.iter().any(|f| f.ends_with(".py"))
        {
            return None;
        }
        Some(Said::call(
            ToolName::Bash,
            format!(
                "{DO_IT_PREFIX} the question asks what the code does; run it rather than work it \
                 out by reading. {} with a command that prints it (python3 -c \"from MODULE \
                 import NAME; print(...)\"), then answer with what it printed.",
                call_now(ToolName::Bash)
            ),
        ))
    }

    /// A question asking for a file, a count, an exception or a name in
    /// the code, answered without one ([`missing_from_answer`]).
    fn unanswered(&self, answer: &str) -> Option<Said> {
        let missing = missing_from_answer(&self.prompt, answer, &self.files)?;
        Some(Said::words(format!(
            "Your answer does not give {missing} the question asks for. Answer again with it, \
             stated plainly (take it from what the tools showed you)."
        )))
    }

    /// A definition the turn's changes removed, which the task does not
    /// name (a removal or rename names it).
    fn removed_by_mistake(&self) -> Option<Said> {
        let (name, path) = self
            .removed
            .iter()
            .find(|(name, _)| !self.asks_to_remove(name))?;
        Some(Said::call(
            self.edit_tool(),
            format!(
                "{DO_IT_PREFIX} your change to {path} removed the definition of `{name}`, which \
                 the task does not ask to remove. {} to put `{name}` back in {path}, beside what \
                 you added. Then answer.",
                call_now(self.edit_tool())
            ),
        ))
    }

    /// The old name of a rename the task asks for, when files changed:
    /// the caller looks it up in the workspace (once the check was sent,
    /// for the doubts at the turn's end).
    pub(crate) fn rename_to_check(&self) -> Vec<(String, String)> {
        if self.changed.is_empty() {
            return Vec::new();
        }
        rename_pairs(&self.prompt)
    }

    /// The checks that doubt the turn's answer, taken (`turn.completed`
    /// carries them).
    pub(crate) fn take_doubts(&mut self) -> Vec<cortex_protocol::Doubt> {
        std::mem::take(&mut self.doubts)
    }

    /// Records a doubt found outside the checks (an answer not based on
    /// any successful call, checked once already).
    pub(crate) fn doubt(&mut self, kind: ReminderKind) {
        if !self.doubts.iter().any(|d| d.check == kind) {
            self.doubts.push(cortex_protocol::Doubt::of(kind));
        }
    }
}

impl Session {
    /// The reminder for an answer that ends the turn too early, if any (see
    /// the module docs); `None` also for models without `verify_answers`
    /// and outside Agent mode.
    pub(crate) async fn coach(&mut self, answer: &str) -> Option<Reminder> {
        if self.mode() != Mode::Agent || !self.model.info().is_some_and(|i| i.verify_answers) {
            return None;
        }
        self.check_claimed_read(answer).await;
        let pairs = self.turn_work.rename_to_check();
        let left = if pairs.is_empty() {
            None
        } else {
            self.rename_left(&pairs).await
        };
        self.turn_work.next_reminder(answer, left)
    }

    /// The reminder after a round with a call refused as a repeat
    /// ([`TurnWork::after_repeat`]); `None` for models without
    /// `verify_answers` and outside Agent mode.
    pub(crate) fn after_repeat(&mut self) -> Option<Reminder> {
        if self.mode() != Mode::Agent || !self.model.info().is_some_and(|i| i.verify_answers) {
            return None;
        }
        self.turn_work.after_repeat()
    }
}

#[cfg(test)]
mod tests;
