//! Messages API stream events in, [`ModelEvent`]s out.
//!
//! Content blocks are numbered by the server; a `tool_use` block's index is
//! the tool call's index. Thinking blocks stream as `ThinkingDelta`s and,
//! once complete with their signature, come out as a `ProviderItem` to be
//! replayed with the history.

use super::request::PROVIDER;
use crate::wire::status::is_context_overflow;
use crate::wire::{StreamParser, excerpt};
use crate::{FinishReason, ModelError, ModelEvent};
use cortex_protocol::ProviderItem;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::HashMap;

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    MessageStart {
        message: StartMessage,
    },
    ContentBlockStart {
        index: usize,
        content_block: Value,
    },
    ContentBlockDelta {
        index: usize,
        delta: Value,
    },
    ContentBlockStop {
        index: usize,
    },
    MessageDelta {
        #[serde(default)]
        delta: Option<MessageDeltaBody>,
        #[serde(default)]
        usage: Option<Usage>,
    },
    MessageStop,
    Ping,
    Error {
        error: Value,
    },
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize)]
struct StartMessage {
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct MessageDeltaBody {
    #[serde(default)]
    stop_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct Usage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
}

/// What an open content block is.
enum Block {
    Text,
    Tool,
    Thinking { text: String, signature: String },
    Redacted { data: String },
    Other,
}

#[derive(Default)]
pub(crate) struct EventParser {
    blocks: HashMap<usize, Block>,
    /// Indices of the tool blocks, in order, to close any left open.
    tools: Vec<usize>,
    stop_reason: Option<String>,
    done: bool,
}

impl StreamParser for EventParser {
    fn event(&mut self, data: &str) -> Result<Vec<ModelEvent>, ModelError> {
        if self.done {
            return Ok(Vec::new());
        }
        let event: Event = serde_json::from_str(data.trim()).map_err(|e| {
            ModelError::Protocol(format!("bad stream event ({e}): {}", excerpt(data)))
        })?;
        let mut out = Vec::new();
        match event {
            Event::MessageStart { message } => usage(message.usage, &mut out),
            Event::ContentBlockStart {
                index,
                content_block,
            } => self.block_start(index, &content_block, &mut out),
            Event::ContentBlockDelta { index, delta } => self.delta(index, &delta, &mut out),
            Event::ContentBlockStop { index } => self.block_stop(index, &mut out),
            Event::MessageDelta { delta, usage: u } => {
                if let Some(reason) = delta.and_then(|d| d.stop_reason) {
                    if reason == "refusal" {
                        return Err(ModelError::ContentFiltered(
                            "the model declined to answer (stop_reason refusal)".into(),
                        ));
                    }
                    self.stop_reason = Some(reason);
                }
                usage(u, &mut out);
            }
            Event::MessageStop => {
                self.done = true;
                out.extend(self.closing());
            }
            Event::Ping | Event::Unknown => {}
            Event::Error { error } => return Err(stream_error(&error)),
        }
        Ok(out)
    }

    fn is_done(&self) -> bool {
        self.done
    }

    /// Without `message_stop`: complete enough once the stop reason came.
    fn end_of_stream(&mut self) -> Result<Vec<ModelEvent>, ModelError> {
        if self.done {
            return Ok(Vec::new());
        }
        if self.stop_reason.is_none() {
            return Err(ModelError::Stream(
                "the connection closed before the response finished".into(),
            ));
        }
        self.done = true;
        Ok(self.closing())
    }
}

impl EventParser {
    fn block_start(&mut self, index: usize, block: &Value, out: &mut Vec<ModelEvent>) {
        let text = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or_default();
        let kind = match text("type") {
            "text" => {
                if !text("text").is_empty() {
                    out.push(ModelEvent::TextDelta(text("text").to_owned()));
                }
                Block::Text
            }
            "tool_use" => {
                self.tools.push(index);
                out.push(ModelEvent::ToolCallStart {
                    index,
                    id: text("id").to_owned(),
                    name: text("name").to_owned(),
                });
                Block::Tool
            }
            "thinking" => {
                if !text("thinking").is_empty() {
                    out.push(ModelEvent::ThinkingDelta(text("thinking").to_owned()));
                }
                Block::Thinking {
                    text: text("thinking").to_owned(),
                    signature: text("signature").to_owned(),
                }
            }
            "redacted_thinking" => Block::Redacted {
                data: text("data").to_owned(),
            },
            other => {
                tracing::debug!(kind = other, "ignoring a content block");
                Block::Other
            }
        };
        self.blocks.insert(index, kind);
    }

    fn delta(&mut self, index: usize, delta: &Value, out: &mut Vec<ModelEvent>) {
        let text = |key: &str| delta.get(key).and_then(Value::as_str).unwrap_or_default();
        let block = self.blocks.get_mut(&index);
        match (text("type"), block) {
            ("text_delta", _) if !text("text").is_empty() => {
                out.push(ModelEvent::TextDelta(text("text").to_owned()));
            }
            ("input_json_delta", Some(Block::Tool)) if !text("partial_json").is_empty() => {
                out.push(ModelEvent::ToolCallDelta {
                    index,
                    arguments: text("partial_json").to_owned(),
                });
            }
            ("thinking_delta", Some(Block::Thinking { text: so_far, .. })) => {
                so_far.push_str(text("thinking"));
                out.push(ModelEvent::ThinkingDelta(text("thinking").to_owned()));
            }
            ("signature_delta", Some(Block::Thinking { signature, .. })) => {
                signature.push_str(text("signature"));
            }
            _ => {}
        }
    }

