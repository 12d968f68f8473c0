//! Harness overhead of a Code turn: a model that answers instantly (one
//! `read_file` call, then text), the real guest process over its pipes, the
//! SQLite store on disk. What is left is the harness: request building,
//! dispatch, the guest round trip, persisting and fanning out every event.
//!
//! Reference in the same run: the tool itself (`Workspace::read_file` on the
//! same file), so the ratio shows what the harness adds around it. The
//! `hooks:` cases add a no-op `PreToolUse` and `PostToolUse` hook (`true`),
//! the user's (on the host) or the repository's trusted ones (in the
//! guest): against `local sandbox`, the cost of no-op hooks per tool call.
//!
//! `cargo bench -p cortex-cli --bench turn`

use cortex_core::{Session, SessionConfig};
use cortex_model::{FinishReason, ModelEvent, ModelProvider, ModelRequest, ModelStream};
use cortex_protocol::{Mode, ReadFileArgs, Role, Sandbox, SandboxPolicy, StopRule};
use cortex_runtime::{GuestProvider, InProcessProvider, ProcessProvider, SandboxProvider};
use cortex_store::SqliteStore;
use criterion::{Criterion, criterion_group, criterion_main};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Calls read_file when the last message is the user's, answers otherwise.
struct InstantModel;

impl ModelProvider for InstantModel {
    fn describe(&self) -> String {
        "bench:instant".into()
    }

    fn stream(&self, request: ModelRequest) -> ModelStream {
        let events = match request.messages.last().map(|m| m.role) {
            Some(Role::User) => vec![
                ModelEvent::ToolCallStart {
                    index: 0,
                    id: format!("call_{}", request.messages.len()),
                    name: "read_file".into(),
                },
                ModelEvent::ToolCallDelta {
                    index: 0,
                    arguments: r#"{"path":"src/lib.rs"}"#.into(),
                },
                ModelEvent::ToolCallEnd { index: 0 },
                ModelEvent::Finish(FinishReason::ToolCalls),
            ],
            _ => vec![
                ModelEvent::TextDelta("It defines add.".into()),
                ModelEvent::Finish(FinishReason::Stop),
            ],
        };
        Box::pin(futures::stream::iter(events.into_iter().map(Ok)))
    }
}

const TURNS_PER_SESSION: u64 = 50;

