//! The guest's root filesystem, built from an allow-list: a fresh tmpfs
//! becomes `/` (`pivot_root`), and only what tools need is attached to it
//! from copies of the host's mounts taken beforehand. Whatever is not listed
//! here or in the spec does not exist inside: no `/run`, `/var/lib`,
//! `/var/snap`, `/srv`, `/mnt`, `/media`, no home folder but the guest's.

use crate::sys::{self, MOUNT_ATTR_NODEV, MOUNT_ATTR_NOSUID, MOUNT_ATTR_RDONLY, MountRef};
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// System trees attached read-only (a symlink, as `/bin` → `usr/bin` on a
/// merged-`/usr` system, is made again as the same symlink).
const SYSTEM: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/etc",
];
/// Files under `/etc` that hold credentials: replaced by an empty file.
const SECRET_FILES: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/security/opasswd",
    "/etc/krb5.keytab",
    "/etc/ppp/chap-secrets",
    "/etc/ppp/pap-secrets",
    "/etc/ipsec.secrets",
    "/etc/mysql/debian.cnf",
];
/// Folders under `/etc` that hold keys or credentials: replaced by an empty
/// read-only folder.
const SECRET_DIRS: &[&str] = &[
    "/etc/ssh",
    "/etc/sudoers.d",
    "/etc/ssl/private",
    "/etc/letsencrypt",
    "/etc/wireguard",
    "/etc/NetworkManager/system-connections",
    "/etc/cortex",
];
/// `/proc` entries made read-only, as Docker does.
const PROC_READ_ONLY: &[&str] = &[
    "/proc/sys",
    "/proc/sysrq-trigger",
    "/proc/irq",
    "/proc/bus",
    "/proc/fs",
];
/// `/proc` and `/sys` entries hidden (an empty file or folder), as Docker does.
const MASKED: &[&str] = &[
    "/proc/kcore",
    "/proc/keys",
    "/proc/timer_list",
    "/proc/sched_debug",
    "/proc/latency_stats",
    "/proc/timer_stats",
    "/proc/acpi",
    "/proc/scsi",
    "/proc/asound",
    "/sys/firmware",
    "/sys/devices/virtual/powercap",
];

/// A host tree or symlink of the allow-list, taken before the switch.
enum Entry {
    Tree(OwnedFd, PathBuf, bool),
    Link(PathBuf, PathBuf),
}

/// The host's part of the guest's root, taken from the host's view.
pub(crate) struct System {
    entries: Vec<Entry>,
    /// The host's `/sys`, when the network is shared (a fresh sysfs would
    /// need a network namespace of our own).
    sys: Option<OwnedFd>,
}

impl System {
    pub(crate) fn take(network: bool) -> io::Result<System> {
        let mut entries = Vec::new();
        for path in SYSTEM.iter().map(Path::new) {
            match std::fs::symlink_metadata(path) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    entries.push(Entry::Link(path.to_path_buf(), std::fs::read_link(path)?));
                }
                Ok(meta) if meta.is_dir() => {
                    entries.push(Entry::Tree(
                        sys::clone_tree(path)?,
                        path.to_path_buf(),
                        true,
                    ));
                }
                _ => {}
            }
        }
        // A resolver file that lives outside the list (systemd-resolved's
        // under /run) is attached alone at its own path.
        if network
            && let Ok(target) = Path::new("/etc/resolv.conf").canonicalize()
            && !SYSTEM.iter().any(|dir| target.starts_with(dir))
        {
            entries.push(Entry::Tree(sys::clone_mount(&target)?, target, false));
        }
        let sys = if network {
            Some(sys::clone_tree(Path::new("/sys"))?)
        } else {
            None
        };
        Ok(System { entries, sys })
    }
}

