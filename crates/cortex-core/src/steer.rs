//! The harness's decisions about the model's next reply, as typed state.
//!
//! A reminder is recorded with its kind and what it asks of the next reply
//! ([`NextReply`]); a refused call's result with what the refusal decided
//! ([`CallSteer`]). [`Steering`] folds those events, so the next request's
//! tool choice comes from values a resumed session rebuilds the same way,
//! never from the words that render them: rewording a reminder or a
//! refusal changes no decision (`tests/wording.rs` rewrites them all).

use cortex_model::ToolChoice;
use cortex_protocol::{CallSteer, EventKind, NextReply, ReminderKind, ToolName};

/// A reminder to send: why, what it asks of the next reply, and its words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reminder {
    pub kind: ReminderKind,
    pub next: NextReply,
    pub text: String,
}

/// A reminder reads as its words (tests and logs quote it).
impl std::ops::Deref for Reminder {
    type Target = str;
    fn deref(&self) -> &str {
        &self.text
    }
}

impl std::fmt::Display for Reminder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// What a check says, before the check's kind is known: its words and
/// what they ask of the next reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Said {
    pub next: NextReply,
    pub text: String,
}

impl Said {
    /// Words that leave the next reply free.
    pub fn words(text: impl Into<String>) -> Said {
        Said {
            next: NextReply::Free,
            text: text.into(),
        }
    }

    /// Words after which the next reply must call `tool`.
    pub fn call(tool: ToolName, text: impl Into<String>) -> Said {
        Said {
            next: NextReply::Tool { tool },
            text: text.into(),
        }
    }

    /// Words after which the next reply must call some tool.
    pub fn any_tool(text: impl Into<String>) -> Said {
        Said {
            next: NextReply::AnyTool,
            text: text.into(),
        }
    }

    /// Words after which the next reply must be the answer.
    pub fn answer(text: impl Into<String>) -> Said {
        Said {
            next: NextReply::Answer,
            text: text.into(),
        }
    }

    /// The reminder of `kind` that says this.
    pub fn into_reminder(self, kind: ReminderKind) -> Reminder {
        Reminder {
            kind,
            next: self.next,
            text: self.text,
        }
    }
}

/// The fold of the decisions recorded so far in the turn.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Steering {
    /// The last reminder's decision, until the model's next reply.
    asked: Option<NextReply>,
    /// The last reminder, until the next message of the user or the turn's
    /// context: the reply to it is judged knowing what it asked.
    last_reminder: Option<(Option<ReminderKind>, NextReply)>,
    /// What the refusals of the last round decided, in call order.
    refusals: Vec<CallSteer>,
}

impl Steering {
    /// Fold one event.
    pub fn apply(&mut self, kind: &EventKind) {
        match kind {
            EventKind::TurnStarted { .. }
            | EventKind::TurnContext { .. }
            | EventKind::SessionRewound { .. } => *self = Steering::default(),
            EventKind::TurnReminder { kind, next, .. } => {
                self.asked = Some(*next);
                self.last_reminder = Some((*kind, *next));
                self.refusals.clear();
            }
            // A new round: what came before it was its request's.
            EventKind::MessageDone { .. } => {
                self.asked = None;
                self.refusals.clear();
            }
            EventKind::ToolResult {
                steer: Some(steer), ..
            } => self.refusals.push(*steer),
            kind if kind.ends_turn() => *self = Steering::default(),
            _ => {}
        }
    }

    /// Whether the last reminder, still the latest message to the model,
    /// is of `kind` and asked for the answer.
    pub fn answer_due_after(&self, kind: ReminderKind) -> bool {
        self.last_reminder == Some((Some(kind), NextReply::Answer))
    }

    /// The next request's tool choice among `offered`. After a reminder,
    /// what it asked (a tool not offered: any tool). Otherwise the last
    /// round's refusals: a call handed over is the one to make, and a tool
    /// refused as a repeat may not be called (a small model otherwise makes
    /// the refused call again until the turn ends).
    pub fn tool_choice(&self, offered: &[ToolName]) -> ToolChoice {
        match self.asked {
            Some(NextReply::Answer) => return ToolChoice::Answer,
            Some(NextReply::AnyTool) => return ToolChoice::Required,
            Some(NextReply::Tool { tool }) if offered.contains(&tool) => {
                return ToolChoice::Tool(tool);
            }
            Some(NextReply::Tool { .. }) => return ToolChoice::Required,
            Some(NextReply::Free) => return ToolChoice::Auto,
            None => {}
        }
        let barred = self.refusals.iter().find_map(|s| match s {
            CallSteer::Bars { tool } if offered.contains(tool) => Some(*tool),
            _ => None,
        });
        let handed = self.refusals.iter().find_map(|s| match s {
            CallSteer::Hands { tool } if offered.contains(tool) && Some(*tool) != barred => {
                Some(*tool)
            }
            _ => None,
        });
        match (handed, barred) {
            (Some(tool), _) => ToolChoice::Tool(tool),
            (None, Some(tool)) => ToolChoice::AutoWithout(tool),
            (None, None) => ToolChoice::Auto,
        }
    }
}

