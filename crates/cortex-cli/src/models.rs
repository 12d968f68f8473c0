//! Choosing the model provider from `--model PROVIDER:NAME`, the config, or
//! the embedded default, and metering its usage.

use crate::config::{Config, Wire};
use anyhow::{Context, bail};
use cortex_model::anthropic::{AnthropicConfig, AnthropicProvider};
use cortex_model::meter::{Meter, Metered};
use cortex_model::openai::{ForcedCall, OpenAiConfig, OpenAiProvider, OpenAiWire};
use cortex_model::recover::{RecoverTextCalls, is_loopback_url};
use cortex_model::scripted::ScriptedProvider;
use cortex_model::{ModelInfo, ModelProvider};
use std::path::Path;
use std::sync::Arc;

/// `--model`, else the config's `model`, else the embedded local default;
/// wrapped with the model's metadata, so that each `usage` event carries the
/// estimated cost.
pub fn select(spec: Option<&str>, config: &Config) -> anyhow::Result<Arc<dyn ModelProvider>> {
    let (provider, info) = match spec.or(config.model.as_deref()) {
        None => (default_model(config)?, None),
        Some(spec) => {
            let (provider, name) = spec.split_once(':').with_context(|| {
                format!("model `{spec}` must be PROVIDER:NAME, e.g. openai:gpt-4o-mini")
            })?;
            let info = ModelInfo::resolve(name, config.models.get(name));
            let built = build(provider, name, info.as_ref(), config)?;
            (recover_text_calls(built, provider, name, config), info)
        }
    };
    Ok(Arc::new(Metered::new(provider, info, Meter::default())))
}

/// Wraps `built` so that calls the model writes as text run
/// ([`RecoverTextCalls`]): when `[models."NAME"] recover_text_calls` says
/// so, else for an OpenAI-compatible server on this machine (a local server
/// runs small open models, which write their calls as ```json blocks the
/// server returns as text). The embedded model reads such calls itself.
fn recover_text_calls(
    built: Arc<dyn ModelProvider>,
    provider: &str,
    name: &str,
    config: &Config,
) -> Arc<dyn ModelProvider> {
    let configured = config.models.get(name).and_then(|m| m.recover_text_calls);
    let on = configured.unwrap_or_else(|| {
        matches!(provider, "openai" | "openai-responses")
            && is_loopback_url(&openai_base_url(config))
    });
    if on && provider != "local" {
        Arc::new(RecoverTextCalls::new(built))
    } else {
        built
    }
}

/// The base URL the OpenAI provider will use: the environment's, else the
/// config's, else the default.
pub fn openai_base_url(config: &Config) -> String {
    configured_url(
        "OPENAI_BASE_URL",
        &config.openai.base_url,
        OpenAiConfig::from_env().base_url,
    )
}

/// The base URL the Anthropic provider will use, found as OpenAI's is.
pub fn anthropic_base_url(config: &Config) -> String {
    configured_url(
        "ANTHROPIC_BASE_URL",
        &config.anthropic.base_url,
        AnthropicConfig::from_env().base_url,
    )
}

/// The config's URL unless the environment variable `var` is set (then
/// `from_env`, which read it, or the default).
fn configured_url(var: &str, configured: &Option<String>, from_env: String) -> String {
    match configured {
        Some(url) if std::env::var_os(var).is_none() => url.trim_end_matches('/').to_owned(),
        _ => from_env,
    }
}

