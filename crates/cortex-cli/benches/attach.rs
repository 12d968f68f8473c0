//! The guest's attach time and tool round trip, sandboxed and not: start →
//! ready for calls (what `runtime.attached` reports), and one `read_file`
//! through the guest's pipes. The guest is `cortex guest`, as in a session.
//!
//! Reference in the same run: the same guest as an ordinary process
//! (`--sandbox full-access`), so the ratio is what the sandbox costs.
//!
//! `cargo bench -p cortex-cli --bench attach`

use cortex_protocol::{GuestReply, NetworkPolicy, ReadFileArgs, SandboxPolicy, ToolArgs};
use cortex_runtime::{GuestProvider, GuestSpec, SandboxProvider};
use criterion::{Criterion, criterion_group, criterion_main};
use std::time::{Duration, Instant};

fn spec(workspace: &std::path::Path, policy: SandboxPolicy) -> GuestSpec {
    GuestSpec {
        workspace: workspace.to_path_buf(),
        writable: true,
        allow_bash: true,
        env: vec![("PATH".into(), "/usr/bin:/bin".into())],
        policy,
        network: NetworkPolicy::Off,
    }
}

fn bench_attach(c: &mut Criterion) {
    let repo = tempfile::tempdir().expect("repo");
    let source: String = (0..40)
        .map(|i| format!("pub fn f{i}() -> u32 {{ {i} }}\n"))
        .collect();
    std::fs::write(repo.path().join("lib.rs"), source).expect("write");
    let homes = tempfile::tempdir().expect("homes");
    // `cortex guest`, and the small `cortex-guest` binary the CLI starts
    // instead when it sits next to `cortex` (build it first:
    // `cargo build --release -p cortex-guest`).
    let cortex = std::path::PathBuf::from(env!("CARGO_BIN_EXE_cortex"));
    let sibling = cortex.with_file_name("cortex-guest");
    let mut agents = vec![("", cortex, vec!["guest".to_owned()])];
    if sibling.is_file() {
        agents.push((", cortex-guest binary", sibling, Vec::new()));
    }
    let providers: Vec<(&str, SandboxProvider)> = agents
        .into_iter()
        .map(|(suffix, program, args)| {
            let provider = SandboxProvider::new(program, args, homes.path().to_path_buf());
            (suffix, provider)
        })
        .collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let policies = [
        ("local sandbox", SandboxPolicy::WorkspaceWrite),
        ("full-access (reference)", SandboxPolicy::FullAccess),
    ];

    let mut group = c.benchmark_group("attach: start to ready");
    for ((label, policy), (suffix, provider)) in policies
        .iter()
        .flat_map(|p| providers.iter().map(move |q| (p, q)))
    {
        let spec = spec(repo.path(), *policy);
        group.bench_function(format!("{label}{suffix}"), |b| {
            b.to_async(&runtime).iter_custom(|iters| {
                let (provider, spec) = (&provider, &spec);
                async move {
                    let mut measured = Duration::ZERO;
                    for _ in 0..iters {
                        let start = Instant::now();
                        let guest = provider.start(spec).await.expect("start");
                        measured += start.elapsed();
                        guest.close().await;
                    }
                    measured
                }
            })
        });
    }
    group.finish();

    // Once attached, both agents are the same code behind the same pipes.
    let provider = &providers[0].1;
    let mut group = c.benchmark_group("read_file round trip");
    for (label, policy) in policies {
        let guest = runtime
            .block_on(provider.start(&spec(repo.path(), policy)))
            .expect("start");
        group.bench_function(label, |b| {
            b.to_async(&runtime).iter(|| async {
                let mut call = guest
                    .call(ToolArgs::ReadFile(ReadFileArgs {
                        path: "lib.rs".to_owned(),
                        offset: None,
                        limit: None,
                    }))
                    .await
                    .expect("call");
                while let Some(reply) = call.next().await {
                    if let GuestReply::Result(outcome) = reply {
                        assert!(outcome.is_ok());
                        break;
                    }
                }
            })
        });
        runtime.block_on(guest.close());
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(6)).sample_size(40);
    targets = bench_attach
}
criterion_main!(benches);
