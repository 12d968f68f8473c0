//! What Cortex knows about a model: context window, output limit, parallel
//! tool calls, and prices.
//!
//! Prices are the providers' public list prices in US dollars per million
//! tokens, as published when this table was written (OpenAI and Anthropic
//! pricing pages, 2025); they change without notice, do not include
//! discounts (batch, priority tiers, negotiated rates) and are only used to
//! *estimate* a session's cost. Override them, or add a model, in the config
//! (`[models."NAME"]`).

use cortex_protocol::EditFormat;
use serde::Deserialize;

/// US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prices {
    /// Prompt tokens neither read from nor written to the cache.
    pub input: f64,
    /// Answer tokens (thinking included).
    pub output: f64,
    /// Prompt tokens read from the cache.
    pub cache_read: f64,
    /// Prompt tokens written to the cache (Anthropic charges a premium;
    /// OpenAI caches for free, so there it equals `input`).
    pub cache_write: f64,
}

/// What the harness knows of one model: from the built-in table
/// ([`ModelInfo::built_in`]), the config's `[models."NAME"]`, or the
/// provider itself ([`crate::ModelProvider::info`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelInfo {
    /// Tokens of prompt and answer together the model accepts; compaction
    /// keeps the history under it.
    pub context_window: u64,
    /// The most tokens one answer may have (the provider's limit, or the
    /// embedded model's configured one).
    pub max_output_tokens: u32,
    /// Whether the model may call several tools in one response; `false`
    /// makes the request ask for one call at a time.
    pub parallel_tool_calls: bool,
    /// List prices, for cost estimates; `None` when unknown (the cost is
    /// then reported as unknown, never as zero).
    pub prices: Option<Prices>,
    /// Ask the model once to check an answer it gave without calling any
    /// tool in the turn: small models answer from guesses (docs/BENCHMARKS.md,
    /// the task set). Off for hosted models, on for the embedded one.
    pub verify_answers: bool,
    /// Bytes of file content the turn's context may carry (the files of a
    /// small workspace, or the files the prompt names), so that a small
    /// model sees the code before it acts; 0 (hosted models) sends names
    /// only.
    pub files_in_prompt: u32,
    /// The shape of `edit_file` the model is offered: exact strings
    /// (hosted models) or line ranges (docs/BENCHMARKS.md, edit formats).
    pub edit_format: EditFormat,
}

/// A `[models."NAME"]` table of the config: every field optional, laid over
/// the built-in entry (or over unknown-model defaults).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelOverride {
    /// Replaces [`ModelInfo::context_window`].
    pub context_window: Option<u64>,
    /// Replaces [`ModelInfo::max_output_tokens`].
    pub max_output_tokens: Option<u32>,
    /// Replaces [`ModelInfo::parallel_tool_calls`].
    pub parallel_tool_calls: Option<bool>,
    /// Replaces [`ModelInfo::prices`] (all four prices together).
    pub prices: Option<Prices>,
    /// Replaces [`ModelInfo::verify_answers`].
    pub verify_answers: Option<bool>,
    /// Replaces [`ModelInfo::files_in_prompt`].
    pub files_in_prompt: Option<u32>,
    /// Replaces [`ModelInfo::edit_format`] (`"string"`, `"lines"` or `"quoted"`).
    pub edit_format: Option<EditFormat>,
    /// Read tool calls the model writes as text in its answer
    /// ([`crate::recover::RecoverTextCalls`]). Unset: on for an
    /// OpenAI-compatible server on this machine, off otherwise. Not part of
    /// [`ModelInfo`]: it chooses how the provider is built.
    pub recover_text_calls: Option<bool>,
}

/// Tokens of one or more responses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TokenCounts {
    /// The whole prompt, cached parts included.
    pub input: u64,
    /// Answer tokens.
    pub output: u64,
    /// The part of `input` read from the provider's prompt cache.
    pub cache_read: u64,
    /// The part of `input` written to the provider's prompt cache.
    pub cache_write: u64,
}

const fn entry(
    context_window: u64,
    max_output_tokens: u32,
    [input, output, cache_read, cache_write]: [f64; 4],
) -> ModelInfo {
    ModelInfo {
        context_window,
        max_output_tokens,
        parallel_tool_calls: true,
        verify_answers: false,
        files_in_prompt: 0,
        edit_format: EditFormat::String,
        prices: Some(Prices {
            input,
            output,
            cache_read,
            cache_write,
        }),
    }
}

