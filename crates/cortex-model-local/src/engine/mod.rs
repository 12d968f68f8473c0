//! The inference thread: it owns the llama.cpp model and context, runs one
//! request at a time, streams events back, and keeps the evaluated tokens so
//! the next request only evaluates what changed (KV-cache prefix reuse).
//! With a [`KvStore`], the cache also outlives the process: saved when the
//! engine shuts down, loaded by the first request of the next one.

use crate::error::LocalError;
use crate::kv_store::KvStore;
use crate::reply::{EventSender, send_reply};
use cortex_protocol::ToolSpec;
use generate::Draw;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::{KvCacheType, LlamaContextParams};
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::token::LlamaToken;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::time::Instant;

/// How the engine runs; see [`crate::LocalOptions`].
#[derive(Debug, Clone)]
pub(crate) struct EngineOptions {
    pub context: u32,
    pub threads: usize,
    pub prompt_threads: usize,
    pub batch: u32,
    /// Tokens per compute step. llama.cpp sizes its compute buffer for a
    /// step in which every token returns logits (n_ubatch × vocabulary ×
    /// 4 bytes: 297 MiB at 512 for Qwen's 151,936 tokens), though we ask
    /// for one; a smaller step bounds that buffer.
    pub ubatch: u32,
    /// Map the GGUF instead of reading it. Off: llama.cpp repacks most
    /// weights into an interleaved copy for its CPU kernels, and with a
    /// mapping the file pages it read to make that copy stay resident too
    /// (measured: 1,060 MiB mapped + 597 MiB repacked for the 1.5B model).
    pub mmap: bool,
    /// Store the KV cache as q8_0 instead of f16: half the memory (224 →
    /// 119 MiB for the 1.5B model at 8k) and half the saved state. Needs
    /// flash attention; a context that cannot have it falls back to f16.
    pub kv_q8: bool,
    pub max_output_tokens: u32,
    pub temperature: f32,
    pub seed: u32,
    pub grammar: bool,
    /// Where KV states are kept between processes (`None`: not kept), and
    /// how many.
    pub kv_dir: Option<PathBuf>,
    pub kv_keep: usize,
    /// Stop a reply that has degenerated (`cortex_model::runaway`): on for
    /// a model the harness checks (`verify_answers`).
    pub stop_runaways: bool,
}

/// A saved state is loaded only when it shares at least this many tokens
/// with the prompt: below that, evaluating is about as fast as loading.
const MIN_RESTORE_TOKENS: usize = 64;

/// What the loaded model says about itself.
#[derive(Debug, Clone)]
pub(crate) struct ModelInfo {
    pub chat_template: Option<String>,
    pub bos_token: String,
    pub eos_token: String,
    pub context: u32,
    pub load_ms: u64,
}

/// Figures of the last request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RoundStats {
    /// Tokens of the rendered prompt.
    pub prompt_tokens: usize,
    /// Prompt tokens whose KV entries were kept from the previous request.
    pub reused_tokens: usize,
    /// Prompt tokens evaluated for this request.
    pub evaluated_tokens: usize,
    /// Of `reused_tokens`, those loaded from a state saved by an earlier
    /// process (only the first request of a process has any).
    pub restored_tokens: usize,
    /// Tokens generated (after a grammar restart, those of the final reply;
    /// after a redraw, those of every draw).
    pub generated_tokens: usize,
    /// Whether the reply was generated under the tool-call grammar.
    pub grammar: bool,
    /// Whether the grammar was on from the first token (a forced call).
    pub forced_call: bool,
    /// The request was dropped (Stop) during generation; the counts say how
    /// far it got.
    pub cancelled: bool,
    /// Wall-clock milliseconds spent evaluating the prompt (restoring a
    /// saved state included).
    pub prompt_ms: u64,
    /// Wall-clock milliseconds spent generating the reply (every draw).
    pub generation_ms: u64,
    /// Times the reply was drawn again because it was a call the harness
    /// refuses ([`cortex_model::RefusedCalls`]).
    pub redraws: u32,
}

