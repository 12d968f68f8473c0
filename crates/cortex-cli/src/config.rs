//! `$XDG_CONFIG_HOME/cortex/config.toml` and the data folder.
//!
//! ```toml
//! model = "openai:gpt-4o-mini"     # PROVIDER:NAME used when --model is not given
//!
//! [openai]
//! base_url = "http://127.0.0.1:8080/v1"   # else OPENAI_BASE_URL, else api.openai.com
//! api_key_env = "OPENAI_API_KEY"          # which variable holds the key
//! wire = "chat"                           # or "responses" (the Responses API)
//!
//! [anthropic]
//! base_url = "https://api.anthropic.com"  # else ANTHROPIC_BASE_URL
//! api_key_env = "ANTHROPIC_API_KEY"
//! max_tokens = 8192                       # default: the model's limit, at most 16384
//! thinking_budget = 4096                  # extended thinking, off when absent
//! prompt_caching = true
//!
//! [timeouts]                              # seconds; for every HTTP provider
//! connect = 10
//! first_byte = 120
//! idle = 300
//!
//! [models."my-model"]                     # over the built-in table, or a new model
//! context_window = 32768
//! max_output_tokens = 4096
//! parallel_tool_calls = false
//! prices = { input = 0.5, output = 1.5, cache_read = 0.05, cache_write = 0.5 }  # $ per 1M tokens
//! edit_format = "lines"      # edit_file by line ranges, "quoted" (whole lines, held by the grammar), "whole" (write_file only) or "blocks" (SEARCH/REPLACE)
//! recover_text_calls = true   # run tool calls it writes as text (default: on for a server on this machine)
//!
//! [guest]
//! env = ["CARGO_HOME", "RUSTUP_HOME"]     # more variables the guest may see
//! read_only = ["~/.cargo", "~/.rustup"]   # host paths the sandbox may read
//! read_write = ["~/.cache/pip"]           # host paths the sandbox may change
//! memory_mb = 4096                        # memory of the whole guest
//! max_processes = 512                     # processes and threads of the guest
//! workspace_quota_mb = 8192               # how much the workspace may grow in a session
//! workspace_quota_inodes = 1000000        # files it may gain
//! home_quota_mb = 4096                    # the guest's home (per repository)
//! home_quota_inodes = 500000
//! tmp_quota_mb = 1024                     # each of /tmp, /var/tmp, /dev/shm in the guest
//! tmp_quota_inodes = 100000
//!
//! [store]
//! quota_mb = 10240   # the session store refuses new events past this size (default: none)
//!
//! [checkpoints]
//! quota_mb = 1024    # the most one session's workspace checkpoints may use (default 1024)
//! total_quota_mb = 10240  # the most all sessions' checkpoints may use together (default 10240)
//!
//! [subagents]
//! parallel = 3    # task calls of one round running at once (default 3; 0: no task tool)
//!
//! [lsp.pyright]            # a language server; its diagnostics follow each write or edit
//! command = "pyright-langserver"   # started in a guest like the session's, on first use
//! args = ["--stdio"]
//! languages = ["python"]    # python, rust, typescript, javascript, go
//! extensions = [".pyw"]     # more files it checks (optional)
//! timeout_ms = 3000         # how long a write waits for its diagnostics (default 3000)
//!
//! [sandbox]
//! git_write = false   # true: the model may commit (the git folder is writable in the guest)
//!
//! [local]
//! kv_keep = 8    # KV-cache states of the local model kept on disk between runs (0: none)
//! first_round_tool_call = false   # the first round of a turn must call a tool
//! verify_answers = true   # ask once to check an answer given without any tool call
//! threads = 2          # generation threads (default: every core, at most 8)
//! prompt_threads = 2   # prompt-reading threads (default: every core, at most 8)
//! files_in_prompt = 24576   # bytes of file content a turn's context may carry (0: names only)
//! edit_format = "quoted"    # edit_file by whole lines held by the grammar (default), "string", "lines", "whole" or "blocks"
//!
//! [[hooks.PreToolUse]]      # also PostToolUse, Stop, UserPromptSubmit
//! matcher = "bash"          # tool names: a regular expression or `a|b` (default: all)
//! command = "~/bin/guard"   # run with /bin/sh -c on the host, in the repository
//! timeout_ms = 5000         # default 60000
//! ```
//!
//! Hooks are also read from `hooks.json` next to this file, in Claude
//! Code's format (`cortex_core::hooks`). Only the user's own hooks are
//! read: a repository's are not (they would need trust and the guest).

