//! `chat.completion.chunk` objects in, [`ModelEvent`]s out.

use crate::wire::{StreamParser, excerpt};
use crate::{FinishReason, ModelError, ModelEvent};
use serde::Deserialize;
use std::collections::HashMap;

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Option<Vec<Choice>>,
    #[serde(default)]
    usage: Option<Usage>,
    #[serde(default)]
    error: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<CallDelta>>,
    /// Set instead of `content` when the model declines to answer.
    #[serde(default)]
    refusal: Option<String>,
}

#[derive(Deserialize)]
struct CallDelta {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

#[derive(Deserialize)]
pub(crate) struct Usage {
    #[serde(default)]
    pub(crate) prompt_tokens: Option<u64>,
    #[serde(default)]
    pub(crate) completion_tokens: Option<u64>,
    #[serde(default)]
    pub(crate) prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Deserialize)]
pub(crate) struct PromptDetails {
    #[serde(default)]
    pub(crate) cached_tokens: Option<u64>,
}

/// One tool call of the response, as far as it has been seen.
#[derive(Debug)]
struct Call {
    id: String,
    /// Whether `ToolCallStart` went out (it waits for the name).
    started: bool,
    /// Arguments that arrived before the name.
    pending: String,
}

/// The state of one streamed response.
#[derive(Debug, Default)]
pub(crate) struct ChunkParser {
    calls: Vec<Call>,
    /// The server's tool-call index → ours (the position in `calls`).
    slots: HashMap<u64, usize>,
    finish: Option<FinishReason>,
    refusal: String,
    done: bool,
}

impl ChunkParser {
    /// Whether `[DONE]` was seen; nothing after it matters.
    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    /// One event's data.
    pub(crate) fn data(&mut self, data: &str) -> Result<Vec<ModelEvent>, ModelError> {
        if self.done {
            return Ok(Vec::new());
        }
        let data = data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(self.closing());
        }
        let chunk: Chunk = serde_json::from_str(data).map_err(|e| {
            ModelError::Protocol(format!("bad stream chunk ({e}): {}", excerpt(data)))
        })?;
        if let Some(error) = chunk.error {
            return Err(stream_error(&error));
        }
        let mut events = Vec::new();
        let choice = chunk
            .choices
            .unwrap_or_default()
            .into_iter()
            .find(|c| c.index.unwrap_or(0) == 0);
        if let Some(choice) = choice {
            let delta = choice.delta.unwrap_or_default();
            if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                events.push(ModelEvent::TextDelta(text));
            }
            if let Some(refusal) = delta.refusal {
                self.refusal.push_str(&refusal);
            }
            for call in delta.tool_calls.unwrap_or_default() {
                self.call_delta(call, &mut events);
            }
            if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
                if reason == "content_filter" || !self.refusal.is_empty() {
                    let why = if self.refusal.is_empty() {
                        "finish_reason content_filter".to_owned()
                    } else {
                        format!("the model refused: {}", self.refusal)
                    };
                    return Err(ModelError::ContentFiltered(why));
                }
                self.finish = Some(finish_reason(&reason));
            }
        }
        if let Some(usage) = chunk.usage {
            events.extend(usage_events(&usage));
        }
        Ok(events)
    }

    /// One event's data, tolerating servers that leave out the blank line
    /// between events (their data lines arrive joined with `\n`).
    pub(crate) fn event(&mut self, data: &str) -> Result<Vec<ModelEvent>, ModelError> {
        if data.contains('\n') && serde_json::from_str::<serde::de::IgnoredAny>(data).is_err() {
            let mut events = Vec::new();
            for line in data.lines().filter(|l| !l.trim().is_empty()) {
                events.extend(self.data(line)?);
            }
            return Ok(events);
        }
        self.data(data)
    }

    /// The body ended without `[DONE]`: fine after a finish reason, a cut
    /// stream otherwise.
    pub(crate) fn end_of_stream(&mut self) -> Result<Vec<ModelEvent>, ModelError> {
        if self.done {
            return Ok(Vec::new());
        }
        if self.finish.is_none() {
            return Err(ModelError::Stream(
                "the connection closed before the response finished".into(),
            ));
        }
        self.done = true;
        Ok(self.closing())
    }

    /// `ToolCallEnd` for every call (starting any still waiting for a name),
    /// then `Finish`.
    fn closing(&mut self) -> Vec<ModelEvent> {
        let mut events = Vec::new();
        for index in 0..self.calls.len() {
            self.start(index, String::new(), &mut events);
            events.push(ModelEvent::ToolCallEnd { index });
        }
        let reason = self.finish.take().unwrap_or(if self.calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        });
        events.push(ModelEvent::Finish(reason));
        events
    }

    fn call_delta(&mut self, delta: CallDelta, events: &mut Vec<ModelEvent>) {
        let id = delta.id.filter(|id| !id.is_empty());
        let index = self.resolve(delta.index, id.as_deref());
        let call = &mut self.calls[index];
        if let Some(id) = id.filter(|_| call.id.is_empty()) {
            call.id = id;
        }
        let function = delta.function.unwrap_or(FunctionDelta {
            name: None,
            arguments: None,
        });
        if let Some(name) = function.name.filter(|n| !n.is_empty()) {
            self.start(index, name, events);
        }
        if let Some(arguments) = function.arguments.filter(|a| !a.is_empty()) {
            let call = &mut self.calls[index];
            if call.started {
                events.push(ModelEvent::ToolCallDelta { index, arguments });
            } else {
                call.pending.push_str(&arguments);
            }
        }
    }

    /// Which of our calls a delta belongs to, creating it if it is new.
    fn resolve(&mut self, key: Option<u64>, id: Option<&str>) -> usize {
        let existing = match key {
            // Some servers reuse one index for parallel calls: a different id
            // means a different call.
            Some(key) => self.slots.get(&key).copied().filter(|&ours| {
                let known = &self.calls[ours].id;
                id.is_none_or(|id| known.is_empty() || known == id)
            }),
            // Servers that omit the index send one call per chunk: a new id
            // starts a call, anything else continues the last one.
            None => match id {
                Some(id) => self.calls.iter().position(|c| c.id == id),
                None => self.calls.len().checked_sub(1),
            },
        };
        if let Some(ours) = existing {
            return ours;
        }
        self.calls.push(Call {
            id: String::new(),
            started: false,
            pending: String::new(),
        });
        let ours = self.calls.len() - 1;
        if let Some(key) = key {
            self.slots.insert(key, ours);
        }
        ours
    }

    fn start(&mut self, index: usize, name: String, events: &mut Vec<ModelEvent>) {
        let call = &mut self.calls[index];
        if call.started {
            return;
        }
        call.started = true;
        events.push(ModelEvent::ToolCallStart {
            index,
            id: call.id.clone(),
            name,
        });
        if !call.pending.is_empty() {
            events.push(ModelEvent::ToolCallDelta {
                index,
                arguments: std::mem::take(&mut call.pending),
            });
        }
    }
}

