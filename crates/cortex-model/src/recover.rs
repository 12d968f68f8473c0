//! Tool calls a model wrote as text, recovered on any provider.
//!
//! A small model behind an OpenAI-compatible server (llama.cpp, Ollama,
//! vLLM) often writes its call as a ```json block or in `<tools>` tags
//! instead of the tags the server parses; the server then returns it as the
//! answer's text, and a harness that trusts the server ends the turn on a
//! call that never ran. [`RecoverTextCalls`] wraps such a provider and reads
//! those calls the way the embedded model does ([`crate::text_calls`]): a
//! reply with no native call whose text holds a well-formed call to an
//! offered tool becomes that call. Text that may begin a call is held back
//! while the reply streams, so the user never sees the call as prose.
//!
//! A recovered call's id starts with [`RECOVERED_PREFIX`]: that is how the
//! timeline records that the harness, not the server, read it.
//!
//! Held-back text is out of the turn loop's sight, so the wrapper watches it
//! for a runaway itself ([`crate::runaway`]: a call's `content` repeated to the
//! output limit behind a llama.cpp server) and ends such a reply with the
//! finish reason [`crate::RUNAWAY`], as the embedded provider does.

use crate::ModelStream;
use crate::text_calls::{TextGate, parse_reply};
use crate::{
    FinishReason, ModelError, ModelEvent, ModelInfo, ModelProvider, ModelRequest, ToolChoice,
};
use futures::{Stream, StreamExt, stream};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// How much a reply grows between two runaway checks of its text.
const RUNAWAY_CHECK_BYTES: usize = 64;

/// The start of the id of every call [`RecoverTextCalls`] read from text.
pub const RECOVERED_PREFIX: &str = "recovered_";

/// A provider whose text replies are read for calls (see the module docs).
pub struct RecoverTextCalls {
    inner: Arc<dyn ModelProvider>,
}

impl RecoverTextCalls {
    /// Reads calls out of `inner`'s text replies.
    pub fn new(inner: Arc<dyn ModelProvider>) -> Self {
        RecoverTextCalls { inner }
    }
}

impl ModelProvider for RecoverTextCalls {
    fn describe(&self) -> String {
        self.inner.describe()
    }

    /// Same contract as the inner provider's stream, with one difference:
    /// when the response makes no native call and its text holds calls to
    /// tools of the request, the text from the first call on is replaced by
    /// those calls (`ToolCallStart`/`Delta`/`End` just before `Finish`,
    /// whose reason becomes `ToolCalls`). Text that may begin a call is
    /// released only once the response shows it is not one (at its end, or
    /// when a native call starts). A request without tools, or one whose
    /// reply must be an answer ([`ToolChoice::Answer`]), passes through.
    fn stream(&self, request: ModelRequest) -> ModelStream {
        if request.tools.is_empty() || request.tool_choice == ToolChoice::Answer {
            return self.inner.stream(request);
        }
        let names = request.tools.iter().map(|t| t.name.clone()).collect();
        Box::pin(recovering(self.inner.stream(request), names))
    }

    fn info(&self) -> Option<ModelInfo> {
        self.inner.info()
    }

    fn takes_images(&self) -> bool {
        self.inner.takes_images()
    }
}

/// Whether `base_url`'s host is this machine (`localhost`, `127.0.0.0/8`,
/// `::1`): a local server, most likely running a small open model, where
/// recovery is on unless the config turns it off.
pub fn is_loopback_url(base_url: &str) -> bool {
    let rest = base_url
        .split_once("://")
        .map_or(base_url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        host_port.split(':').next().unwrap_or("")
    };
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    host.parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_loopback())
}