use anyhow::Context;
use cortex_model::metadata::ModelOverride;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub model: Option<String>,
    #[serde(default)]
    pub openai: OpenAiSection,
    #[serde(default)]
    pub anthropic: AnthropicSection,
    #[serde(default)]
    pub timeouts: TimeoutsSection,
    /// Per-model metadata over the built-in table, by model name.
    #[serde(default)]
    pub models: BTreeMap<String, ModelOverride>,
    #[serde(default)]
    pub guest: GuestSection,
    #[serde(default)]
    pub sandbox: SandboxSection,
    #[serde(default)]
    pub network: NetworkSection,
    /// `[web_search]`: the search API behind `web_search`, if any.
    pub web_search: Option<WebSearchSection>,
    #[serde(default)]
    pub store: StoreSection,
    #[serde(default)]
    pub checkpoints: CheckpointsSection,
    #[serde(default)]
    pub subagents: SubagentsSection,
    /// Read without the `local` feature too (unused there), so a config
    /// written for the embedded model stays valid in a build without it.
    #[serde(default)]
    #[cfg_attr(not(feature = "local"), allow(dead_code))]
    pub local: LocalSection,
    /// `[mcp_servers.NAME]`, as Codex writes them (see `cortex_mcp::config`).
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, cortex_mcp::ServerConfig>,
    /// `[[hooks.EVENT]]`: the user's own hooks, by event name.
    #[serde(default)]
    pub hooks: BTreeMap<String, Vec<HookEntry>>,
    /// `[lsp.NAME]`: language servers that check written files.
    #[serde(default)]
    pub lsp: BTreeMap<String, LspEntry>,
}

/// One `[lsp.NAME]` table (see `cortex_core::LspSpec`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LspEntry {
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub languages: Vec<String>,
    #[serde(default)]
    pub extensions: Vec<String>,
    pub timeout_ms: Option<u64>,
}

/// One `[[hooks.EVENT]]` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookEntry {
    /// Tool names it runs for (tool events only); all when absent.
    pub matcher: Option<String>,
    /// The command line, run with `/bin/sh -c`.
    pub command: String,
    /// How long it may run (default 60 s).
    pub timeout_ms: Option<u64>,
}

/// The user's hooks: `[hooks]` of the config file, then `hooks.json`.
#[derive(Debug, Default)]
pub struct UserHooks {
    pub hooks: Vec<cortex_core::HookSpec>,
    /// Entries of `hooks.json` that are not run, with why.
    pub skipped: Vec<String>,
}

impl Config {
    /// The language servers of `[lsp.NAME]`; an invalid table is an error
    /// (a server the user asked for must not be dropped without a word).
    pub fn lsp_specs(&self) -> anyhow::Result<Vec<cortex_core::LspSpec>> {
        self.lsp
            .iter()
            .map(|(name, entry)| {
                cortex_core::LspSpec::new(
                    name,
                    &entry.command,
                    entry.args.clone(),
                    &entry.languages,
                    &entry.extensions,
                    entry.timeout_ms,
                )
                .map_err(anyhow::Error::from)
            })
            .collect()
    }

