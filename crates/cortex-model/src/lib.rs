//! Model providers and their wire formats.
//!
//! A provider turns a [`ModelRequest`] (provider-neutral history, system
//! prompt and tool catalog) into a [`ModelStream`] of [`ModelEvent`]s. The
//! stream is lazy and owns its connection: dropping it aborts the request,
//! which is how Stop cancels a model call. Providers retry connection errors,
//! 429 and 5xx *before* the first event of a response; a stream cut mid-way is
//! reported as [`ModelError::Stream`] and the turn loop decides (it may retry
//! the whole round, since no tool of that round has run yet).

#![warn(missing_docs)]

pub mod anthropic;
mod assemble;
pub mod encode;
mod error;
mod hints;
pub mod metadata;
pub mod meter;
pub mod openai;
pub mod recover;
mod retry;
mod runaway;
pub mod scripted;
pub mod text_calls;
mod timeouts;
mod wire;

pub use assemble::{Assembled, Assembler, MAX_KEPT_ARGUMENT_BYTES, MAX_TEXT_BYTES, within_cap};
pub use error::ModelError;
pub use hints::{Hints, QuotableFile, QuotableFiles, RefusedCall, RefusedCalls, same_arguments};
pub use metadata::{ModelInfo, ModelOverride, Prices, TokenCounts};
pub use retry::RetryPolicy;
pub use runaway::{RUNAWAY, runaway};
pub use timeouts::Timeouts;

use cortex_protocol::{Message, ProviderItem, ToolName, ToolSpec};
use futures::Stream;
use std::pin::Pin;

/// One request to a model: everything the next response depends on. The
/// turn loop builds one per round from the session's history; a provider
/// encodes it into its own wire format and keeps nothing of it between
/// requests (the embedded model keeps its evaluated prompt as a cache, never
/// as state that changes the answer).
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    /// The model to ask. The HTTP providers use it instead of the model they
    /// were built with when it is not blank; the embedded and scripted
    /// providers ignore it (they have one model).
    pub model: String,
    /// The system prompt, sent apart from `messages` (as the wire format
    /// wants it: a `system` message or field). May be empty.
    pub system: String,
    /// The conversation so far, oldest first. Assistant messages carry their
    /// [`ProviderItem`]s, which a provider sends back verbatim when they are
    /// its own and drops when they are another provider's.
    pub messages: Vec<Message>,
    /// The tools the model may call this round; empty means no tools (and
    /// then `tool_choice` is ignored).
    pub tools: Vec<ToolSpec>,
    /// Whether the reply must call a tool.
    pub tool_choice: ToolChoice,
    /// What a harness tells the providers that understand it, by type
    /// ([`Hints`]): the embedded model's grammar reads [`QuotableFiles`]
    /// and [`RefusedCalls`]; the other providers ignore what they do not
    /// know, so nothing only one model reads is a field of the request.
    pub hints: Hints,
}

/// Whether the reply must call a tool (ignored when no tools are offered).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolChoice {
    /// The model decides.
    #[default]
    Auto,
    /// The reply must call one of the offered tools (OpenAI `"required"`,
    /// Anthropic `"any"`, a grammar for the local model).
    Required,
    /// The reply must call this tool, which the request offers (OpenAI
    /// `{"type": "function", …}`, Anthropic `{"type": "tool", …}`, a grammar
    /// of that tool alone for the local model).
    Tool(ToolName),
    /// The model decides, but may not call this tool: it repeated the same call
    /// until the harness refused it, and a small model otherwise goes on
    /// repeating it (the 0.5B did). The local model's grammar leaves the tool
    /// out; providers that cannot say so send their `auto`.
    AutoWithout(ToolName),
    /// The reply must be an answer in text, with no call: the harness has told
    /// the model to answer now from what the tools showed it, and a small model
    /// otherwise calls tool after tool (the 0.5B did). OpenAI `"none"`,
    /// Anthropic `{"type": "none"}`; the local model is given no tool to call,
    /// and text that reads as a call is not recovered as one.
    Answer,
}

impl ToolChoice {
    /// Whether the reply must call a tool ([`ToolChoice::Required`] or
    /// [`ToolChoice::Tool`]); an answer in text is allowed otherwise.
    pub fn forces_call(self) -> bool {
        matches!(self, ToolChoice::Required | ToolChoice::Tool(_))
    }
}

