//! A session's state as the fold of its timeline.
//!
//! [`SessionState::apply`] is the one function that changes it: the live
//! session appends an event to the timeline and applies it, and a resume
//! applies every stored event in order, so both hold the same history, mode,
//! todo list, plans, spec, goal and usage anchor, and send the same next
//! request.

use crate::compaction::UsageAnchor;
use crate::goal::GoalFold;
use crate::plans::PlanVersion;
use crate::specs::SpecState;
use cortex_protocol::{
    Event, EventKind, Goal, Message, Mode, ProviderItem, Sandbox, Todo, ToolCallRequest,
};
use std::collections::HashSet;

/// A round whose assistant message is not in the history yet.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Round {
    pub(crate) text: String,
    pub(crate) provider_items: Vec<ProviderItem>,
    /// The calls in the order the model made them, each with its answer once
    /// recorded.
    pub(crate) calls: Vec<(ToolCallRequest, Option<Answered>)>,
}

/// A call's recorded answer: its output and the images that go with it.
pub(crate) type Answered = (String, Vec<cortex_protocol::Attachment>);

/// What a session's timeline says about it so far.
#[derive(Debug, Clone, Default)]
pub struct SessionState {
    /// The conversation so far (a round still open is not in it yet).
    pub messages: Vec<Message>,
    /// The round whose assistant message is not in `messages` yet.
    pub(crate) round: Option<Round>,
    /// The mode the session was created with or last changed to.
    pub mode: Option<Mode>,
    /// The todo list as `todo_write` last left it.
    pub todos: Vec<Todo>,
    /// Every plan version with the user's verdict on it, oldest first.
    pub plans: Vec<PlanVersion>,
    /// The spec in progress.
    pub spec: SpecState,
    /// Every call id ever dispatched, so none runs twice.
    pub call_ids: HashSet<String>,
    /// The sandbox the session was created with.
    pub sandbox: Sandbox,
    /// The goal with its counters.
    pub(crate) goal: GoalFold,
    /// The project instructions last given and the paths calls named.
    pub(crate) instructions: crate::instructions::InstructionsFold,
    /// What the turn's reminders and refusals decided about the next reply.
    pub(crate) steering: crate::steer::Steering,
    /// The provider's count for the last model request, the base of the
    /// next request's estimate.
    pub(crate) usage_anchor: Option<UsageAnchor>,
    /// Messages in the last `model.request`, which its `usage` covers.
    request_messages: usize,
    /// Between `compaction.started` and its end: a `usage` is the
    /// summariser's, not the conversation's.
    compacting: bool,
    /// Where the history stood when each turn of the conversation started,
    /// oldest first: the turn, the compaction generation and the number of
    /// messages before its own (what a conversation rewind goes back to).
    pub(crate) turn_marks: Vec<(String, usize, usize)>,
    /// The history just before each compaction, so a rewind can go back
    /// past one (compactions are few: this is the history once more at
    /// most per compaction).
    before_compaction: Vec<Vec<Message>>,
}

/// The same state under its older name: what a stored timeline rebuilds.
pub type Rebuilt = SessionState;

impl SessionState {
    /// Fold a whole stored timeline, oldest event first, and close the
    /// round it ends in.
    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a Event>) -> SessionState {
        let mut state = SessionState::default();
        for event in events {
            state.apply(event);
        }
        state.close_round();
        state
    }

    /// The conversation so far (the round still open is not in it).
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The session's goal, if one is set.
    pub fn goal(&self) -> Option<&Goal> {
        self.goal.goal.as_ref()
    }

    /// Fold one event into the state: the only way the state changes.
    pub fn apply(&mut self, event: &Event) {
        self.goal.apply(event);
        self.instructions.apply(&event.kind);
        self.steering.apply(&event.kind);
        crate::specs::apply(&mut self.spec, &event.kind);
        crate::plans::apply(&mut self.plans, &event.kind);
        match &event.kind {
            EventKind::SessionCreated { mode, sandbox, .. } => {
                self.mode = Some(*mode);
                self.sandbox = *sandbox;
            }
            EventKind::ModeChanged { to, .. } => {
                self.mode = Some(*to);
                // Another system prompt and catalog: the count is stale.
                self.usage_anchor = None;
            }
            EventKind::TurnStarted { message, .. } => {
                self.close_round();
                if let Some(turn) = &event.turn_id {
                    self.turn_marks.push((
                        turn.0.clone(),
                        self.before_compaction.len(),
                        self.messages.len(),
                    ));
                }
                self.push_user(message)
            }
            EventKind::SessionRewound { turn_id, scope, .. } if scope.conversation() => {
                self.rewind_conversation(turn_id)
            }
            EventKind::TurnContext { text } => self.add_context(text),
            EventKind::TurnImages { images } => self.attach_to_user(images),
            EventKind::TurnReminder { text, .. } => self.push_user(text),
            EventKind::ModelRequest { messages, .. } => {
                self.close_round();
                self.request_messages = *messages;
            }
            EventKind::Usage { input_tokens, .. } if *input_tokens > 0 && !self.compacting => {
                self.usage_anchor = Some(UsageAnchor {
                    input_tokens: *input_tokens,
                    messages: self.request_messages,
                });
            }
            EventKind::MessageDone {
                text,
                provider_items,
            } => self.open_round(text, provider_items),
            EventKind::ToolCall {
                call_id,
                name,
                arguments,
            } => {
                self.call_ids.insert(call_id.0.clone());
                self.add_call(ToolCallRequest {
                    id: call_id.clone(),
                    name: name.clone(),
                    arguments: arguments.clone(),
                });
            }
            EventKind::ToolResult {
                call_id,
                output,
                attachments,
                ..
            } => self.add_result(call_id, output, attachments),
            EventKind::CompactionStarted { .. } => {
                self.close_round();
                self.compacting = true;
            }
            EventKind::CompactionFailed { .. } => self.compacting = false,
            EventKind::CompactionDone { kept, context, .. } => {
                self.close_round();
                self.before_compaction.push(self.messages.clone());
                self.compact(context, kept.recent_messages);
                self.compacting = false;
                // The provider's count described the old history.
                self.usage_anchor = None;
            }
            EventKind::TodoUpdated { todos } => self.todos = todos.clone(),
            kind if kind.ends_turn() => {
                self.close_round();
                self.compacting = false;
            }
            _ => {}
        }
    }

    /// Whether `turn` started in the conversation as it is now (not rewound).
    pub(crate) fn in_conversation(&self, turn: &str) -> bool {
        self.turn_marks.iter().any(|(t, ..)| t == turn)
    }

    /// The last turn of the conversation as it is now.
    pub(crate) fn last_turn(&self) -> Option<&str> {
        self.turn_marks.last().map(|(t, ..)| t.as_str())
    }

    /// `session.rewound` with the conversation in scope: the history as it
    /// was when `turn` started, so later requests are built as if it and
    /// every later turn were not there. The timeline keeps them.
    fn rewind_conversation(&mut self, turn: &str) {
        let Some(at) = self.turn_marks.iter().position(|(t, ..)| t == turn) else {
            return;
        };
        let (_, generation, len) = self.turn_marks[at];
        self.close_round();
        if generation < self.before_compaction.len() {
            self.messages = std::mem::take(&mut self.before_compaction[generation]);
            self.before_compaction.truncate(generation);
        }
        self.messages.truncate(len);
        // The rewound turns are no longer in the conversation.
        self.turn_marks.truncate(at);
        self.usage_anchor = None;
        self.compacting = false;
    }
}
