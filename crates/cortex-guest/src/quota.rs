//! Disk quotas on the workspace and the guest's home, enforced by the agent.
//!
//! A bind mount has no quota of its own that an unprivileged process could
//! set, so the agent measures: a walk of each tree (allocated blocks and
//! inodes, on the tree's own filesystem, stopping as soon as it passes the
//! limit) after every tool that may write, and a watchdog that measures
//! while any process but the agent runs in the guest and kills every one of
//! them when a tree grows past its quota. `write_file` and `edit_file` are
//! refused while a tree is over, and when the write itself would pass the
//! workspace's limit. `bash` is not refused (the model needs it to delete
//! files), but a command that grows a tree that is already over is killed.
//!
//! Between two measurements a command can write what the disk takes in that
//! time; `RLIMIT_FSIZE` (set by the sandbox) keeps any one file under the
//! largest quota. The private tmpfs folders are bounded by the kernel
//! (`size=`, `nr_inodes=`), not here.

use cortex_sandbox::{Quota, Quotas};
use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// What a tree holds: allocated bytes and inodes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Usage {
    pub(crate) bytes: u64,
    pub(crate) inodes: u64,
}

impl Usage {
    fn over(self, cap: Usage) -> bool {
        self.bytes > cap.bytes || self.inodes > cap.inodes
    }

    fn max(self, other: Usage) -> Usage {
        Usage {
            bytes: self.bytes.max(other.bytes),
            inodes: self.inodes.max(other.inodes),
        }
    }
}

/// No limit: a walk of the whole tree.
const UNBOUNDED: Usage = Usage {
    bytes: u64::MAX,
    inodes: u64::MAX,
};

/// One tree under quota.
struct Tree {
    /// How the model is told about it.
    name: &'static str,
    path: PathBuf,
    /// What it held at start (zero for the home, whose quota is absolute).
    base: Usage,
    quota: Quota,
}

impl Tree {
    fn cap(&self) -> Usage {
        Usage {
            bytes: self.base.bytes.saturating_add(self.quota.bytes),
            inodes: self.base.inodes.saturating_add(self.quota.inodes),
        }
    }

    /// Why this usage is over the quota, in words the model can act on.
    fn explain(&self, usage: Usage) -> String {
        let grown = |now: u64, base: u64| now.saturating_sub(base);
        let what = if self.base == Usage::default() {
            format!("{} holds", self.name)
        } else {
            format!("{} grew by", self.name)
        };
        format!(
            "disk quota reached: {what} {} and {} files or folders; the limit is {} and {} files or folders. \
             Writes are refused until it is back under: delete \
             what is not needed (e.g. build outputs) with bash.",
            megabytes(grown(usage.bytes, self.base.bytes)),
            grown(usage.inodes, self.base.inodes),
            megabytes(self.quota.bytes),
            self.quota.inodes,
        )
    }
}

fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1_000_000.0)
}

/// The measurements, shared by the tools and the watchdog.
#[derive(Default)]
struct State {
    /// The last measurement of each tree.
    last: Vec<Usage>,
    /// Each tree's usage after the last tool ended: a command may not grow
    /// a tree past the larger of this and its cap.
    settled: Vec<Usage>,
    /// Set when the watchdog killed the guest's processes; the next `bash`
    /// result reports it.
    killed: Option<String>,
}

/// The quotas of one agent.
pub(crate) struct Guard {
    trees: Vec<Tree>,
    state: Mutex<State>,
}

/// A write the disk quotas refuse; its message is for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct WriteRefused(String);