/// Why a response ended, as the provider reported it (mapped from its own
/// vocabulary). It is informational: the turn loop decides whether to run
/// tools from the calls it assembled, not from this value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishReason {
    /// The model finished its answer (OpenAI `stop`, Anthropic `end_turn`
    /// or `stop_sequence`; also what a response without a reason is taken
    /// to be when it made no calls).
    Stop,
    /// The model stopped to have its tool calls run.
    ToolCalls,
    /// The output token limit cut the answer off; text and the last call's
    /// arguments may be incomplete.
    Length,
    /// Any other reason, in the provider's own word.
    Other(String),
}

/// What a provider streams back. See [`ModelProvider::stream`] for the
/// order events come in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelEvent {
    /// The next piece of the answer's text. Pieces are not aligned to words
    /// or lines; concatenated in order they are the text.
    TextDelta(String),
    /// A tool call begins; `index` identifies it within this response.
    ToolCallStart {
        /// The provider's number for the call (not necessarily 0, 1, 2…:
        /// Anthropic numbers content blocks, text included).
        index: usize,
        /// The provider's call id; may be empty (some compatible servers
        /// send none; [`Assembler`] then mints one).
        id: String,
        /// The tool's name as the model wrote it: not checked against the
        /// catalog here.
        name: String,
    },
    /// The next piece of a started call's arguments. Concatenated in order
    /// they are the arguments as the model wrote them: meant to be a JSON
    /// object but not checked, so possibly malformed.
    ToolCallDelta {
        /// The `index` of the call's `ToolCallStart`.
        index: usize,
        /// A fragment of JSON text, not valid JSON by itself.
        arguments: String,
    },
    /// The call's arguments are complete. Every started call gets one, at
    /// the latest just before `Finish`.
    ToolCallEnd {
        /// The `index` of the call's `ToolCallStart`.
        index: usize,
    },
    /// `input_tokens` counts the whole prompt, cached parts included.
    ///
    /// May come more than once per response (Anthropic reports input at the
    /// start and output at the end): a zero means "not reported in this
    /// event", and a later non-zero value replaces an earlier one rather than
    /// adding to it (which is how [`Assembler`] folds them).
    Usage {
        /// Prompt tokens, cached parts included.
        input_tokens: u64,
        /// Tokens of the answer (thinking included where the provider
        /// counts it there).
        output_tokens: u64,
    },
    /// How much of the prompt was read from, and written to, the provider's
    /// prompt cache (both are part of `Usage::input_tokens`).
    /// Comes right after the `Usage` it belongs to, only when one of them
    /// is non-zero.
    CacheUsage {
        /// Prompt tokens read from the cache (billed at a discount).
        read_tokens: u64,
        /// Prompt tokens written to the cache (billed at a premium by
        /// Anthropic; always 0 from OpenAI, which caches by itself).
        write_tokens: u64,
    },
    /// Extended thinking / reasoning summary text: shown apart from the
    /// answer (collapsible), never part of the assistant's text.
    ThinkingDelta(String),
    /// An opaque item the provider wants back verbatim with this assistant
    /// message in later requests (see [`cortex_protocol::ProviderItem`]).
    ProviderItem(ProviderItem),
    /// The provider is about to retry after a retryable failure that happened
    /// before any event of the response.
    /// The stream then waits `delay_ms` and sends the request again; the
    /// events that follow belong to the new attempt, which is a whole
    /// response of its own. Informational: the stream itself does the retry.
    Retry {
        /// Which retry this is, from 1.
        attempt: u32,
        /// How many retries there are at most.
        of: u32,
        /// How long the stream waits before the attempt, in milliseconds.
        delay_ms: u64,
        /// The failure being retried, as a message for the user.
        reason: String,
    },
    /// The provider has read `done` of the prompt's `total` tokens. Sent
    /// only by providers that read long prompts slowly enough for it to
    /// matter (the embedded model), before the response's first token;
    /// informational, so a consumer may ignore it.
    PromptProgress {
        /// Prompt tokens read so far (cached ones count as read).
        done: u64,
        /// Prompt tokens in all.
        total: u64,
    },
    /// The response is complete: the last event of a successful stream.
    Finish(FinishReason),
}

/// The events of one response, as returned by [`ModelProvider::stream`].
/// It owns everything the request needs (connection, inference job), so it
/// can outlive the provider's borrow and be dropped to cancel.
pub type ModelStream = Pin<Box<dyn Stream<Item = Result<ModelEvent, ModelError>> + Send>>;