    fn block_stop(&mut self, index: usize, out: &mut Vec<ModelEvent>) {
        match self.blocks.remove(&index) {
            Some(Block::Tool) => {
                self.tools.retain(|i| *i != index);
                out.push(ModelEvent::ToolCallEnd { index });
            }
            Some(Block::Thinking { text, signature }) => out.push(item(json!({
                "type": "thinking",
                "thinking": text,
                "signature": signature,
            }))),
            Some(Block::Redacted { data }) => out.push(item(json!({
                "type": "redacted_thinking",
                "data": data,
            }))),
            Some(Block::Text | Block::Other) | None => {}
        }
    }

    /// Tool blocks left open, then `Finish`.
    fn closing(&mut self) -> Vec<ModelEvent> {
        let mut out: Vec<ModelEvent> = self
            .tools
            .drain(..)
            .map(|index| ModelEvent::ToolCallEnd { index })
            .collect();
        let reason = match self.stop_reason.take().as_deref() {
            Some("end_turn" | "stop_sequence") | None => FinishReason::Stop,
            Some("tool_use") => FinishReason::ToolCalls,
            Some("max_tokens") => FinishReason::Length,
            Some(other) => FinishReason::Other(other.to_owned()),
        };
        out.push(ModelEvent::Finish(reason));
        out
    }
}

fn item(item: Value) -> ModelEvent {
    ModelEvent::ProviderItem(ProviderItem {
        provider: PROVIDER.to_owned(),
        item,
    })
}

/// `input_tokens` counts only the uncached part of the prompt: the whole
/// prompt is that plus what was read from and written to the cache.
fn usage(usage: Option<Usage>, out: &mut Vec<ModelEvent>) {
    let Some(u) = usage else { return };
    let read = u.cache_read_input_tokens.unwrap_or(0);
    let write = u.cache_creation_input_tokens.unwrap_or(0);
    let input = u.input_tokens.map_or(0, |i| i + read + write);
    out.push(ModelEvent::Usage {
        input_tokens: input,
        output_tokens: u.output_tokens.unwrap_or(0),
    });
    if read > 0 || write > 0 {
        out.push(ModelEvent::CacheUsage {
            read_tokens: read,
            write_tokens: write,
        });
    }
}

/// An `error` event. Overload and server errors are a cut stream (the turn
/// loop may retry the round); the others say what was wrong.
fn stream_error(error: &Value) -> ModelError {
    let kind = error.get("type").and_then(Value::as_str).unwrap_or("error");
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("no message")
        .to_owned();
    let status = match kind {
        "invalid_request_error" if is_context_overflow(&message) => {
            return ModelError::ContextTooLong(message);
        }
        "invalid_request_error" => 400,
        "authentication_error" => 401,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        "rate_limit_error" => 429,
        _ => {
            return ModelError::Stream(format!("the server reported an error ({kind}): {message}"));
        }
    };
    ModelError::Http {
        status,
        body: format!("{kind}: {message}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(lines: &[&str]) -> (EventParser, Vec<ModelEvent>) {
        let mut p = EventParser::default();
        let events = lines
            .iter()
            .flat_map(|l| p.event(l).expect("valid event"))
            .collect();
        (p, events)
    }

    #[test]
    fn usage_counts_cached_prompt_parts() {
        let (_, events) = run(&[
            r#"{"type":"message_start","message":{"id":"m","usage":{"input_tokens":10,"cache_creation_input_tokens":200,"cache_read_input_tokens":3000,"output_tokens":1}}}"#,
        ]);
        assert_eq!(
            events,
            [
                ModelEvent::Usage {
                    input_tokens: 3210,
                    output_tokens: 1
                },
                ModelEvent::CacheUsage {
                    read_tokens: 3000,
                    write_tokens: 200
                }
            ]
        );
    }

    #[test]
    fn errors_and_refusals() {
        let mut p = EventParser::default();
        assert!(matches!(p.event("nope"), Err(ModelError::Protocol(_))));
        assert!(matches!(
            p.event(r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#),
            Err(ModelError::Stream(m)) if m.contains("Overloaded")
        ));
        assert!(matches!(
            p.event(r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 1 tokens > 0 maximum"}}"#),
            Err(ModelError::ContextTooLong(_))
        ));
        assert!(matches!(
            p.event(r#"{"type":"message_delta","delta":{"stop_reason":"refusal"},"usage":{"output_tokens":3}}"#),
            Err(ModelError::ContentFiltered(_))
        ));
        assert!(matches!(p.end_of_stream(), Err(ModelError::Stream(_))));
        assert!(
            p.event(r#"{"type":"future_thing","x":1}"#)
                .expect("ignored")
                .is_empty()
        );
    }
}