impl Guard {
    /// Measure what the workspace holds now (its quota is growth over
    /// that) and set up the home's absolute quota. Blocking: a full walk
    /// of the workspace.
    pub(crate) fn new(workspace: &Path, home: Option<&Path>, quotas: &Quotas) -> Guard {
        let mut trees = vec![Tree {
            name: "the workspace",
            path: workspace.to_path_buf(),
            base: measure(workspace, UNBOUNDED),
            quota: quotas.workspace,
        }];
        if let Some(home) = home {
            trees.push(Tree {
                name: "the guest's home (~)",
                path: home.to_path_buf(),
                base: Usage::default(),
                quota: quotas.home,
            });
        }
        let last: Vec<Usage> = trees
            .iter()
            .map(|tree| measure(&tree.path, tree.cap()))
            .collect();
        let state = State {
            settled: last.clone(),
            last,
            killed: None,
        };
        Guard {
            trees,
            state: Mutex::new(state),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// May a file tool write `bytes` more into the workspace? `Err` says
    /// why not, as the model reads it.
    pub(crate) fn admit_write(&self, bytes: u64) -> Result<(), WriteRefused> {
        let state = self.state();
        for (tree, usage) in self.trees.iter().zip(&state.last) {
            if usage.over(tree.cap()) {
                return Err(WriteRefused(tree.explain(*usage)));
            }
        }
        let (workspace, usage) = (&self.trees[0], state.last[0]);
        let after = Usage {
            bytes: usage.bytes.saturating_add(bytes),
            inodes: usage.inodes.saturating_add(1),
        };
        if after.over(workspace.cap()) {
            return Err(WriteRefused(format!(
                "disk quota: this write would take the workspace past its limit of {} over its \
                 size at start ({} left); nothing was written.",
                megabytes(workspace.quota.bytes),
                megabytes(workspace.cap().bytes.saturating_sub(usage.bytes)),
            )));
        }
        Ok(())
    }

    /// Measure every tree after a tool ended. Returns why one is over, if
    /// one is. Blocking.
    pub(crate) fn settle(&self) -> Option<String> {
        // A tree over its cap is measured whole (what the watchdog then
        // allows a command is what it holds, so that deleting is never
        // mistaken for growing); the watchdog's kill bounds that walk.
        let usages: Vec<Usage> = self
            .trees
            .iter()
            .map(|tree| match measure(&tree.path, tree.cap()) {
                usage if usage.over(tree.cap()) => measure(&tree.path, UNBOUNDED),
                usage => usage,
            })
            .collect();
        let mut state = self.state();
        state.last = usages.clone();
        state.settled = usages.clone();
        self.trees
            .iter()
            .zip(usages)
            .find(|(tree, usage)| usage.over(tree.cap()))
            .map(|(tree, usage)| tree.explain(usage))
    }

    /// Measure while commands run: why a tree grew past what it may hold
    /// now (its cap, or what it held when already over), if one did.
    /// Blocking.
    pub(crate) fn watch(&self) -> Option<String> {
        let allowed: Vec<Usage> = {
            let state = self.state();
            self.trees
                .iter()
                .zip(&state.settled)
                .map(|(tree, settled)| tree.cap().max(*settled))
                .collect()
        };
        let usages: Vec<Usage> = self
            .trees
            .iter()
            .zip(&allowed)
            .map(|(tree, allowed)| measure(&tree.path, *allowed))
            .collect();
        self.state().last = usages.clone();
        self.trees
            .iter()
            .zip(usages)
            .zip(allowed)
            .find(|((_, usage), allowed)| usage.over(*allowed))
            .map(|((tree, usage), _)| tree.explain(usage))
    }

    /// The watchdog killed the guest's processes for this reason.
    pub(crate) fn note_killed(&self, reason: String) {
        self.state().killed = Some(reason);
    }

    /// Why the watchdog killed the guest's processes since the last call.
    pub(crate) fn take_killed(&self) -> Option<String> {
        self.state().killed.take()
    }
}

/// Bytes (allocated blocks) and inodes under `root`, not crossing into
/// another filesystem (a mount inside the tree is not the tree's) and
/// counting a hard-linked file once. Stops as soon as the count passes
/// `stop`, so the walk costs at most the quota's worth of entries; the
/// result is then over `stop`. Unreadable entries are skipped.
pub(crate) fn measure(root: &Path, stop: Usage) -> Usage {
    let mut usage = Usage::default();
    let Ok(meta) = std::fs::symlink_metadata(root) else {
        return usage;
    };
    let device = meta.dev();
    let mut linked = HashSet::new();
    let mut folders = vec![root.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            if meta.dev() != device {
                continue;
            }
            if !meta.is_dir() && meta.nlink() > 1 && !linked.insert(meta.ino()) {
                continue;
            }
            usage.inodes += 1;
            usage.bytes = usage
                .bytes
                .saturating_add(meta.blocks().saturating_mul(512));
            if usage.over(stop) {
                return usage;
            }
            if meta.is_dir() {
                folders.push(entry.path());
            }
        }
    }
    usage
}

/// Whether any process but this one and init runs in the guest (the
/// guest's own pid namespace: nothing else can be writing when none does).
pub(crate) fn others_running() -> bool {
    let own = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return true;
    };
    entries.flatten().any(|entry| {
        entry
            .file_name()
            .to_str()
            .and_then(|name| name.parse::<u32>().ok())
            .is_some_and(|pid| pid != 1 && pid != own)
    })
}

