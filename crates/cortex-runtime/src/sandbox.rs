//! `local`: the guest agent inside the local sandbox (see `cortex-sandbox`),
//! the default provider. The agent is started as `PROGRAM ARGS… --root WS
//! --sandbox SPEC` and enters the sandbox itself before it serves.
//!
//! Policy `full-access` starts the same agent without a sandbox: an ordinary
//! process, which `runtime.attached` says plainly.

use crate::process::launch;
use crate::{Guest, GuestProvider, GuestSpec, RuntimeError};
use cortex_protocol::{NetworkPolicy, SandboxPolicy};
use cortex_sandbox::{Limits, Quotas, SandboxSpec, guest_home};
use std::ffi::OsString;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The `local` provider: the agent as a child process that enters the local
/// sandbox itself (or, with policy `full-access`, an ordinary child process).
#[derive(Debug, Clone)]
pub struct SandboxProvider {
    /// The agent's executable: a path, or a bare name looked up in `PATH`.
    pub program: PathBuf,
    /// Arguments before the ones the provider adds (`--die-with PID --root
    /// WORKSPACE --sandbox SPEC`); for the CLI binary, `guest`.
    pub args: Vec<String>,
    /// Where each repository's private home lives (`<homes>/<name>-<hash>`,
    /// the hash of the repository's path *and* identity: a repository
    /// deleted and another made at the same path gets a fresh home), so
    /// tool caches survive between sessions. A server's principals each
    /// get a folder of their own below it
    /// ([`GuestProvider::for_principal`]).
    pub homes: PathBuf,
    /// Host paths the guest may read besides the system folders.
    pub read_only: Vec<PathBuf>,
    /// Host paths the guest may change (`[guest] read_write`).
    pub read_write: Vec<PathBuf>,
    /// Host folders hidden besides `/root`, `/home` and the usual places:
    /// [`SandboxProvider::new`] adds the harness's own home, data and config
    /// folders wherever they are.
    pub hide: Vec<PathBuf>,
    /// Memory and process limits of the sandbox.
    pub limits: Limits,
    /// Disk quotas: the workspace's growth, the home, the private tmpfs.
    pub quotas: Quotas,
    /// `[sandbox] git_write`: the model may change the repository's
    /// metadata (commit, branch). Off: the git folder is read-only.
    pub git_write: bool,
    /// Where isolated copies (`--workspace copy`) live: a workspace under it
    /// is Cortex's own clone, whose git folder the model may change.
    pub copies: Option<PathBuf>,
}

impl SandboxProvider {
    /// A provider with nothing extra visible or writable, default limits,
    /// a read-only git folder, and the harness's own home, config, data,
    /// cache and runtime folders (from `HOME` and `XDG_*`) hidden. `homes`
    /// need not exist yet.
    pub fn new(program: PathBuf, args: Vec<String>, homes: PathBuf) -> SandboxProvider {
        // Wherever they are, and if an attached tree contains them: the
        // harness's home, config, data, cache and runtime folders.
        let hide = [
            "HOME",
            "XDG_DATA_HOME",
            "XDG_CONFIG_HOME",
            "XDG_CACHE_HOME",
            "XDG_RUNTIME_DIR",
        ]
        .iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .filter(|path| path.is_absolute() && hideable(path))
        .collect();
        SandboxProvider {
            program,
            args,
            homes,
            read_only: Vec::new(),
            read_write: Vec::new(),
            hide,
            limits: Limits::default(),
            quotas: Quotas::default(),
            git_write: false,
            copies: None,
        }
    }

