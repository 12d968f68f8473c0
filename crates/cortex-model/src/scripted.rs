//! A deterministic model that replays a JSON script. For tests and
//! benchmarks only; never a default.
//!
//! Script format:
//! ```json
//! {"responses": [
//!   {"text": "Reading it.", "tool_calls": [{"name": "read_file", "arguments": {"path": "a.rs"}}]},
//!   {"tool_calls": [{"name": "bash", "arguments": "{not json"}]},
//!   {"error": {"status": 500, "body": "boom"}},
//!   {"text": "Done."}
//! ]}
//! ```
//! Each `stream` call plays the next response; with `when: "TEXT"` a
//! response is played only by a request whose first user message contains
//! TEXT (the first unplayed response that matches is played), so that
//! several conversations at once (a session and its subagents) each get
//! their own. `arguments` may be an object
//! (serialised) or a string (sent raw, to script malformed calls). Optional
//! per response: `id` per call, `delay_ms` before the first event,
//! `chunk_delay_ms` between events, `hang: true` (never finishes; for Stop
//! tests), `cut_after` (events to send before failing with a cut stream).
//!
//! Details:
//! - `text` is streamed word by word (whitespace kept), each call as
//!   `ToolCallStart`, its arguments in two `ToolCallDelta` halves, and
//!   `ToolCallEnd`; then `Usage` (about a token per 4 bytes of request and
//!   response) and `Finish` (`ToolCalls` when there are calls, else `Stop`).
//! - A call without `id` gets `call_<response>_<call>`: the response counted
//!   from 1, the call from 0 (`call_1_0` is the first call of the first
//!   response). Without `arguments` a call gets `{}`.
//! - `error` answers `ModelError::Http {status, body}` (after `delay_ms`);
//!   it cannot be combined with `text`, `tool_calls`, `hang` or `cut_after`.
//!   `refusal: "TEXT"` answers `ModelError::ContentFiltered(TEXT)` (a
//!   provider's refusal), with the same restrictions.
//! - `finish: "length"` ends the response with `FinishReason::Length`, as a
//!   provider does when the output token limit cut it.
//! - `hang` sends the text and calls, then never finishes (no `Usage`, no
//!   `Finish`); the caller has to drop the stream.
//! - `cut_after: N` sends the first N events (never the `Finish`), then
//!   `ModelError::Stream`.
//! - Past the last response every call fails with `ModelError::Script`.
//! - `"images": false` beside `responses` makes the provider one that takes
//!   no images (as the embedded model), to test the refusal.
//! - Unknown fields are errors, so a typo in a script is caught.

