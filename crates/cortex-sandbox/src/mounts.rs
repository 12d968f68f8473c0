//! The guest's view of the filesystem, built inside its own mount namespace.
//!
//! The root is an empty tmpfs with only what the allow-list names
//! ([`root`]): the system trees read-only with secrets hidden, a private
//! `/tmp`, `/var/tmp` and `/dev/shm`, a minimal read-only `/dev`, a fresh
//! `/proc` masked as Docker masks it. Then the workspace, the guest's home,
//! the repository's metadata and the configured extra paths are attached at
//! their own paths from copies taken (`open_tree`) before the switch, and
//! the protected paths are made read-only. Nothing else of the host exists
//! inside: no other home, no `/run`, `/var/lib`, `/mnt`, no harness folder.

use crate::git;
use crate::root::{self, mount_point, tmpfs};
use crate::spec::{Quota, SandboxSpec, guest_home};
use crate::sys::{self, MOUNT_ATTR_NODEV, MOUNT_ATTR_NOSUID, MOUNT_ATTR_RDONLY, MountRef};
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// Private, writable, empty.
const PRIVATE_TMP: &[&str] = &["/tmp", "/var/tmp"];
/// No `tty`: the guest has no controlling terminal, and must not reach the
/// user's through its name either.
const DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom"];

/// A detached mount and where it goes.
struct Pending {
    mount: OwnedFd,
    target: PathBuf,
    writable: bool,
    is_dir: bool,
}

/// Build the view. Returns warnings for layers that could not be applied.
/// `memory_watched`: no cgroup bounds the guest's memory, so what the
/// scratch tmpfs hold is bounded by their sizes alone (see
/// [`scratch_quota`]).
pub(crate) fn build(spec: &SandboxSpec, memory_watched: bool) -> io::Result<Vec<String>> {
    let mut warnings = Vec::new();
    // Nothing we mount may propagate back to the host.
    sys::mount(
        "none",
        Path::new("/"),
        None,
        libc::MS_REC | libc::MS_PRIVATE,
        None,
    )?;

    // Everything taken from the host's view, before it goes.
    let git = git::metadata(&spec.workspace);
    warnings.extend(git.warnings.iter().cloned());
    let nested = nested_metadata(spec, &mut warnings);
    let includes = git::includes(&git, &spec.workspace, !spec.git_writable);
    let hook_folders = git::hook_folders(&git, &spec.workspace, !spec.git_writable);
    let mut pending = take_pending(spec, &git, &mut warnings)?;
    let devices: Vec<(OwnedFd, PathBuf)> = DEVICES
        .iter()
        .map(|name| Path::new("/dev").join(name))
        .filter(|path| path.exists())
        .map(|path| Ok((sys::clone_mount(&path)?, path)))
        .collect::<io::Result<_>>()?;
    let system = root::System::take(spec.network)?;

    root::switch(spec.network, &mut warnings)?;
    let scratch_bound = scratch_quota(spec, memory_watched);
    if scratch_bound.bytes < spec.quotas.scratch.bytes {
        warnings.push(format!(
            "/tmp, /var/tmp and /dev/shm hold at most {} MiB each (a third of the memory \
             limit, not {} MiB): no cgroup counts what they hold as the guest's memory",
            scratch_bound.bytes >> 20,
            spec.quotas.scratch.bytes >> 20
        ));
    }
    let scratch = scratch_options(&scratch_bound);
    private_dev(devices, &scratch)?;
    root::attach_system(system)?;
    root::mask_proc()?;
    std::fs::create_dir_all("/var")?;
    for dir in PRIVATE_TMP.iter().map(Path::new) {
        std::fs::create_dir_all(dir)?;
        tmpfs(dir, &scratch, 0)?;
    }
    // Parents before children: a workspace under /tmp goes into the
    // private /tmp, an extra path under the workspace on top of it.
    pending.sort_by_key(|item| item.target.components().count());
    for item in &pending {
        mount_point(&item.target, item.is_dir)?;
        // No set-uid program and no device node works from the workspace,
        // the home or an extra path, whoever put it there.
        let (set, clear) = if item.writable {
            (MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, MOUNT_ATTR_RDONLY)
        } else {
            (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0)
        };
        sys::set_mount_attrs(MountRef::Fd(&item.mount), set, clear, false)?;
        sys::attach(&item.mount, &item.target)?;
    }
    std::fs::create_dir_all(guest_home())?;
    hide_harness_folders(spec)?;
    if spec.workspace_writable {
        if !spec.git_writable {
            for path in &git.paths {
                protect(path, false)?;
            }
            if git.paths.is_empty() {
                protect(&spec.workspace.join(".git"), false)?;
            }
        } else {
            protect_redirections(&git, &spec.workspace)?;
        }
        for relative in &spec.protected {
            protect(&spec.workspace.join(relative), false)?;
        }
        // The user's own nested repositories stay as they are, whatever
        // `git_write` says (it is about the workspace's repository), and
        // so do the files its config includes.
        for path in &nested {
            protect(path, false)?;
        }
        for path in &includes {
            protect_file(path, &spec.workspace)?;
        }
        for path in &hook_folders {
            protect_folder(path, &spec.workspace)?;
        }
    }
    root::seal()?;
    Ok(warnings)
}

