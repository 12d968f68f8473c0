//! The conversation history as a fold of the timeline.
//!
//! A round's assistant message is opened by `message.done` (text and the
//! provider's items), gets its calls from `tool.call` events and their
//! answers from `tool.result` events (in whatever order they land), and is
//! closed, assistant message first and then the answers in call order, when
//! the round is over: the next request, turn or reminder, a compaction or
//! the end of the turn. The live session closes it the same way once every
//! call is answered. A call that has no recorded result (the process died
//! mid-call) gets a synthetic one, so the history is always well formed for
//! providers that demand an answer to every call. A `compaction.done`
//! replaces the history so far with its context message and the messages it
//! kept, as the live session did.

use crate::context::with_context;
use crate::state::{Round, SessionState};
use cortex_protocol::{Attachment, CallId, Message, ProviderItem, Role, ToolCallRequest};

pub(crate) const INTERRUPTED: &str = "interrupted: no result was recorded for this call";

impl SessionState {
    /// A user message (a turn's or a reminder): the round before it is over.
    pub(crate) fn push_user(&mut self, text: &str) {
        self.close_round();
        self.messages.push(Message::user(text));
    }

    /// The images the user attached to the turn's message (`turn.images`).
    pub(crate) fn attach_to_user(&mut self, images: &[cortex_protocol::ImageRef]) {
        if let Some(message) = self
            .messages
            .iter_mut()
            .rev()
            .find(|m| m.role == Role::User)
        {
            message
                .attachments
                .extend(images.iter().map(cortex_protocol::ImageRef::attachment));
        }
    }

    /// The turn's listing goes before its message (`turn.context`).
    pub(crate) fn add_context(&mut self, text: &str) {
        if let Some(message) = self.messages.last_mut()
            && message.role == Role::User
        {
            message.content = with_context(text, &message.content);
        }
    }

    /// `message.done`: a new round with the assistant's text.
    pub(crate) fn open_round(&mut self, text: &str, provider_items: &[ProviderItem]) {
        self.close_round();
        self.round = Some(Round {
            text: text.to_owned(),
            provider_items: provider_items.to_vec(),
            calls: Vec::new(),
        });
    }

    /// `tool.call`: one more call of the open round.
    pub(crate) fn add_call(&mut self, call: ToolCallRequest) {
        self.round
            .get_or_insert_with(Default::default)
            .calls
            .push((call, None));
    }

    /// `tool.result`: the answer to the first unanswered call with this id
    /// (a result for no open call stands on its own).
    pub(crate) fn add_result(
        &mut self,
        call_id: &CallId,
        output: &str,
        attachments: &[Attachment],
    ) {
        let slot = self.round.as_mut().and_then(|round| {
            round
                .calls
                .iter_mut()
                .find(|(call, answer)| call.id == *call_id && answer.is_none())
        });
        match slot {
            Some((_, answer)) => *answer = Some((output.to_owned(), attachments.to_vec())),
            None => {
                self.close_round();
                self.messages.push(Message::tool_with(
                    call_id.clone(),
                    output.to_owned(),
                    attachments.to_vec(),
                ));
            }
        }
    }

    /// `compaction.done`: the context message, then the last `keep`
    /// messages verbatim (the same cut the live session made).
    pub(crate) fn compact(&mut self, context: &str, keep: usize) {
        self.close_round();
        let keep = keep.min(self.messages.len());
        let tail = self.messages.split_off(self.messages.len() - keep);
        self.messages = std::iter::once(Message::user(context))
            .chain(tail)
            .collect();
    }

    /// The round is over: its assistant message, then an answer to each of
    /// its calls in call order.
    pub(crate) fn close_round(&mut self) {
        let Some(round) = self.round.take() else {
            return;
        };
        if round.text.is_empty() && round.calls.is_empty() {
            return;
        }
        let calls: Vec<ToolCallRequest> = round.calls.iter().map(|(c, _)| c.clone()).collect();
        let mut message = Message::assistant(round.text, calls);
        message.provider_items = round.provider_items;
        self.messages.push(message);
        for (call, answer) in round.calls {
            let (output, attachments) =
                answer.unwrap_or_else(|| (INTERRUPTED.to_owned(), Vec::new()));
            self.messages
                .push(Message::tool_with(call.id, output, attachments));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::Rebuilt;
    use cortex_protocol::{Event, EventKind, Mode, StopRule, ToolStatus};

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
            attachments: Vec::new(),
            steer: None,
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
                parent: None,
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
                provider_items: Vec::new(),
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
                provider_items: Vec::new(),
            },
            EventKind::TurnCompleted {
                rounds: 2,
                finish: None,
                unverified: Vec::new(),
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
                provider_items: Vec::new(),
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
                provider_items: Vec::new(),
            },
            EventKind::TurnCompleted {
                rounds: 3,
                finish: None,
                unverified: Vec::new(),
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
