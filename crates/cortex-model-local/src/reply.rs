//! What one local request produced: the prompt as evaluated and the reply
//! as generated, and the events that end the reply's stream (the rest of
//! its text, its tool calls, usage and finish).

use crate::parse::{TextGate, parse_reply};
use cortex_model::{FinishReason, ModelError, ModelEvent};
use cortex_protocol::ToolSpec;
use std::time::{SystemTime, UNIX_EPOCH};
use tokio::sync::mpsc::UnboundedSender;

/// Where a request's events go (the provider's stream).
pub(crate) type EventSender = UnboundedSender<Result<ModelEvent, ModelError>>;

/// The prompt as evaluated.
pub(crate) struct Prompted {
    pub(crate) reused: usize,
    pub(crate) restored: usize,
    pub(crate) evaluated: usize,
    /// Where the last prompt token's logits are in its batch.
    pub(crate) logits_idx: i32,
    pub(crate) prompt_ms: u64,
}

/// The reply as generated.
pub(crate) struct Reply {
    pub(crate) text: String,
    /// What of `text` was streamed already.
    pub(crate) gate: TextGate,
    pub(crate) finish: FinishReason,
    pub(crate) generated: usize,
    pub(crate) grammar: bool,
    pub(crate) cancelled: bool,
    pub(crate) generation_ms: u64,
}

impl Reply {
    pub(crate) fn new(grammar: bool) -> Reply {
        Reply {
            text: String::new(),
            gate: TextGate::new(),
            finish: FinishReason::Stop,
            generated: 0,
            grammar,
            cancelled: false,
            generation_ms: 0,
        }
    }
}

/// Send what the stream has not had yet: the rest of the text, the tool
/// calls parsed from the reply, usage and finish. Returns the number of
/// calls.
pub(crate) fn send_reply(
    events: &EventSender,
    tools: &[ToolSpec],
    reply: &mut Reply,
    prompt_tokens: usize,
) -> usize {
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    let parsed = parse_reply(&reply.text, &names);
    let mut out = Vec::new();
    let rest = reply.gate.finish(&parsed);
    if !rest.is_empty() {
        out.push(ModelEvent::TextDelta(rest.to_owned()));
    }
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    for (index, call) in parsed.calls.iter().enumerate() {
        out.push(ModelEvent::ToolCallStart {
            index,
            id: format!("call_{stamp:x}_{index}"),
            name: call.name.clone(),
        });
        out.push(ModelEvent::ToolCallDelta {
            index,
            arguments: call.arguments.clone(),
        });
        out.push(ModelEvent::ToolCallEnd { index });
    }
    out.push(ModelEvent::Usage {
        input_tokens: prompt_tokens as u64,
        output_tokens: reply.generated as u64,
    });
    out.push(ModelEvent::Finish(if parsed.calls.is_empty() {
        reply.finish.clone()
    } else {
        FinishReason::ToolCalls
    }));
    for ev in out {
        if events.send(Ok(ev)).is_err() {
            break;
        }
    }
    parsed.calls.len()
}
