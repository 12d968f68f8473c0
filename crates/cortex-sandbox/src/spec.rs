//! What the sandbox is asked to build, and what it reports back.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Everything the guest needs to enter its sandbox, passed by the runtime on
/// the guest's command line as JSON. All paths are host paths; the guest sees
/// the workspace and the extra read-only paths at the same paths inside.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxSpec {
    /// The workspace, an existing folder.
    pub workspace: PathBuf,
    /// Whether the workspace is mounted writable.
    pub workspace_writable: bool,
    /// Paths relative to the workspace kept read-only even when it is
    /// writable (`.git/hooks`, `.cortex`, …). A missing one gets an empty
    /// read-only placeholder (made on the host as the mount point), so the
    /// model cannot create it either.
    #[serde(default)]
    pub protected: Vec<PathBuf>,
    /// May the model change the repository's metadata (commit, branch)? By
    /// default the whole git folder (and the folders a `.git` file leads to)
    /// is read-only in a writable workspace, and a missing `.git` is a
    /// read-only placeholder: git's configuration and hooks run on the host.
    #[serde(default)]
    pub git_writable: bool,
    /// A host folder mounted writable as the guest's `$HOME` (caches survive
    /// between sessions). `None`: an empty private home.
    #[serde(default)]
    pub home: Option<PathBuf>,
    /// Whether the home is mounted writable. Off (policy `read-only`): the
    /// session cannot plant anything there for later sessions.
    #[serde(default)]
    pub home_writable: bool,
    /// Host folders that must never be visible (Cortex's own config, data
    /// and runtime folders): covered by an empty read-only folder wherever an
    /// attached tree contains them.
    #[serde(default)]
    pub hide: Vec<PathBuf>,
    /// Host paths the guest may read (e.g. a toolchain under a hidden home).
    #[serde(default)]
    pub read_only: Vec<PathBuf>,
    /// Host paths the guest may change (`[guest] read_write`).
    #[serde(default)]
    pub read_write: Vec<PathBuf>,
    /// Share the host's network; otherwise only a private loopback.
    #[serde(default)]
    pub network: bool,
    /// Memory and process bounds: a cgroup when one can be made, else
    /// per-process rlimits (see [`Report::warnings`]).
    #[serde(default)]
    pub limits: Limits,
    /// Disk bounds: the private tmpfs sizes (enforced by the kernel) and the
    /// workspace's and home's quotas (enforced by the guest agent).
    #[serde(default)]
    pub quotas: Quotas,
}

/// A bound on one writable tree: bytes of disk (allocated blocks, so a
/// sparse file counts what it uses) and inodes (files, folders, links).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quota {
    /// Bytes of allocated disk.
    pub bytes: u64,
    /// Files, folders and links.
    pub inodes: u64,
}

/// Disk bounds for what the guest writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quotas {
    /// How much the workspace may grow over what it held when the guest
    /// started (a repository may be bigger than any fixed bound).
    pub workspace: Quota,
    /// The guest's home, absolute: it is Cortex's own folder.
    pub home: Quota,
    /// Each private tmpfs (`/tmp`, `/var/tmp`, `/dev/shm`): its `size=` and
    /// `nr_inodes=`, enforced by the kernel.
    pub scratch: Quota,
}

impl Default for Quotas {
    fn default() -> Self {
        Quotas {
            workspace: Quota {
                bytes: 8 << 30,
                inodes: 1_000_000,
            },
            home: Quota {
                bytes: 4 << 30,
                inodes: 500_000,
            },
            scratch: Quota {
                bytes: 1 << 30,
                inodes: 100_000,
            },
        }
    }
}

/// Resource bounds for everything the guest runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Memory of the whole guest (cgroup) or of each process (`RLIMIT_AS`).
    pub memory_bytes: u64,
    /// Processes and threads of the whole guest.
    pub max_processes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_bytes: 4 << 30,
            max_processes: 512,
        }
    }
}

/// Where the guest's home is inside the sandbox: `/home/cortex`, the only
/// folder of the guest's `/home`.
pub fn guest_home() -> PathBuf {
    PathBuf::from("/home/cortex")
}

/// What was actually enforced; the harness turns `warnings` into events.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// One line naming the layers in force, e.g.
    /// `namespaces(user,mnt,pid,net,ipc,uts) landlock seccomp cgroup`.
    pub layers: String,
    /// A layer that could not be applied, and why.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// How long entering took, in milliseconds (measured inside the guest).
    pub setup_ms: f64,
}