fn build(
    provider: &str,
    name: &str,
    info: Option<&ModelInfo>,
    config: &Config,
) -> anyhow::Result<Arc<dyn ModelProvider>> {
    let timeouts = config.timeouts.resolve()?;
    Ok(match provider {
        "openai" | "openai-responses" => {
            let mut openai = OpenAiConfig::from_env();
            openai.timeouts = timeouts;
            openai.parallel_tool_calls = info.is_none_or(|i| i.parallel_tool_calls);
            openai.base_url = openai_base_url(config);
            if let Some(var) = &config.openai.api_key_env {
                openai.key_env = var.clone();
            }
            openai.api_key = crate::secrets::secret(&openai.key_env);
            // A server on this machine is llama.cpp's or Ollama's, which
            // hold a reply to a JSON schema but not to `tool_choice`; the
            // call then comes as text, for the recovery to read.
            let recovers = config.models.get(name).and_then(|m| m.recover_text_calls);
            if is_loopback_url(&openai.base_url) && recovers != Some(false) {
                openai.forced_call = ForcedCall::Schema;
            }
            openai.wire = match (provider, config.openai.wire) {
                ("openai-responses", _) | (_, Some(Wire::Responses)) => OpenAiWire::Responses,
                _ => OpenAiWire::Chat,
            };
            Arc::new(OpenAiProvider::new(openai, name)?)
        }
        "anthropic" => {
            let section = &config.anthropic;
            let mut anthropic = AnthropicConfig::from_env();
            anthropic.timeouts = timeouts;
            anthropic.parallel_tool_calls = info.is_none_or(|i| i.parallel_tool_calls);
            anthropic.base_url = anthropic_base_url(config);
            if let Some(var) = &section.api_key_env {
                anthropic.key_env = var.clone();
            }
            anthropic.api_key = crate::secrets::secret(&anthropic.key_env);
            anthropic.max_tokens = section.max_tokens.unwrap_or_else(|| {
                info.map_or(cortex_model::anthropic::DEFAULT_MAX_TOKENS, |i| {
                    i.max_output_tokens.min(16_384)
                })
            });
            anthropic.thinking_budget = section.thinking_budget;
            anthropic.prompt_caching = section.prompt_caching.unwrap_or(true);
            Arc::new(AnthropicProvider::new(anthropic, name)?)
        }
        "local" => local(name, config)?,
        // Tests and benchmarks only: replays a JSON script file.
        "scripted" => Arc::new(
            ScriptedProvider::from_file(Path::new(name))
                .with_context(|| format!("cannot load the model script {name}"))?,
        ),
        other => bail!(
            "unknown model provider `{other}` (expected local, openai, openai-responses, \
             anthropic or scripted)"
        ),
    })
}

#[cfg(feature = "local")]
fn default_model(config: &Config) -> anyhow::Result<Arc<dyn ModelProvider>> {
    local(cortex_model_local::DEFAULT_MODEL, config)
}

#[cfg(not(feature = "local"))]
fn default_model(_config: &Config) -> anyhow::Result<Arc<dyn ModelProvider>> {
    bail!(
        "no model is configured and this build has no embedded model. Pass --model openai:NAME \
         (with OPENAI_API_KEY, and OPENAI_BASE_URL for a compatible server) or \
         --model anthropic:NAME (with ANTHROPIC_API_KEY), or set `model = \"openai:NAME\"` in {}",
        crate::config::config_path()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| "the config file".into())
    )
}

#[cfg(feature = "local")]
fn local(name: &str, config: &Config) -> anyhow::Result<Arc<dyn ModelProvider>> {
    let path = cortex_model_local::resolve_model(name)?;
    let keep = config.local.kv_keep;
    let defaults = cortex_model_local::LocalOptions::default();
    let options = cortex_model_local::LocalOptions {
        threads: config
            .local
            .threads
            .unwrap_or(defaults.threads)
            .clamp(1, 64),
        prompt_threads: config
            .local
            .prompt_threads
            .unwrap_or(defaults.prompt_threads)
            .clamp(1, 64),
        kv_dir: (keep > 0)
            .then(|| crate::config::data_dir().map(|d| d.join("kv")))
            .transpose()?,
        kv_keep: keep,
        first_round_tool_call: config.local.first_round_tool_call,
        verify_answers: config.local.verify_answers,
        files_in_prompt: config
            .local
            .files_in_prompt
            .unwrap_or(defaults.files_in_prompt),
        edit_format: config.local.edit_format.unwrap_or(defaults.edit_format),
        ..defaults
    };
    let provider = cortex_model_local::LocalProvider::load(&path, options)
        .with_context(|| format!("cannot load the local model {}", path.display()))?;
    Ok(Arc::new(provider))
}

#[cfg(not(feature = "local"))]
fn local(_name: &str, _config: &Config) -> anyhow::Result<Arc<dyn ModelProvider>> {
    bail!("this build has no embedded model (built without the `local` feature)")
}
