//! Choosing the model provider from `--model PROVIDER:NAME` or the config.

use crate::config::Config;
use anyhow::{Context, bail};
use cortex_model::ModelProvider;
use cortex_model::openai::{OpenAiConfig, OpenAiProvider};
use cortex_model::scripted::ScriptedProvider;
use std::path::Path;
use std::sync::Arc;

pub fn select(spec: Option<&str>, config: &Config) -> anyhow::Result<Arc<dyn ModelProvider>> {
    let Some(spec) = spec.or(config.model.as_deref()) else {
        bail!(
            "no model is configured. Pass --model openai:NAME (with OPENAI_API_KEY, and \
             OPENAI_BASE_URL for a compatible server such as llama.cpp, vLLM or Ollama), \
             or set `model = \"openai:NAME\"` in {}",
            crate::config::config_path()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| "the config file".into())
        );
    };
    let (provider, name) = spec
        .split_once(':')
        .with_context(|| format!("model `{spec}` must be PROVIDER:NAME, e.g. openai:gpt-4o-mini"))?;
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
        // Tests and benchmarks only: replays a JSON script file.
        "scripted" => Ok(Arc::new(
            ScriptedProvider::from_file(Path::new(name))
                .with_context(|| format!("cannot load the model script {name}"))?,
        )),
        other => bail!("unknown model provider `{other}` (expected openai or scripted)"),
    }
}