    /// The user's hooks from this config and `hooks.json` beside it. An
    /// unknown event or a malformed `hooks.json` is an error: a guard the
    /// user wrote must not be skipped without a word.
    pub fn user_hooks(&self) -> anyhow::Result<UserHooks> {
        self.hooks_beside(&config_path()?)
    }

    /// [`Config::user_hooks`] for a config file at `path`.
    fn hooks_beside(&self, path: &std::path::Path) -> anyhow::Result<UserHooks> {
        let mut found = UserHooks::default();
        for (event, entries) in &self.hooks {
            let Some(parsed) = cortex_core::HookEvent::parse(event) else {
                let known: Vec<&str> = cortex_core::HookEvent::ALL
                    .iter()
                    .map(|e| e.as_str())
                    .collect();
                anyhow::bail!(
                    "{}: [hooks.{event}] is not an event Cortex runs (it runs {})",
                    path.display(),
                    known.join(", ")
                );
            };
            for entry in entries {
                found.hooks.push(cortex_core::HookSpec {
                    origin: cortex_core::hooks::HookOrigin::User,
                    event: parsed,
                    matcher: entry.matcher.clone(),
                    command: entry.command.clone(),
                    timeout_ms: entry.timeout_ms,
                    source: path.display().to_string(),
                    claude: false,
                });
            }
        }
        let Some(dir) = path.parent() else {
            return Ok(found);
        };
        let json = cortex_core::hooks::hooks_json_path(dir);
        match std::fs::read_to_string(&json) {
            Ok(text) => {
                let parsed =
                    cortex_core::hooks::parse_claude_hooks(&text, &json.display().to_string())
                        .map_err(anyhow::Error::msg)?;
                found.hooks.extend(parsed.hooks);
                found.skipped.extend(parsed.skipped);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", json.display())),
        }
        Ok(found)
    }
}

/// `[network]`: what `web_fetch` may reach besides the session's network
/// policy.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkSection {
    /// Hosts (`docs.rs`, `*.rust-lang.org`, `127.0.0.1:8080`) fetched even
    /// with the network off (by the harness, with a plain client), and
    /// allowed to resolve to loopback or private addresses.
    #[serde(default)]
    pub allow: Vec<String>,
}

/// `[web_search]`: a search API answering JSON (Brave, SearXNG, Tavily,
/// Bing, …), called by the harness.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebSearchSection {
    /// The URL, `{query}` where the query goes.
    pub url: String,
    /// The variable holding the API's key; when it is set in the config
    /// but not in the environment, there is no `web_search`.
    pub key_env: Option<String>,
    /// The header the key goes in (default `Authorization`, as `Bearer
    /// KEY`; any other header gets the key as it is).
    pub header: Option<String>,
}

impl Config {
    /// What `web_fetch` and `web_search` may reach: the allow-list,
    /// checked, and the search API when one is configured (and its key
    /// set).
    pub fn web_access(&self) -> anyhow::Result<cortex_core::WebAccess> {
        let access =
            cortex_core::WebAccess::new(&self.network.allow).context("invalid [network] allow")?;
        let Some(search) = &self.web_search else {
            return Ok(access);
        };
        let header = match &search.key_env {
            None => None,
            Some(var) => match std::env::var(var) {
                Ok(key) if !key.trim().is_empty() => {
                    let name = search
                        .header
                        .clone()
                        .unwrap_or_else(|| "Authorization".into());
                    let value = if name.eq_ignore_ascii_case("authorization") {
                        format!("Bearer {}", key.trim())
                    } else {
                        key.trim().to_owned()
                    };
                    Some((name, value))
                }
                // No key, no tool.
                _ => {
                    tracing::warn!("[web_search] key_env {var} is not set: no web_search");
                    return Ok(access);
                }
            },
        };
        let api =
            cortex_core::SearchApi::new(&search.url, header).context("invalid [web_search]")?;
        Ok(access.with_search(api))
    }
}

