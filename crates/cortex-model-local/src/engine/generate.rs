//! Generating the reply: token by token, streaming its text, under the
//! tool-call grammar once it starts a call (or from the first token when a
//! call is forced).

use super::{Job, Session, cancelled, decode_err, elapsed_ms, pos};
use crate::error::LocalError;
use crate::grammar::tool_call_grammar;
use crate::parse::{CallForm, ReplyStart, reply_start};
use crate::reply::Reply;
use cortex_model::{FinishReason, ModelEvent, RUNAWAY, runaway};
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use std::time::Instant;

impl<'m> Session<'m> {
    /// Generate the reply token by token, streaming its text; once it
    /// starts a tool call (or from the first token when `force`), under the
    /// call grammar. `None` when the caller stopped listening.
    pub(super) fn generate(
        &mut self,
        ctx: &mut LlamaContext<'m>,
        tokens: &[LlamaToken],
        job: &Job,
        mut logits_idx: i32,
        force: bool,
    ) -> Result<Option<Reply>, LocalError> {
        let t1 = Instant::now();
        let ctx_len = usize::try_from(ctx.n_ctx()).unwrap_or(usize::MAX);
        let budget = ctx_len - tokens.len() - 1;
        let max_new = budget.min(usize::try_from(self.options.max_output_tokens).unwrap_or(budget));
        let vocab = self.model.vocab();
        let reply_at = self.cached.len();
        let use_grammar = self.options.grammar && !job.tools.is_empty();
        let mut sampler = if force {
            self.call_sampler(job, CallForm::Tagged)?
        } else {
            self.sampler(None)?
        };
        let batch_size = usize::try_from(self.options.batch).unwrap_or(512).max(1);
        let mut batch = LlamaBatch::new(batch_size, 1);
        let mut decided = !use_grammar || force;
        let mut out = Reply::new(force);
        let mut pending: Vec<u8> = Vec::new();
        out.finish = loop {
            if cancelled(job) {
                out.cancelled = true;
                out.generation_ms = elapsed_ms(t1);
                return Ok(Some(out));
            }
            if out.generated >= max_new {
                break FinishReason::Length;
            }
            // A small model's degenerate reply, held-back text included
            // (the turn loop sees only what is streamed).
            if self.options.stop_runaways && out.generated.is_multiple_of(32) && runaway(&out.text)
            {
                break FinishReason::Other(RUNAWAY.to_owned());
            }
            let token = sampler.sample(ctx, logits_idx);
            if vocab.is_eog(token) {
                break FinishReason::Stop;
            }
            out.generated += 1;
            pending.extend(vocab.token_to_piece(token, false, None));
            take_utf8(&mut pending, &mut out.text);
            if !decided {
                match reply_start(&out.text) {
                    ReplyStart::Undecided => {}
                    ReplyStart::Text => decided = true,
                    ReplyStart::Call(form) => {
                        decided = true;
                        let restarted = self
                            .restart_under_grammar(ctx, &mut batch, tokens, reply_at, job, form)?;
                        if let Some(constrained) = restarted {
                            sampler = constrained;
                            logits_idx = 0;
                            pending.clear();
                            out = Reply::new(true);
                            continue;
                        }
                    }
                }
            }
            let delta = out.gate.advance(&out.text);
            if !delta.is_empty()
                && job
                    .events
                    .send(Ok(ModelEvent::TextDelta(delta.to_owned())))
                    .is_err()
            {
                return Ok(None);
            }
            batch.clear();
            batch
                .add(token, pos(self.cached.len())?, &[0], true)
                .map_err(decode_err)?;
            ctx.decode(&mut batch).map_err(decode_err)?;
            self.cached.push(token);
            logits_idx = 0;
        };
        if !pending.is_empty() {
            out.text.push_str(&String::from_utf8_lossy(&pending));
        }
        out.generation_ms = elapsed_ms(t1);
        Ok(Some(out))
    }

