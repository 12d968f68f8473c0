//! Generating the reply: token by token, streaming its text, under the
//! tool-call grammar once it starts a call (or from the first token when a
//! call is forced).

use super::{Job, Session, cancelled, decode_err, elapsed_ms, pos};
use crate::depart::Departure;
use crate::error::LocalError;
use crate::grammar::{ANSWER_GRAMMAR, tool_call_grammar};
use crate::parse::parse_reply;
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

/// How many times a reply that is a refused call is drawn again: each draw
/// costs a reply's generation, and a model that draws the same call three
/// times is not going to leave it. The first redraw departs from the call
/// where the refusal's handed call differs from it, when there is one.
const MAX_REDRAWS: u32 = 2;

/// The temperature of a redraw: enough for the second most likely token to
/// win where the first barely did, as in a refused call's one wrong word.
const REDRAW_TEMPERATURE: f32 = 0.8;

/// How tokens are picked for one draw of the reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Draw<'d> {
    /// The first draw: as the options say (greedy by default).
    First,
    /// With [`REDRAW_TEMPERATURE`] and this seed: a reply drawn again.
    Again { seed: u32 },
    /// Greedily, barred from going on along a refused reply past where it
    /// departs from the call handed over instead.
    Departing(&'d Departure),
}

/// Whether `reply` is a call the harness refuses (`job.refused`), and none
/// of it has been streamed yet (a redraw then replaces it unseen): the
/// refused call it is, with its arguments as the reply wrote them.
fn refused_reply<'j>(
    job: &'j Job,
    reply: &Reply,
) -> Option<(&'j cortex_model::RefusedCall, String)> {
    if job.refused.is_empty() || reply.gate.sent() > 0 {
        return None;
    }
    let names: Vec<&str> = job.tools.iter().map(|t| t.name.as_str()).collect();
    parse_reply(&reply.text, &names)
        .calls
        .into_iter()
        .find_map(|call| {
            let refused = job
                .refused
                .iter()
                .find(|r| r.matches(&call.name, &call.arguments))?;
            Some((refused, call.arguments))
        })
}

