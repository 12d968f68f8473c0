//! Shared harness for the turn-loop tests: a temporary repository, the
//! in-process guest, the scripted model and an in-memory store.

#![allow(dead_code)]

use cortex_core::{Session, SessionConfig, TurnOutcome};
use cortex_model::scripted::ScriptedProvider;
use cortex_protocol::{Event, EventKind, Mode, StopRule, ToolStatus};
use cortex_runtime::InProcessProvider;
use cortex_store::{SqliteStore, Store};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `scripted` as a model whose info asks for answer checks
/// (`verify_answers`, as the embedded model's does) or not.
pub fn checked_model(
    scripted: Arc<ScriptedProvider>,
    verify_answers: bool,
) -> Arc<dyn cortex_model::ModelProvider> {
    small_model(scripted, verify_answers, 0)
}

/// [`checked_model`] whose turn context may carry `files_in_prompt` bytes of
/// file content.
pub fn small_model(
    scripted: Arc<ScriptedProvider>,
    verify_answers: bool,
    files_in_prompt: u32,
) -> Arc<dyn cortex_model::ModelProvider> {
    small_model_editing(
        scripted,
        verify_answers,
        files_in_prompt,
        cortex_protocol::EditFormat::String,
    )
}

/// [`small_model`] offered `edit_file` in `edit_format`.
pub fn small_model_editing(
    scripted: Arc<ScriptedProvider>,
    verify_answers: bool,
    files_in_prompt: u32,
    edit_format: cortex_protocol::EditFormat,
) -> Arc<dyn cortex_model::ModelProvider> {
    let info = cortex_model::ModelInfo {
        context_window: 32_768,
        max_output_tokens: 1024,
        parallel_tool_calls: true,
        prices: None,
        verify_answers,
        files_in_prompt,
        edit_format,
    };
    Arc::new(cortex_model::meter::Metered::new(
        scripted,
        Some(info),
        cortex_model::meter::Meter::default(),
    ))
}

pub struct Harness {
    pub repo: tempfile::TempDir,
    pub store: Arc<dyn Store>,
    pub model: Arc<ScriptedProvider>,
    pub session: Session,
}

/// What a test session is made of: a repository holding `files`, an
/// in-memory store and the scripted model of `script`.
pub fn parts(
    files: &[(&str, &str)],
    script: &serde_json::Value,
) -> (tempfile::TempDir, Arc<dyn Store>, Arc<ScriptedProvider>) {
    let repo = tempfile::tempdir().expect("tempdir");
    for (path, content) in files {
        write(repo.path(), path, content);
    }
    let store: Arc<dyn Store> = Arc::new(SqliteStore::in_memory().expect("store"));
    let scripted = Arc::new(ScriptedProvider::from_json(&script.to_string()).expect("script"));
    (repo, store, scripted)
}

pub fn write(dir: &Path, path: &str, content: &str) {
    let full = dir.join(path);
    if let Some(parent) = full.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(full, content).expect("write");
}

pub fn config(
    repo: &Path,
    store: Arc<dyn Store>,
    model: Arc<dyn cortex_model::ModelProvider>,
    mode: Mode,
    stop_rule: StopRule,
) -> SessionConfig {
    SessionConfig {
        repository: repo.to_path_buf(),
        mode,
        stop_rule,
        store,
        model,
        guests: Arc::new(InProcessProvider),
        guest_env: vec![
            ("PATH".into(), std::env::var("PATH").unwrap_or_default()),
            ("HOME".into(), repo.display().to_string()),
        ],
        sandbox: Default::default(),
        workspaces: None,
        compaction: Default::default(),
        harness_dirs: Default::default(),
        checkpoints: None,
        checkpoint_quota: None,
        checkpoint_total_quota: None,
        hooks: Vec::new(),
        hook_trust: None,
        subagents: Default::default(),
    }
}

/// One Agent-mode turn of `prompt` in a new session on `repo` with `model`
/// (the checks' tests wrap the scripted model to set its info): the session
/// and how the turn ended.
pub async fn one_agent_turn(
    repo: &Path,
    store: Arc<dyn Store>,
    model: Arc<dyn cortex_model::ModelProvider>,
    prompt: &str,
) -> (Session, TurnOutcome) {
    let config = config(repo, store, model, Mode::Agent, StopRule::Code);
    let mut session = Session::create(config).await.expect("session");
    let outcome = session
        .run_turn(prompt, tokio_util::sync::CancellationToken::new())
        .await
        .expect("turn");
    (session, outcome)
}