/// Folders of a writable git folder pinned (each made a mount point of its
/// own, still writable) because a protected file or folder is inside them:
/// a folder that holds a mount point can still be renamed, taking the
/// protection with it, but a mount point cannot (`EBUSY`).
const PINNED: &[&str] = &["", "objects", "objects/info"];

/// Folders of a writable git folder made read-only whole: a linked
/// worktree's `gitdir`, `commondir` and `config.worktree`, and a
/// submodule's config and hooks, each of which git reads when run in that
/// worktree or submodule (and `git status` here recurses into submodules).
/// A missing one is an empty read-only placeholder, so none can be made.
const REDIRECTING_FOLDERS: &[&str] = &["worktrees", "modules"];

/// With `git_write`: a model that may commit may not redirect git's
/// configuration, hooks or objects elsewhere. The git folders in the
/// workspace are pinned ([`PINNED`]) so they cannot be moved aside and
/// rebuilt; `config.worktree` and `objects/info/alternates` are read-only
/// (empty placeholders where missing: git reads them as no setting), and so
/// is `commondir` where it exists (an empty one is an error to git, so a
/// missing one cannot be a placeholder: the harness renames one that
/// appears after the turn) and the [`REDIRECTING_FOLDERS`]; a `.git` file
/// stays read-only, so it cannot be pointed at a planted git folder.
/// (`hooks` and `config` are among the spec's `protected` paths.)
fn protect_redirections(git: &git::Metadata, workspace: &Path) -> io::Result<()> {
    for path in git.paths.iter().filter(|p| p.starts_with(workspace)) {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            continue;
        };
        if meta.is_file() {
            protect(path, true)?;
            continue;
        }
        if !meta.is_dir() {
            continue;
        }
        for folder in PINNED {
            pin(&path.join(folder))?;
        }
        for file in ["config.worktree", "objects/info/alternates"] {
            protect_file(&path.join(file), workspace)?;
        }
        let commondir = path.join("commondir");
        if std::fs::symlink_metadata(&commondir).is_ok() {
            protect(&commondir, true)?;
        }
        for folder in REDIRECTING_FOLDERS {
            protect_folder(&path.join(folder), workspace)?;
        }
    }
    Ok(())
}

/// Make the folder at `path` a mount point of its own with the same
/// (writable) access, so it cannot be renamed or removed; nothing when it
/// is missing or not a folder (a link is left alone, as in [`protect`]).
fn pin(path: &Path) -> io::Result<()> {
    if !std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        return Ok(());
    }
    let copy = sys::clone_mount(path)?;
    sys::set_mount_attrs(
        MountRef::Fd(&copy),
        MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
        0,
        false,
    )?;
    sys::attach(&copy, path)
}