    fn sandbox_spec(
        &self,
        spec: &GuestSpec,
        workspace: PathBuf,
    ) -> Result<SandboxSpec, RuntimeError> {
        let home = self
            .homes
            .join(home_name(&workspace, &repository_identity(&workspace)));
        // Homes and their folder are the user's alone (`0700`); the guest's
        // uid inside maps to the user's, so it still owns its home.
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&home)
            .map_err(|e| RuntimeError::Start {
                program: self.program.display().to_string(),
                reason: format!("cannot create the guest's home {}: {e}", home.display()),
            })?;
        // A home an older version made readable by others is tightened.
        if std::fs::symlink_metadata(&home)
            .is_ok_and(|m| m.is_dir() && m.permissions().mode() & 0o077 != 0)
        {
            let _ = std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o700));
        }
        let git_writable = self.git_write
            || self
                .copies
                .as_ref()
                .and_then(|copies| copies.canonicalize().ok())
                .is_some_and(|copies| workspace.starts_with(copies));
        let writable = spec.policy == SandboxPolicy::WorkspaceWrite && spec.writable;
        Ok(SandboxSpec {
            git_writable,
            workspace,
            workspace_writable: writable,
            protected: cortex_tools::PROTECTED_PATHS
                .iter()
                .map(PathBuf::from)
                .collect(),
            home: Some(home),
            // A read-only session leaves nothing in the home (a planted
            // `.bashrc` or cache) that a later, writable session would use.
            home_writable: writable,
            hide: self.hide.clone(),
            read_only: self.read_only.clone(),
            read_write: self.read_write.clone(),
            network: spec.network == NetworkPolicy::On,
            limits: self.limits,
            quotas: self.quotas,
        })
    }
}

#[async_trait::async_trait]
impl GuestProvider for SandboxProvider {
    fn name(&self) -> &'static str {
        "local"
    }

    async fn start(&self, spec: &GuestSpec) -> Result<Guest, RuntimeError> {
        let mut args: Vec<OsString> = self.args.iter().map(OsString::from).collect();
        if spec.policy == SandboxPolicy::FullAccess {
            return launch(&self.program, args, spec, &spec.env).await;
        }
        crate::process::check_workspace(&self.program.display().to_string(), spec)?;
        let workspace = spec.workspace.canonicalize()?;
        let sandbox = self.sandbox_spec(spec, workspace)?;
        let json = serde_json::to_string(&sandbox)
            .map_err(|e| RuntimeError::Protocol(format!("cannot encode the sandbox: {e}")))?;
        args.push("--sandbox".into());
        args.push(json.into());
        let home = guest_home().display().to_string();
        let mut env: Vec<(String, String)> = spec
            .env
            .iter()
            .filter(|(name, _)| name != "HOME" && name != GIT_OPTIONAL_LOCKS)
            .cloned()
            .chain([("HOME".to_owned(), home)])
            .collect();
        if !sandbox.git_writable {
            // `git status` would refresh the index under `index.lock`, which
            // a read-only git folder refuses; this makes it skip that.
            env.push((GIT_OPTIONAL_LOCKS.to_owned(), "0".to_owned()));
        }
        launch(&self.program, args, spec, &env).await
    }

    /// The same provider with the homes in `<homes>/principals/<name>-<hash>`:
    /// the principal's name is a client's word, so the folder's name keeps
    /// only its plain characters and adds a hash of all of it (no `..`, no
    /// `/`, and two names never share a folder).
    fn for_principal(&self, principal: &str) -> Option<std::sync::Arc<dyn GuestProvider>> {
        let mut scoped = self.clone();
        scoped.homes = self
            .homes
            .join(PRINCIPALS)
            .join(principal_folder(principal));
        Some(std::sync::Arc::new(scoped))
    }
}

/// The folder of [`SandboxProvider::homes`] that holds the principals'
/// own folders of homes (no repository's home is named exactly this).
const PRINCIPALS: &str = "principals";

/// `alice-3f2a…`: readable, and unique per principal name.
fn principal_folder(principal: &str) -> String {
    let name: String = principal
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(40)
        .collect();
    format!(
        "{}-{:016x}",
        if name.is_empty() { "principal" } else { &name },
        fnv1a(principal.as_bytes().iter().copied())
    )
}