/// The stream adapter: inner events in, the same events with calls read out
/// of the text out.
fn recovering(
    inner: ModelStream,
    names: Vec<String>,
) -> impl Stream<Item = Result<ModelEvent, ModelError>> + Send {
    let state = (inner, Recovery::new(names), VecDeque::new(), false);
    stream::unfold(
        state,
        |(mut inner, mut recovery, mut queue, mut done)| async move {
            loop {
                if let Some(item) = queue.pop_front() {
                    return Some((item, (inner, recovery, queue, done)));
                }
                if done {
                    return None;
                }
                match inner.next().await {
                    Some(Ok(event)) => {
                        queue.extend(recovery.on_event(event).into_iter().map(Ok));
                        // Ended by the wrapper (a runaway): nothing more is
                        // read, and dropping the stream stops the server.
                        done = recovery.finished;
                    }
                    Some(Err(e)) => {
                        queue.extend(recovery.release_held().into_iter().map(Ok));
                        queue.push_back(Err(e));
                        done = true;
                    }
                    None => {
                        if !recovery.finished {
                            queue.extend(recovery.end(None).into_iter().map(Ok));
                        }
                        done = true;
                    }
                }
            }
        },
    )
}

/// One response's text so far and what of it was released.
struct Recovery {
    names: Vec<String>,
    reply: String,
    gate: TextGate,
    /// The provider made a call of its own: its text is an answer as it is.
    native: bool,
    finished: bool,
    /// The reply's length when it was last checked for a runaway.
    checked: usize,
}

impl Recovery {
    fn new(names: Vec<String>) -> Self {
        Recovery {
            names,
            reply: String::new(),
            gate: TextGate::new(),
            native: false,
            finished: false,
            checked: 0,
        }
    }

    fn on_event(&mut self, event: ModelEvent) -> Vec<ModelEvent> {
        match event {
            ModelEvent::TextDelta(delta) if self.native => vec![ModelEvent::TextDelta(delta)],
            ModelEvent::TextDelta(delta) => {
                self.reply.push_str(&delta);
                let out = text_event(self.gate.advance(&self.reply));
                if self.reply.len() >= self.checked + RUNAWAY_CHECK_BYTES {
                    self.checked = self.reply.len();
                    if self.gate.sent() < self.reply.len() && crate::runaway(&self.reply) {
                        let mut out = out;
                        out.extend(self.release_held());
                        out.push(ModelEvent::Finish(FinishReason::Other(
                            crate::RUNAWAY.to_owned(),
                        )));
                        self.finished = true;
                        return out;
                    }
                }
                out
            }
            start @ ModelEvent::ToolCallStart { .. } => {
                let mut out = self.release_held();
                self.native = true;
                out.push(start);
                out
            }
            ModelEvent::Finish(reason) => {
                self.finished = true;
                self.end(Some(reason))
            }
            other => vec![other],
        }
    }

    /// The text held back, as it was written.
    fn release_held(&mut self) -> Vec<ModelEvent> {
        if self.native {
            return Vec::new();
        }
        let held = self.reply.get(self.gate.sent()..).unwrap_or("").to_owned();
        self.native = true;
        text_event(&held)
    }

    /// The response is complete: the held text, or the calls it holds.
    fn end(&mut self, reason: Option<FinishReason>) -> Vec<ModelEvent> {
        if self.native {
            return reason.map(ModelEvent::Finish).into_iter().collect();
        }
        let names: Vec<&str> = self.names.iter().map(String::as_str).collect();
        let parsed = parse_reply(&self.reply, &names);
        let mut out = text_event(self.gate.finish(&parsed));
        if parsed.calls.is_empty() {
            out.extend(reason.map(ModelEvent::Finish));
            return out;
        }
        let stamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        for (index, call) in parsed.calls.into_iter().enumerate() {
            tracing::info!(tool = %call.name, "a tool call written as text was recovered");
            out.push(ModelEvent::ToolCallStart {
                index,
                id: format!("{RECOVERED_PREFIX}{stamp:x}_{index}"),
                name: call.name,
            });
            out.push(ModelEvent::ToolCallDelta {
                index,
                arguments: call.arguments,
            });
            out.push(ModelEvent::ToolCallEnd { index });
        }
        out.push(ModelEvent::Finish(FinishReason::ToolCalls));
        out
    }
}

