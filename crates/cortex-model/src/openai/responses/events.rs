//! Responses API stream events in, [`ModelEvent`]s out.
//!
//! A function call's `output_index` is its tool-call index. Reasoning items
//! come out whole (with `encrypted_content`) as a `ProviderItem` when done;
//! their summaries stream as `ThinkingDelta`s.

use super::PROVIDER;
use crate::wire::status::is_context_overflow;
use crate::wire::{StreamParser, excerpt};
use crate::{FinishReason, ModelError, ModelEvent};
use cortex_protocol::ProviderItem;
use serde_json::Value;
use std::collections::HashMap;

#[derive(Default)]
pub(crate) struct EventParser {
    /// Open function calls by output index: whether arguments streamed.
    calls: HashMap<usize, bool>,
    any_call: bool,
    refusal: String,
    done: bool,
}

fn str_of<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn index_of(value: &Value) -> usize {
    value
        .get("output_index")
        .and_then(Value::as_u64)
        .and_then(|i| usize::try_from(i).ok())
        .unwrap_or(0)
}

impl StreamParser for EventParser {
    fn event(&mut self, data: &str) -> Result<Vec<ModelEvent>, ModelError> {
        if self.done {
            return Ok(Vec::new());
        }
        let event: Value = serde_json::from_str(data.trim()).map_err(|e| {
            ModelError::Protocol(format!("bad stream event ({e}): {}", excerpt(data)))
        })?;
        let mut out = Vec::new();
        match str_of(&event, "type") {
            "response.output_text.delta" => {
                let delta = str_of(&event, "delta");
                if !delta.is_empty() {
                    out.push(ModelEvent::TextDelta(delta.to_owned()));
                }
            }
            "response.refusal.delta" => self.refusal.push_str(str_of(&event, "delta")),
            "response.reasoning_summary_text.delta" => {
                out.push(ModelEvent::ThinkingDelta(
                    str_of(&event, "delta").to_owned(),
                ));
            }
            "response.output_item.added" => self.item_added(&event, &mut out),
            "response.function_call_arguments.delta" => {
                let index = index_of(&event);
                let delta = str_of(&event, "delta");
                if let Some(streamed) = self.calls.get_mut(&index)
                    && !delta.is_empty()
                {
                    *streamed = true;
                    out.push(ModelEvent::ToolCallDelta {
                        index,
                        arguments: delta.to_owned(),
                    });
                }
            }
            "response.output_item.done" => self.item_done(&event, &mut out),
            "response.completed" => {
                let response = event.get("response").unwrap_or(&Value::Null);
                self.finish(response, &mut out)?;
            }
            "response.incomplete" => self.incomplete(&event, &mut out)?,
            "response.failed" => {
                let error = event.pointer("/response/error").unwrap_or(&Value::Null);
                return Err(stream_error(error));
            }
            "error" => return Err(stream_error(&event)),
            _ => {}
        }
        Ok(out)
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn end_of_stream(&mut self) -> Result<Vec<ModelEvent>, ModelError> {
        if self.done {
            return Ok(Vec::new());
        }
        Err(ModelError::Stream(
            "the connection closed before the response finished".into(),
        ))
    }
}

impl EventParser {
    /// `response.output_item.added`: a function call starts (other items
    /// are read when done).
    fn item_added(&mut self, event: &Value, out: &mut Vec<ModelEvent>) {
        let item = event.get("item").unwrap_or(&Value::Null);
        if str_of(item, "type") == "function_call" {
            let index = index_of(event);
            self.calls.insert(index, false);
            self.any_call = true;
            out.push(ModelEvent::ToolCallStart {
                index,
                id: str_of(item, "call_id").to_owned(),
                name: str_of(item, "name").to_owned(),
            });
        }
    }

    /// `response.incomplete`: finished, with the reason as the finish
    /// reason; a content filter is an error.
    fn incomplete(&mut self, event: &Value, out: &mut Vec<ModelEvent>) -> Result<(), ModelError> {
        let response = event.get("response").unwrap_or(&Value::Null);
        let reason = response
            .pointer("/incomplete_details/reason")
            .and_then(Value::as_str)
            .unwrap_or("unknown");
        if reason == "content_filter" {
            return Err(ModelError::ContentFiltered(
                "the response is incomplete (content_filter)".into(),
            ));
        }
        self.finish(response, out)?;
        if let Some(ModelEvent::Finish(r)) = out.last_mut() {
            *r = if reason == "max_output_tokens" {
                FinishReason::Length
            } else {
                FinishReason::Other(reason.to_owned())
            };
        }
        Ok(())
    }