/// A small coding model Cortex embeds, served by any OpenAI-compatible
/// server (llama.cpp's, for one): the same help as embedded — the answer
/// checks, the files in the turn's context, the quoted edit format — since
/// the help is chosen per model, not per provider. The limits are the
/// embedded defaults (an 8,192-token window, 2,048 out; the files at most
/// a quarter of the window); a server started with another window says so
/// in `[models."NAME"]`.
const fn small_local() -> ModelInfo {
    ModelInfo {
        context_window: 8192,
        max_output_tokens: 2048,
        parallel_tool_calls: true,
        verify_answers: true,
        files_in_prompt: 8192,
        edit_format: EditFormat::Quoted,
        prices: None,
    }
}

/// Model name prefixes (dated snapshots such as `claude-sonnet-4-20250514`
/// match `claude-sonnet-4`) and what is known about them.
const BUILT_IN: &[(&str, ModelInfo)] = &[
    ("qwen2.5-coder-1.5b", small_local()),
    ("qwen2.5-coder-0.5b", small_local()),
    (
        "claude-opus-4",
        entry(200_000, 32_000, [15.0, 75.0, 1.5, 18.75]),
    ),
    (
        "claude-sonnet-4",
        entry(200_000, 64_000, [3.0, 15.0, 0.3, 3.75]),
    ),
    (
        "claude-3-7-sonnet",
        entry(200_000, 64_000, [3.0, 15.0, 0.3, 3.75]),
    ),
    (
        "claude-3-5-haiku",
        entry(200_000, 8_192, [0.8, 4.0, 0.08, 1.0]),
    ),
    (
        "claude-haiku-3.5",
        entry(200_000, 8_192, [0.8, 4.0, 0.08, 1.0]),
    ),
    ("gpt-4o", entry(128_000, 16_384, [2.5, 10.0, 1.25, 2.5])),
    (
        "gpt-4o-mini",
        entry(128_000, 16_384, [0.15, 0.6, 0.075, 0.15]),
    ),
    ("gpt-4.1", entry(1_047_576, 32_768, [2.0, 8.0, 0.5, 2.0])),
    (
        "gpt-4.1-mini",
        entry(1_047_576, 32_768, [0.4, 1.6, 0.1, 0.4]),
    ),
    (
        "gpt-4.1-nano",
        entry(1_047_576, 32_768, [0.1, 0.4, 0.025, 0.1]),
    ),
    ("o3", entry(200_000, 100_000, [2.0, 8.0, 0.5, 2.0])),
    ("o4-mini", entry(200_000, 100_000, [1.1, 4.4, 0.275, 1.1])),
];

impl ModelInfo {
    /// The built-in entry whose name is the longest prefix of `model`.
    pub fn built_in(model: &str) -> Option<ModelInfo> {
        BUILT_IN
            .iter()
            .filter(|(prefix, _)| {
                model == *prefix
                    || model
                        .strip_prefix(prefix)
                        .is_some_and(|rest| rest.starts_with(['-', '@', ':']))
            })
            .max_by_key(|(prefix, _)| prefix.len())
            .map(|(_, info)| *info)
    }

    /// The built-in entry with `over` laid on top; `None` when the model is
    /// unknown and the override does not say both limits.
    pub fn resolve(model: &str, over: Option<&ModelOverride>) -> Option<ModelInfo> {
        let base = ModelInfo::built_in(model);
        let Some(over) = over else { return base };
        let context_window = over.context_window.or(base.map(|b| b.context_window))?;
        let max_output_tokens = over
            .max_output_tokens
            .or(base.map(|b| b.max_output_tokens))?;
        Some(ModelInfo {
            context_window,
            max_output_tokens,
            parallel_tool_calls: over
                .parallel_tool_calls
                .or(base.map(|b| b.parallel_tool_calls))
                .unwrap_or(true),
            prices: over.prices.or(base.and_then(|b| b.prices)),
            verify_answers: over
                .verify_answers
                .or(base.map(|b| b.verify_answers))
                .unwrap_or(false),
            files_in_prompt: over
                .files_in_prompt
                .or(base.map(|b| b.files_in_prompt))
                .unwrap_or(0),
            edit_format: over
                .edit_format
                .or(base.map(|b| b.edit_format))
                .unwrap_or_default(),
        })
    }

