//! Folding a stream of [`ModelEvent`]s into one response.

use crate::{FinishReason, ModelEvent};
use cortex_protocol::{CallId, MAX_ARGUMENT_BYTES, ProviderItem, ToolCallRequest};
use std::collections::HashSet;

/// The most text of one response that is kept (and shown, stored, sent
/// back): far more than a provider's output limit lets a real model write,
/// so only a hostile or broken endpoint reaches it.
pub const MAX_TEXT_BYTES: usize = 1024 * 1024;

/// The most of one call's arguments that is kept: one byte over the
/// arguments' limit, so the call still fails as too large
/// (`ArgError::TooLarge`) while the harness holds, stores and sends back a
/// bounded amount however much the model wrote.
pub const MAX_KEPT_ARGUMENT_BYTES: usize = MAX_ARGUMENT_BYTES + 1;

/// The part of `piece` that fits when `held` bytes are already kept under
/// `cap`: all of it, a prefix (cut after the character that crosses the
/// cap, so a kept prefix reaches the cap), or nothing.
pub fn within_cap(held: usize, piece: &str, cap: usize) -> &str {
    let room = cap.saturating_sub(held);
    if piece.len() <= room {
        return piece;
    }
    let mut end = room;
    while !piece.is_char_boundary(end) {
        end += 1;
    }
    &piece[..end]
}

/// A whole response, assembled.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Assembled {
    /// The answer's text (all `TextDelta`s joined).
    pub text: String,
    /// In the order the model started them.
    pub tool_calls: Vec<ToolCallRequest>,
    /// The whole prompt, cached parts included.
    pub input_tokens: u64,
    /// Answer tokens; 0 when the provider reported none.
    pub output_tokens: u64,
    /// Prompt tokens read from / written to the provider's cache.
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's cache.
    pub cache_write_tokens: u64,
    /// Thinking / reasoning summary text, apart from `text`.
    pub thinking: String,
    /// To keep with the assistant message (see [`ModelEvent::ProviderItem`]).
    pub provider_items: Vec<ProviderItem>,
    /// The `Finish` event's reason; `None` when the stream ended (or was
    /// given up) without one.
    pub finish: Option<FinishReason>,
}

/// Feed events in order; `finish` yields the response. Calls without an id
/// get one minted (`call_<index>`), so every call can be answered.
///
/// Every call id of the assembled response is unique: a minted id that
/// collides, or an id the model repeated, gets a `_<n>` suffix.
///
/// Usage: each field takes the last non-zero value reported, so providers
/// that report cumulative usage once, or input and output separately, both
/// come out right.
#[derive(Debug, Default)]
pub struct Assembler {
    inner: Assembled,
    /// The provider's index of each entry of `inner.tool_calls`.
    indices: Vec<usize>,
}

impl Assembler {
    /// Adds one event. Events of any kind, in any order, are accepted:
    /// a delta for a call never started starts it (without id or name),
    /// and `Retry` / `PromptProgress` / `ToolCallEnd` change nothing
    /// (providers retry only before a response's first event, so there is
    /// never a failed attempt's part to discard).
    pub fn push(&mut self, event: &ModelEvent) {
        match event {
            ModelEvent::TextDelta(text) => {
                let kept = within_cap(self.inner.text.len(), text, MAX_TEXT_BYTES);
                self.inner.text.push_str(kept);
            }
            ModelEvent::ToolCallStart { index, id, name } => {
                let call = self.call_mut(*index);
                if call.id.0.is_empty() {
                    call.id = CallId(id.clone());
                }
                if call.name.is_empty() {
                    call.name = name.clone();
                }
            }
            ModelEvent::ToolCallDelta { index, arguments } => {
                let call = self.call_mut(*index);
                let kept = within_cap(call.arguments.len(), arguments, MAX_KEPT_ARGUMENT_BYTES);
                call.arguments.push_str(kept);
            }
            ModelEvent::ToolCallEnd { .. }
            | ModelEvent::Retry { .. }
            | ModelEvent::PromptProgress { .. } => {}
            ModelEvent::Usage {
                input_tokens,
                output_tokens,
            } => {
                if *input_tokens > 0 {
                    self.inner.input_tokens = *input_tokens;
                }
                if *output_tokens > 0 {
                    self.inner.output_tokens = *output_tokens;
                }
            }
            ModelEvent::CacheUsage {
                read_tokens,
                write_tokens,
            } => {
                if *read_tokens > 0 {
                    self.inner.cache_read_tokens = *read_tokens;
                }
                if *write_tokens > 0 {
                    self.inner.cache_write_tokens = *write_tokens;
                }
            }
            ModelEvent::ThinkingDelta(text) => self.inner.thinking.push_str(text),
            ModelEvent::ProviderItem(item) => self.inner.provider_items.push(item.clone()),
            ModelEvent::Finish(reason) => self.inner.finish = Some(reason.clone()),
        }
    }

    /// The response so far, with every call given a unique id. Also right
    /// for an incomplete stream (what has arrived, `finish` `None`).
    pub fn finish(mut self) -> Assembled {
        let given: HashSet<String> = self
            .inner
            .tool_calls
            .iter()
            .map(|c| c.id.0.clone())
            .filter(|id| !id.is_empty())
            .collect();
        let mut used = HashSet::new();
        for (call, index) in self.inner.tool_calls.iter_mut().zip(&self.indices) {
            let wanted = if call.id.0.is_empty() {
                format!("call_{index}")
            } else {
                call.id.0.clone()
            };
            let mut id = wanted.clone();
            let mut n = 2;
            // A minted id must not take one the model gave a later call.
            let minted = call.id.0.is_empty();
            while used.contains(&id) || (minted && given.contains(&id)) {
                id = format!("{wanted}_{n}");
                n += 1;
            }
            used.insert(id.clone());
            call.id = CallId(id);
        }
        self.inner
    }

