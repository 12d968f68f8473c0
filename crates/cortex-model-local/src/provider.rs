//! [`LocalProvider`]: the embedded model as a [`ModelProvider`].

use crate::engine::{Engine, EngineOptions, Job, RoundStats};
use crate::error::LocalError;
use crate::template::ChatTemplate;
use cortex_model::{ModelError, ModelEvent, ModelProvider, ModelRequest, ModelStream, ToolChoice};
use cortex_protocol::{EditFormat, Role, ToolName, ToolSpec};
use futures::Stream;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

/// How the local model runs.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalOptions {
    /// Context window in tokens (prompt + reply).
    pub context: u32,
    /// CPU threads for generating. Default: every core (at most 8), as
    /// llama.cpp's own default: on this 2-core machine, idle otherwise, a
    /// token took 105 ms on 2 threads against 170 ms on 1
    /// (docs/BENCHMARKS.md, generation threads). llama.cpp's threads spin-wait for
    /// each other, so on a machine busy with other work (a build) fewer
    /// may be faster: `[local] threads`.
    pub threads: usize,
    /// CPU threads for reading the prompt. Default: every core (at most 8).
    /// Reading a prompt is batched matrix work that scales with cores, and
    /// the harness waits on the model meanwhile; it is most of a small
    /// model's first round (docs/BENCHMARKS.md, prompt threads).
    pub prompt_threads: usize,
    /// Most tokens one reply may have.
    pub max_output_tokens: u32,
    /// 0 (the default) samples greedily.
    pub temperature: f32,
    /// Seed for temperature sampling.
    pub seed: u32,
    /// Constrain a reply that starts a tool call with a grammar built from
    /// the request's tool schemas.
    pub grammar: bool,
    /// Keep the KV cache between processes in this folder (the CLI uses
    /// `$XDG_DATA_HOME/cortex/kv`); `None` (the default) keeps it in memory
    /// only.
    pub kv_dir: Option<PathBuf>,
    /// How many saved states `kv_dir` keeps per model (oldest removed first).
    pub kv_keep: usize,
    /// The first round of a turn (the last message is the user's) must call
    /// a tool when tools are offered: small models otherwise answer from
    /// guesses without reading anything. Off by default.
    pub first_round_tool_call: bool,
    /// Reported in `info()`: the harness asks once to check an answer given
    /// without any tool call. On by default.
    pub verify_answers: bool,
    /// Reported in `info()`, capped at a quarter of the context (about 4
    /// bytes a token): bytes of file content the turn's context carries. Default
    /// 24 KiB.
    pub files_in_prompt: u32,
    /// Reported in `info()`: the shape of `edit_file` offered. Default
    /// `quoted`: exact strings, held by the grammar to whole lines of a file
    /// the model has seen (docs/BENCHMARKS.md, the task set: 8 of 8 on the
    /// original set against 6–7 with free strings).
    pub edit_format: EditFormat,
}

impl Default for LocalOptions {
    fn default() -> Self {
        LocalOptions {
            context: 8192,
            threads: std::thread::available_parallelism()
                .map_or(1, std::num::NonZeroUsize::get)
                .clamp(1, 8),
            prompt_threads: std::thread::available_parallelism()
                .map_or(1, std::num::NonZeroUsize::get)
                .clamp(1, 8),
            max_output_tokens: 2048,
            temperature: 0.0,
            seed: 42,
            grammar: true,
            kv_dir: None,
            kv_keep: 8,
            first_round_tool_call: false,
            verify_answers: true,
            files_in_prompt: 24 * 1024,
            edit_format: EditFormat::Quoted,
        }
    }
}

/// An embedded GGUF model run by llama.cpp on this machine. Requests run one
/// at a time on the model's own thread; the evaluated prompt is kept between
/// requests, so a round that extends the previous one evaluates only the new
/// tokens.
pub struct LocalProvider {
    name: String,
    max_output_tokens: u32,
    first_round_tool_call: bool,
    verify_answers: bool,
    files_in_prompt: u32,
    edit_format: EditFormat,
    template: ChatTemplate,
    engine: Engine,
}