/// `[sandbox]`: what the local sandbox grants beyond its defaults.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxSection {
    /// The model may commit: the git folder is writable in the guest
    /// (hooks and config stay read-only).
    #[serde(default)]
    pub git_write: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(not(feature = "local"), allow(dead_code))]
pub struct LocalSection {
    /// How many KV-cache states the local model keeps in
    /// `$XDG_DATA_HOME/cortex/kv` so a later `cortex exec` (a resumed
    /// session) does not evaluate the same prompt again; 0 keeps none.
    #[serde(default = "default_kv_keep")]
    pub kv_keep: usize,
    /// The first round of a turn must be a tool call (grammar-forced).
    #[serde(default)]
    pub first_round_tool_call: bool,
    /// Ask the model once to check an answer it gave without calling any
    /// tool (small models answer from guesses).
    #[serde(default = "default_true")]
    pub verify_answers: bool,
    /// Generation threads; `None` keeps the provider's default.
    #[serde(default)]
    pub threads: Option<usize>,
    /// Prompt-reading threads; `None` keeps the provider's default.
    #[serde(default)]
    pub prompt_threads: Option<usize>,
    /// Bytes of file content a turn's context may carry; `None` keeps the
    /// provider's default.
    #[serde(default)]
    pub files_in_prompt: Option<u32>,
    /// The shape of `edit_file` offered; `None` keeps the provider's
    /// default.
    #[serde(default)]
    pub edit_format: Option<cortex_protocol::EditFormat>,
}

fn default_kv_keep() -> usize {
    8
}

fn default_true() -> bool {
    true
}