/// Copies of the workspace, the home, the metadata outside the workspace
/// and the extra paths, taken from the host's view.
fn take_pending(
    spec: &SandboxSpec,
    git: &git::Metadata,
    warnings: &mut Vec<String>,
) -> io::Result<Vec<Pending>> {
    let mut pending = vec![Pending {
        mount: sys::clone_mount(&spec.workspace)?,
        target: spec.workspace.clone(),
        writable: spec.workspace_writable,
        is_dir: true,
    }];
    if let Some(home) = &spec.home {
        pending.push(Pending {
            mount: sys::clone_mount(home)?,
            target: guest_home(),
            writable: spec.home_writable,
            is_dir: true,
        });
    }
    // A linked worktree's or a submodule's metadata outside the workspace
    // is visible (read-only) so that git works in the guest.
    let outside_git = git.paths.iter().filter(|p| !p.starts_with(&spec.workspace));
    let extras = spec
        .read_only
        .iter()
        .chain(outside_git)
        .map(|path| (path, false))
        .chain(spec.read_write.iter().map(|path| (path, true)));
    for (path, writable) in extras {
        match std::fs::metadata(path) {
            Ok(meta) => pending.push(Pending {
                mount: sys::clone_mount(path)?,
                target: path.clone(),
                writable,
                is_dir: meta.is_dir(),
            }),
            Err(e) => warnings.push(format!("extra path {} skipped: {e}", path.display())),
        }
    }
    Ok(pending)
}

/// Cortex's own folders (config, data, runtime) that an attached tree
/// happens to contain are covered by an empty read-only folder. One that
/// contains the workspace only exists inside as the path to it.
fn hide_harness_folders(spec: &SandboxSpec) -> io::Result<()> {
    for dir in &spec.hide {
        if spec.workspace.starts_with(dir) || guest_home().starts_with(dir) {
            continue;
        }
        if std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
            tmpfs(dir, "0755", libc::MS_RDONLY)?;
        }
    }
    Ok(())
}

/// Nested metadata mounted read-only at most (each is one mount).
const MAX_NESTED_PROTECTED: usize = 256;

/// The nested repositories' metadata and bare repositories already in the
/// workspace (see [`crate::nested`]), to make read-only; a warning when
/// there are more than can be mounted or the tree was too large to scan.
fn nested_metadata(spec: &SandboxSpec, warnings: &mut Vec<String>) -> Vec<PathBuf> {
    if !spec.workspace_writable {
        return Vec::new();
    }
    let scan = crate::nested::scan(&spec.workspace);
    if !scan.complete {
        warnings.push(format!(
            "the workspace has more than {} folders; nested repositories beyond them are not read-only in the guest (the harness still neutralises any the model changes)",
            crate::nested::MAX_SCAN_FOLDERS
        ));
    }
    if scan.found.len() > MAX_NESTED_PROTECTED {
        warnings.push(format!(
            "{} nested repositories; only {MAX_NESTED_PROTECTED} are read-only in the guest (the harness still neutralises any the model changes)",
            scan.found.len()
        ));
    }
    scan.found
        .into_iter()
        .take(MAX_NESTED_PROTECTED)
        .map(|found| spec.workspace.join(found.path))
        .collect()
}

/// [`protect`] for a file: a missing one gets an empty file as its
/// placeholder (git reads an empty include as no settings), made only when
/// its folder really is in the workspace (not reached through a link).
fn protect_file(path: &Path, workspace: &Path) -> io::Result<()> {
    if let Err(e) = std::fs::symlink_metadata(path)
        && e.kind() == io::ErrorKind::NotFound
    {
        let inside = path
            .parent()
            .and_then(|parent| parent.canonicalize().ok())
            .is_some_and(|parent| parent.starts_with(workspace));
        if !inside {
            return Ok(());
        }
    }
    protect(path, true)
}