pub(crate) struct Job {
    pub prompt: String,
    pub tools: Vec<ToolSpec>,
    pub events: EventSender,
    pub cancel: Arc<AtomicBool>,
    /// The reply must be a tool call: generate under the `<tool_call>`
    /// grammar from its first token.
    pub force_call: bool,
    /// The files an `edit_file` may name and quote (the request's).
    pub quotable: Vec<cortex_model::QuotableFile>,
    /// Calls the harness will refuse: a reply that is one of them is drawn
    /// again (the request's).
    pub refused: Vec<cortex_model::RefusedCall>,
    /// The reply must be an answer in words: no tools, and generated under
    /// [`crate::grammar::ANSWER_GRAMMAR`].
    pub answer: bool,
}

/// Handle to the inference thread. Dropping it ends the thread once the
/// queued jobs are done.
pub(crate) struct Engine {
    /// `None` once the engine shuts down.
    jobs: Mutex<Option<mpsc::Sender<Job>>>,
    worker: Option<std::thread::JoinHandle<()>>,
    pub stats: Arc<Mutex<Option<RoundStats>>>,
    pub info: ModelInfo,
}

static BACKEND: OnceLock<Result<LlamaBackend, llama_cpp_2::LlamaCppError>> = OnceLock::new();

fn backend() -> Result<&'static LlamaBackend, LocalError> {
    BACKEND
        .get_or_init(|| {
            llama_cpp_2::send_logs_to_tracing(llama_cpp_2::LogOptions::default());
            LlamaBackend::init()
        })
        .as_ref()
        .map_err(|e| LocalError::Backend(e.to_string()))
}

impl Engine {
    /// Load the model on a new thread; returns once it is ready.
    pub fn start(path: &Path, options: EngineOptions) -> Result<Engine, LocalError> {
        if !path.is_file() {
            return Err(LocalError::Missing {
                path: path.to_path_buf(),
            });
        }
        let (job_tx, job_rx) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = mpsc::channel();
        let stats = Arc::new(Mutex::new(None));
        let thread_stats = Arc::clone(&stats);
        let path_buf = path.to_path_buf();
        let handle = std::thread::Builder::new()
            .name("cortex-local-model".into())
            .spawn(move || worker(path_buf, options, ready_tx, job_rx, thread_stats))
            .map_err(|e| LocalError::Backend(e.to_string()))?;
        let info = ready_rx.recv().map_err(|_| LocalError::EngineGone)??;
        Ok(Engine {
            jobs: Mutex::new(Some(job_tx)),
            worker: Some(handle),
            stats,
            info,
        })
    }

    pub fn submit(&self, job: Job) -> Result<(), LocalError> {
        let jobs = self.jobs.lock().map_err(|_| LocalError::EngineGone)?;
        jobs.as_ref()
            .ok_or(LocalError::EngineGone)?
            .send(job)
            .map_err(|_| LocalError::EngineGone)
    }
}

impl Drop for Engine {
    /// Close the queue and wait for the thread: it finishes the queued
    /// requests (a dropped request stops at its next token) and saves the KV
    /// state, which must not be cut short by the process exiting.
    fn drop(&mut self) {
        if let Ok(mut jobs) = self.jobs.lock() {
            jobs.take();
        }
        if let Some(handle) = self.worker.take() {
            let _ = handle.join();
        }
    }
}

