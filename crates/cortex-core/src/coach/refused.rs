//! The writes refused before they run (`unwanted_write.rs`): each kind of
//! refusal once a turn per file, since a model that makes the same call
//! again may have a reason the check cannot read. A refusal that hands
//! over the call to make instead, or that refuses a change after the task's
//! test passed ([`Refusal::holds_while_unchanged`]), also holds while the
//! model makes the refused call unchanged: the 1.5B copied its own refused
//! call back rather than the one handed over, and it ran. A third
//! identical call is the stop rule's to refuse, and it bars the tool for a
//! round, so a model that insists is not refused for ever. An edit that
//! only swaps a string's quotes ([`quote_swap`]) is refused every time: it
//! cannot be what a task that does not speak of quotes asks for.

use super::TurnWork;
use super::testing::DONE_IF_PASSING;
use super::words::{asks_for_work, files_to_run, named_files, normalise, same_file};

/// The file the task names with the file name of `path` (normalised) at
/// another path, when it does not name `path` itself.
pub(crate) fn named_elsewhere(prompt: &str, path: &str) -> Option<String> {
    let name = path.rsplit('/').next()?;
    let named = named_files(prompt);
    if named.iter().any(|n| n == path) {
        return None;
    }
    named
        .into_iter()
        .find(|named| named.rsplit('/').next() == Some(name))
}

/// Why a write to a file is refused before it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Refusal {
    /// It would leave a data file that parses now no longer parsing.
    Break,
    /// It would insert on the wrong side of the task's anchor.
    Misplaced,
    /// It would change a definition the task does not name, when the
    /// task names another of the file.
    Unnamed,
    /// It would lose text besides the replacement the task states.
    Replacement,
    /// It would create a file named as one the task names, in another
    /// folder.
    Elsewhere,
    /// It would write a file the task says another file (a script)
    /// writes.
    Product,
    /// It would insert an import the file has already.
    Again,
    /// It would only change a string's quotes.
    Quotes,
    /// It would change again a file the turn changed, after the task's
    /// test passed (`TurnWork::change_after_pass`).
    AfterPass,
}

impl Refusal {
    /// Whether the refusal holds while the refused call comes back
    /// unchanged: it gives the call that does what the task asks
    /// (`unwanted_write::handed_call`), or the task's test passed already
    /// (greedy, the 1.5B made its refused revert again).
    pub(crate) fn holds_while_unchanged(self) -> bool {
        matches!(
            self,
            Refusal::Misplaced | Refusal::Replacement | Refusal::Elsewhere | Refusal::AfterPass
        )
    }
}

/// Whether a write is refused (see [`TurnWork::refusal_holds`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Held {
    /// It runs.
    No,
    /// The first refusal of its kind for the file.
    First,
    /// The call refused before, made again unchanged.
    Unchanged,
}

/// A refusal sent this turn.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum RefusedWrite {
    /// The task asks a question and no change.
    Question,
    /// The task says to run this file.
    ToRun(String),
    /// The write would drop this definition from this file.
    Drop(String, String),
    /// For this reason, a write to this file.
    Of(Refusal, String),
    /// This call (its arguments as `ToolArgs`' debug text), refused with
    /// another handed over.
    Call(String),
}

impl TurnWork {
    /// Whether a write to `path` is refused for `why`: only the first time
    /// in the turn.
    pub(crate) fn first_refusal(&mut self, why: Refusal, path: &str) -> bool {
        self.refused_writes
            .insert(RefusedWrite::Of(why, normalise(path)))
    }

    /// Whether the write `call` to `path`, which `why` applies to, is
    /// refused: the first time in the turn, and when `why` holds while it
    /// is unchanged ([`Refusal::holds_while_unchanged`]; the call it handed
    /// over: `handed`), again while `call` comes back unchanged.
    pub(crate) fn refusal_holds(
        &mut self,
        why: Refusal,
        path: &str,
        call: &cortex_protocol::ToolArgs,
        handed: Option<String>,
    ) -> Held {
        let key = format!("{call:?}");
        if why.holds_while_unchanged()
            && self
                .refused_writes
                .contains(&RefusedWrite::Call(key.clone()))
        {
            return Held::Unchanged;
        }
        if !self.first_refusal(why, path) {
            return Held::No;
        }
        if why.holds_while_unchanged() {
            self.note_handed_over(call, handed);
            self.refused_writes.insert(RefusedWrite::Call(key));
        }
        Held::First
    }

