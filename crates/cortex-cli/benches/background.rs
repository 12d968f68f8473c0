//! Background commands: the time from starting one (`bash` with
//! `background: true`, the guest's `spawn` with `background`) to its first
//! output reaching the harness, in the local sandbox and, for reference, in
//! the same agent without one (`--sandbox full-access`). The command prints
//! at once (`echo ready; exec sleep 60`), so what is measured is the
//! guest's spawn of `bash` in a process group of its own, its first write,
//! and the chunk's way back over the guest's pipes. Each iteration then
//! kills the command and waits for its end (not measured).
//!
//! `cargo bench -p cortex-cli --bench background`

use cortex_protocol::{GuestReply, NetworkPolicy, SandboxPolicy};
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

fn bench_first_output(c: &mut Criterion) {
    let repo = tempfile::tempdir().expect("repo");
    let homes = tempfile::tempdir().expect("homes");
    let cortex = std::path::PathBuf::from(env!("CARGO_BIN_EXE_cortex"));
    let provider = SandboxProvider::new(cortex, vec!["guest".to_owned()], homes.path().into());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let mut group = c.benchmark_group("background: start to first output");
    for (label, policy) in [
        ("local sandbox", SandboxPolicy::WorkspaceWrite),
        ("full-access (reference)", SandboxPolicy::FullAccess),
    ] {
        let guest = runtime
            .block_on(provider.start(&spec(repo.path(), policy)))
            .expect("start the guest");
        group.bench_function(label, |b| {
            b.to_async(&runtime).iter_custom(|iters| {
                let guest = &guest;
                async move {
                    let mut measured = Duration::ZERO;
                    for _ in 0..iters {
                        let start = Instant::now();
                        let command = "echo ready; exec sleep 60".to_owned();
                        let mut handle = guest.spawn_background(command).await.expect("spawn");
                        // The first reply is the first output: the command
                        // prints before anything else can happen.
                        match handle.next().await {
                            Some(GuestReply::Delta { .. }) => {}
                            Some(GuestReply::Result(outcome)) => {
                                panic!("ended before its output: {outcome:?}")
                            }
                            None => panic!("the guest ended"),
                        }
                        measured += start.elapsed();
                        guest.stop_call(handle.id()).await.expect("stop");
                        while handle.next().await.is_some() {}
                    }
                    measured
                }
            })
        });
        runtime.block_on(guest.close());
    }
    group.finish();
}

criterion_group!(benches, bench_first_output);
criterion_main!(benches);
