//! Rebuilding a session's state from its stored timeline.
//!
//! The timeline is the source of truth; the in-memory history of a live
//! session is the same fold applied as events happen. A call that has no
//! recorded result (the process died mid-call) gets a synthetic one, so the
//! rebuilt history is always well formed for providers that demand an answer
//! to every call. A `compaction.done` replaces the history so far with its
//! context message and the messages it kept, as the live session did.

use crate::context::with_context;
use crate::goal::GoalFold;
use crate::plans::PlanVersion;
use cortex_protocol::{
    CallId, Event, EventKind, Goal, Message, Mode, Role, Sandbox, Todo, ToolCallRequest,
};
use std::collections::HashSet;

/// What a stored timeline says about a session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rebuilt {
    pub messages: Vec<Message>,
    pub mode: Option<Mode>,
    pub todos: Vec<Todo>,
    /// Every plan version with the user's verdict on it, oldest first.
    pub plans: Vec<PlanVersion>,
    /// The spec in progress.
    pub spec: crate::specs::SpecState,
    /// Every call id ever dispatched, so none runs twice.
    pub call_ids: HashSet<String>,
    /// The sandbox the session was created with.
    pub sandbox: Sandbox,
    /// The session's goal, with its counters.
    pub goal: Option<Goal>,
}

const INTERRUPTED: &str = "interrupted: no result was recorded for this call";