impl<'m> Session<'m> {
    /// Generate the reply token by token, streaming its text; once it
    /// starts a tool call (or from the first token when `force`), under the
    /// call grammar; tokens picked as `draw` says. `None` when the caller
    /// stopped listening.
    pub(super) fn generate(
        &mut self,
        ctx: &mut LlamaContext<'m>,
        tokens: &[LlamaToken],
        job: &Job,
        mut logits_idx: i32,
        force: bool,
        draw: Draw,
    ) -> Result<Option<Reply>, LocalError> {
        let t1 = Instant::now();
        let ctx_len = usize::try_from(ctx.n_ctx()).unwrap_or(usize::MAX);
        let budget = ctx_len - tokens.len() - 1;
        let max_new = budget.min(usize::try_from(self.options.max_output_tokens).unwrap_or(budget));
        let vocab = self.model.vocab();
        let reply_at = self.cached.len();
        let use_grammar = self.options.grammar && !job.tools.is_empty();
        let mut sampler = if force {
            self.call_sampler(job, CallForm::Tagged, draw)?
        } else if job.answer && self.options.grammar {
            self.sampler(Some(ANSWER_GRAMMAR), draw)?
        } else {
            self.sampler(None, draw)?
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
            let so_far = match draw {
                Draw::Departing(d) => Some([out.text.as_bytes(), &pending].concat())
                    .filter(|so_far| d.bars_any(so_far))
                    .map(|so_far| (d, so_far)),
                _ => None,
            };
            let barred = |token: LlamaToken| {
                so_far.as_ref().is_some_and(|(d, so_far)| {
                    d.bars(so_far, &vocab.token_to_piece(token, false, None))
                })
            };
            let token = sampler.sample(ctx, logits_idx, so_far.is_some().then_some(&barred));
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
                        let restarted = self.restart_under_grammar(
                            ctx, &mut batch, tokens, reply_at, job, form, draw,
                        )?;
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
    #[allow(clippy::too_many_arguments)]
    fn restart_under_grammar(
        &mut self,
        ctx: &mut LlamaContext<'m>,
        batch: &mut LlamaBatch,
        tokens: &[LlamaToken],
        reply_at: usize,
        job: &Job,
        form: CallForm,
        draw: Draw,
    ) -> Result<Option<Sampling>, LocalError> {
        let sampler = match self.call_sampler(job, form, draw) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, "tool-call grammar rejected; generating unconstrained");
                return Ok(None);
            }
        };
        tracing::debug!(?form, "tool call started; constraining with grammar");
        self.rewind(ctx, batch, tokens, reply_at - 1)?;
        Ok(Some(sampler))
    }

    /// `reply` as the harness will take it: while it is a call the
    /// request says the harness refuses ([`refused_reply`]), drawn again
    /// (at most [`MAX_REDRAWS`] times); with how many times it was. The
    /// first redraw of a call refused with another handed over departs
    /// from it ([`Departure`]); the others are drawn at a temperature. The
    /// counts of every draw are kept in the one returned. `None` when the
    /// caller stopped listening.
    pub(super) fn redraw_refused(
        &mut self,
        ctx: &mut LlamaContext<'m>,
        tokens: &[LlamaToken],
        job: &Job,
        force: bool,
        mut reply: Reply,
    ) -> Result<Option<(Reply, u32)>, LocalError> {
        let mut redraws = 0;
        let mut departed = false;
        while redraws < MAX_REDRAWS && !reply.cancelled {
            let Some((refused, arguments)) = refused_reply(job, &reply) else {
                break;
            };
            redraws += 1;
            let departure = (!departed)
                .then_some(refused.instead.as_deref())
                .flatten()
                .and_then(|instead| Departure::new(&reply.text, &arguments, instead));
            departed |= departure.is_some();
            tracing::info!(
                redraws,
                departing = departure.is_some(),
                "the reply is a call the harness refuses; drawing again"
            );
            let logits_idx = self.rewind_to_prompt(ctx, tokens)?;
            let draw = match &departure {
                Some(departure) => Draw::Departing(departure),
                None => Draw::Again {
                    seed: self.options.seed.wrapping_add(redraws),
                },
            };
            let Some(mut drawn) = self.generate(ctx, tokens, job, logits_idx, force, draw)? else {
                return Ok(None);
            };
            drawn.generated += reply.generated;
            drawn.generation_ms += reply.generation_ms;
            reply = drawn;
        }
        Ok(Some((reply, redraws)))
    }

    /// Drop the reply generated after `tokens` (the prompt) so that the next
    /// one is drawn from the prompt's end; the index of its logits.
    pub(super) fn rewind_to_prompt(
        &mut self,
        ctx: &mut LlamaContext<'m>,
        tokens: &[LlamaToken],
    ) -> Result<i32, LocalError> {
        let batch_size = usize::try_from(self.options.batch).unwrap_or(512).max(1);
        let mut batch = LlamaBatch::new(batch_size, 1);
        self.rewind(ctx, &mut batch, tokens, tokens.len() - 1)?;
        Ok(0)
    }

    /// Keep the first `back` tokens of the context and evaluate
    /// `tokens[back]` again, for the logits of what follows it.
    fn rewind(
        &mut self,
        ctx: &mut LlamaContext<'m>,
        batch: &mut LlamaBatch,
        tokens: &[LlamaToken],
        back: usize,
    ) -> Result<(), LocalError> {
        ctx.kv_cache_seq_rm(0, Some(u32::try_from(back).map_err(decode_err)?), None)
            .map_err(decode_err)?;
        self.cached.truncate(back);
        batch.clear();
        batch
            .add(tokens[back], pos(back)?, &[0], true)
            .map_err(decode_err)?;
        ctx.decode(batch).map_err(decode_err)?;
        self.cached.push(tokens[back]);
        Ok(())
    }

    /// Sampling under the call grammar for `job`; when the grammar with
    /// its quotable files is refused (a file's text llama.cpp's parser does
    /// not take), under the grammar without them.
    fn call_sampler(&self, job: &Job, form: CallForm, draw: Draw) -> Result<Sampling, LocalError> {
        let quoted = tool_call_grammar(&job.tools, form, &job.quotable);
        match self.sampler(Some(&quoted), draw) {
            Err(e) if !job.quotable.is_empty() => {
                tracing::warn!(error = %e, "quoted edit grammar rejected; edits unconstrained");
                self.sampler(Some(&tool_call_grammar(&job.tools, form, &[])), draw)
            }
            sampled => sampled,
        }
    }

    /// Greedy (or low-temperature) sampling, behind `grammar` when given;
    /// a redraw samples with [`REDRAW_TEMPERATURE`].
    fn sampler(&self, grammar: Option<&str>, draw: Draw) -> Result<Sampling, LocalError> {
        let grammar = grammar
            .map(|g| {
                LlamaSampler::grammar(self.model, g, "root")
                    .map_err(|e| LocalError::Grammar(e.to_string()))
            })
            .transpose()?;
        let random = match draw {
            Draw::Again { seed } => Some((REDRAW_TEMPERATURE, seed)),
            Draw::First if self.options.temperature > 0.0 => {
                Some((self.options.temperature, self.options.seed))
            }
            Draw::First | Draw::Departing(_) => None,
        };
        if let Some((temperature, seed)) = random {
            let mut chain: Vec<LlamaSampler> = grammar.into_iter().collect();
            chain.push(LlamaSampler::top_k(40));
            chain.push(LlamaSampler::temp(temperature));
            chain.push(LlamaSampler::dist(seed));
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
    /// The next token, from the logits at `idx`. `barred`, when given,
    /// names tokens not to pick (a departing draw's, which is greedy: a
    /// chain is then only `greedy`).
    fn sample(
        &mut self,
        ctx: &LlamaContext<'_>,
        idx: i32,
        barred: Option<&dyn Fn(LlamaToken) -> bool>,
    ) -> LlamaToken {
        let allowed = |token: LlamaToken| !barred.is_some_and(|barred| barred(token));
        match self {
            Sampling::Chain(s) if barred.is_none() => s.sample(ctx, idx),
            Sampling::Chain(s) => {
                let all = ctx.token_data_array_ith(idx);
                let token = best_allowed(all.data, &allowed).unwrap_or_else(|| s.sample(ctx, idx));
                s.accept(token);
                token
            }
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
                let token =
                    if one.data.first().is_some_and(|d| d.logit().is_finite()) && allowed(best) {
                        best
                    } else {
                        let mut all = ctx.token_data_array_ith(idx);
                        all.apply_sampler(grammar);
                        best_allowed(all.data, &allowed).unwrap_or(best)
                    };
                grammar.accept(token);
                token
            }
        }
    }
}

/// The token of highest finite logit in `data` that is `allowed`.
fn best_allowed(
    mut data: Vec<LlamaTokenData>,
    allowed: &dyn Fn(LlamaToken) -> bool,
) -> Option<LlamaToken> {
    data.retain(|d| d.logit().is_finite());
    loop {
        let (i, best) = data
            .iter()
            .enumerate()
            .max_by(|(_, a), (_, b)| a.logit().total_cmp(&b.logit()))?;
        if allowed(best.id()) {
            return Some(best.id());
        }
        data.swap_remove(i);
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