impl Default for LocalSection {
    fn default() -> Self {
        LocalSection {
            kv_keep: default_kv_keep(),
            first_round_tool_call: false,
            verify_answers: true,
            threads: None,
            prompt_threads: None,
            files_in_prompt: None,
            edit_format: None,
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenAiSection {
    pub base_url: Option<String>,
    pub api_key_env: Option<String>,
    pub wire: Option<Wire>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Wire {
    Chat,
    Responses,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnthropicSection {
    pub base_url: Option<String>,
    pub api_key_env: Option<String>,
    pub max_tokens: Option<u32>,
    pub thinking_budget: Option<u32>,
    pub prompt_caching: Option<bool>,
}

/// Seconds; fractions allowed.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimeoutsSection {
    pub connect: Option<f64>,
    pub first_byte: Option<f64>,
    pub idle: Option<f64>,
}

impl TimeoutsSection {
    /// The defaults with the configured values laid over them.
    pub fn resolve(&self) -> anyhow::Result<cortex_model::Timeouts> {
        let mut timeouts = cortex_model::Timeouts::default();
        for (name, value, slot) in [
            ("connect", self.connect, &mut timeouts.connect),
            ("first_byte", self.first_byte, &mut timeouts.first_byte),
            ("idle", self.idle, &mut timeouts.idle),
        ] {
            if let Some(secs) = value {
                *slot = std::time::Duration::try_from_secs_f64(secs)
                    .ok()
                    .filter(|d| !d.is_zero())
                    .with_context(|| {
                        format!("timeouts.{name} must be a positive number of seconds, not {secs}")
                    })?;
            }
        }
        Ok(timeouts)
    }
}

/// `[subagents]`: the `task` tool's children.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubagentsSection {
    /// Children of one round running at once; 0 turns `task` off.
    pub parallel: Option<usize>,
}

impl SubagentsSection {
    /// What sessions are given.
    pub fn config(&self) -> cortex_core::subagents::SubagentConfig {
        let mut config = cortex_core::subagents::SubagentConfig::default();
        if let Some(parallel) = self.parallel {
            config.parallel = parallel;
        }
        config
    }
}

/// `[checkpoints]`: whole-workspace checkpoints.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointsSection {
    /// The most one session's checkpoints may use; the oldest are pruned
    /// past it. 1024 by default.
    pub quota_mb: Option<u64>,
    /// The most every session's checkpoints may use together; the oldest
    /// of any session are pruned past it. 10240 by default.
    pub total_quota_mb: Option<u64>,
}

impl CheckpointsSection {
    /// The per-session and total quotas in bytes (`None`: the defaults).
    pub fn quotas(&self) -> (Option<u64>, Option<u64>) {
        let bytes = |mb: Option<u64>| mb.map(|mb| mb.saturating_mul(1 << 20));
        (bytes(self.quota_mb), bytes(self.total_quota_mb))
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreSection {
    /// Past this size the store refuses new events (a turn then fails
    /// with the store's error); none by default.
    pub quota_mb: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GuestSection {
    #[serde(default)]
    pub env: Vec<String>,
    #[serde(default)]
    pub read_only: Vec<String>,
    #[serde(default)]
    pub read_write: Vec<String>,
    pub memory_mb: Option<u64>,
    pub max_processes: Option<u64>,
    pub workspace_quota_mb: Option<u64>,
    pub workspace_quota_inodes: Option<u64>,
    pub home_quota_mb: Option<u64>,
    pub home_quota_inodes: Option<u64>,
    pub tmp_quota_mb: Option<u64>,
    pub tmp_quota_inodes: Option<u64>,
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

/// [`data_dir`], made private: it holds the store, guest homes, copies of
/// repositories and saved model state, so no other user may list or read
/// it (see [`private_dir`]).
pub fn private_data_dir() -> anyhow::Result<PathBuf> {
    let dir = data_dir()?;
    private_dir(&dir)?;
    Ok(dir)
}

/// Create `dir` and any missing parent with mode `0700`; a `dir` that
/// exists, is ours and grants group or other access is tightened to
/// `0700`. Parents that exist keep their mode (they may be shared
/// folders), and so does a `dir` another user owns.
pub fn private_dir(dir: &std::path::Path) -> anyhow::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    let meta =
        std::fs::symlink_metadata(dir).with_context(|| format!("cannot read {}", dir.display()))?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let ours = meta.uid() == unsafe { libc::geteuid() };
    if meta.is_dir() && ours && meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .with_context(|| format!("cannot restrict {}", dir.display()))?;
    }
    Ok(())
}

/// `$XDG_RUNTIME_DIR/cortex`, else a per-user folder in the temp dir: where
/// the private API sockets live.
pub fn runtime_dir() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("cortex"),
        // SAFETY: geteuid has no preconditions and cannot fail.
        None => std::env::temp_dir().join(format!("cortex-{}", unsafe { libc::geteuid() })),
    }
}

/// The named tokens of `cortex tokens`, which `cortex serve` reads.
pub fn tokens_path() -> anyhow::Result<PathBuf> {
    Ok(config_path()?
        .parent()
        .context("the config file has no folder")?
        .join("tokens"))
}

/// Cortex's own folders, which no session's repository may contain or sit
/// inside: config (tokens), data (the store, models, guest homes) and
/// runtime (API sockets).
pub fn harness_dirs() -> anyhow::Result<cortex_core::HarnessDirs> {
    let config = config_path()?
        .parent()
        .map(std::path::Path::to_path_buf)
        .context("the config file has no folder")?;
    Ok(cortex_core::HarnessDirs::new()
        .with("config", config)
        .with("data", data_dir()?)
        .with("runtime", runtime_dir()))
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
    open_sqlite(&private_data_dir()?.join("cortex.db"))
}

/// A SQLite store with the `[store] quota_mb` of the config file, if any.
fn open_sqlite(path: &std::path::Path) -> anyhow::Result<std::sync::Arc<dyn cortex_store::Store>> {
    let store = cortex_store::SqliteStore::open(path)
        .with_context(|| format!("cannot open the session store {}", path.display()))?;
    if let Some(mb) = Config::load()?.store.quota_mb {
        store
            .set_quota(mb.saturating_mul(1 << 20))
            .context("cannot set the store's quota")?;
    }
    Ok(std::sync::Arc::new(store))
}

/// `--store`: `sqlite` (the default file), `sqlite:PATH`, or `postgres://…`.
pub async fn open_store_url(url: &str) -> anyhow::Result<std::sync::Arc<dyn cortex_store::Store>> {
    if url == "sqlite" {
        return open_store().await;
    }
    if let Some(path) = url.strip_prefix("sqlite:") {
        return open_sqlite(std::path::Path::new(path));
    }
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let store = cortex_store::PgStore::connect(url)
            .await
            .context("cannot open the PostgreSQL session store")?;
        return Ok(std::sync::Arc::new(store));
    }
    anyhow::bail!("--store `{url}` is not sqlite, sqlite:PATH or postgres://…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooks_are_read_from_the_config_and_hooks_json() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join("hooks.json"),
            r#"{"hooks": {"PreToolUse": [{"matcher": "Bash|Edit", "hooks": [{"type": "command", "command": "guard.sh", "timeout": 30}]}], "Notification": []}}"#,
        )
        .expect("write");
        let config: Config = toml::from_str(
            "[[hooks.PreToolUse]]\nmatcher = \"bash\"\ncommand = \"/bin/check\"\ntimeout_ms = 500\n\
             [[hooks.Stop]]\ncommand = \"/bin/stop\"\n",
        )
        .expect("valid");
        let found = config
            .hooks_beside(&dir.path().join("config.toml"))
            .expect("hooks");
        let got: Vec<(cortex_core::HookEvent, &str, Option<u64>, bool)> = found
            .hooks
            .iter()
            .map(|h| (h.event, h.command.as_str(), h.timeout_ms, h.claude))
            .collect();
        use cortex_core::HookEvent::{PreToolUse, Stop};
        assert_eq!(
            got,
            [
                (PreToolUse, "/bin/check", Some(500), false),
                (Stop, "/bin/stop", None, false),
                (PreToolUse, "guard.sh", Some(30_000), true),
            ]
        );
        assert_eq!(found.skipped.len(), 1, "{:?}", found.skipped);
        let unknown: Config =
            toml::from_str("[[hooks.Notification]]\ncommand = \"x\"\n").expect("valid toml");
        let error = unknown
            .hooks_beside(&dir.path().join("config.toml"))
            .expect_err("an unknown event");
        assert!(error.to_string().contains("Notification"), "{error}");
        std::fs::write(dir.path().join("hooks.json"), "{oops").expect("write");
        assert!(
            config
                .hooks_beside(&dir.path().join("config.toml"))
                .is_err()
        );
    }

