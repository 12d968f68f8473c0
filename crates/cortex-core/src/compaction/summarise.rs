//! The summariser call: one request without tools that asks for a faithful
//! summary of the part of the history a compaction drops.

use cortex_model::{Assembled, Assembler, ModelProvider, ModelRequest};
use cortex_protocol::{Message, Role};
use cortex_tools::cap_middle;
use futures::StreamExt;
use std::fmt::Write;
use tokio_util::sync::CancellationToken;

const SYSTEM: &str = "You summarise the earlier part of a coding agent's session so that the \
agent can continue the work without it. Be faithful and specific; never invent anything.";

const INSTRUCTIONS: &str = "Summarise the transcript above for the agent that will continue \
this session. Keep: the user's requests and constraints; decisions made and why; files read, \
created or changed (with paths) and what changed; commands run and their results; errors hit \
and whether they were fixed; what remains to be done. Use short sections and bullet points. \
Reply with the summary only.";

/// A single message of the transcript is cut to this many bytes (tool
/// outputs are the bulk, and the current files are restated anyway).
const MESSAGE_CAP: usize = 4 * 1024;

/// Why the summariser gave nothing usable.
#[derive(Debug)]
pub(crate) enum SummaryError {
    Stopped,
    Failed(String),
}

/// The dropped messages as a plain transcript: it needs no tools in the
/// request, whatever the history's calls were.
pub(crate) fn transcript(messages: &[Message], max_bytes: usize) -> String {
    let mut out = String::new();
    for message in messages {
        let who = match message.role {
            Role::System => "System",
            Role::User => "User",
            Role::Assistant => "Assistant",
            Role::Tool => "Tool result",
        };
        let _ = write!(out, "### {who}");
        if let Some(id) = &message.tool_call_id {
            let _ = write!(out, " ({id})");
        }
        out.push('\n');
        if !message.content.is_empty() {
            out.push_str(&cap_middle(&message.content, MESSAGE_CAP));
            out.push('\n');
        }
        for call in &message.tool_calls {
            let _ = writeln!(
                out,
                "[call {} {}: {}]",
                call.id,
                call.name,
                cap_middle(&call.arguments, MESSAGE_CAP)
            );
        }
        out.push('\n');
    }
    cap_middle(&out, max_bytes)
}

pub(crate) fn request(model: String, transcript: &str) -> ModelRequest {
    ModelRequest {
        model,
        system: SYSTEM.to_owned(),
        messages: vec![Message::user(format!(
            "<transcript>\n{transcript}</transcript>\n\n{INSTRUCTIONS}"
        ))],
        tools: Vec::new(),
        tool_choice: Default::default(),
        hints: Default::default(),
    }
}

/// Ask `model` for the summary. Fails closed: an error, a cut stream, Stop
/// or an empty answer is an error, never a partial summary.
pub(crate) async fn summarise(
    model: &dyn ModelProvider,
    request: ModelRequest,
    cancel: &CancellationToken,
) -> Result<Assembled, SummaryError> {
    let mut stream = model.stream(request);
    let mut assembler = Assembler::default();
    loop {
        let next = tokio::select! {
            _ = cancel.cancelled() => return Err(SummaryError::Stopped),
            next = stream.next() => next,
        };
        match next {
            None => break,
            Some(Ok(event)) => assembler.push(&event),
            Some(Err(e)) => {
                return Err(SummaryError::Failed(format!(
                    "the summariser ({}) failed: {e}",
                    model.describe()
                )));
            }
        }
    }
    let assembled = assembler.finish();
    if assembled.text.trim().is_empty() {
        return Err(SummaryError::Failed(format!(
            "the summariser ({}) returned no text",
            model.describe()
        )));
    }
    Ok(assembled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transcript_names_roles_and_calls_and_keeps_to_its_size() {
        let call = cortex_protocol::ToolCallRequest {
            id: "c1".into(),
            name: "read_file".into(),
            arguments: r#"{"path":"a.rs"}"#.into(),
        };
        let messages = vec![
            Message::user("fix it"),
            Message::assistant("", vec![call]),
            Message::tool("c1".into(), "x".repeat(10_000)),
        ];
        let t = transcript(&messages, usize::MAX);
        assert!(t.contains("### User\nfix it"), "{t}");
        assert!(t.contains(r#"[call c1 read_file: {"path":"a.rs"}]"#), "{t}");
        assert!(t.contains("### Tool result (c1)"), "{t}");
        assert!(t.len() < 5_000, "{}", t.len());
        assert!(transcript(&messages, 1_000).len() <= 1_000);
    }
}