/// Switch to an empty tmpfs root. A fresh `/proc` (and, with a network
/// namespace of our own, `/sys`) is mounted first: the kernel allows it only
/// while the host's is still in this mount namespace.
pub(crate) fn switch(network: bool, warnings: &mut Vec<String>) -> io::Result<()> {
    let staging = Path::new("/tmp");
    // Only mount points are made in the root, and it is sealed read-only
    // once built; bounded all the same.
    tmpfs(staging, "0755,size=16m,nr_inodes=4096", 0)?;
    let proc_dir = staging.join("proc");
    std::fs::create_dir(&proc_dir)?;
    let proc_flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    if let Err(e) = sys::mount("proc", &proc_dir, Some("proc"), proc_flags, None) {
        warnings.push(format!("no /proc in the guest ({e})"));
    }
    std::fs::create_dir(staging.join("sys"))?;
    if !network
        && let Err(e) = sys::mount(
            "sysfs",
            &staging.join("sys"),
            Some("sysfs"),
            proc_flags | libc::MS_RDONLY,
            None,
        )
    {
        warnings.push(format!("no /sys in the guest ({e})"));
    }
    std::env::set_current_dir(staging)?;
    sys::pivot_root_here()?;
    std::env::set_current_dir("/")
}

/// Attach the system trees read-only, hide the secrets in `/etc`, and the
/// host's `/sys` when the network is shared.
pub(crate) fn attach_system(system: System) -> io::Result<()> {
    for entry in system.entries {
        match entry {
            Entry::Link(path, target) => std::os::unix::fs::symlink(target, path)?,
            Entry::Tree(mount, path, is_dir) => attach_read_only(&mount, &path, is_dir)?,
        }
    }
    if let Some(host_sys) = system.sys {
        attach_read_only(&host_sys, Path::new("/sys"), true)?;
    }
    for file in SECRET_FILES.iter().map(Path::new) {
        if std::fs::symlink_metadata(file).is_ok_and(|m| m.is_file()) {
            hide_file(file)?;
        }
    }
    for dir in SECRET_DIRS.iter().map(Path::new) {
        if std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
            tmpfs(dir, "0755", libc::MS_RDONLY)?;
        }
    }
    Ok(())
}

/// `/proc` and `/sys` as Docker leaves them: the kernel's knobs read-only,
/// what leaks the host's memory, keys or timers hidden.
pub(crate) fn mask_proc() -> io::Result<()> {
    for path in PROC_READ_ONLY.iter().map(Path::new) {
        if let Ok(meta) = std::fs::symlink_metadata(path) {
            let mount = sys::clone_tree(path)?;
            attach_read_only(&mount, path, meta.is_dir())?;
        }
    }
    for path in MASKED.iter().map(Path::new) {
        match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.is_dir() => tmpfs(path, "0555", libc::MS_RDONLY)?,
            Ok(_) => hide_file(path)?,
            Err(_) => {}
        }
    }
    Ok(())
}

/// The root itself becomes read-only once everything is attached: nothing
/// new at the top level.
pub(crate) fn seal() -> io::Result<()> {
    sys::set_mount_attrs(
        MountRef::Path(Path::new("/")),
        MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
        0,
        false,
    )
}

/// Attach `mount` (and its submounts) read-only at `path`, made in the
/// root tmpfs if missing.
fn attach_read_only(mount: &OwnedFd, path: &Path, is_dir: bool) -> io::Result<()> {
    mount_point(path, is_dir)?;
    sys::set_mount_attrs(
        MountRef::Fd(mount),
        MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
        0,
        true,
    )?;
    sys::attach(mount, path)
}

/// Make `path` exist (a folder, or an empty file) for a mount on it.
pub(crate) fn mount_point(path: &Path, is_dir: bool) -> io::Result<()> {
    if std::fs::symlink_metadata(path).is_ok() {
        return Ok(());
    }
    let made = if is_dir {
        std::fs::create_dir_all(path)
    } else {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, b"")
    };
    made.map_err(|e| io::Error::new(e.kind(), format!("mount point {}: {e}", path.display())))
}

/// An empty file over `path` (a copy of the guest's own `/dev/null`).
fn hide_file(path: &Path) -> io::Result<()> {
    let null = sys::clone_mount(Path::new("/dev/null"))?;
    sys::set_mount_attrs(
        MountRef::Fd(&null),
        MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID,
        0,
        false,
    )?;
    sys::attach(&null, path)
}

/// A tmpfs at `target` with `mode` (which may carry further options after
/// a comma, e.g. `size=`), `nosuid,nodev` and `extra` flags.
pub(crate) fn tmpfs(target: &Path, mode: &str, extra: libc::c_ulong) -> io::Result<()> {
    sys::mount(
        "tmpfs",
        target,
        Some("tmpfs"),
        libc::MS_NOSUID | libc::MS_NODEV | extra,
        Some(&format!("mode={mode}")),
    )
}
