//! The guest's view of the filesystem, built inside its own mount namespace.
//!
//! Everything the host has is re-mounted read-only and `nosuid`; the places
//! where secrets live (home folders, `/run`, `/mnt`, …) are covered by empty
//! tmpfs mounts; `/tmp` and `/dev` are private; then the workspace, the
//! guest's home and any extra read-only paths are attached back at their own
//! paths. Copies of those mounts are taken *before* anything is hidden, so a
//! workspace under `/root` or `/tmp` is still reachable.

use crate::spec::{SandboxSpec, guest_home};
use crate::sys::{self, MOUNT_ATTR_NODEV, MOUNT_ATTR_NOSUID, MOUNT_ATTR_RDONLY, MountRef};
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// Folders covered by an empty tmpfs when they exist.
const HIDDEN: &[&str] = &["/root", "/home", "/run", "/mnt", "/media", "/srv"];
/// Private, writable, empty.
const PRIVATE_TMP: &[&str] = &["/tmp", "/var/tmp"];
/// Device nodes the guest gets; everything else in `/dev` is absent.
/// No `tty`: the guest has no controlling terminal, and must not reach the
/// user's through its name either.
const DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom"];
/// Files that hold credentials even on a system folder.
const SECRET_FILES: &[&str] = &["/etc/shadow", "/etc/gshadow", "/etc/sudoers"];
const SECRET_DIRS: &[&str] = &["/etc/ssh", "/etc/sudoers.d"];

/// A detached mount and where it goes.
struct Pending {
    mount: OwnedFd,
    target: PathBuf,
    writable: bool,
    is_dir: bool,
}

/// Build the view. Returns warnings for layers that could not be applied.
pub(crate) fn build(spec: &SandboxSpec) -> io::Result<Vec<String>> {
    let mut warnings = Vec::new();
    // Nothing we mount may propagate back to the host.
    sys::mount(
        "none",
        Path::new("/"),
        None,
        libc::MS_REC | libc::MS_PRIVATE,
        None,
    )?;

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
            writable: true,
            is_dir: true,
        });
    }
    for path in &spec.read_only {
        match std::fs::metadata(path) {
            Ok(meta) => pending.push(Pending {
                mount: sys::clone_mount(path)?,
                target: path.clone(),
                writable: false,
                is_dir: meta.is_dir(),
            }),
            Err(e) => warnings.push(format!("read-only path {} skipped: {e}", path.display())),
        }
    }
    let devices: Vec<(OwnedFd, PathBuf)> = DEVICES
        .iter()
        .map(|name| Path::new("/dev").join(name))
        .filter(|path| path.exists())
        .map(|path| Ok((sys::clone_mount(&path)?, path)))
        .collect::<io::Result<_>>()?;
    let null_for_secrets: Vec<(OwnedFd, &str)> = SECRET_FILES
        .iter()
        .filter(|path| Path::new(path).is_file())
        .map(|path| Ok((sys::clone_mount(Path::new("/dev/null"))?, *path)))
        .collect::<io::Result<_>>()?;

    sys::set_mount_attrs(
        MountRef::Path(Path::new("/")),
        MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
        0,
        true,
    )?;

    for dir in HIDDEN
        .iter()
        .map(PathBuf::from)
        .chain(spec.hide.iter().cloned())
    {
        if is_real_dir(&dir) {
            tmpfs(&dir, "0755")?;
        }
    }
    for dir in PRIVATE_TMP {
        if is_real_dir(Path::new(dir)) {
            tmpfs(Path::new(dir), "1777")?;
        }
    }
    for dir in SECRET_DIRS {
        if is_real_dir(Path::new(dir)) {
            tmpfs(Path::new(dir), "0755")?;
        }
    }
    for (null, path) in &null_for_secrets {
        sys::attach(null, Path::new(path))?;
    }
    private_dev(devices)?;

    for item in &pending {
        if item.is_dir {
            std::fs::create_dir_all(&item.target).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("mount point {}: {e}", item.target.display()),
                )
            })?;
        } else if !item.target.exists() {
            if let Some(parent) = item.target.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&item.target, b"")?;
        }
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
    if spec.home.is_none() {
        std::fs::create_dir_all(guest_home())?;
    }
    if spec.workspace_writable {
        for relative in &spec.protected {
            protect(&spec.workspace.join(relative))?;
        }
    }

    // The host's /sys lists the host's network interfaces; a sysfs mounted
    // from inside the new network namespace lists only ours.
    if !spec.network
        && let Err(e) = sys::mount(
            "sysfs",
            Path::new("/sys"),
            Some("sysfs"),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC | libc::MS_RDONLY,
            None,
        )
    {
        warnings.push(format!("the host's /sys stays visible ({e})"));
    }
    // A fresh /proc for the new pid namespace; some container hosts mask
    // parts of theirs, which forbids this: then the guest gets none.
    let proc_flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    if let Err(e) = sys::mount("proc", Path::new("/proc"), Some("proc"), proc_flags, None) {
        warnings.push(format!("no /proc in the guest ({e})"));
        tmpfs(Path::new("/proc"), "0555")?;
    }
    Ok(warnings)
}

/// A protected path stays read-only inside a writable workspace. Symlinks
/// are left alone: what they point to is either outside the workspace
/// (read-only already) or inside it (protected or not on its own terms).
fn protect(path: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if !meta.file_type().is_symlink() => {
            let copy = sys::clone_mount(path)?;
            sys::set_mount_attrs(
                MountRef::Fd(&copy),
                MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                0,
                false,
            )?;
            sys::attach(&copy, path)
        }
        _ => Ok(()),
    }
}

fn is_real_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

fn tmpfs(target: &Path, mode: &str) -> io::Result<()> {
    sys::mount(
        "tmpfs",
        target,
        Some("tmpfs"),
        libc::MS_NOSUID | libc::MS_NODEV,
        Some(&format!("mode={mode}")),
    )
}

/// `/dev` with the harmless nodes only, plus the usual links and `/dev/shm`.
fn private_dev(devices: Vec<(OwnedFd, PathBuf)>) -> io::Result<()> {
    let dev = Path::new("/dev");
    tmpfs(dev, "0755")?;
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
    tmpfs(&shm, "1777")?;
    // Nothing new in /dev: a command's `> /dev/tty` must fail, not make a
    // file that looks like a terminal to the next command.
    sys::set_mount_attrs(
        MountRef::Path(dev),
        MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
        0,
        false,
    )
}