/// A model the turn loop can ask for a response: a remote API (OpenAI,
/// Anthropic), the embedded model (`cortex-model-local`), or a script (tests).
///
/// A provider is shared (`Arc<dyn ModelProvider>`) by the sessions that use
/// it and may be asked for several responses at once; it holds no
/// per-session state. Wrappers (such as [`meter::Metered`]) implement this
/// trait by delegating, so every method may be called from any task.
pub trait ModelProvider: Send + Sync {
    /// `provider:model` (e.g. `anthropic:claude-sonnet-4`, `local:qwen`),
    /// for events, logs and error messages. Cheap; the same value for the
    /// provider's whole life.
    fn describe(&self) -> String;

    /// Starts one response to `request` and returns its events.
    ///
    /// Called once per model round by the turn loop (again, with the same
    /// request, when it retries a round). Does not wait on I/O: errors of the request
    /// itself (it cannot be encoded, the embedded model cannot render it)
    /// come back as the stream's one item, not as a panic or a block.
    ///
    /// **Order.** A successful stream is: any number of `Retry` (each
    /// followed by a new attempt) and `PromptProgress`; then the response's
    /// events, where text, thinking and tool-call events may interleave but
    /// each call's `ToolCallStart` comes before its `ToolCallDelta`s, and
    /// its `ToolCallEnd` after them; `ProviderItem`s when the provider has
    /// them; `Usage`/`CacheUsage` zero or more times (a provider that
    /// reports nothing sends none); and last `Finish`, after which the
    /// stream ends (`None`). The HTTP providers and the embedded model
    /// always end a successful response with `Finish`; a consumer should
    /// still not count on it (the turn loop takes a stream that just ends
    /// as complete).
    ///
    /// **Errors.** An `Err` item is always the last item: the stream ends
    /// after it. It may come first (the request was refused) or after
    /// events (the response broke off); events already yielded stay valid
    /// but the response is incomplete. [`ModelError::is_retryable`] says
    /// whether sending the same request again may succeed. The HTTP
    /// providers have already retried connection errors, timeouts, 429 and
    /// 5xx (per their [`RetryPolicy`], announcing each with `Retry`) as long
    /// as no event but `Retry` had been yielded, so an `Err` as the first
    /// real item means those retries ran out. A break after the first event
    /// is [`ModelError::Stream`] and is not retried here, because the
    /// consumer has seen part of the answer: the turn loop retries the whole
    /// round (no tool of it has run yet).
    ///
    /// **Cancellation.** Dropping the stream cancels the request: the HTTP
    /// providers abort the connection (nothing is sent before the first
    /// poll, since their stream is lazy); the embedded model's request is
    /// queued when `stream` is called and stops at its next token once the
    /// stream is dropped. Only the usage yielded before the drop is known
    /// (a cut-off response usually has none yet). This is how Stop cancels
    /// a model call.
    ///
    /// **Usage** is reported as `Usage` events within the stream, not by
    /// this method's caller; [`Assembler`] folds them into one figure.
    fn stream(&self, request: ModelRequest) -> ModelStream;

    /// What is known of the model (context window, output limit, prices),
    /// if anything. The harness reads it for compaction thresholds and cost;
    /// `None` (the default) makes it fall back on configuration. Cheap and
    /// constant for the provider's life.
    fn info(&self) -> Option<ModelInfo> {
        None
    }

    /// Whether a user's message may carry images for this provider: its
    /// wire format takes them (OpenAI's and Anthropic's do; the embedded
    /// model does not). A turn with images for one that does not is
    /// refused before any request. Whether the model behind a wire format
    /// sees images is the provider's to say; its error then reaches the
    /// user as any request error does.
    fn takes_images(&self) -> bool {
        false
    }
}

/// A non-empty, trimmed environment variable.
pub(crate) fn env_var(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::RefusedCall;

    #[test]
    fn a_refused_call_matches_its_arguments_as_json() {
        let refused = RefusedCall {
            name: "edit_file".into(),
            arguments: r#"{"path":"a.py","old_string":"x","new_string":"y","replace_all":null}"#
                .into(),
            instead: None,
        };
        assert!(refused.matches(
            "edit_file",
            r#"{ "new_string": "y", "old_string": "x", "path": "a.py" }"#
        ));
        assert!(!refused.matches(
            "edit_file",
            r#"{"path":"a.py","old_string":"x","new_string":"z"}"#
        ));
        assert!(!refused.matches(
            "write_file",
            r#"{"path":"a.py","old_string":"x","new_string":"y"}"#
        ));
        let malformed = RefusedCall {
            name: "bash".into(),
            arguments: "{not json".into(),
            instead: None,
        };
        assert!(malformed.matches("bash", " {not json "));
        assert!(!malformed.matches("bash", "{not json either"));
    }
}
