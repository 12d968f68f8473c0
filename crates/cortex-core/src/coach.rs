//! Checks on an answer that ends a turn, for models that need them: advice
//! instead of action, a named file left untouched, a change never tested.
//!
//! Small local models stop too early in three recognisable ways
//! (docs/BENCHMARKS.md, the task set): they tell the user what to run or
//! change instead of doing it; they change one of the two files a task
//! names and answer; they claim a fix works without running the test the
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
use cortex_protocol::{Mode, ToolCallRequest, ToolName, ToolStatus};

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
    /// Checks already sent this turn.
    sent: Vec<Check>,
}

/// The checks, in the order they are tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    Advice,
    NamedFiles,
    Untested,
}

impl TurnWork {
    /// A turn that starts with `prompt`.
    pub(crate) fn new(prompt: &str) -> Self {
        TurnWork {
            prompt: prompt.to_owned(),
            ..TurnWork::default()
        }
    }

    /// The turn's context listed these files.
    /// The turn's message.
    pub(crate) fn prompt(&self) -> &str {
        &self.prompt
    }

    pub(crate) fn set_files(&mut self, listing: &str) {
        self.files = listing.lines().map(str::to_owned).collect();
    }

    /// A call of the turn was answered with `status`.
    pub(crate) fn record(&mut self, call: &ToolCallRequest, status: ToolStatus) {
        let Ok(tool) = call.name.parse::<ToolName>() else {
            return;
        };
        let args: serde_json::Value = serde_json::from_str(&call.arguments).unwrap_or_default();
        let text = |key: &str| args.get(key).and_then(|v| v.as_str()).map(str::to_owned);
        match tool {
            ToolName::WriteFile | ToolName::EditFile if status == ToolStatus::Ok => {
                if let Some(path) = text("path").map(|p| normalise(&p)) {
                    if !self.changed.contains(&path) {
                        self.changed.push(path);
                    }
                    self.commands_since_change.clear();
                }
            }
            ToolName::Bash if status != ToolStatus::Refused => {
                self.commands_since_change.extend(text("command"));
            }
            _ => {}
        }
    }

    /// The first check that applies to `answer` and was not sent yet, as
    /// the reminder to send; marks it sent.
    fn next_reminder(&mut self, answer: &str) -> Option<String> {
        let checks = [
            (Check::Advice, self.advice(answer)),
            (Check::NamedFiles, self.untouched_files()),
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
        if !self.changed.is_empty() || !asks_for_work(&self.prompt) {
            return None;
        }
        let lower = answer.to_lowercase();
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
        let tool = match (change, command) {
            (true, _) => "edit_file (or write_file)",
            (false, true) => "bash",
            (false, false) => return None,
        };
        Some(format!(
            "{DO_IT_PREFIX} your answer tells the user to do work in the repository, but you \
             have the tools to do it yourself and nothing has been changed yet. Call {tool} now \
             to do it, then answer with what you did."
        ))
    }

    /// A task that names several files, some changed and some not.
    fn untouched_files(&self) -> Option<String> {
        if self.changed.is_empty() {
            return None;
        }
        // A test the prompt says to run is named, but not to be changed.
        let to_run = test_command(&self.prompt, &[]).unwrap_or_default();
        let named: Vec<String> = named_files(&self.prompt)
            .into_iter()
            .filter(|n| !to_run.contains(n.as_str()))
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

    /// Files changed, a test command known, and no command run since.
    fn untested(&self) -> Option<String> {
        if self.changed.is_empty() || !self.commands_since_change.is_empty() {
            return None;
        }
        let command = test_command(&self.prompt, &self.files)?;
        Some(format!(
            "{DO_IT_PREFIX} you changed {} but have not run the tests since. Run `{command}` \
             with bash and check that it passes before you answer.",
            self.changed.join(", ")
        ))
    }
}

impl Session {
    /// The reminder for an answer that ends the turn too early, if any (see
    /// the module docs); `None` also for models without `verify_answers`
    /// and outside Agent mode.
    pub(crate) fn coach(&mut self, answer: &str) -> Option<String> {
        if self.mode() != Mode::Agent || !self.model.info().is_some_and(|i| i.verify_answers) {
            return None;
        }
        self.turn_work.next_reminder(answer)
    }
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
    prompt
        .to_lowercase()
        .split(|c: char| !c.is_ascii_alphabetic())
        .any(|w| VERBS.contains(&w))
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
        // `e.g` and `i.e` are not files; `main.c` is.
        let plausible = !stem.is_empty()
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
    fn advice_is_met_once_and_only_before_any_change() {
        let mut work = TurnWork::new("python3 test_calc.py fails. Fix calc.py.");
        let advice = "Change the minus to a plus:\n```python\nreturn a + b\n```";
        let text = work.next_reminder(advice).expect("advice");
        assert!(
            text.starts_with(DO_IT_PREFIX) && text.contains("edit_file"),
            "{text}"
        );
        assert_eq!(work.next_reminder(advice), None);
        let mut work = TurnWork::new("Make the tests pass.");
        let text = work
            .next_reminder("You can run `pytest` to see them fail.")
            .expect("command advice");
        assert!(text.contains("bash"), "{text}");
        // A question is answered, even with code in the answer.
        let mut work = TurnWork::new("How do I run the app?");
        assert_eq!(work.next_reminder("```sh\npython3 app.py\n```"), None);
        let mut work = TurnWork::new("What does greet() return?");
        assert_eq!(work.next_reminder("It returns 'Hello, Cortex'."), None);
    }

    #[test]
    fn a_named_file_left_untouched_is_listed() {
        let mut work =
            TurnWork::new("Change the timeout from 30 to 45 in both client.py and worker.py.");
        work.record(
            &call("edit_file", serde_json::json!({"path": "client.py"})),
            ToolStatus::Ok,
        );
        let text = work.next_reminder("Done.").expect("untouched");
        assert!(
            text.contains("changed client.py only") && text.contains("worker.py needs"),
            "{text}"
        );
        work.record(
            &call("edit_file", serde_json::json!({"path": "./worker.py"})),
            ToolStatus::Ok,
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
        );
        // test_calc.py is named, but it is the test to run, not a file to change.
        work.record(
            &call("edit_file", serde_json::json!({"path": "x"})),
            ToolStatus::Error,
        );
        let text = work.next_reminder("Fixed.").expect("a reminder");
        assert!(text.contains("test_calc.py"), "{text}");
        let mut ran = TurnWork::new("python3 test_calc.py fails. Fix calc.py.");
        ran.record(
            &call("edit_file", serde_json::json!({"path": "calc.py"})),
            ToolStatus::Ok,
        );
        ran.record(
            &call(
                "bash",
                serde_json::json!({"command": "python3 test_calc.py"}),
            ),
            ToolStatus::Ok,
        );
        assert_eq!(ran.next_reminder("Fixed."), None);
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
    }
}