fn bench_turn(c: &mut Criterion) {
    let repo = tempfile::tempdir().expect("repo");
    std::fs::create_dir_all(repo.path().join("src")).expect("mkdir");
    let source: String = (0..40)
        .map(|i| format!("pub fn f{i}() -> u32 {{ {i} }}\n"))
        .collect();
    std::fs::write(repo.path().join("src/lib.rs"), source).expect("write");
    let data = tempfile::tempdir().expect("data");
    let store = Arc::new(SqliteStore::open(&data.path().join("bench.db")).expect("store"));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");

    let homes = tempfile::tempdir().expect("homes");
    let sandboxed = || -> Arc<dyn GuestProvider> {
        Arc::new(SandboxProvider::new(
            env!("CARGO_BIN_EXE_cortex").into(),
            vec!["guest".into()],
            homes.path().to_path_buf(),
        ))
    };
    let providers: [(&str, Arc<dyn GuestProvider>, SandboxPolicy); 4] = [
        ("local sandbox", sandboxed(), SandboxPolicy::WorkspaceWrite),
        ("local full-access", sandboxed(), SandboxPolicy::FullAccess),
        (
            "process guest",
            Arc::new(ProcessProvider {
                program: env!("CARGO_BIN_EXE_cortex").into(),
                args: vec!["guest".into()],
            }),
            SandboxPolicy::WorkspaceWrite,
        ),
        (
            "in-process guest",
            Arc::new(InProcessProvider),
            SandboxPolicy::WorkspaceWrite,
        ),
    ];
    // The same tree with the repository's own no-op hooks, trusted.
    let hooked = tempfile::tempdir().expect("repo");
    std::fs::create_dir_all(hooked.path().join("src")).expect("mkdir");
    std::fs::create_dir_all(hooked.path().join(".cortex")).expect("mkdir");
    std::fs::copy(
        repo.path().join("src/lib.rs"),
        hooked.path().join("src/lib.rs"),
    )
    .expect("copy");
    let noop = r#"{"type": "command", "command": "true"}"#;
    let hooks_json = format!(
        r#"{{"hooks": {{"PreToolUse": [{{"hooks": [{noop}]}}], "PostToolUse": [{{"hooks": [{noop}]}}]}}}}"#
    );
    std::fs::write(hooked.path().join(".cortex/hooks.json"), &hooks_json).expect("write");
    let trust = data.path().join("trusted-hooks.json");
    let hooked_repo = hooked.path().canonicalize().expect("canonical");
    for file in cortex_core::hooks::repository::find(&hooked_repo).files {
        cortex_core::hooks::trust::TrustedHooks::trust(
            &trust,
            &hooked_repo,
            &file.file,
            &file.sha256,
        )
        .expect("trust");
    }
    let user_noop = |event| cortex_core::HookSpec {
        origin: cortex_core::HookOrigin::User,
        event,
        matcher: None,
        command: "true".into(),
        timeout_ms: None,
        source: "bench".into(),
        claude: false,
    };
    let user_hooks = vec![
        user_noop(cortex_core::HookEvent::PreToolUse),
        user_noop(cortex_core::HookEvent::PostToolUse),
    ];
    type Case = (&'static str, Arc<dyn GuestProvider>, SandboxPolicy);
    let cases = providers
        .into_iter()
        .map(|(label, guests, policy): Case| (label, guests, policy, repo.path(), Vec::new()))
        .chain([
            (
                "hooks: local sandbox, no-op user hooks",
                sandboxed(),
                SandboxPolicy::WorkspaceWrite,
                repo.path(),
                user_hooks,
            ),
            (
                "hooks: local sandbox, no-op repository hooks",
                sandboxed(),
                SandboxPolicy::WorkspaceWrite,
                hooked.path(),
                Vec::new(),
            ),
        ]);
    let mut group = c.benchmark_group("turn: 2 rounds, 1 read_file");
    for (label, guests, policy, repository, hooks) in cases {
        let config = SessionConfig {
            repository: repository.to_path_buf(),
            mode: Mode::Agent,
            stop_rule: StopRule::Code,
            store: store.clone(),
            model: Arc::new(InstantModel),
            guests,
            guest_env: vec![("PATH".into(), "/usr/bin:/bin".into())],
            sandbox: Sandbox {
                policy,
                ..Sandbox::default()
            },
            workspaces: None,
            compaction: Default::default(),
            harness_dirs: Default::default(),
            checkpoints: None,
            checkpoint_quota: None,
            checkpoint_total_quota: None,
            hooks,
            hook_trust: Some(trust.clone()),
            subagents: Default::default(),
        };
        group.bench_function(label, |b| {
            b.to_async(&runtime).iter_custom(|iters| {
                let config = config.clone();
                async move {
                    let mut measured = Duration::ZERO;
                    let mut done = 0;
                    while done < iters {
                        // A fresh session every few turns keeps the history,
                        // and so the request size, realistic.
                        let mut session = Session::create(config.clone()).await.expect("session");
                        session
                            .run_turn("warm up: attach", CancellationToken::new())
                            .await
                            .expect("turn");
                        let batch = TURNS_PER_SESSION.min(iters - done);
                        let start = Instant::now();
                        for _ in 0..batch {
                            session
                                .run_turn("what does src/lib.rs define?", CancellationToken::new())
                                .await
                                .expect("turn");
                        }
                        measured += start.elapsed();
                        done += batch;
                        session.close().await;
                    }
                    measured
                }
            })
        });
    }
    let workspace = cortex_tools::Workspace::new(repo.path()).expect("workspace");
    let args = ReadFileArgs {
        path: "src/lib.rs".into(),
        offset: None,
        limit: None,
    };
    group.bench_function("reference: read_file alone", |b| {
        b.iter(|| workspace.read_file(&args).expect("read"))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(8)).sample_size(30);
    targets = bench_turn
}
criterion_main!(benches);