impl Rebuilt {
    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a Event>) -> Rebuilt {
        let mut state = Rebuilt::default();
        let mut pending: Option<(String, Vec<ToolCallRequest>)> = None;
        let mut answered: HashSet<String> = HashSet::new();
        let mut goal = GoalFold::default();
        for event in events {
            goal.apply(event);
            crate::specs::apply(&mut state.spec, &event.kind);
            match &event.kind {
                EventKind::SessionCreated { mode, sandbox, .. } => {
                    state.mode = Some(*mode);
                    state.sandbox = *sandbox;
                }
                EventKind::ModeChanged { to, .. } => state.mode = Some(*to),
                EventKind::TurnStarted { message, .. } => {
                    state.close_round(&mut pending, &answered);
                    state.messages.push(Message::user(message.clone()));
                }
                EventKind::TurnContext { text } => {
                    if let Some(message) = state.messages.last_mut()
                        && message.role == Role::User
                    {
                        message.content = with_context(text, &message.content);
                    }
                }
                EventKind::TurnReminder { text } => {
                    state.close_round(&mut pending, &answered);
                    state.messages.push(Message::user(text.clone()));
                }
                EventKind::ModelRequest { .. } => state.close_round(&mut pending, &answered),
                EventKind::MessageDone { text } => {
                    pending.get_or_insert_with(Default::default).0 = text.clone();
                }
                EventKind::ToolCall {
                    call_id,
                    name,
                    arguments,
                } => {
                    state.call_ids.insert(call_id.0.clone());
                    pending
                        .get_or_insert_with(Default::default)
                        .1
                        .push(ToolCallRequest {
                            id: call_id.clone(),
                            name: name.clone(),
                            arguments: arguments.clone(),
                        });
                }
                EventKind::ToolResult {
                    call_id, output, ..
                } => {
                    state.flush(&mut pending, &answered);
                    answered.insert(call_id.0.clone());
                    state
                        .messages
                        .push(Message::tool(call_id.clone(), output.clone()));
                }
                EventKind::CompactionDone { kept, context, .. } => {
                    // The same cut the live session made: the context
                    // message, then the last messages verbatim.
                    state.close_round(&mut pending, &answered);
                    let keep = kept.recent_messages.min(state.messages.len());
                    let tail = state.messages.split_off(state.messages.len() - keep);
                    state.messages = std::iter::once(Message::user(context.clone()))
                        .chain(tail)
                        .collect();
                }
                EventKind::TodoUpdated { todos } => state.todos = todos.clone(),
                EventKind::PlanProposed { .. }
                | EventKind::PlanAccepted { .. }
                | EventKind::PlanRejected { .. } => {
                    crate::plans::apply(&mut state.plans, &event.kind)
                }
                kind if kind.ends_turn() => state.close_round(&mut pending, &answered),
                _ => {}
            }
        }
        state.close_round(&mut pending, &answered);
        state.goal = goal.goal;
        state
    }

    /// A round is over: its assistant message is complete and every call in
    /// it must have an answer.
    fn close_round(
        &mut self,
        pending: &mut Option<(String, Vec<ToolCallRequest>)>,
        answered: &HashSet<String>,
    ) {
        self.flush(pending, answered);
        self.answer_unanswered(answered);
    }

    /// Push the pending assistant message (its results follow it).
    fn flush(
        &mut self,
        pending: &mut Option<(String, Vec<ToolCallRequest>)>,
        answered: &HashSet<String>,
    ) {
        if let Some((text, calls)) = pending.take() {
            self.answer_unanswered(answered);
            if !text.is_empty() || !calls.is_empty() {
                self.messages.push(Message::assistant(text, calls));
            }
        }
    }

    /// Close the previous assistant message's calls that never got a result,
    /// before anything else is appended after them.
    fn answer_unanswered(&mut self, answered: &HashSet<String>) {
        let Some(last_assistant) = self.messages.iter().rposition(|m| !m.tool_calls.is_empty())
        else {
            return;
        };
        let present: HashSet<&CallId> = self.messages[last_assistant + 1..]
            .iter()
            .filter_map(|m| m.tool_call_id.as_ref())
            .collect();
        let missing: Vec<CallId> = self.messages[last_assistant]
            .tool_calls
            .iter()
            .filter(|c| !present.contains(&c.id) && !answered.contains(c.id.as_str()))
            .map(|c| c.id.clone())
            .collect();
        for id in missing {
            self.messages.push(Message::tool(id, INTERRUPTED));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cortex_protocol::{StopRule, ToolStatus};

    fn ev(seq: u64, kind: EventKind) -> Event {
        Event {
            seq,
            ts: String::new(),
            session_id: "s".into(),
            turn_id: Some("t".into()),
            kind,
        }
    }

    fn call(id: &str) -> EventKind {
        EventKind::ToolCall {
            call_id: id.into(),
            name: "read_file".into(),
            arguments: r#"{"path":"a"}"#.into(),
        }
    }

    fn result(id: &str) -> EventKind {
        EventKind::ToolResult {
            call_id: id.into(),
            name: "read_file".into(),
            status: ToolStatus::Ok,
            output: "1\tx".into(),
            ms: 1.0,
            diff: None,
        }
    }

    #[test]
    fn rebuilds_a_two_round_turn() {
        let events = [
            EventKind::SessionCreated {
                repository: "/r".into(),
                mode: Mode::Ask,
                model: "scripted".into(),
                stop_rule: StopRule::Code,
                sandbox: Default::default(),
            },
            EventKind::TurnStarted {
                message: "hi".into(),
                mode: Mode::Ask,
            },
            EventKind::ModelRequest {
                round: 1,
                model: "m".into(),
                messages: 1,
                tools: vec![],
                bytes: 0,
            },
            EventKind::MessageDone {
                text: "looking".into(),
            },
            call("c1"),
            call("c2"),
            result("c2"),
            result("c1"),
            EventKind::ModelRequest {
                round: 2,
                model: "m".into(),
                messages: 4,
                tools: vec![],
                bytes: 0,
            },
            EventKind::MessageDone {
                text: "done".into(),
            },
            EventKind::TurnCompleted {
                rounds: 2,
                finish: None,
            },
        ];
        let events: Vec<Event> = events
            .into_iter()
            .enumerate()
            .map(|(i, k)| ev(i as u64 + 1, k))
            .collect();
        let r = Rebuilt::from_events(&events);
        let roles: Vec<Role> = r.messages.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [
                Role::User,
                Role::Assistant,
                Role::Tool,
                Role::Tool,
                Role::Assistant
            ]
        );
        assert_eq!(r.messages[1].tool_calls.len(), 2);
        assert_eq!(r.messages[4].content, "done");
        assert_eq!(r.mode, Some(Mode::Ask));
        assert!(r.call_ids.contains("c1"));
    }

    #[test]
    fn the_turn_context_goes_before_the_message() {
        let events: Vec<Event> = [
            EventKind::TurnStarted {
                message: "fix it".into(),
                mode: Mode::Agent,
            },
            EventKind::TurnContext {
                text: "Files in the repository (1):\napp.py".into(),
            },
        ]
        .into_iter()
        .enumerate()
        .map(|(i, k)| ev(i as u64 + 1, k))
        .collect();
        let r = Rebuilt::from_events(&events);
        assert_eq!(r.messages.len(), 1);
        assert_eq!(
            r.messages[0].content,
            "Files in the repository (1):\napp.py\n\nfix it"
        );
    }

    #[test]
    fn compaction_done_replaces_all_but_the_kept_tail() {
        let events: Vec<Event> = [
            EventKind::TurnStarted {
                message: "hi".into(),
                mode: Mode::Agent,
            },
            call("c1"),
            result("c1"),
            EventKind::MessageDone {
                text: "more".into(),
            },
            call("c2"),
            result("c2"),
            EventKind::CompactionDone {
                trigger: cortex_protocol::CompactionTrigger::Threshold,
                tokens_before: 100,
                tokens_after: 10,
                messages_before: 5,
                messages_after: 3,
                summarised: 3,
                kept: cortex_protocol::CompactionKept {
                    recent_messages: 2,
                    ..Default::default()
                },
                summary: "s".into(),
                context: "summary and keep-set".into(),
            },
            EventKind::MessageDone {
                text: "done".into(),
            },
            EventKind::TurnCompleted {
                rounds: 3,
                finish: None,
            },
        ]
        .into_iter()
        .enumerate()
        .map(|(i, k)| ev(i as u64 + 1, k))
        .collect();
        let r = Rebuilt::from_events(&events);
        let shape: Vec<(Role, &str)> = r
            .messages
            .iter()
            .map(|m| (m.role, m.content.as_str()))
            .collect();
        assert_eq!(
            shape,
            [
                (Role::User, "summary and keep-set"),
                (Role::Assistant, "more"),
                (Role::Tool, "1\tx"),
                (Role::Assistant, "done"),
            ]
        );
        assert!(r.call_ids.contains("c1"));
    }

    #[test]
    fn unanswered_calls_get_a_synthetic_result() {
        let events: Vec<Event> = [
            EventKind::TurnStarted {
                message: "hi".into(),
                mode: Mode::Agent,
            },
            call("c1"),
            call("c2"),
            result("c1"),
        ]
        .into_iter()
        .enumerate()
        .map(|(i, k)| ev(i as u64 + 1, k))
        .collect();
        let r = Rebuilt::from_events(&events);
        let last = r.messages.last().expect("messages");
        assert_eq!(last.tool_call_id.as_ref().map(|c| c.as_str()), Some("c2"));
        assert_eq!(last.content, INTERRUPTED);
        assert_eq!(r.messages.len(), 4);
    }
}