fn text_event(text: &str) -> Vec<ModelEvent> {
    if text.is_empty() {
        Vec::new()
    } else {
        vec![ModelEvent::TextDelta(text.to_owned())]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Assembler;
    use cortex_protocol::ToolSpec;

    /// A provider that streams the given events once per request.
    struct Canned(Vec<ModelEvent>);

    impl ModelProvider for Canned {
        fn describe(&self) -> String {
            "canned:test".into()
        }
        fn stream(&self, _request: ModelRequest) -> ModelStream {
            Box::pin(stream::iter(self.0.clone().into_iter().map(Ok)))
        }
    }

    fn request(tools: &[&str]) -> ModelRequest {
        ModelRequest {
            model: String::new(),
            system: String::new(),
            messages: Vec::new(),
            tools: tools
                .iter()
                .map(|name| ToolSpec {
                    name: (*name).to_owned(),
                    description: String::new(),
                    parameters: serde_json::json!({"type": "object"}),
                })
                .collect(),
            tool_choice: ToolChoice::Auto,
            hints: Default::default(),
        }
    }

    /// The text split into pieces of `n` bytes, as a server streams it.
    fn deltas(text: &str, n: usize) -> Vec<ModelEvent> {
        let mut out = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            let mut cut = n.min(rest.len());
            while !rest.is_char_boundary(cut) {
                cut += 1;
            }
            out.push(ModelEvent::TextDelta(rest[..cut].to_owned()));
            rest = &rest[cut..];
        }
        out
    }

    fn run(events: Vec<ModelEvent>, tools: &[&str]) -> Vec<ModelEvent> {
        let provider = RecoverTextCalls::new(Arc::new(Canned(events)));
        let stream = provider.stream(request(tools));
        futures::executor::block_on(stream.map(|e| e.expect("event")).collect())
    }

    fn assemble(events: &[ModelEvent]) -> crate::Assembled {
        let mut assembler = Assembler::default();
        for e in events {
            assembler.push(e);
        }
        assembler.finish()
    }

    #[test]
    fn a_fenced_call_in_the_text_becomes_a_call_and_is_never_shown() {
        let text = "I will read it.\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"app.py\"}}\n```";
        let mut events = deltas(text, 3);
        events.push(ModelEvent::Finish(FinishReason::Stop));
        let out = run(events, &["read_file", "edit_file"]);
        let shown: String = out
            .iter()
            .filter_map(|e| match e {
                ModelEvent::TextDelta(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(shown, "I will read it.");
        let assembled = assemble(&out);
        assert_eq!(assembled.tool_calls.len(), 1);
        let call = &assembled.tool_calls[0];
        assert_eq!(call.name, "read_file");
        assert_eq!(call.arguments, r#"{"path":"app.py"}"#);
        assert!(call.id.0.starts_with(RECOVERED_PREFIX), "{}", call.id.0);
        assert_eq!(
            out.last(),
            Some(&ModelEvent::Finish(FinishReason::ToolCalls))
        );
        // Where the reply must be an answer, the text stays text.
        let mut events = deltas(text, 3);
        events.push(ModelEvent::Finish(FinishReason::Stop));
        let provider = RecoverTextCalls::new(Arc::new(Canned(events)));
        let answer_only = ModelRequest {
            tool_choice: ToolChoice::Answer,
            ..request(&["read_file"])
        };
        let out: Vec<ModelEvent> = futures::executor::block_on(
            provider
                .stream(answer_only)
                .map(|e| e.expect("event"))
                .collect(),
        );
        let assembled = assemble(&out);
        assert_eq!(assembled.text, text);
        assert!(assembled.tool_calls.is_empty());
    }

    #[test]
    fn an_answer_with_code_or_a_json_example_streams_unchanged() {
        for text in [
            "The port is 8080.",
            "Here:\n```json\n{\"name\": \"my-app\", \"debug\": true}\n```\nThat is the file.",
            "Run:\n```sh\npytest -q\n```",
        ] {
            let mut events = deltas(text, 4);
            events.push(ModelEvent::Usage {
                input_tokens: 10,
                output_tokens: 5,
            });
            events.push(ModelEvent::Finish(FinishReason::Stop));
            let out = run(events, &["read_file"]);
            let assembled = assemble(&out);
            assert_eq!(assembled.text, text);
            assert!(assembled.tool_calls.is_empty());
            assert_eq!(assembled.input_tokens, 10);
            assert_eq!(out.last(), Some(&ModelEvent::Finish(FinishReason::Stop)));
        }
    }

    #[test]
    fn held_text_that_runs_away_ends_the_reply() {
        let call = "```json\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"a.md\", \
                    \"content\": \"";
        let mut events = deltas(call, 8);
        events.extend(deltas(&"Run `pip install todo`.\n\n".repeat(400), 8));
        events.push(ModelEvent::Finish(FinishReason::Length));
        let total = events.len();
        let provider = RecoverTextCalls::new(Arc::new(Canned(events)));
        let stream = provider.stream(request(&["write_file"]));
        let out: Vec<ModelEvent> =
            futures::executor::block_on(stream.map(|e| e.expect("event")).collect());
        assert_eq!(
            out.last(),
            Some(&ModelEvent::Finish(FinishReason::Other(
                crate::RUNAWAY.to_owned()
            )))
        );
        let shown: usize = out
            .iter()
            .map(|e| match e {
                ModelEvent::TextDelta(t) => t.len(),
                _ => 0,
            })
            .sum();
        assert!(
            shown < 2_000,
            "stopped early: {shown} bytes of {total} deltas"
        );
        assert!(assemble(&out).tool_calls.is_empty());
    }

    #[test]
    fn native_calls_pass_through_and_release_the_held_text() {
        let mut events = deltas("Checking:\n```", 4);
        events.push(ModelEvent::ToolCallStart {
            index: 0,
            id: "call_1".into(),
            name: "glob".into(),
        });
        events.push(ModelEvent::ToolCallDelta {
            index: 0,
            arguments: r#"{"pattern":"*"}"#.into(),
        });
        events.push(ModelEvent::ToolCallEnd { index: 0 });
        events.push(ModelEvent::Finish(FinishReason::ToolCalls));
        let assembled = assemble(&run(events, &["glob"]));
        assert_eq!(assembled.text, "Checking:\n```");
        assert_eq!(assembled.tool_calls.len(), 1);
        assert_eq!(assembled.tool_calls[0].id.0, "call_1");
    }

    #[test]
    fn a_call_to_a_tool_not_offered_stays_text_and_a_stream_without_finish_ends_cleanly() {
        let text = "```json\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n```";
        let out = run(deltas(text, 5), &["read_file"]);
        let assembled = assemble(&out);
        assert_eq!(assembled.text, text);
        assert!(assembled.tool_calls.is_empty());
        assert!(!out.iter().any(|e| matches!(e, ModelEvent::Finish(_))));
    }

    #[test]
    fn loopback_hosts_are_recognised() {
        for url in [
            "http://127.0.0.1:8080/v1",
            "http://localhost:11434/v1",
            "http://[::1]:8000/v1",
            "https://user:pw@127.3.4.5/v1",
            "localhost:8080",
        ] {
            assert!(is_loopback_url(url), "{url}");
        }
        for url in [
            "https://api.openai.com/v1",
            "http://10.0.0.2:8080/v1",
            "http://localhost.example.com/v1",
            "http://[2001:db8::1]/v1",
        ] {
            assert!(!is_loopback_url(url), "{url}");
        }
    }
}