/// One Agent turn of `prompt` on a repository of `files`, by the scripted
/// model of `script` as a small model (`verify_answers` as given, no file
/// content in the prompt) that edits in `format`: where it ran, and how it
/// ended.
pub async fn edit_turn(
    files: &[(&str, &str)],
    script: &serde_json::Value,
    verify_answers: bool,
    format: cortex_protocol::EditFormat,
    prompt: &str,
) -> (Harness, TurnOutcome) {
    let (repo, store, scripted) = parts(files, script);
    let model = small_model_editing(scripted.clone(), verify_answers, 0, format);
    let (session, outcome) = one_agent_turn(repo.path(), store.clone(), model, prompt).await;
    let harness = Harness {
        repo,
        store,
        model: scripted,
        session,
    };
    (harness, outcome)
}

/// (status, output) of every tool result of `session`, in order.
pub async fn tool_results(store: &Arc<dyn Store>, session: &Session) -> Vec<(ToolStatus, String)> {
    store
        .events(session.id(), 0)
        .await
        .expect("events")
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::ToolResult { status, output, .. } => Some((status, output)),
            _ => None,
        })
        .collect()
}

pub async fn harness(files: &[(&str, &str)], mode: Mode, script: serde_json::Value) -> Harness {
    harness_with(files, mode, StopRule::Code, script).await
}

pub async fn harness_with(
    files: &[(&str, &str)],
    mode: Mode,
    stop_rule: StopRule,
    script: serde_json::Value,
) -> Harness {
    let repo = tempfile::tempdir().expect("tempdir");
    for (path, content) in files {
        write(repo.path(), path, content);
    }
    let store: Arc<dyn Store> = Arc::new(SqliteStore::in_memory().expect("store"));
    let model = Arc::new(ScriptedProvider::from_json(&script.to_string()).expect("script"));
    let session = Session::create(config(
        repo.path(),
        store.clone(),
        model.clone(),
        mode,
        stop_rule,
    ))
    .await
    .expect("session");
    Harness {
        repo,
        store,
        model,
        session,
    }
}

impl Harness {
    pub async fn events(&self) -> Vec<Event> {
        self.store
            .events(self.session.id(), 0)
            .await
            .expect("events")
    }

    /// (name, status, output) of every tool result, in order.
    pub async fn results(&self) -> Vec<(String, ToolStatus, String)> {
        self.events()
            .await
            .into_iter()
            .filter_map(|e| match e.kind {
                EventKind::ToolResult {
                    name,
                    status,
                    output,
                    ..
                } => Some((name, status, output)),
                _ => None,
            })
            .collect()
    }

    /// The session as a restarted process reopens it from the store.
    pub async fn resumed(&self) -> Session {
        let config = config(
            self.repo.path(),
            self.store.clone(),
            self.model.clone(),
            Mode::Agent,
            Default::default(),
        );
        Session::resume(self.session.id(), config)
            .await
            .expect("resume")
    }

    pub async fn types(&self) -> Vec<&'static str> {
        self.events()
            .await
            .iter()
            .map(|e| e.kind.type_name())
            .collect()
    }
}

/// Every file of a folder with its bytes, to compare trees.
pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).expect("read_dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                walk(base, &path, out);
            } else {
                let rel = path.strip_prefix(base).expect("prefix").to_path_buf();
                out.insert(rel, std::fs::read(&path).expect("read"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

pub fn pid_alive(pid: i32) -> bool {
    // Signal 0 checks existence; a zombie reaped by init disappears.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// A session on a repository of `files` in `mode`, the scripted model of
/// `script`, approvals `auto`, with the user's `hooks` and the repository
/// hooks' trust file `trust` (the hook tests).
pub async fn hooked_harness(
    files: &[(&str, &str)],
    mode: Mode,
    script: serde_json::Value,
    hooks: Vec<cortex_core::HookSpec>,
    trust: Option<PathBuf>,
) -> Harness {
    let (repo, store, model) = parts(files, &script);
    let mut config = config(
        repo.path(),
        store.clone(),
        model.clone(),
        mode,
        StopRule::Code,
    );
    config.hooks = hooks;
    config.hook_trust = trust;
    let session = Session::create(config).await.expect("session");
    session
        .approvals()
        .set_policy(cortex_protocol::ApprovalPolicy::Auto)
        .await
        .expect("policy");
    Harness {
        repo,
        store,
        model,
        session,
    }
}

/// An executable `#!/bin/sh` script named `name` in `dir`: its path.
pub fn shell_script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}")).expect("write script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

/// Whether process `pid` has ended (gone, or a zombie nobody reaped yet),
/// within two seconds.
pub async fn ended(pid: &str) -> bool {
    for _ in 0..40 {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(stat)
                if stat
                    .rsplit(')')
                    .next()
                    .is_some_and(|s| s.trim_start().starts_with('Z')) =>
            {
                return true;
            }
            Ok(_) => tokio::time::sleep(std::time::Duration::from_millis(50)).await,
        }
    }
    false
}