fn worker(
    path: PathBuf,
    options: EngineOptions,
    ready: mpsc::Sender<Result<ModelInfo, LocalError>>,
    jobs: mpsc::Receiver<Job>,
    stats: Arc<Mutex<Option<RoundStats>>>,
) {
    let started = Instant::now();
    let (backend, model, params) = match load_model(&path, &options) {
        Ok(v) => v,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let mut ctx = match new_context(backend, &model, params, options.kv_q8) {
        Ok(c) => c,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let info = model_info(&model, &ctx, started);
    tracing::info!(path = %path.display(), load_ms = info.load_ms, context = info.context, "local model loaded");
    if ready.send(Ok(info.clone())).is_err() {
        return;
    }
    let store = options
        .kv_dir
        .as_ref()
        .map(|dir| KvStore::new(dir, &path, info.context, options.kv_keep));
    let mut session = Session {
        model: &model,
        cached: Vec::new(),
        options,
        bos_token: info.bos_token,
        store,
        disk_id: None,
        tried_disk: false,
    };
    serve_jobs(&mut session, &mut ctx, &jobs, &stats);
    session.save(&ctx);
}

/// The backend, the model file loaded, and the context parameters the
/// options ask for.
fn load_model(
    path: &Path,
    options: &EngineOptions,
) -> Result<(&'static LlamaBackend, LlamaModel, LlamaContextParams), LocalError> {
    let backend = backend()?;
    let model_params = LlamaModelParams::default().with_use_mmap(options.mmap);
    let model =
        LlamaModel::load_from_file(backend, path, &model_params).map_err(|e| LocalError::Load {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
    let threads = i32::try_from(options.threads.max(1)).unwrap_or(1);
    let prompt_threads = i32::try_from(options.prompt_threads.max(1)).unwrap_or(1);
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(options.context))
        .with_n_batch(options.batch)
        .with_n_ubatch(options.ubatch.clamp(1, options.batch.max(1)))
        .with_n_threads(threads)
        .with_n_threads_batch(prompt_threads);
    Ok((backend, model, params))
}

/// The model's context: with a q8_0 KV cache when asked for and the model
/// takes one, else f16.
fn new_context<'m>(
    backend: &LlamaBackend,
    model: &'m LlamaModel,
    params: LlamaContextParams,
    kv_q8: bool,
) -> Result<LlamaContext<'m>, LocalError> {
    let quantised = kv_q8.then(|| {
        params
            .clone()
            .with_type_k(KvCacheType::Q8_0)
            .with_type_v(KvCacheType::Q8_0)
    });
    let created = match quantised.map(|p| model.new_context(backend, p)) {
        Some(Ok(c)) => Ok(c),
        Some(Err(e)) => {
            tracing::info!(error = %e, "no q8_0 KV cache for this model; using f16");
            model.new_context(backend, params)
        }
        None => model.new_context(backend, params),
    };
    created.map_err(|e| LocalError::Context(e.to_string()))
}

/// What the provider reports about the loaded model.
fn model_info(model: &LlamaModel, ctx: &LlamaContext<'_>, started: Instant) -> ModelInfo {
    let vocab = model.vocab();
    let piece =
        |t: LlamaToken| String::from_utf8_lossy(&vocab.token_to_piece(t, true, None)).into_owned();
    ModelInfo {
        chat_template: model.meta_val_str("tokenizer.chat_template").ok(),
        bos_token: piece(vocab.bos()),
        eos_token: piece(vocab.eos()),
        context: ctx.n_ctx(),
        load_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    }
}

/// Run requests one at a time until the provider is dropped; a failed
/// request clears the KV cache so the next one starts clean.
fn serve_jobs<'m>(
    session: &mut Session<'m>,
    ctx: &mut LlamaContext<'m>,
    jobs: &mpsc::Receiver<Job>,
    stats: &Mutex<Option<RoundStats>>,
) {
    while let Ok(job) = jobs.recv() {
        if job.cancel.load(Ordering::Relaxed) {
            continue;
        }
        let events = job.events.clone();
        match session.run(ctx, job) {
            Ok(Some(round)) => {
                if let Ok(mut s) = stats.lock() {
                    *s = Some(round);
                }
            }
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(error = %e, "local model request failed");
                // The KV cache may be half-written; start clean next time.
                ctx.clear_kv_cache();
                session.cached.clear();
                let _ = events.send(Err(e.into()));
            }
        }
    }
}