impl std::fmt::Debug for LocalProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalProvider")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl LocalProvider {
    /// Load the GGUF at `path`. Blocks for the load (about a second for a
    /// 0.5B model); call it from `spawn_blocking` in async code.
    pub fn load(path: &Path, options: LocalOptions) -> Result<LocalProvider, LocalError> {
        let engine = Engine::start(
            path,
            EngineOptions {
                context: options.context,
                threads: options.threads,
                prompt_threads: options.prompt_threads,
                batch: 512,
                ubatch: 128,
                mmap: false,
                kv_q8: true,
                max_output_tokens: options.max_output_tokens,
                temperature: options.temperature,
                seed: options.seed,
                grammar: options.grammar,
                kv_dir: options.kv_dir,
                kv_keep: options.kv_keep,
                stop_runaways: options.verify_answers,
            },
        )?;
        let info = &engine.info;
        let template = ChatTemplate::new(
            info.chat_template.as_deref(),
            info.bos_token.clone(),
            info.eos_token.clone(),
        )?;
        let name = path
            .file_stem()
            .map_or_else(|| "model".to_owned(), |s| s.to_string_lossy().into_owned());
        Ok(LocalProvider {
            name,
            max_output_tokens: options.max_output_tokens,
            first_round_tool_call: options.first_round_tool_call,
            verify_answers: options.verify_answers,
            files_in_prompt: options.files_in_prompt,
            edit_format: options.edit_format,
            template,
            engine,
        })
    }

    /// Figures of the last completed request.
    pub fn last_stats(&self) -> Option<RoundStats> {
        self.engine.stats.lock().ok().and_then(|s| *s)
    }

    /// The context window the model runs with, in tokens.
    pub fn context_tokens(&self) -> u32 {
        self.engine.info.context
    }

    /// Milliseconds the model took to load.
    pub fn load_ms(&self) -> u64 {
        self.engine.info.load_ms
    }

    /// The prompt a request renders to (for tests and debugging).
    pub fn render(&self, request: &ModelRequest) -> Result<String, LocalError> {
        self.template
            .render(&request.system, &request.messages, &request.tools)
    }
}

impl ModelProvider for LocalProvider {
    fn describe(&self) -> String {
        format!("local:{}", self.name)
    }

    /// The context the model was loaded with, so that compaction knows
    /// its window without a `[models."NAME"]` entry.
    fn info(&self) -> Option<cortex_model::ModelInfo> {
        Some(cortex_model::ModelInfo {
            context_window: u64::from(self.engine.info.context),
            max_output_tokens: self.max_output_tokens,
            parallel_tool_calls: true,
            prices: None,
            verify_answers: self.verify_answers,
            // About a quarter of the window at most (4 bytes a token): the
            // task, the replies and the reads still fit, and the first
            // round stays short on a small machine.
            files_in_prompt: self.files_in_prompt.min(self.engine.info.context),
            edit_format: self.edit_format,
        })
    }