use crate::{FinishReason, ModelError, ModelEvent, ModelProvider, ModelRequest, ModelStream};
use serde::Deserialize;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Script {
    responses: Vec<ScriptResponse>,
    #[serde(default = "yes")]
    images: bool,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptResponse {
    #[serde(default)]
    text: String,
    #[serde(default)]
    tool_calls: Vec<ScriptCall>,
    #[serde(default)]
    error: Option<ScriptError>,
    #[serde(default)]
    delay_ms: u64,
    #[serde(default)]
    chunk_delay_ms: u64,
    #[serde(default)]
    hang: bool,
    #[serde(default)]
    cut_after: Option<usize>,
    /// `length`: the response ends as if cut at the output token limit.
    #[serde(default)]
    finish: Option<ScriptFinish>,
    /// Played only for a request whose first user message contains it.
    #[serde(default)]
    when: Option<String>,
    /// The provider refuses: `ModelError::ContentFiltered` with this text.
    #[serde(default)]
    refusal: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum ScriptFinish {
    Length,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptCall {
    #[serde(default)]
    id: Option<String>,
    name: String,
    #[serde(default)]
    arguments: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptError {
    status: u16,
    #[serde(default)]
    body: String,
}

#[derive(Debug, Default)]
struct State {
    /// Which responses have been played.
    played: Vec<bool>,
    requests: Vec<ModelRequest>,
}

/// A provider that plays a script's responses in order (see the module doc
/// for the format). Each `stream` call takes the next response, whether or
/// not the previous stream was read to its end; cheap to share between
/// tasks.
pub struct ScriptedProvider {
    responses: Vec<ScriptResponse>,
    images: bool,
    state: Mutex<State>,
}

impl ScriptedProvider {
    /// Parses and checks a script. Fails with [`ModelError::Script`] on bad
    /// JSON, an unknown field, or a response that combines what cannot be
    /// combined (`error` with output, `hang` with `cut_after`).
    pub fn from_json(json: &str) -> Result<Self, ModelError> {
        let script: Script = serde_json::from_str(json)
            .map_err(|e| ModelError::Script(format!("bad script: {e}")))?;
        for (i, response) in script.responses.iter().enumerate() {
            validate(response).map_err(|why| {
                ModelError::Script(format!("bad script: response {}: {why}", i + 1))
            })?;
        }
        Ok(ScriptedProvider {
            responses: script.responses,
            images: script.images,
            state: Mutex::default(),
        })
    }

    /// [`ScriptedProvider::from_json`] of a file's contents; errors name the
    /// file.
    pub fn from_file(path: &std::path::Path) -> Result<Self, ModelError> {
        let json = std::fs::read_to_string(path).map_err(|e| {
            ModelError::Script(format!("cannot read script {}: {e}", path.display()))
        })?;
        Self::from_json(&json).map_err(|e| ModelError::Script(format!("{}: {e}", path.display())))
    }

    /// The requests this provider has received, in order (for tests).
    pub fn requests(&self) -> Vec<ModelRequest> {
        self.state().requests.clone()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // The state stays consistent even if a holder panicked.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl ModelProvider for ScriptedProvider {
    /// Images unless the script says `"images": false`, to test what a
    /// provider that takes images is sent, and the refusal when not.
    fn takes_images(&self) -> bool {
        self.images
    }

    fn describe(&self) -> String {
        "scripted".to_owned()
    }

    fn stream(&self, request: ModelRequest) -> ModelStream {
        let input_bytes = request_bytes(&request);
        let first_user = request
            .messages
            .iter()
            .find(|m| m.role == cortex_protocol::Role::User)
            .map(|m| m.content.clone())
            .unwrap_or_default();
        let played = {
            let mut state = self.state();
            state.requests.push(request);
            state.played.resize(self.responses.len(), false);
            let next = self.responses.iter().enumerate().position(|(i, r)| {
                !state.played[i]
                    && r.when
                        .as_ref()
                        .is_none_or(|w| first_user.contains(w.as_str()))
            });
            if let Some(i) = next {
                state.played[i] = true;
            }
            next
        };
        let Some((played, response)) = played.and_then(|i| Some((i, self.responses.get(i)?)))
        else {
            let error = ModelError::Script(format!(
                "script exhausted after {} responses",
                self.responses.len()
            ));
            return Box::pin(futures::stream::once(async move { Err(error) }));
        };
        let plan = plan(response, played + 1, input_bytes);
        let delay = Duration::from_millis(response.delay_ms);
        let chunk_delay = Duration::from_millis(response.chunk_delay_ms);
        Box::pin(async_stream::stream! {
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            for (i, event) in plan.events.into_iter().enumerate() {
                if i > 0 && !chunk_delay.is_zero() {
                    tokio::time::sleep(chunk_delay).await;
                }
                yield Ok(event);
            }
            match plan.end {
                End::Finished => {}
                End::Hang => std::future::pending::<()>().await,
                End::Fail(error) => yield Err(error),
            }
        })
    }
}

/// What one response streams.
struct Plan {
    events: Vec<ModelEvent>,
    end: End,
}

enum End {
    Finished,
    Hang,
    Fail(ModelError),
}

/// Why one scripted response is malformed. `Display` is the message shown after
/// "bad script: response N: ".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum InvalidResponse {
    #[error("`error` and `refusal` cannot be combined with text, tool_calls, hang or cut_after")]
    ErrorWithOutput,
    #[error("`hang` and `cut_after` cannot be combined")]
    HangWithCut,
    #[error("arguments of `{name}` must be an object or a string, not {arguments}")]
    Arguments {
        name: String,
        arguments: serde_json::Value,
    },
}

fn validate(response: &ScriptResponse) -> Result<(), InvalidResponse> {
    if (response.error.is_some() || response.refusal.is_some())
        && (!response.text.is_empty()
            || !response.tool_calls.is_empty()
            || response.hang
            || response.cut_after.is_some())
    {
        return Err(InvalidResponse::ErrorWithOutput);
    }
    if response.hang && response.cut_after.is_some() {
        return Err(InvalidResponse::HangWithCut);
    }
    for call in &response.tool_calls {
        match &call.arguments {
            None | Some(serde_json::Value::Object(_) | serde_json::Value::String(_)) => {}
            Some(other) => {
                return Err(InvalidResponse::Arguments {
                    name: call.name.clone(),
                    arguments: other.clone(),
                });
            }
        }
    }
    Ok(())
}

/// `number` counts responses from 1.
fn plan(response: &ScriptResponse, number: usize, input_bytes: usize) -> Plan {
    if let Some(refusal) = &response.refusal {
        return Plan {
            events: Vec::new(),
            end: End::Fail(ModelError::ContentFiltered(refusal.clone())),
        };
    }
    if let Some(error) = &response.error {
        return Plan {
            events: Vec::new(),
            end: End::Fail(ModelError::Http {
                status: error.status,
                body: error.body.clone(),
            }),
        };
    }
    let mut events: Vec<ModelEvent> = response
        .text
        .split_inclusive(char::is_whitespace)
        .map(|word| ModelEvent::TextDelta(word.to_owned()))
        .collect();
    let mut output_bytes = response.text.len();
    for (index, call) in response.tool_calls.iter().enumerate() {
        let id = call
            .id
            .clone()
            .unwrap_or_else(|| format!("call_{number}_{index}"));
        let arguments = match &call.arguments {
            None => "{}".to_owned(),
            Some(serde_json::Value::String(raw)) => raw.clone(),
            Some(value) => value.to_string(),
        };
        output_bytes += call.name.len() + arguments.len();
        events.push(ModelEvent::ToolCallStart {
            index,
            id,
            name: call.name.clone(),
        });
        events.extend(halves(&arguments).map(|part| ModelEvent::ToolCallDelta {
            index,
            arguments: part.to_owned(),
        }));
        events.push(ModelEvent::ToolCallEnd { index });
    }
    if response.hang {
        return Plan {
            events,
            end: End::Hang,
        };
    }
    events.push(ModelEvent::Usage {
        input_tokens: tokens(input_bytes),
        output_tokens: tokens(output_bytes),
    });
    events.push(ModelEvent::Finish(match response.finish {
        Some(ScriptFinish::Length) => FinishReason::Length,
        None if response.tool_calls.is_empty() => FinishReason::Stop,
        None => FinishReason::ToolCalls,
    }));
    match response.cut_after {
        Some(n) => {
            events.truncate(n.min(events.len() - 1));
            Plan {
                events,
                end: End::Fail(ModelError::Stream(format!("scripted cut after {n} events"))),
            }
        }
        None => Plan {
            events,
            end: End::Finished,
        },
    }
}

/// `text` in two pieces (split on a char boundary), or fewer when too short.
fn halves(text: &str) -> impl Iterator<Item = &str> {
    let mid = text
        .char_indices()
        .map(|(i, _)| i)
        .nth(text.chars().count() / 2)
        .unwrap_or(text.len());
    let (a, b) = text.split_at(mid);
    [a, b].into_iter().filter(|part| !part.is_empty())
}

fn tokens(bytes: usize) -> u64 {
    u64::try_from(bytes.div_ceil(4)).unwrap_or(u64::MAX)
}

fn request_bytes(request: &ModelRequest) -> usize {
    let messages: usize = request
        .messages
        .iter()
        .map(|m| {
            m.content.len()
                + m.tool_calls
                    .iter()
                    .map(|c| c.name.len() + c.arguments.len())
                    .sum::<usize>()
        })
        .sum();
    let tools: usize = request
        .tools
        .iter()
        .map(|t| t.name.len() + t.description.len() + t.parameters.to_string().len())
        .sum();
    request.system.len() + messages + tools
}

#[cfg(test)]
mod tests;
