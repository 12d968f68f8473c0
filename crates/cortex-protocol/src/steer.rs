//! The harness's typed decisions about the model's next reply, recorded
//! with the words that render them.
//!
//! A reminder (`turn.reminder`) and a refused call's result (`tool.result`)
//! carry what the harness decided besides their text: whether the next
//! reply must answer, must call a tool or one tool, or may not call one.
//! The next request is built from these values, folded over the timeline,
//! never from re-reading the sentences; rewording a message changes no
//! decision (`cortex-core`'s wording test rewrites them all). A turn that
//! ends while a check still doubts its answer says so in `turn.completed`
//! ([`Doubt`]).

use crate::mode::ToolName;
use serde::{Deserialize, Serialize};

/// What a reminder asks of the model's next reply.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum NextReply {
    /// Nothing: the reply is free, and what the last round's refusals
    /// decided is forgotten.
    #[default]
    Free,
    /// The reply must be the answer, without a tool call.
    Answer,
    /// The reply must call a tool, any of those offered.
    AnyTool,
    /// The reply must call this tool (any tool when it is not offered).
    Tool {
        /// The tool to call.
        tool: ToolName,
    },
}

impl NextReply {
    /// Whether it is the default (left out on the wire).
    pub fn is_free(&self) -> bool {
        *self == NextReply::Free
    }
}

/// Why the harness wrote to the model: the check or rule a reminder comes
/// from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReminderKind {
    /// An answer given without any successful tool call, to be checked.
    Unchecked,
    /// A reply cut off or running away, to be given again.
    CutReply,
    /// A reply that wrote a tool call as text instead of making it.
    UnrunCall,
    /// A call refused as a repeat: the task's next step.
    AfterRepeat,
    /// The answer repeats a tool's output or the harness's words.
    Echo,
    /// A changed file no longer parses.
    Broken,
    /// The answer tells the user what to do instead of doing it.
    Advice,
    /// The answer says what a command prints without running it.
    Imagined,
    /// The answer says a command printed something it did not print.
    WrongOutput,
    /// The answer leaves out what the question asks for.
    Unanswered,
    /// A count the turn's own listing contradicts.
    Miscounted,
    /// The answer leaves out the output the task asks for.
    OutputLeftOut,
    /// A question about what code does, answered without running it.
    Evaluate,
    /// A definition the task did not ask to remove was removed.
    Removed,
    /// The task names files left unchanged.
    NamedFiles,
    /// A rename the task asks for left the old name behind.
    RenameLeft,
    /// A changed file cannot run as written.
    WontRun,
    /// Files changed and nothing run that exercises them.
    Untested,
    /// The task's test failed the last time it ran.
    TestFails,
    /// The reply was empty.
    Empty,
    /// One of the user's `Stop` hooks sent the model back.
    Hook,
}

impl ReminderKind {
    /// The kind's name on the wire (`wrong_output`).
    pub fn as_str(self) -> &'static str {
        use ReminderKind::*;
        match self {
            Unchecked => "unchecked",
            CutReply => "cut_reply",
            UnrunCall => "unrun_call",
            AfterRepeat => "after_repeat",
            Echo => "echo",
            Broken => "broken",
            Advice => "advice",
            Imagined => "imagined",
            WrongOutput => "wrong_output",
            Unanswered => "unanswered",
            Miscounted => "miscounted",
            OutputLeftOut => "output_left_out",
            Evaluate => "evaluate",
            Removed => "removed",
            NamedFiles => "named_files",
            RenameLeft => "rename_left",
            WontRun => "wont_run",
            Untested => "untested",
            TestFails => "test_fails",
            Empty => "empty",
            Hook => "hook",
        }
    }
}

impl ReminderKind {
    /// What the check's doubt means for the user, when the answer a turn
    /// ended with is still open to it.
    pub fn doubt(self) -> &'static str {
        use ReminderKind::*;
        match self {
            Unchecked => "the answer is not based on any successful tool call",
            CutReply => "the answer was cut off",
            UnrunCall => "the answer is a tool call that did not run",
            AfterRepeat => "the model was repeating calls",
            Echo => "the answer repeats a tool's output or the harness's words",
            Broken => "a file the turn changed no longer parses",
            Advice => "the answer says what to do instead of doing it",
            Imagined => "the answer says what a command prints without having run it",
            WrongOutput => "the answer quotes output the command did not print",
            Unanswered => "the answer leaves out what the question asks for",
            Miscounted => "the count differs from the files the turn listed",
            OutputLeftOut => "the answer leaves out the output the task asks for",
            Evaluate => "what the code does was worked out, not run",
            Removed => "a definition the task did not ask to remove was removed",
            NamedFiles => "files the task names were left unchanged",
            RenameLeft => "the old name of the rename is still in the code",
            WontRun => "a file the turn changed cannot run as written",
            Untested => "the change was not tested",
            TestFails => "the task's test failed the last time it ran",
            Empty => "the answer is empty",
            Hook => "a Stop hook did not accept the answer",
        }
    }
}

/// What a refused call's result decides about the next reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "steer", rename_all = "snake_case")]
pub enum CallSteer {
    /// The call was refused as a repeat: the next reply may not call this
    /// tool.
    Bars {
        /// The tool refused.
        tool: ToolName,
    },
    /// The refusal handed over the call to make instead: the next reply
    /// must call this tool.
    Hands {
        /// The tool of the call handed over.
        tool: ToolName,
    },
}

/// A check that still doubts the answer a turn ended with: the turn
/// completed, but its answer is unverified.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Doubt {
    /// The check.
    pub check: ReminderKind,
    /// What it found, in a sentence for the user.
    pub reason: String,
}

impl Doubt {
    /// The doubt of the check of `kind`, in its words for the user.
    pub fn of(kind: ReminderKind) -> Doubt {
        Doubt {
            check: kind,
            reason: kind.doubt().to_owned(),
        }
    }
}

/// The line a client shows under a completed turn whose answer is
/// unverified (`unverified: <reason>; <reason>`); `None` when nothing is
/// doubted.
pub fn unverified_line(doubts: &[Doubt]) -> Option<String> {
    if doubts.is_empty() {
        return None;
    }
    let reasons: Vec<&str> = doubts.iter().map(|d| d.reason.as_str()).collect();
    Some(format!("unverified: {}", reasons.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_name_themselves_as_serde_does() {
        for kind in [
            ReminderKind::Unchecked,
            ReminderKind::WrongOutput,
            ReminderKind::OutputLeftOut,
            ReminderKind::Empty,
        ] {
            let json = serde_json::to_string(&kind).expect("serialise");
            assert_eq!(json, format!("\"{}\"", kind.as_str()));
        }
    }

    #[test]
    fn steers_round_trip() {
        let next = NextReply::Tool {
            tool: ToolName::Bash,
        };
        let json = serde_json::to_string(&next).expect("serialise");
        assert_eq!(json, r#"{"reply":"tool","tool":"bash"}"#);
        assert_eq!(
            serde_json::from_str::<NextReply>(&json).expect("parse"),
            next
        );
        let steer = CallSteer::Bars {
            tool: ToolName::ReadFile,
        };
        let json = serde_json::to_string(&steer).expect("serialise");
        assert_eq!(
            serde_json::from_str::<CallSteer>(&json).expect("parse"),
            steer
        );
        assert_eq!(unverified_line(&[]), None);
        let doubts = [Doubt {
            check: ReminderKind::TestFails,
            reason: "the test failed".into(),
        }];
        assert_eq!(
            unverified_line(&doubts).as_deref(),
            Some("unverified: the test failed")
        );
    }
}