/// [`protect`] for a folder: a missing one (and its missing parents) gets
/// empty folders as its placeholder (git finds no hook there, and tracks no
/// empty folder), made only when the nearest folder that exists really is
/// in the workspace (not reached through a link out of it).
fn protect_folder(path: &Path, workspace: &Path) -> io::Result<()> {
    if std::fs::symlink_metadata(path).is_err() {
        let inside = path
            .ancestors()
            .skip(1)
            .find(|dir| std::fs::symlink_metadata(dir).is_ok())
            .and_then(|dir| dir.canonicalize().ok())
            .is_some_and(|dir| dir.starts_with(workspace));
        if !inside {
            return Ok(());
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
    }
    protect(path, false)
}

/// A protected path stays read-only inside a writable workspace. Symlinks
/// are left alone: what they point to is either outside the workspace
/// (read-only already) or inside it (protected or not on its own terms). A
/// missing path gets an empty placeholder as its mount point (a file for a
/// `config` or when `as_file`, else a folder), unless its parent is
/// read-only already.
fn protect(path: &Path, as_file: bool) -> io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => return Ok(()),
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let made = if as_file || path.file_name().is_some_and(|name| name == "config") {
                std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(path)
                    .map(drop)
            } else {
                std::fs::create_dir(path)
            };
            match made {
                Ok(()) => {}
                // Another guest of the same workspace made it meanwhile (a
                // session's MCP servers start theirs together): protect
                // what is there now, on the same terms as above.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    if std::fs::symlink_metadata(path)?.file_type().is_symlink() {
                        return Ok(());
                    }
                }
                // The parent is read-only (protected), missing or a file (a
                // worktree's `.git`): nothing can be created there.
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::ReadOnlyFilesystem
                            | io::ErrorKind::NotFound
                            | io::ErrorKind::NotADirectory
                    ) =>
                {
                    return Ok(());
                }
                Err(e) => {
                    return Err(io::Error::new(
                        e.kind(),
                        format!("placeholder {}: {e}", path.display()),
                    ));
                }
            }
        }
        // A parent is a file (a worktree's `.git`): nothing can be there.
        Err(e) if e.kind() == io::ErrorKind::NotADirectory => return Ok(()),
        Err(e) => return Err(e),
    }
    let copy = sys::clone_mount(path)?;
    sys::set_mount_attrs(
        MountRef::Fd(&copy),
        MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
        0,
        false,
    )?;
    sys::attach(&copy, path)
}

/// How much each private scratch tmpfs may hold. Where a cgroup bounds the
/// guest, what a tmpfs holds is charged to it like any other memory, and the
/// configured quota is the size. Without one, the agent's watch adds what
/// the three hold to the processes' resident memory, but killing processes
/// frees nothing a tmpfs holds: so the three together are sized to fit in
/// the memory limit, and what survives a kill never passes it alone.
fn scratch_quota(spec: &SandboxSpec, memory_watched: bool) -> Quota {
    let mut quota = spec.quotas.scratch;
    if memory_watched {
        let share = spec.limits.memory_bytes / PRIVATE_SCRATCH_COUNT;
        quota.bytes = quota.bytes.min(share);
    }
    quota
}

/// `/tmp`, `/var/tmp` and `/dev/shm`.
const PRIVATE_SCRATCH_COUNT: u64 = 3;

/// The mode and bounds of a private scratch tmpfs: what is written there is
/// memory, so the kernel caps it (`size=`, `nr_inodes=`) whether or not a
/// cgroup also counts it.
fn scratch_options(quota: &Quota) -> String {
    format!(
        "1777,size={},nr_inodes={}",
        quota.bytes.max(1 << 20),
        quota.inodes.max(64)
    )
}

/// `/dev` with the harmless nodes only, plus the usual links and `/dev/shm`.
fn private_dev(devices: Vec<(OwnedFd, PathBuf)>, scratch: &str) -> io::Result<()> {
    let dev = Path::new("/dev");
    std::fs::create_dir_all(dev)?;
    tmpfs(dev, "0755", 0)?;
    for (mount, path) in devices {
        std::fs::write(&path, b"")?;
        sys::set_mount_attrs(
            MountRef::Fd(&mount),
            MOUNT_ATTR_NOSUID,
            MOUNT_ATTR_RDONLY,
            false,
        )?;
        sys::attach(&mount, &path)?;
    }
    for (link, target) in [
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        std::os::unix::fs::symlink(target, dev.join(link))?;
    }
    let shm = dev.join("shm");
    std::fs::create_dir(&shm)?;
    tmpfs(&shm, scratch, 0)?;
    // Nothing new in /dev: a command's `> /dev/tty` must fail, not make a
    // file that looks like a terminal to the next command.
    sys::set_mount_attrs(
        MountRef::Path(dev),
        MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
        0,
        false,
    )
}