/// A server that ignored `"stream": true` and sent one `chat.completion`
/// object: read it as a single chunk.
pub(crate) fn whole_response(body: &[u8]) -> Result<Vec<ModelEvent>, ModelError> {
    let mut value: serde_json::Value = serde_json::from_slice(body).map_err(|e| {
        ModelError::Protocol(format!(
            "bad response ({e}): {}",
            excerpt(&String::from_utf8_lossy(body))
        ))
    })?;
    if let Some(choices) = value.get_mut("choices").and_then(|c| c.as_array_mut()) {
        for choice in choices.iter_mut().filter_map(|c| c.as_object_mut()) {
            let Some(mut message) = choice.remove("message") else {
                continue;
            };
            if let Some(calls) = message.get_mut("tool_calls").and_then(|c| c.as_array_mut()) {
                for (i, call) in calls
                    .iter_mut()
                    .filter_map(|c| c.as_object_mut())
                    .enumerate()
                {
                    call.entry("index").or_insert(serde_json::Value::from(i));
                }
            }
            choice.insert("delta".into(), message);
        }
    }
    let mut parser = ChunkParser::default();
    let mut events = parser.data(&value.to_string())?;
    events.extend(parser.data("[DONE]")?);
    Ok(events)
}

pub(crate) fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "stop" => FinishReason::Stop,
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "length" => FinishReason::Length,
        other => FinishReason::Other(other.to_owned()),
    }
}

/// `Usage`, then `CacheUsage` when the server reported cached tokens
/// (OpenAI caches long prefixes by itself and bills reads at a discount).
pub(crate) fn usage_events(usage: &Usage) -> Vec<ModelEvent> {
    let mut events = vec![ModelEvent::Usage {
        input_tokens: usage.prompt_tokens.unwrap_or(0),
        output_tokens: usage.completion_tokens.unwrap_or(0),
    }];
    let cached = usage
        .prompt_tokens_details
        .as_ref()
        .and_then(|d| d.cached_tokens)
        .unwrap_or(0);
    if cached > 0 {
        events.push(ModelEvent::CacheUsage {
            read_tokens: cached,
            write_tokens: 0,
        });
    }
    events
}