    /// The reply started a tool call: regenerate it from its start under
    /// the call grammar (drop the reply and the last prompt token, and
    /// re-evaluate that token for logits). `None` when the grammar is
    /// rejected; the reply then goes on unconstrained.
    fn restart_under_grammar(
        &mut self,
        ctx: &mut LlamaContext<'m>,
        batch: &mut LlamaBatch,
        tokens: &[LlamaToken],
        reply_at: usize,
        job: &Job,
        form: CallForm,
    ) -> Result<Option<Sampling>, LocalError> {
        let sampler = match self.call_sampler(job, form) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, "tool-call grammar rejected; generating unconstrained");
                return Ok(None);
            }
        };
        tracing::debug!(?form, "tool call started; constraining with grammar");
        let back = reply_at - 1;
        ctx.kv_cache_seq_rm(0, Some(u32::try_from(back).map_err(decode_err)?), None)
            .map_err(decode_err)?;
        self.cached.truncate(back);
        batch.clear();
        batch
            .add(tokens[back], pos(back)?, &[0], true)
            .map_err(decode_err)?;
        ctx.decode(batch).map_err(decode_err)?;
        self.cached.push(tokens[back]);
        Ok(Some(sampler))
    }

    /// Sampling under the call grammar for `job`; when the grammar with
    /// its quotable files is refused (a file's text llama.cpp's parser does
    /// not take), under the grammar without them.
    fn call_sampler(&self, job: &Job, form: CallForm) -> Result<Sampling, LocalError> {
        let quoted = tool_call_grammar(&job.tools, form, &job.quotable);
        match self.sampler(Some(&quoted)) {
            Err(e) if !job.quotable.is_empty() => {
                tracing::warn!(error = %e, "quoted edit grammar rejected; edits unconstrained");
                self.sampler(Some(&tool_call_grammar(&job.tools, form, &[])))
            }
            sampled => sampled,
        }
    }

    /// Greedy (or low-temperature) sampling, behind `grammar` when given.
    fn sampler(&self, grammar: Option<&str>) -> Result<Sampling, LocalError> {
        let grammar = grammar
            .map(|g| {
                LlamaSampler::grammar(self.model, g, "root")
                    .map_err(|e| LocalError::Grammar(e.to_string()))
            })
            .transpose()?;
        if self.options.temperature > 0.0 {
            let mut chain: Vec<LlamaSampler> = grammar.into_iter().collect();
            chain.push(LlamaSampler::top_k(40));
            chain.push(LlamaSampler::temp(self.options.temperature));
            chain.push(LlamaSampler::dist(self.options.seed));
            return Ok(Sampling::Chain(LlamaSampler::chain_simple(chain)));
        }
        Ok(match grammar {
            Some(g) => Sampling::GreedyGrammar(g),
            None => Sampling::Chain(LlamaSampler::greedy()),
        })
    }
}

/// How the next token is picked.
enum Sampling {
    Chain(LlamaSampler),
    /// Greedy under a grammar, checking the best token first: applying a
    /// grammar to the whole vocabulary (150k tokens for Qwen) halves the
    /// speed, and the best token is almost always allowed.
    GreedyGrammar(LlamaSampler),
}

impl Sampling {
    fn sample(&mut self, ctx: &LlamaContext<'_>, idx: i32) -> LlamaToken {
        match self {
            Sampling::Chain(s) => s.sample(ctx, idx),
            Sampling::GreedyGrammar(grammar) => {
                let logits = ctx.get_logits_ith(idx);
                let (best, logit) =
                    logits
                        .iter()
                        .enumerate()
                        .fold((0usize, f32::NEG_INFINITY), |acc, (i, &l)| {
                            if l > acc.1 { (i, l) } else { acc }
                        });
                let best = LlamaToken(i32::try_from(best).unwrap_or(0));
                let mut one =
                    LlamaTokenDataArray::new(vec![LlamaTokenData::new(best, logit, 0.0)], false);
                one.apply_sampler(grammar);
                let token = if one.data.first().is_some_and(|d| d.logit().is_finite()) {
                    best
                } else {
                    let mut all = ctx.token_data_array_ith(idx);
                    all.apply_sampler(grammar);
                    all.data
                        .iter()
                        .filter(|d| d.logit().is_finite())
                        .max_by(|a, b| a.logit().total_cmp(&b.logit()))
                        .map_or(best, LlamaTokenData::id)
                };
                grammar.accept(token);
                token
            }
        }
    }
}

/// Move the complete UTF-8 prefix of `pending` into `out`; invalid bytes
/// become U+FFFD.
fn take_utf8(pending: &mut Vec<u8>, out: &mut String) {
    loop {
        match std::str::from_utf8(pending) {
            Ok(s) => {
                out.push_str(s);
                pending.clear();
                return;
            }
            Err(e) => {
                let valid = e.valid_up_to();
                out.push_str(&String::from_utf8_lossy(&pending[..valid]));
                match e.error_len() {
                    None => {
                        pending.drain(..valid);
                        return;
                    }
                    Some(bad) => {
                        out.push('\u{FFFD}');
                        pending.drain(..valid + bad);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::take_utf8;

    #[test]
    fn utf8_is_assembled_across_pieces() {
        let mut pending = Vec::new();
        let mut out = String::new();
        let bytes = "é✓".as_bytes();
        for b in bytes {
            pending.push(*b);
            take_utf8(&mut pending, &mut out);
        }
        assert_eq!(out, "é✓");
        pending.extend([0xff, b'a']);
        take_utf8(&mut pending, &mut out);
        assert_eq!(out, "é✓\u{FFFD}a");
    }
}