    fn call_mut(&mut self, index: usize) -> &mut ToolCallRequest {
        let pos = match self.indices.iter().position(|i| *i == index) {
            Some(pos) => pos,
            None => {
                self.indices.push(index);
                self.inner.tool_calls.push(ToolCallRequest {
                    id: CallId(String::new()),
                    name: String::new(),
                    arguments: String::new(),
                });
                self.inner.tool_calls.len() - 1
            }
        };
        &mut self.inner.tool_calls[pos]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assemble(events: &[ModelEvent]) -> Assembled {
        let mut a = Assembler::default();
        for e in events {
            a.push(e);
        }
        a.finish()
    }

    fn start(index: usize, id: &str, name: &str) -> ModelEvent {
        ModelEvent::ToolCallStart {
            index,
            id: id.into(),
            name: name.into(),
        }
    }

    fn delta(index: usize, arguments: &str) -> ModelEvent {
        ModelEvent::ToolCallDelta {
            index,
            arguments: arguments.into(),
        }
    }

    #[test]
    fn text_and_arguments_are_kept_up_to_their_caps() {
        let big = "é".repeat(MAX_TEXT_BYTES);
        let out = assemble(&[
            ModelEvent::TextDelta(big.clone()),
            ModelEvent::TextDelta(big.clone()),
            start(0, "a", "write_file"),
            delta(0, "{\"content\":\""),
            delta(0, &big),
            delta(0, &big),
        ]);
        // Cut after the character that crosses the cap, never inside one.
        assert_eq!(out.text.len(), MAX_TEXT_BYTES);
        let kept = out.tool_calls[0].arguments.len();
        assert!((MAX_KEPT_ARGUMENT_BYTES..MAX_KEPT_ARGUMENT_BYTES + 2).contains(&kept));
        assert!(matches!(
            cortex_protocol::ToolArgs::parse(
                cortex_protocol::ToolName::WriteFile,
                &out.tool_calls[0].arguments
            ),
            Err(cortex_protocol::ArgError::TooLarge { .. })
        ));
        assert_eq!(within_cap(0, "abc", 2), "ab");
        assert_eq!(within_cap(2, "abc", 2), "");
        assert_eq!(within_cap(1, "éa", 2), "é");
    }

    #[test]
    fn text_only() {
        let out = assemble(&[
            ModelEvent::TextDelta("Hel".into()),
            ModelEvent::TextDelta("lo".into()),
            ModelEvent::Finish(FinishReason::Stop),
        ]);
        assert_eq!(out.text, "Hello");
        assert!(out.tool_calls.is_empty());
        assert_eq!(out.finish, Some(FinishReason::Stop));
    }

    #[test]
    fn interleaved_calls_keep_start_order() {
        let out = assemble(&[
            ModelEvent::TextDelta("Let me look.".into()),
            start(1, "call_b", "grep"),
            start(0, "call_a", "read_file"),
            delta(0, "{\"path\":"),
            delta(1, "{\"pattern\":\"x\"}"),
            delta(0, "\"a.rs\"}"),
            ModelEvent::ToolCallEnd { index: 0 },
            ModelEvent::ToolCallEnd { index: 1 },
            ModelEvent::Finish(FinishReason::ToolCalls),
        ]);
        assert_eq!(out.tool_calls.len(), 2);
        assert_eq!(out.tool_calls[0].id.as_str(), "call_b");
        assert_eq!(out.tool_calls[0].name, "grep");
        assert_eq!(out.tool_calls[0].arguments, "{\"pattern\":\"x\"}");
        assert_eq!(out.tool_calls[1].id.as_str(), "call_a");
        assert_eq!(out.tool_calls[1].arguments, "{\"path\":\"a.rs\"}");
        assert_eq!(out.finish, Some(FinishReason::ToolCalls));
    }

    #[test]
    fn delta_for_unseen_index_creates_a_call() {
        let out = assemble(&[delta(3, "{}"), start(3, "x", "late_name")]);
        assert_eq!(out.tool_calls.len(), 1);
        assert_eq!(out.tool_calls[0].arguments, "{}");
        // A start after the delta still fills in what was missing.
        assert_eq!(out.tool_calls[0].name, "late_name");
        assert_eq!(out.tool_calls[0].id.as_str(), "x");

        let out = assemble(&[delta(2, "{}")]);
        assert_eq!(out.tool_calls[0].name, "");
        assert_eq!(out.tool_calls[0].id.as_str(), "call_2");
    }

    #[test]
    fn missing_ids_are_minted_unique() {
        let out = assemble(&[
            start(0, "", "a"),
            start(1, "call_0", "b"),
            start(2, "", "c"),
            start(3, "dup", "d"),
            start(4, "dup", "e"),
        ]);
        let ids: Vec<&str> = out.tool_calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["call_0_2", "call_0", "call_2", "dup", "dup_2"]);
    }

    #[test]
    fn usage_takes_last_reported_values_and_retry_is_ignored() {
        let out = assemble(&[
            ModelEvent::Retry {
                attempt: 1,
                of: 4,
                delay_ms: 10,
                reason: "429".into(),
            },
            ModelEvent::Usage {
                input_tokens: 10,
                output_tokens: 0,
            },
            ModelEvent::Usage {
                input_tokens: 0,
                output_tokens: 7,
            },
            ModelEvent::Usage {
                input_tokens: 12,
                output_tokens: 9,
            },
        ]);
        assert_eq!((out.input_tokens, out.output_tokens), (12, 9));
        assert_eq!(out.text, "");
        assert_eq!(out.finish, None);
    }
}