/// An `{"error": {...}}` object sent in place of a chunk. A numeric HTTP-like
/// `code` or `status` becomes [`ModelError::Http`]; otherwise it is reported
/// as a failed (retryable) stream, which is what OpenAI's mid-stream
/// `server_error`s are.
pub(crate) fn stream_error(error: &serde_json::Value) -> ModelError {
    let message = match error {
        serde_json::Value::String(s) => s.clone(),
        other => other
            .get("message")
            .and_then(|m| m.as_str())
            .map_or_else(|| excerpt(&other.to_string()), str::to_owned),
    };
    let status = ["code", "status"]
        .iter()
        .find_map(|k| error.get(k).and_then(serde_json::Value::as_u64))
        .and_then(|s| u16::try_from(s).ok())
        .filter(|s| (400..600).contains(s));
    match status {
        Some(status) => ModelError::Http {
            status,
            body: message,
        },
        None => ModelError::Stream(format!("the server reported an error: {message}")),
    }
}

impl StreamParser for ChunkParser {
    fn event(&mut self, data: &str) -> Result<Vec<ModelEvent>, ModelError> {
        ChunkParser::event(self, data)
    }

    fn is_done(&self) -> bool {
        ChunkParser::is_done(self)
    }

    fn end_of_stream(&mut self) -> Result<Vec<ModelEvent>, ModelError> {
        ChunkParser::end_of_stream(self)
    }