/// FNV-1a: stable across runs and builds, unlike std's hasher.
fn fnv1a(bytes: impl Iterator<Item = u8>) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

const GIT_OPTIONAL_LOCKS: &str = "GIT_OPTIONAL_LOCKS";

/// A folder the sandbox may cover with an empty tmpfs: never `/` or a system
/// folder (a `HOME=/` would otherwise hide everything).
fn hideable(path: &Path) -> bool {
    const SYSTEM: &[&str] = &[
        "/", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/opt", "/var", "/tmp", "/proc",
        "/sys", "/dev",
    ];
    !SYSTEM
        .iter()
        .any(|system| path == Path::new(system) || Path::new(system).starts_with(path))
}

/// What tells this repository from another that once lived at the same
/// path: its root folder's device, inode and birth time (to the nanosecond,
/// where the filesystem records it; a reused inode number alone would not
/// tell them apart). Empty when the folder cannot be read.
fn repository_identity(workspace: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::metadata(workspace) else {
        return String::new();
    };
    let born = meta
        .created()
        .ok()
        .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |since| since.as_nanos());
    format!("{}:{}:{born}", meta.dev(), meta.ino())
}

/// `calc-3f2a…`: readable, and unique per repository path and identity.
fn home_name(workspace: &Path, identity: &str) -> String {
    let path = workspace.as_os_str().as_encoded_bytes();
    let hash = fnv1a(path.iter().chain(b"\0").chain(identity.as_bytes()).copied());
    let name: String = workspace
        .file_name()
        .map(|n| {
            n.to_string_lossy()
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .take(40)
                .collect()
        })
        .unwrap_or_default();
    format!(
        "{}-{hash:016x}",
        if name.is_empty() { "root" } else { &name }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn homes_are_per_repository_and_stable() {
        let a = home_name(Path::new("/src/calc"), "1:2:3");
        assert!(a.starts_with("calc-"), "{a}");
        assert_eq!(a, home_name(Path::new("/src/calc"), "1:2:3"));
        assert_ne!(a, home_name(Path::new("/other/calc"), "1:2:3"));
        assert_ne!(a, home_name(Path::new("/src/calc"), "1:2:4"));
        assert!(home_name(Path::new("/"), "").starts_with("root-"));
    }

    #[test]
    fn a_repository_made_again_at_the_same_path_is_another_identity() {
        let parent = tempfile::tempdir().expect("tempdir");
        let path = parent.path().join("calc");
        std::fs::create_dir(&path).expect("mkdir");
        let first = repository_identity(&path);
        assert_eq!(first, repository_identity(&path), "stable while it lives");
        std::fs::remove_dir(&path).expect("rmdir");
        std::fs::create_dir(&path).expect("mkdir again");
        let second = repository_identity(&path);
        assert!(!first.is_empty());
        assert_ne!(first, second, "the same path, another repository");
        assert_ne!(home_name(&path, &first), home_name(&path, &second));
    }

    #[test]
    fn principals_get_folders_of_their_own() {
        let alice = principal_folder("alice");
        assert!(alice.starts_with("alice-"), "{alice}");
        assert_eq!(alice, principal_folder("alice"));
        assert_ne!(alice, principal_folder("bob"));
        for odd in ["..", ".", "a/b", ""] {
            let folder = principal_folder(odd);
            assert!(
                !folder.contains('/') && !folder.starts_with('.'),
                "{folder}"
            );
        }
        assert_ne!(principal_folder(".."), principal_folder("."));
        let provider = SandboxProvider::new("agent".into(), Vec::new(), "/data/homes".into());
        assert!(provider.for_principal("alice").is_some());
    }

    #[test]
    fn system_folders_are_never_hidden() {
        assert!(!hideable(Path::new("/")));
        assert!(!hideable(Path::new("/usr")));
        assert!(hideable(Path::new("/root")));
        assert!(hideable(Path::new("/home/ann")));
        assert!(hideable(Path::new("/var/lib/cortex")));
    }
}