    /// Estimated cost in US dollars, when prices are known.
    pub fn cost(&self, tokens: &TokenCounts) -> Option<f64> {
        let p = self.prices?;
        let uncached = tokens
            .input
            .saturating_sub(tokens.cache_read)
            .saturating_sub(tokens.cache_write);
        let dollars = uncached as f64 * p.input
            + tokens.cache_read as f64 * p.cache_read
            + tokens.cache_write as f64 * p.cache_write
            + tokens.output as f64 * p.output;
        Some(dollars / 1_000_000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_prefix_wins_and_snapshots_match() {
        let mini = ModelInfo::built_in("gpt-4o-mini-2024-07-18").expect("known");
        assert_eq!(mini.prices.map(|p| p.input), Some(0.15));
        let four_o = ModelInfo::built_in("gpt-4o").expect("known");
        assert_eq!(four_o.prices.map(|p| p.input), Some(2.5));
        let sonnet = ModelInfo::built_in("claude-sonnet-4-20250514").expect("known");
        assert_eq!(sonnet.max_output_tokens, 64_000);
        assert!(ModelInfo::built_in("o3x").is_none());
        assert!(ModelInfo::built_in("llama-3").is_none());
    }

    #[test]
    fn the_embedded_models_get_the_same_help_behind_any_server() {
        for name in [
            "qwen2.5-coder-1.5b-instruct-q4_k_m",
            "qwen2.5-coder-1.5b",
            "qwen2.5-coder-0.5b-instruct",
        ] {
            let info = ModelInfo::built_in(name).expect("known");
            assert!(info.verify_answers, "{name}");
            assert_eq!(info.edit_format, EditFormat::Quoted, "{name}");
            assert!(info.files_in_prompt > 0 && info.prices.is_none(), "{name}");
        }
        assert!(ModelInfo::built_in("qwen2.5-coder-7b").is_none());
        // An override still wins.
        let off = ModelOverride {
            verify_answers: Some(false),
            ..ModelOverride::default()
        };
        let info = ModelInfo::resolve("qwen2.5-coder-1.5b", Some(&off)).expect("known");
        assert!(!info.verify_answers);
    }

    #[test]
    fn overrides_lay_over_or_stand_alone() {
        let over = ModelOverride {
            max_output_tokens: Some(1000),
            ..ModelOverride::default()
        };
        let info = ModelInfo::resolve("o3", Some(&over)).expect("known");
        assert_eq!(
            (info.context_window, info.max_output_tokens),
            (200_000, 1000)
        );
        assert!(ModelInfo::resolve("my-local", Some(&over)).is_none());
        let full = ModelOverride {
            context_window: Some(32_768),
            max_output_tokens: Some(4096),
            parallel_tool_calls: Some(false),
            prices: None,
            verify_answers: Some(true),
            files_in_prompt: Some(8192),
            recover_text_calls: Some(true),
            edit_format: Some(EditFormat::Lines),
        };
        let info = ModelInfo::resolve("my-local", Some(&full)).expect("complete");
        assert!(!info.parallel_tool_calls);
        assert!(info.verify_answers);
        assert_eq!(info.files_in_prompt, 8192);
        assert_eq!(info.edit_format, EditFormat::Lines);
        assert_eq!(
            ModelInfo::resolve("o3", None).map(|i| i.edit_format),
            Some(EditFormat::String)
        );
        assert_eq!(info.cost(&TokenCounts::default()), None);
    }

    #[test]
    fn cost_splits_cached_prompt_tokens() {
        let info = ModelInfo::built_in("claude-sonnet-4").expect("known");
        let tokens = TokenCounts {
            input: 1_000_000 + 2_000_000 + 1_000_000,
            output: 1_000_000,
            cache_read: 2_000_000,
            cache_write: 1_000_000,
        };
        // 1M uncached * 3 + 2M read * 0.3 + 1M written * 3.75 + 1M out * 15
        let cost = info.cost(&tokens).expect("priced");
        assert!((cost - (3.0 + 0.6 + 3.75 + 15.0)).abs() < 1e-9, "{cost}");
    }
}