    /// The refusal of a change to `path` after the task's test passed:
    /// when the turn changed `path` and the last command since its last
    /// change ran the test the task names, and it passed, and no check
    /// asked for more since. Greedy, the 1.5B went on to undo its fix there
    /// and ran the test again (about 50 s each time).
    pub(crate) fn change_after_pass(&self, path: &str) -> Option<String> {
        let path = normalise(path);
        if self.reminded_since_command || !self.changed.contains(&path) {
            return None;
        }
        let ran = self.test_passed_since_change()?;
        Some(format!(
            "not made: `{ran}` passed after your change to {path}, and this call would change \
             {path} again. {DONE_IF_PASSING}"
        ))
    }

    /// Whether writing `path` would create a second copy of a file the
    /// task names: `path` is no file of the workspace, and the file the
    /// task names with its file name ([`named_elsewhere`]) is, listed or
    /// written this turn; that file.
    pub(crate) fn second_copy_of(&self, path: &str) -> Option<String> {
        let path = normalise(path);
        if self.has_file(&path) {
            return None;
        }
        named_elsewhere(&self.prompt, &path).filter(|named| self.has_file(named))
    }

    /// Whether `path` (normalised) is a file of the workspace: listed at
    /// the turn's start or written since.
    fn has_file(&self, path: &str) -> bool {
        self.files
            .iter()
            .chain(&self.changed)
            .any(|f| normalise(f) == path)
    }

    /// That the refusal of `call` handed over the call with `handed` (its
    /// arguments), if any ([`TurnWork::handed_over_for`]).
    pub(crate) fn note_handed_over(
        &mut self,
        call: &cortex_protocol::ToolArgs,
        handed: Option<String>,
    ) {
        if let Some(handed) = handed {
            self.handed_over.insert(format!("{call:?}"), handed);
        }
    }

    /// The arguments (JSON) of the call handed over when `call` was
    /// refused, while that refusal holds against it.
    pub(crate) fn handed_over_for(&self, call: &cortex_protocol::ToolArgs) -> Option<&str> {
        self.handed_over
            .get(&format!("{call:?}"))
            .map(String::as_str)
    }

    /// Whether a refusal that holds refuses `call` if it comes again
    /// unchanged: one that handed over a call, a write to a file the task
    /// says to run when it names others for the fix, a quote swap, or a
    /// second copy of a file the task names.
    pub(crate) fn holds_against(&self, call: &cortex_protocol::ToolArgs) -> bool {
        self.refused_writes
            .contains(&RefusedWrite::Call(format!("{call:?}")))
            || call
                .written_path()
                .is_some_and(|path| self.holds_write_to_run(path))
            || matches!(call, cortex_protocol::ToolArgs::EditFile(edit) if self.refuses_quote_swap(edit))
            || matches!(call, cortex_protocol::ToolArgs::WriteFile(write) if self.second_copy_of(&write.path).is_some())
    }

    /// Whether `edit` is refused as a quote swap ([`quote_swap`]): every
    /// time, unless the task speaks of quotes.
    pub(crate) fn refuses_quote_swap(&self, edit: &cortex_protocol::EditFileArgs) -> bool {
        quote_swap(edit) && !mentions_quotes(&self.prompt)
    }

    /// The calls the gates will refuse if the next reply makes them again
    /// ([`cortex_model::RefusedCalls`]), as the last round
    /// left them (`Session::dispatch` sets them).
    pub(crate) fn refused_calls(&self) -> &[cortex_model::RefusedCall] {
        &self.refused_calls
    }

