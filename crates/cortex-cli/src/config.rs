//! `$XDG_CONFIG_HOME/cortex/config.toml` and the data folder.
//!
//! ```toml
//! model = "openai:gpt-4o-mini"     # PROVIDER:NAME used when --model is not given
//!
//! [openai]
//! base_url = "http://127.0.0.1:8080/v1"   # else OPENAI_BASE_URL, else api.openai.com
//! api_key_env = "OPENAI_API_KEY"          # which variable holds the key
//!
//! [guest]
//! env = ["CARGO_HOME", "RUSTUP_HOME"]     # more variables the guest may see
//! ```

use anyhow::Context;
use serde::Deserialize;
use std::path::PathBuf;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub model: Option<String>,
    #[serde(default)]
    pub openai: OpenAiSection,
    #[serde(default)]
    pub guest: GuestSection,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenAiSection {
    pub base_url: Option<String>,
    pub api_key_env: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GuestSection {
    #[serde(default)]
    pub env: Vec<String>,
}

fn xdg_dir(var: &str, fallback: &str) -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os(var).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let home = std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .with_context(|| format!("neither {var} nor HOME is set"))?;
    Ok(PathBuf::from(home).join(fallback))
}

pub fn config_path() -> anyhow::Result<PathBuf> {
    Ok(xdg_dir("XDG_CONFIG_HOME", ".config")?
        .join("cortex")
        .join("config.toml"))
}

pub fn data_dir() -> anyhow::Result<PathBuf> {
    Ok(xdg_dir("XDG_DATA_HOME", ".local/share")?.join("cortex"))
}

impl Config {
    /// The config file, or defaults when there is none. A file that exists
    /// but does not parse is an error naming the file.
    pub fn load() -> anyhow::Result<Config> {
        let path = config_path()?;
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Config::default()),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        toml::from_str(&text).with_context(|| format!("invalid config file {}", path.display()))
    }
}

pub async fn open_store() -> anyhow::Result<std::sync::Arc<dyn cortex_store::Store>> {
    let path = data_dir()?.join("cortex.db");
    let store = cortex_store::SqliteStore::open(&path)
        .with_context(|| format!("cannot open the session store {}", path.display()))?;
    Ok(std::sync::Arc::new(store))
}

/// `--store`: `sqlite` (the default file), `sqlite:PATH`, or `postgres://…`.
pub async fn open_store_url(url: &str) -> anyhow::Result<std::sync::Arc<dyn cortex_store::Store>> {
    if url == "sqlite" {
        return open_store().await;
    }
    if let Some(path) = url.strip_prefix("sqlite:") {
        let store = cortex_store::SqliteStore::open(std::path::Path::new(path))
            .with_context(|| format!("cannot open the session store {path}"))?;
        return Ok(std::sync::Arc::new(store));
    }
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let store = cortex_store::PgStore::connect(url)
            .await
            .context("cannot open the PostgreSQL session store")?;
        return Ok(std::sync::Arc::new(store));
    }
    anyhow::bail!("--store `{url}` is not sqlite, sqlite:PATH or postgres://…")
}