/// The shortest time between two measurements of the watchdog.
pub(crate) const MIN_INTERVAL: Duration = Duration::from_millis(200);
/// The longest: a big workspace is walked at most this rarely.
pub(crate) const MAX_INTERVAL: Duration = Duration::from_secs(2);

/// The next interval: the walk takes at most a fifth of the watchdog's
/// time, within [`MIN_INTERVAL`] and [`MAX_INTERVAL`].
pub(crate) fn next_interval(walk: Duration) -> Duration {
    (walk * 5).clamp(MIN_INTERVAL, MAX_INTERVAL)
}

/// How long a measurement took, and its verdict.
pub(crate) fn timed<T>(f: impl FnOnce() -> T) -> (Duration, T) {
    let started = Instant::now();
    let value = f();
    (started.elapsed(), value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quotas(bytes: u64, inodes: u64) -> Quotas {
        let quota = Quota { bytes, inodes };
        Quotas {
            workspace: quota,
            home: quota,
            scratch: quota,
        }
    }

    #[test]
    fn measures_blocks_and_inodes_and_stops_at_the_limit() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("sub")).expect("mkdir");
        std::fs::write(dir.path().join("sub/a"), vec![1u8; 100_000]).expect("write");
        std::fs::hard_link(dir.path().join("sub/a"), dir.path().join("b")).expect("link");
        let usage = measure(dir.path(), UNBOUNDED);
        assert_eq!(usage.inodes, 2, "the folder and the file, its link once");
        assert!(usage.bytes >= 100_000, "{usage:?}");
        for i in 0..50 {
            std::fs::write(dir.path().join(format!("f{i}")), b"").expect("write");
        }
        let stopped = measure(
            dir.path(),
            Usage {
                bytes: u64::MAX,
                inodes: 10,
            },
        );
        assert_eq!(stopped.inodes, 11, "the walk stops one past the limit");
    }

    #[test]
    fn the_workspace_quota_is_growth_and_writes_past_it_are_refused() {
        let workspace = tempfile::tempdir().expect("tempdir");
        std::fs::write(workspace.path().join("big"), vec![1u8; 200_000]).expect("write");
        let guard = Guard::new(workspace.path(), None, &quotas(100_000, 100));
        assert_eq!(guard.settle(), None, "what was there at start is free");
        assert!(guard.admit_write(10_000).is_ok());
        let refused = guard.admit_write(150_000).expect_err("past the limit");
        assert!(
            refused.to_string().contains("nothing was written"),
            "{refused}"
        );
        std::fs::write(workspace.path().join("more"), vec![1u8; 150_000]).expect("write");
        let over = guard.settle().expect("over");
        assert!(over.contains("the workspace grew by"), "{over}");
        assert!(guard.admit_write(1).is_err(), "refused while over");
        std::fs::remove_file(workspace.path().join("more")).expect("rm");
        assert_eq!(guard.settle(), None);
        assert!(guard.admit_write(1).is_ok(), "allowed again once under");
    }

    #[test]
    fn the_watchdog_tolerates_shrinking_but_not_growing_when_over() {
        let workspace = tempfile::tempdir().expect("tempdir");
        let home = tempfile::tempdir().expect("home");
        let guard = Guard::new(workspace.path(), Some(home.path()), &quotas(1 << 20, 10));
        for i in 0..20 {
            std::fs::write(home.path().join(format!("f{i}")), b"").expect("write");
        }
        let over = guard.settle().expect("the home is over");
        assert!(over.contains("the guest's home"), "{over}");
        // Over already: a command that removes files is left alone...
        std::fs::remove_file(home.path().join("f0")).expect("rm");
        assert_eq!(guard.watch(), None);
        // ...one that adds more is not.
        for i in 20..30 {
            std::fs::write(home.path().join(format!("f{i}")), b"").expect("write");
        }
        assert!(guard.watch().is_some());
    }

    #[test]
    fn intervals_follow_the_walk() {
        assert_eq!(next_interval(Duration::ZERO), MIN_INTERVAL);
        assert_eq!(
            next_interval(Duration::from_millis(100)),
            Duration::from_millis(500)
        );
        assert_eq!(next_interval(Duration::from_secs(10)), MAX_INTERVAL);
    }
}
