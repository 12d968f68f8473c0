//! Choosing the model provider from `--model PROVIDER:NAME`, the config, or
//! the embedded default.

use crate::config::Config;
use anyhow::{Context, bail};
use cortex_model::ModelProvider;
use cortex_model::openai::{OpenAiConfig, OpenAiProvider};
use cortex_model::scripted::ScriptedProvider;
use std::path::Path;
use std::sync::Arc;

/// `--model`, else the config's `model`, else the embedded local default.
pub fn select(spec: Option<&str>, config: &Config) -> anyhow::Result<Arc<dyn ModelProvider>> {
    let Some(spec) = spec.or(config.model.as_deref()) else {
        return default_model(config);
    };
    let (provider, name) = spec.split_once(':').with_context(|| {
        format!("model `{spec}` must be PROVIDER:NAME, e.g. openai:gpt-4o-mini")
    })?;
    match provider {
        "openai" => {
            let mut openai = OpenAiConfig::from_env();
            if let Some(url) = &config.openai.base_url
                && std::env::var_os("OPENAI_BASE_URL").is_none()
            {
                openai.base_url = url.trim_end_matches('/').to_owned();
            }
            if let Some(var) = &config.openai.api_key_env {
                openai.api_key = std::env::var(var).ok().filter(|k| !k.is_empty());
            }
            Ok(Arc::new(OpenAiProvider::new(openai, name)?))
        }
        "local" => local(name, config),
        // Tests and benchmarks only: replays a JSON script file.
        "scripted" => Ok(Arc::new(
            ScriptedProvider::from_file(Path::new(name))
                .with_context(|| format!("cannot load the model script {name}"))?,
        )),
        other => bail!("unknown model provider `{other}` (expected local, openai or scripted)"),
    }
}

#[cfg(feature = "local")]
fn default_model(config: &Config) -> anyhow::Result<Arc<dyn ModelProvider>> {
    local(cortex_model_local::DEFAULT_MODEL, config)
}

#[cfg(not(feature = "local"))]
fn default_model(_config: &Config) -> anyhow::Result<Arc<dyn ModelProvider>> {
    bail!(
        "no model is configured and this build has no embedded model. Pass --model openai:NAME \
         (with OPENAI_API_KEY, and OPENAI_BASE_URL for a compatible server), or set \
         `model = \"openai:NAME\"` in {}",
        crate::config::config_path()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| "the config file".into())
    )
}

#[cfg(feature = "local")]
fn local(name: &str, config: &Config) -> anyhow::Result<Arc<dyn ModelProvider>> {
    let path = cortex_model_local::resolve_model(name)?;
    let keep = config.local.kv_keep;
    let options = cortex_model_local::LocalOptions {
        kv_dir: (keep > 0)
            .then(|| crate::config::data_dir().map(|d| d.join("kv")))
            .transpose()?,
        kv_keep: keep,
        first_round_tool_call: config.local.first_round_tool_call,
        ..cortex_model_local::LocalOptions::default()
    };
    let provider = cortex_model_local::LocalProvider::load(&path, options)
        .with_context(|| format!("cannot load the local model {}", path.display()))?;
    Ok(Arc::new(provider))
}

#[cfg(not(feature = "local"))]
fn local(_name: &str, _config: &Config) -> anyhow::Result<Arc<dyn ModelProvider>> {
    bail!("this build has no embedded model (built without the `local` feature)")
}