    fn item_done(&mut self, event: &Value, out: &mut Vec<ModelEvent>) {
        let item = event.get("item").unwrap_or(&Value::Null);
        match str_of(item, "type") {
            "function_call" => {
                let index = index_of(event);
                match self.calls.remove(&index) {
                    Some(streamed) => {
                        let arguments = str_of(item, "arguments");
                        if !streamed && !arguments.is_empty() {
                            out.push(ModelEvent::ToolCallDelta {
                                index,
                                arguments: arguments.to_owned(),
                            });
                        }
                    }
                    // Never announced: the whole call at once.
                    None => {
                        self.any_call = true;
                        out.push(ModelEvent::ToolCallStart {
                            index,
                            id: str_of(item, "call_id").to_owned(),
                            name: str_of(item, "name").to_owned(),
                        });
                        out.push(ModelEvent::ToolCallDelta {
                            index,
                            arguments: str_of(item, "arguments").to_owned(),
                        });
                    }
                }
                out.push(ModelEvent::ToolCallEnd { index });
            }
            "reasoning" => {
                // Sent back without its id: with `store: false` the server
                // keeps no item to refer to, the encrypted content is it.
                let mut item = item.clone();
                if let Some(map) = item.as_object_mut() {
                    map.remove("id");
                    map.remove("status");
                }
                out.push(ModelEvent::ProviderItem(ProviderItem {
                    provider: PROVIDER.to_owned(),
                    item,
                }));
            }
            _ => {}
        }
    }

    /// Usage, calls left open, `Finish`.
    fn finish(&mut self, response: &Value, out: &mut Vec<ModelEvent>) -> Result<(), ModelError> {
        self.done = true;
        if !self.refusal.is_empty() {
            return Err(ModelError::ContentFiltered(format!(
                "the model refused: {}",
                self.refusal
            )));
        }
        if let Some(usage) = response.get("usage").filter(|u| u.is_object()) {
            let n = |ptr: &str| usage.pointer(ptr).and_then(Value::as_u64).unwrap_or(0);
            out.push(ModelEvent::Usage {
                input_tokens: n("/input_tokens"),
                output_tokens: n("/output_tokens"),
            });
            let cached = n("/input_tokens_details/cached_tokens");
            if cached > 0 {
                out.push(ModelEvent::CacheUsage {
                    read_tokens: cached,
                    write_tokens: 0,
                });
            }
        }
        let mut open: Vec<usize> = self.calls.drain().map(|(i, _)| i).collect();
        open.sort_unstable();
        out.extend(
            open.into_iter()
                .map(|index| ModelEvent::ToolCallEnd { index }),
        );
        out.push(ModelEvent::Finish(if self.any_call {
            FinishReason::ToolCalls
        } else {
            FinishReason::Stop
        }));
        Ok(())
    }
}

/// An `error` event or a failed response's `error`.
fn stream_error(error: &Value) -> ModelError {
    let code = str_of(error, "code");
    let message = match str_of(error, "message") {
        "" => excerpt(&error.to_string()),
        m => m.to_owned(),
    };
    if code == "context_length_exceeded" || is_context_overflow(&message) {
        return ModelError::ContextTooLong(message);
    }
    match code {
        "rate_limit_exceeded" => ModelError::Http {
            status: 429,
            body: message,
        },
        "invalid_request_error" | "invalid_prompt" => ModelError::Http {
            status: 400,
            body: message,
        },
        _ => ModelError::Stream(format!("the server reported an error: {message}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_only_seen_when_done_still_comes_out_whole() {
        let mut p = EventParser::default();
        let events = p
            .event(r#"{"type":"response.output_item.done","output_index":2,"item":{"type":"function_call","id":"fc_1","call_id":"call_9","name":"glob","arguments":"{}","status":"completed"}}"#)
            .expect("valid");
        assert_eq!(
            events,
            [
                ModelEvent::ToolCallStart {
                    index: 2,
                    id: "call_9".into(),
                    name: "glob".into()
                },
                ModelEvent::ToolCallDelta {
                    index: 2,
                    arguments: "{}".into()
                },
                ModelEvent::ToolCallEnd { index: 2 },
            ]
        );
        assert!(matches!(p.end_of_stream(), Err(ModelError::Stream(_))));
    }

    #[test]
    fn errors_refusals_and_incomplete() {
        let mut p = EventParser::default();
        assert!(matches!(
            p.event(r#"{"type":"error","code":"context_length_exceeded","message":"Your input exceeds the context window of this model.","param":"input"}"#),
            Err(ModelError::ContextTooLong(_))
        ));
        let mut p = EventParser::default();
        p.event(r#"{"type":"response.refusal.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"I can't help"}"#).expect("valid");
        assert!(matches!(
            p.event(r#"{"type":"response.completed","response":{"status":"completed","usage":null}}"#),
            Err(ModelError::ContentFiltered(m)) if m.contains("I can't help")
        ));
        let mut p = EventParser::default();
        let events = p
            .event(r#"{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":5,"output_tokens":9}}}"#)
            .expect("valid");
        assert_eq!(
            events.last(),
            Some(&ModelEvent::Finish(FinishReason::Length))
        );
        assert!(p.is_done());
    }
}