    fn whole_response(&mut self, body: &[u8]) -> Result<Vec<ModelEvent>, ModelError> {
        whole_response(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(parser: &mut ChunkParser, lines: &[&str]) -> Vec<ModelEvent> {
        lines
            .iter()
            .flat_map(|l| parser.data(l).expect("valid chunk"))
            .collect()
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
    fn text_finish_usage_done() {
        let mut p = ChunkParser::default();
        let events = run(
            &mut p,
            &[
                r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}"#,
                r#"{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}"#,
                r#"{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}"#,
                r#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}"#,
                "[DONE]",
            ],
        );
        assert_eq!(
            events,
            [
                ModelEvent::TextDelta("Hi".into()),
                ModelEvent::Usage {
                    input_tokens: 5,
                    output_tokens: 2
                },
                ModelEvent::Finish(FinishReason::Length),
            ]
        );
        assert!(p.is_done());
        assert!(p.data("{not json").expect("ignored after DONE").is_empty());
    }

    #[test]
    fn arguments_before_the_name_wait_for_it() {
        let mut p = ChunkParser::default();
        let events = run(
            &mut p,
            &[
                r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"arguments":"{\"a\""}}]}}]}"#,
                r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":":1}"}}]}}]}"#,
                r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{}"}}]}}]}"#,
            ],
        );
        assert_eq!(
            events,
            [start(0, "c1", "f"), delta(0, "{\"a\""), delta(0, ":1}")]
        );
        // EOF without finish_reason is a cut stream.
        assert!(matches!(p.end_of_stream(), Err(ModelError::Stream(_))));
    }

    #[test]
    fn nameless_calls_start_at_the_end_and_finish_is_inferred() {
        let mut p = ChunkParser::default();
        run(
            &mut p,
            &[
                r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]}"#,
            ],
        );
        assert_eq!(
            p.data("[DONE]").expect("done"),
            [
                start(0, "", ""),
                delta(0, "{}"),
                ModelEvent::ToolCallEnd { index: 0 },
                ModelEvent::Finish(FinishReason::ToolCalls),
            ]
        );
    }

    #[test]
    fn reused_index_with_a_new_id_is_a_new_call() {
        let mut p = ChunkParser::default();
        let events = run(
            &mut p,
            &[
                r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]}}]}"#,
                r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"b","type":"function","function":{"name":"g","arguments":"{"}}]}}]}"#,
                r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"}"}}]},"finish_reason":"tool_calls"}]}"#,
            ],
        );
        assert_eq!(
            events,
            [
                start(0, "a", "f"),
                delta(0, "{}"),
                start(1, "b", "g"),
                delta(1, "{"),
                delta(1, "}"),
            ]
        );
        assert_eq!(
            p.end_of_stream().expect("finished"),
            [
                ModelEvent::ToolCallEnd { index: 0 },
                ModelEvent::ToolCallEnd { index: 1 },
                ModelEvent::Finish(FinishReason::ToolCalls),
            ]
        );
    }

    #[test]
    fn calls_without_index_are_told_apart_by_id() {
        let mut p = ChunkParser::default();
        let events = run(
            &mut p,
            &[
                r#"{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{"}}]}}]}"#,
                r#"{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"}"}}]}}]}"#,
                r#"{"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"g","arguments":"{}"}}]}}]}"#,
            ],
        );
        assert_eq!(
            events,
            [
                start(0, "a", "f"),
                delta(0, "{"),
                delta(0, "}"),
                start(1, "b", "g"),
                delta(1, "{}"),
            ]
        );
    }

    #[test]
    fn tolerates_missing_blank_lines() {
        let mut p = ChunkParser::default();
        let events = p
            .event("{\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n{\"choices\":[{\"delta\":{\"content\":\"b\"}}]}")
            .expect("two chunks");
        assert_eq!(
            events,
            [
                ModelEvent::TextDelta("a".into()),
                ModelEvent::TextDelta("b".into())
            ]
        );
        // A pretty-printed chunk spread over data lines is still one chunk.
        let events = p
            .event("{\"choices\":\n[{\"delta\":{\"content\":\"c\"}}]}")
            .expect("one chunk");
        assert_eq!(events, [ModelEvent::TextDelta("c".into())]);
    }

    #[test]
    fn reads_a_non_streamed_completion() {
        let body = br#"{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_x","type":"function","function":{"name":"glob","arguments":"{\"pattern\":\"*.rs\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":9,"completion_tokens":4}}"#;
        assert_eq!(
            whole_response(body).expect("valid"),
            [
                start(0, "call_x", "glob"),
                delta(0, "{\"pattern\":\"*.rs\"}"),
                ModelEvent::Usage {
                    input_tokens: 9,
                    output_tokens: 4
                },
                ModelEvent::ToolCallEnd { index: 0 },
                ModelEvent::Finish(FinishReason::ToolCalls),
            ]
        );
        assert!(matches!(
            whole_response(br#"{"error":{"message":"nope","code":401}}"#),
            Err(ModelError::Http { status: 401, .. })
        ));
    }

    #[test]
    fn errors() {
        let mut p = ChunkParser::default();
        assert!(matches!(p.data("garbage"), Err(ModelError::Protocol(_))));
        assert!(matches!(p.data("[1,2]"), Err(ModelError::Protocol(_))));
        assert_eq!(
            p.data(r#"{"error":{"message":"overloaded","type":"server_error","code":null}}"#),
            Err(ModelError::Stream(
                "the server reported an error: overloaded".into()
            ))
        );
        assert_eq!(
            p.data(r#"{"error":{"message":"too long","code":400}}"#),
            Err(ModelError::Http {
                status: 400,
                body: "too long".into()
            })
        );
        assert_eq!(
            finish_reason("content_filter"),
            FinishReason::Other("content_filter".into())
        );
    }

    #[test]
    fn content_filter_and_refusals_are_errors() {
        let mut p = ChunkParser::default();
        run(
            &mut p,
            &[r#"{"choices":[{"index":0,"delta":{"content":"Sure"}}]}"#],
        );
        assert!(matches!(
            p.data(r#"{"choices":[{"index":0,"delta":{},"finish_reason":"content_filter"}]}"#),
            Err(ModelError::ContentFiltered(m)) if m.contains("content_filter")
        ));
        let mut p = ChunkParser::default();
        run(
            &mut p,
            &[
                r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"refusal":"I can't help with that."}}]}"#,
            ],
        );
        assert!(matches!(
            p.data(r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#),
            Err(ModelError::ContentFiltered(m)) if m.contains("I can't help with that.")
        ));
    }

    #[test]
    fn cached_prompt_tokens_are_reported() {
        let mut p = ChunkParser::default();
        let events = run(
            &mut p,
            &[
                r#"{"choices":[],"usage":{"prompt_tokens":2000,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":1536}}}"#,
            ],
        );
        assert_eq!(
            events,
            [
                ModelEvent::Usage {
                    input_tokens: 2000,
                    output_tokens: 5
                },
                ModelEvent::CacheUsage {
                    read_tokens: 1536,
                    write_tokens: 0
                }
            ]
        );
    }
}