    /// Where the failure the task reports lies: the innermost frame in
    /// `listed` of the traceback in `output` (the harness's run of it).
    pub(crate) fn note_reported_failure(&mut self, output: &str, listed: &[String]) {
        self.error_site = super::traceback::error_site(output, listed);
    }

    /// Where the failure the task reports lies, when the harness ran it.
    pub(crate) fn error_site(&self) -> Option<&super::ErrorSite> {
        self.error_site.as_ref()
    }

    /// The refusal of a write to `path`, which the task says to run
    /// ([`TurnWork::refuses_write_to_run`]): when the harness's run of it
    /// showed the error in another file, that file; when the task names
    /// the files to fix, those; else the model may insist.
    pub(crate) fn to_run_refusal(&self, path: &str) -> String {
        // Once the test passed with the turn's change, a change to it
        // breaks what works: the 1.5B made `assert add(2, 3) == 8` of a
        // passing test, and told to change calc.py instead, gave its fix
        // back as advice (181 tokens, two more rounds).
        if let Some(ran) = self.test_passed_since_change() {
            return format!(
                "not made: the task says to run {path}, not to change it, and `{ran}` passed \
                 after your change to {}. {DONE_IF_PASSING}",
                self.changed.join(" and ")
            );
        }
        let elsewhere = self
            .error_site()
            .filter(|site| !same_file(&normalise(path), &site.file));
        if let Some(site) = elsewhere {
            let code = site
                .code
                .as_ref()
                .map(|c| format!(" (`{c}`)"))
                .unwrap_or_default();
            return format!(
                "not made: the task says to run {path}, not to change it, and the error is not \
                 in {path}: the traceback of its run (above) ends in {file}, line {line}{code}. \
                 Fix {file} so that {path} passes.",
                file = site.file,
                line = site.line,
            );
        }
        let targets = self.fix_targets(path);
        match targets.first() {
            Some(target) => format!(
                "not made: the task says to run {path}, not to change it, and names {} for the \
                 change. Change {target} so that {path} passes.",
                targets.join(" and ")
            ),
            None => format!(
                "not made: the task says to run {path}, not to change it. Fix the code it runs \
                 so that it passes; if {path} itself is wrong, make this call again."
            ),
        }
    }

    /// The workspace's files the task names besides those it says to run
    /// ("Fix the bug in calc.py and run the test"): where a fix of what
    /// `path` runs belongs.
    fn fix_targets(&self, path: &str) -> Vec<String> {
        let path = normalise(path);
        let to_run = files_to_run(&self.prompt);
        named_files(&self.prompt)
            .into_iter()
            .filter(|f| !same_file(&path, f) && !to_run.iter().any(|r| same_file(r, f)))
            .filter(|f| self.files.iter().any(|l| same_file(l, f)))
            .collect()
    }

    /// Whether a call to `name` with `arguments` ran and succeeded in this
    /// turn.
    pub(crate) fn made_already(&self, name: &str, arguments: &str) -> bool {
        self.made
            .iter()
            .any(|c| c.name == name && cortex_model::same_arguments(&c.arguments, arguments))
    }

    /// Whether `answer` writes out, as text, a call this turn made and that
    /// succeeded.
    pub(crate) fn recites_made_call(&self, answer: &str) -> bool {
        let names: Vec<&str> = self.made.iter().map(|c| c.name.as_str()).collect();
        cortex_model::text_calls::parse_reply(answer, &names)
            .calls
            .iter()
            .any(|c| self.made_already(&c.name, &c.arguments))
    }

    /// The calls the next request says will be refused.
    pub(crate) fn set_refused_calls(&mut self, calls: Vec<cortex_model::RefusedCall>) {
        self.refused_calls = calls;
    }

    /// Whether a write that drops `name` from `path` is refused: only the
    /// first time in the turn.
    pub(crate) fn first_drop(&mut self, path: &str, name: &str) -> bool {
        self.refused_writes
            .insert(RefusedWrite::Drop(normalise(path), name.to_owned()))
    }