    #[test]
    fn lsp_tables_become_language_servers() {
        let config: Config = toml::from_str(
            "[lsp.pyright]\ncommand = \"pyright-langserver\"\nargs = [\"--stdio\"]\n\
             languages = [\"python\"]\nextensions = [\".pyw\"]\ntimeout_ms = 500\n",
        )
        .expect("valid");
        let specs = config.lsp_specs().expect("valid");
        assert_eq!(specs.len(), 1);
        assert_eq!(specs[0].name, "pyright");
        assert_eq!(specs[0].args, ["--stdio"]);
        assert_eq!(specs[0].extensions, ["py", "pyi", "pyw"]);
        assert_eq!(specs[0].timeout, std::time::Duration::from_millis(500));
        let bad: Config =
            toml::from_str("[lsp.x]\ncommand = \"x\"\nlanguages = [\"cobol\"]\n").expect("parses");
        let error = bad.lsp_specs().expect_err("unknown language").to_string();
        assert!(error.contains("cobol"), "{error}");
        assert!(toml::from_str::<Config>("[lsp.x]\ncommand = \"x\"\nport = 1\n").is_err());
    }

    #[test]
    fn network_allow_and_web_search_become_the_web_access() {
        let config: Config =
            toml::from_str("[network]\nallow = [\"docs.rs\", \"127.0.0.1:8080\"]\n")
                .expect("valid");
        assert!(!config.web_access().expect("valid").has_search());
        let bad: Config =
            toml::from_str("[network]\nallow = [\"https://docs.rs\"]").expect("parses");
        let error = format!("{:#}", bad.web_access().expect_err("not a host"));
        assert!(error.contains("https://docs.rs"), "{error}");
        // No key, no tool: the variable is not set.
        let unset: Config = toml::from_str(
            "[web_search]\nurl = \"https://s.example/?q={query}\"\nkey_env = \"CORTEX_TEST_NO_SUCH_KEY_VAR\"",
        )
        .expect("valid");
        assert!(!unset.web_access().expect("valid").has_search());
        // A keyless API (a local SearXNG), and one whose key is set.
        let keyless: Config = toml::from_str(
            "[web_search]\nurl = \"http://127.0.0.1:8888/search?q={query}&format=json\"",
        )
        .expect("valid");
        assert!(keyless.web_access().expect("valid").has_search());
        let keyed: Config = toml::from_str(
            "[web_search]\nurl = \"https://s.example/?q={query}\"\nkey_env = \"PATH\"\nheader = \"X-Key\"",
        )
        .expect("valid");
        assert!(keyed.web_access().expect("valid").has_search());
        let no_query: Config =
            toml::from_str("[web_search]\nurl = \"https://s.example/\"").expect("parses");
        assert!(no_query.web_access().is_err());
    }