    /// Renders the prompt and queues the request at once (this provider's
    /// stream is not lazy); requests run one at a time, in the order they
    /// were made. `request.model` is ignored.
    ///
    /// The stream has `PromptProgress` while the prompt is read; then the
    /// text as it is generated, held back from where a tool call may begin;
    /// then, once the reply is complete and parsed, the calls (each as
    /// start, all its arguments in one delta, end, with a minted id), one
    /// `Usage` and `Finish`. It never sends `Retry` and is never retried
    /// here. A template or context error is the only item; a decode failure
    /// ends the stream as a retryable [`ModelError::Stream`].
    ///
    /// Dropping the stream stops the request at its next token (or before
    /// it starts, if it is still queued); nothing more is sent.
    fn stream(&self, request: ModelRequest) -> ModelStream {
        let (tx, rx) = unbounded_channel();
        let cancel = Arc::new(AtomicBool::new(false));
        let first_round = self.first_round_tool_call
            && request
                .messages
                .last()
                .is_some_and(|m| m.role == Role::User);
        let force_call = !request.tools.is_empty()
            && request.tool_choice != ToolChoice::Answer
            && (first_round || request.tool_choice.forces_call());
        let submitted = self.render(&request).and_then(|prompt| {
            // The prompt lists every tool (its cached prefix stays the
            // same); the grammar allows the chosen one alone, or all but
            // the one withheld.
            let tools = match request.tool_choice {
                ToolChoice::Tool(name) => only(request.tools, name),
                ToolChoice::AutoWithout(name) => without(request.tools, name),
                ToolChoice::Auto | ToolChoice::Required => request.tools,
                // No tool to call, and so none recovered from the text.
                ToolChoice::Answer => Vec::new(),
            };
            self.engine.submit(Job {
                prompt,
                tools,
                events: tx.clone(),
                cancel: Arc::clone(&cancel),
                force_call,
                quotable: request
                    .hints
                    .get::<cortex_model::QuotableFiles>()
                    .map(|q| q.0.clone())
                    .unwrap_or_default(),
                refused: request
                    .hints
                    .get::<cortex_model::RefusedCalls>()
                    .map(|r| r.0.clone())
                    .unwrap_or_default(),
                answer: request.tool_choice == ToolChoice::Answer,
            })
        });
        if let Err(e) = submitted {
            let _ = tx.send(Err(e.into()));
        }
        drop(tx);
        Box::pin(LocalStream { rx, cancel })
    }
}

/// `tools` narrowed to `name`; all of them when it is not among them (a
/// request that chose a tool it does not offer is not made unanswerable).
fn only(tools: Vec<ToolSpec>, name: ToolName) -> Vec<ToolSpec> {
    kept_or_all(tools, |t| t.name == name.as_str())
}

/// `tools` without `name`; all of them when it is the only one (a reply
/// that may call nothing is not what withholding one tool means).
fn without(tools: Vec<ToolSpec>, name: ToolName) -> Vec<ToolSpec> {
    kept_or_all(tools, |t| t.name != name.as_str())
}

/// The tools `keep` keeps, or all of them when it keeps none: the grammar
/// never offers no call at all.
fn kept_or_all(tools: Vec<ToolSpec>, keep: impl Fn(&ToolSpec) -> bool) -> Vec<ToolSpec> {
    if tools.iter().any(&keep) {
        tools.into_iter().filter(|t| keep(t)).collect()
    } else {
        tools
    }
}

/// The events of one request; dropping it stops generation at the next
/// token.
struct LocalStream {
    rx: UnboundedReceiver<Result<ModelEvent, ModelError>>,
    cancel: Arc<AtomicBool>,
}

impl Stream for LocalStream {
    type Item = Result<ModelEvent, ModelError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.rx.poll_recv(cx)
    }
}

impl Drop for LocalStream {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chosen_tool_narrows_the_calls_to_it_when_offered() {
        let tools = || vec![ToolName::ReadFile.spec(), ToolName::EditFile.spec()];
        let names = |t: Vec<ToolSpec>| t.into_iter().map(|s| s.name).collect::<Vec<_>>();
        assert_eq!(names(only(tools(), ToolName::EditFile)), ["edit_file"]);
        assert_eq!(
            names(only(tools(), ToolName::Bash)),
            ["read_file", "edit_file"]
        );
    }

    #[test]
    fn a_withheld_tool_leaves_the_others_unless_it_is_the_only_one() {
        let tools = || vec![ToolName::ReadFile.spec(), ToolName::EditFile.spec()];
        let names = |t: Vec<ToolSpec>| t.into_iter().map(|s| s.name).collect::<Vec<_>>();
        assert_eq!(names(without(tools(), ToolName::ReadFile)), ["edit_file"]);
        assert_eq!(
            names(without(tools(), ToolName::Bash)),
            ["read_file", "edit_file"]
        );
        assert_eq!(
            names(without(vec![ToolName::ReadFile.spec()], ToolName::ReadFile)),
            ["read_file"]
        );
    }
}