    /// Whether a write is refused because the task asks a question and no
    /// change: only the first time in the turn.
    pub(crate) fn first_unasked_write(&mut self) -> bool {
        !asks_for_work(&self.prompt) && self.refused_writes.insert(RefusedWrite::Question)
    }

    /// Whether a write to `path` is refused because the task says to run
    /// it: every time when the task names other files for the fix ("Fix
    /// the bug in calc.py and run the test": the 0.5B rewrote the test,
    /// twice), else the first time in the turn.
    pub(crate) fn refuses_write_to_run(&mut self, path: &str) -> bool {
        let path = normalise(path);
        if !files_to_run(&self.prompt)
            .iter()
            .any(|f| same_file(&path, f))
        {
            return false;
        }
        self.holds_write_to_run(&path) || self.refused_writes.insert(RefusedWrite::ToRun(path))
    }

    /// Whether writes to `path` are refused as long as the turn lasts: the
    /// task says to run it, names other files for the fix, and does not ask
    /// to write it; and it is there to run.
    pub(crate) fn holds_write_to_run(&self, path: &str) -> bool {
        let path = normalise(path);
        files_to_run(&self.prompt)
            .iter()
            .any(|f| same_file(&path, f))
            && self.files.iter().any(|l| same_file(l, &path))
            && !self.asks_to_write(&path)
            && !self.fix_targets(&path).is_empty()
    }
}

/// Whether `edit`, of a Python or JavaScript file, swaps `'` for `"` or
/// back and changes nothing else, so that the code does what it did
/// (`user["mail"]` made `user['mail']` for a `KeyError`, then the same
/// edit again). Text with both kinds of quote is not such a
/// swap: there a quote may be what a string says (`'say "hi"'`), or an
/// apostrophe that ended one too early (`'it's'`).
fn quote_swap(edit: &cortex_protocol::EditFileArgs) -> bool {
    let quoted_alike = [".py", ".js", ".mjs", ".ts"]
        .iter()
        .any(|ext| edit.path.ends_with(ext));
    let unquoted = |s: &str| s.replace('\'', "\"");
    let one_kind = |s: &str| !(s.contains('\'') && s.contains('"'));
    quoted_alike
        && edit.old_string != edit.new_string
        && one_kind(&edit.old_string)
        && one_kind(&edit.new_string)
        && unquoted(&edit.old_string) == unquoted(&edit.new_string)
}

/// Whether the task speaks of quotes (then changing them is the task).
fn mentions_quotes(prompt: &str) -> bool {
    prompt.to_lowercase().contains("quot")
}

#[cfg(test)]
mod tests {
    use super::{mentions_quotes, quote_swap};
    use cortex_protocol::EditFileArgs;

    #[test]
    fn an_edit_that_only_swaps_quotes_is_named() {
        let on = |path: &str, old: &str, new: &str| {
            quote_swap(&EditFileArgs {
                path: path.into(),
                old_string: old.into(),
                new_string: new.into(),
                replace_all: None,
            })
        };
        assert!(on(
            "users.py",
            "return user[\"mail\"]",
            "return user['mail']"
        ));
        assert!(on("app.js", "x = 'a'", "x = \"a\""));
        // In a shell script or Markdown, quotes mean something else.
        assert!(!on("run.sh", "echo \"$a\"", "echo '$a'"));
        assert!(!on("README.md", "say \"hi\"", "say 'hi'"));
        // A change besides the quotes is a change.
        assert!(!on(
            "users.py",
            "return user[\"mail\"]",
            "return user['email']"
        ));
        assert!(!on("users.py", "x", "x"));
        // Quotes inside a string, and an apostrophe that broke one, are what
        // the string says, not how it is quoted.
        assert!(!on("say.py", "print('say \"hi\"')", "print(\"say 'hi'\")"));
        assert!(!on("say.py", "print('it's')", "print(\"it's\")"));
        assert!(mentions_quotes("Use single quotes in users.py"));
        assert!(!mentions_quotes("Fix users.py so that the test passes."));
    }
}