/// Rewording for the test that no decision depends on words: set, every
/// reminder's and refusal's text is passed through it before it is
/// recorded. Per thread, so tests running side by side do not see each
/// other's (a current-thread runtime runs the whole turn on its thread).
#[doc(hidden)]
pub mod wording {
    use std::cell::Cell;

    /// A rewording: the text sent for the text written.
    pub type Reword = fn(&str) -> String;

    thread_local! {
        static REWORD: Cell<Option<Reword>> = const { Cell::new(None) };
    }

    /// Reword the harness's messages on this thread with `f` (`None`:
    /// as written).
    pub fn reword_on_this_thread(f: Option<Reword>) {
        REWORD.with(|r| r.set(f));
    }

    /// `text` as the harness sends it.
    pub(crate) fn render(text: String) -> String {
        match REWORD.with(Cell::get) {
            Some(f) => f(&text),
            None => text,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cortex_protocol::CallId;

    fn result(steer: Option<CallSteer>) -> EventKind {
        EventKind::ToolResult {
            call_id: CallId("c".into()),
            name: "read_file".into(),
            status: cortex_protocol::ToolStatus::Refused,
            output: String::new(),
            ms: 0.0,
            diff: None,
            attachments: Vec::new(),
            steer,
        }
    }

    fn reminder(kind: ReminderKind, next: NextReply) -> EventKind {
        EventKind::TurnReminder {
            text: String::new(),
            kind: Some(kind),
            next,
        }
    }

    const OFFERED: &[ToolName] = &[ToolName::ReadFile, ToolName::EditFile, ToolName::Bash];

    #[test]
    fn a_round_of_refusals_bars_and_hands() {
        let mut s = Steering::default();
        s.apply(&result(Some(CallSteer::Bars {
            tool: ToolName::ReadFile,
        })));
        assert_eq!(
            s.tool_choice(OFFERED),
            ToolChoice::AutoWithout(ToolName::ReadFile)
        );
        s.apply(&result(Some(CallSteer::Hands {
            tool: ToolName::EditFile,
        })));
        assert_eq!(s.tool_choice(OFFERED), ToolChoice::Tool(ToolName::EditFile));
        // A tool not offered is neither barred nor handed.
        assert_eq!(s.tool_choice(&[ToolName::Bash]), ToolChoice::Auto);
        s.apply(&EventKind::MessageDone {
            text: String::new(),
            provider_items: Vec::new(),
        });
        assert_eq!(s.tool_choice(OFFERED), ToolChoice::Auto);
    }

    #[test]
    fn a_reminder_decides_until_the_next_reply() {
        let mut s = Steering::default();
        s.apply(&result(Some(CallSteer::Bars {
            tool: ToolName::ReadFile,
        })));
        s.apply(&reminder(
            ReminderKind::AfterRepeat,
            NextReply::Tool {
                tool: ToolName::Glob,
            },
        ));
        // Not offered: some tool.
        assert_eq!(s.tool_choice(OFFERED), ToolChoice::Required);
        s.apply(&reminder(ReminderKind::AfterRepeat, NextReply::Answer));
        assert_eq!(s.tool_choice(OFFERED), ToolChoice::Answer);
        assert!(s.answer_due_after(ReminderKind::AfterRepeat));
        assert!(!s.answer_due_after(ReminderKind::UnrunCall));
        s.apply(&EventKind::MessageDone {
            text: String::new(),
            provider_items: Vec::new(),
        });
        assert_eq!(s.tool_choice(OFFERED), ToolChoice::Auto);
        // The reply is still judged as the reply to that reminder.
        assert!(s.answer_due_after(ReminderKind::AfterRepeat));
        s.apply(&reminder(ReminderKind::Echo, NextReply::Free));
        assert_eq!(s.tool_choice(OFFERED), ToolChoice::Auto);
        assert!(!s.answer_due_after(ReminderKind::AfterRepeat));
    }
}
