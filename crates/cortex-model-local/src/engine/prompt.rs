//! Reading the prompt into the context: a state saved by an earlier process
//! restored on the first request, the cached prefix kept, the rest decoded
//! batch by batch with progress events.

use super::{Job, MIN_RESTORE_TOKENS, Session, cancelled, decode_err, elapsed_ms, pos};
use crate::error::LocalError;
use crate::kv_store::KvStore;
use crate::reply::Prompted;
use cortex_model::ModelEvent;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::token::LlamaToken;
use std::time::Instant;

impl<'m> Session<'m> {
    /// Load the saved state that shares the longest prefix with `tokens`, if
    /// one shares enough. Returns the tokens whose KV entries it restored.
    fn restore(&mut self, ctx: &mut LlamaContext<'m>, tokens: &[LlamaToken]) -> usize {
        let Some(store) = &self.store else {
            return 0;
        };
        let prompt: Vec<i32> = tokens.iter().map(|t| t.0).collect();
        let Some(found) = store.best_match(&prompt, MIN_RESTORE_TOKENS) else {
            return 0;
        };
        let t0 = Instant::now();
        let max = usize::try_from(ctx.n_ctx()).unwrap_or(usize::MAX);
        match ctx.state_load_file(&found.state, max) {
            Ok(saved) => {
                // The state file's own tokens decide what is reused, not the
                // side file that picked it.
                let shared = saved.iter().zip(tokens).take_while(|(a, b)| a == b).count();
                tracing::info!(
                    state = %found.state.display(),
                    saved = saved.len(),
                    shared,
                    load_ms = elapsed_ms(t0),
                    "KV state restored from disk"
                );
                // Continue (and later replace) that state only when this
                // prompt extends its conversation; a state that merely shares
                // the system prompt and tools stays for its own session.
                if shared * 10 >= saved.len() * 9 {
                    self.disk_id = Some(found.id);
                }
                self.cached = saved;
                shared
            }
            Err(e) => {
                tracing::warn!(state = %found.state.display(), error = %e, "cannot load a saved KV state; evaluating the prompt");
                ctx.clear_kv_cache();
                self.cached.clear();
                0
            }
        }
    }

    /// Save the context for the next process (under the id it was loaded
    /// from, so a resumed conversation replaces its older state).
    pub(super) fn save(&mut self, ctx: &LlamaContext<'m>) {
        let Some(store) = &self.store else {
            return;
        };
        if self.cached.len() < MIN_RESTORE_TOKENS {
            return;
        }
        let id = self.disk_id.clone().unwrap_or_else(KvStore::new_id);
        let tokens: Vec<i32> = self.cached.iter().map(|t| t.0).collect();
        let t0 = Instant::now();
        let saved = store.save(&id, &tokens, |path| ctx.state_save_file(path, &self.cached));
        match saved {
            Ok(()) => tracing::info!(
                tokens = tokens.len(),
                save_ms = elapsed_ms(t0),
                keep = store.keep(),
                "KV state saved"
            ),
            Err(e) => tracing::warn!(error = %e, "cannot save the KV state"),
        }
    }

    /// Bring the context to the whole prompt: a saved state on the first
    /// request, the cached prefix kept, the rest read batch by batch.
    pub(super) fn evaluate_prompt(
        &mut self,
        ctx: &mut LlamaContext<'m>,
        tokens: &[LlamaToken],
        job: &Job,
        t0: Instant,
    ) -> Result<Option<Prompted>, LocalError> {
        let restored = if self.cached.is_empty() && !self.tried_disk {
            self.tried_disk = true;
            self.restore(ctx, tokens)
        } else {
            0
        };
        let reused = self.keep_prefix(ctx, tokens)?;
        let restored = restored.min(reused);
        let Some(logits_idx) = self.read_prompt(ctx, tokens, reused, job)? else {
            return Ok(None);
        };
        let evaluated = tokens.len() - reused;
        let prompt_ms = elapsed_ms(t0);
        tracing::info!(
            prompt_tokens = tokens.len(),
            reused,
            restored,
            evaluated,
            prompt_ms,
            "local model prompt evaluated"
        );
        Ok(Some(Prompted {
            reused,
            restored,
            evaluated,
            logits_idx,
            prompt_ms,
        }))
    }

    /// Keep the longest prefix the cache shares with `tokens` (but for the
    /// last token, so there are logits to sample from); returns its length.
    fn keep_prefix(
        &mut self,
        ctx: &mut LlamaContext<'m>,
        tokens: &[LlamaToken],
    ) -> Result<usize, LocalError> {
        let mut keep = self
            .cached
            .iter()
            .zip(tokens)
            .take_while(|(a, b)| a == b)
            .count();
        if keep == tokens.len() {
            keep -= 1;
        }
        if keep < self.cached.len() {
            let from = u32::try_from(keep).map_err(decode_err)?;
            if ctx.kv_cache_seq_rm(0, Some(from), None).is_err() {
                ctx.clear_kv_cache();
                keep = 0;
            }
            self.cached.truncate(keep);
        }
        Ok(keep)
    }

    /// Decode `tokens[keep..]` batch by batch. Returns the index of the
    /// last token's logits in its batch, or `None` when cancelled.
    fn read_prompt(
        &mut self,
        ctx: &mut LlamaContext<'m>,
        tokens: &[LlamaToken],
        keep: usize,
        job: &Job,
    ) -> Result<Option<i32>, LocalError> {
        let batch_size = usize::try_from(self.options.batch).unwrap_or(512).max(1);
        let mut batch = LlamaBatch::new(batch_size, 1);
        let mut logits_idx = 0;
        // A prompt read in one batch is quick; a longer one reports each
        // batch, so a client can show progress instead of a silent minute.
        let report_progress = tokens.len() - keep > batch_size;
        for chunk in tokens[keep..].chunks(batch_size) {
            if cancelled(job) {
                return Ok(None);
            }
            batch.clear();
            let last_chunk = self.cached.len() + chunk.len() == tokens.len();
            for (i, &t) in chunk.iter().enumerate() {
                let is_last = last_chunk && i + 1 == chunk.len();
                batch
                    .add(t, pos(self.cached.len() + i)?, &[0], is_last)
                    .map_err(decode_err)?;
            }
            ctx.decode(&mut batch).map_err(decode_err)?;
            self.cached.extend_from_slice(chunk);
            logits_idx = batch.n_tokens() - 1;
            if report_progress {
                let progress = ModelEvent::PromptProgress {
                    done: self.cached.len() as u64,
                    total: tokens.len() as u64,
                };
                if job.events.send(Ok(progress)).is_err() {
                    return Ok(None);
                }
            }
        }
        Ok(Some(logits_idx))
    }
}