struct Session<'m> {
    model: &'m LlamaModel,
    /// Tokens whose KV entries are in the context, in order (sequence 0).
    cached: Vec<LlamaToken>,
    options: EngineOptions,
    bos_token: String,
    /// Where the state is saved between processes.
    store: Option<KvStore>,
    /// The saved state this context continues (loaded from, when the prompt
    /// extends it, or saved to).
    disk_id: Option<String>,
    /// Whether the first request looked for a saved state.
    tried_disk: bool,
}

fn decode_err(e: impl std::fmt::Display) -> LocalError {
    LocalError::Decode(e.to_string())
}

fn pos(n: usize) -> Result<i32, LocalError> {
    i32::try_from(n).map_err(decode_err)
}

mod generate;
mod prompt;

impl<'m> Session<'m> {
    /// Run one request: tokenize, evaluate the prompt (reusing the cached
    /// prefix), generate (again while the reply is a call the harness
    /// refuses), then send the reply's text, calls, usage and finish. `Ok(None)`: cancelled before generation started, or the
    /// caller stopped listening.
    fn run(
        &mut self,
        ctx: &mut LlamaContext<'m>,
        job: Job,
    ) -> Result<Option<RoundStats>, LocalError> {
        let t0 = Instant::now();
        let tokens = self.tokenize(ctx, &job.prompt)?;
        let Some(prompted) = self.evaluate_prompt(ctx, &tokens, &job, t0)? else {
            return Ok(None);
        };
        let force = self.options.grammar && !job.tools.is_empty() && job.force_call;
        let Some(reply) =
            self.generate(ctx, &tokens, &job, prompted.logits_idx, force, Draw::First)?
        else {
            return Ok(None);
        };
        let Some((mut reply, redraws)) = self.redraw_refused(ctx, &tokens, &job, force, reply)?
        else {
            return Ok(None);
        };
        let round = RoundStats {
            prompt_tokens: tokens.len(),
            reused_tokens: prompted.reused,
            evaluated_tokens: prompted.evaluated,
            restored_tokens: prompted.restored,
            generated_tokens: reply.generated,
            grammar: reply.grammar,
            forced_call: force,
            cancelled: reply.cancelled,
            prompt_ms: prompted.prompt_ms,
            generation_ms: reply.generation_ms,
            redraws,
        };
        if reply.cancelled {
            return Ok(Some(round));
        }
        let calls = send_reply(&job.events, &job.tools, &mut reply, tokens.len());
        tracing::info!(
            generated = reply.generated,
            generation_ms = reply.generation_ms,
            grammar = reply.grammar,
            calls,
            "local model reply done"
        );
        Ok(Some(round))
    }

    /// The prompt's tokens; an error when it leaves no room to answer.
    fn tokenize(
        &self,
        ctx: &LlamaContext<'m>,
        prompt: &str,
    ) -> Result<Vec<LlamaToken>, LocalError> {
        let add_bos = self.bos_token.is_empty() || !prompt.starts_with(&self.bos_token);
        let tokens = self
            .model
            .vocab()
            .tokenize(prompt.as_bytes(), add_bos, true);
        let n_ctx = ctx.n_ctx();
        let ctx_len = usize::try_from(n_ctx).unwrap_or(usize::MAX);
        if tokens.is_empty() || tokens.len() + 8 > ctx_len {
            return Err(LocalError::ContextOverflow {
                prompt: tokens.len(),
                context: n_ctx,
            });
        }
        Ok(tokens)
    }
}

/// Whether the request was cancelled or its caller stopped listening.
fn cancelled(job: &Job) -> bool {
    job.cancel.load(Ordering::Relaxed) || job.events.is_closed()
}

fn elapsed_ms(t: Instant) -> u64 {
    u64::try_from(t.elapsed().as_millis()).unwrap_or(u64::MAX)
}