    #[test]
    fn checkpoint_quotas_are_read_in_mib() {
        let config: Config =
            toml::from_str("[checkpoints]\nquota_mb = 2\ntotal_quota_mb = 5\n").expect("valid");
        assert_eq!(config.checkpoints.quotas(), (Some(2 << 20), Some(5 << 20)));
        let none: Config = toml::from_str("").expect("valid");
        assert_eq!(none.checkpoints.quotas(), (None, None));
        assert_eq!(none.subagents.config().parallel, 3);
        let one: Config = toml::from_str("[subagents]\nparallel = 1\n").expect("valid");
        assert_eq!(one.subagents.config().parallel, 1);
    }

    #[test]
    fn reads_provider_timeout_and_model_tables() {
        let config: Config = toml::from_str(
            r#"
            model = "anthropic:claude-sonnet-4-20250514"
            [openai]
            wire = "responses"
            [anthropic]
            thinking_budget = 2048
            prompt_caching = false
            [timeouts]
            idle = 1.5
            [models."my-model"]
            context_window = 32768
            max_output_tokens = 4096
            prices = { input = 0.5, output = 1.5, cache_read = 0.05, cache_write = 0.5 }
            edit_format = "lines"
            [local]
            edit_format = "string"
            "#,
        )
        .expect("valid");
        assert_eq!(config.openai.wire, Some(Wire::Responses));
        assert_eq!(config.anthropic.thinking_budget, Some(2048));
        let timeouts = config.timeouts.resolve().expect("valid");
        assert_eq!(timeouts.idle, std::time::Duration::from_millis(1500));
        assert_eq!(timeouts.connect, cortex_model::Timeouts::default().connect);
        let over = &config.models["my-model"];
        assert_eq!(over.prices.map(|p| p.output), Some(1.5));
        assert_eq!(over.edit_format, Some(cortex_protocol::EditFormat::Lines));
        assert_eq!(
            config.local.edit_format,
            Some(cortex_protocol::EditFormat::String)
        );
        assert!(toml::from_str::<Config>("[local]\nedit_format = \"diff\"").is_err());

        let bad: Config = toml::from_str("[timeouts]\nconnect = -1").expect("parses");
        assert!(bad.timeouts.resolve().is_err());
        assert!(toml::from_str::<Config>("[openai]\nwire = \"grpc\"").is_err());
        assert!(toml::from_str::<Config>("[models.x]\ncontext = 1").is_err());
    }
}
