//! Memory and process-count bounds for everything the guest runs.
//!
//! A cgroup bounds the guest as a whole: cgroup v2 where this process may
//! create a group with the `memory` and `pids` controllers (a child of its
//! own, or of the nearest ancestor delegated to its user, as systemd's
//! `user@UID.service` is), else the v1 `memory` and `pids` hierarchies.
//! Without a writable cgroup, `setrlimit` bounds each process's address
//! space, and the process count of the whole guest: since Linux 5.14
//! `RLIMIT_NPROC` counts the processes of the uid *in the guest's own user
//! namespace*, which only the guest's processes belong to. The kernel does
//! not apply it when that uid is host root; both gaps are reported as
//! warnings.
//!
//! The cgroup is made by the outer process before it enters the namespaces
//! and removed by it when the guest has exited; folders that a killed guest
//! left behind are swept on the next start.

use crate::spec::Limits;
use crate::sys;
use std::io;
use std::path::{Path, PathBuf};

const PREFIX: &str = "cortex-guest-";

/// Cgroup folders this guest created, innermost last.
pub(crate) struct Cgroup {
    dirs: Vec<PathBuf>,
    pub kind: &'static str,
}

impl Cgroup {
    /// Try v2, then v1. `None` when neither is writable.
    pub(crate) fn create(limits: &Limits) -> Option<Cgroup> {
        let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
        if let Some(cgroup) = v2(&own, &mounts, limits) {
            return Some(cgroup);
        }
        v1(&own, &mounts, limits)
    }

    /// Leave the cgroup and remove it (the guest has exited).
    pub(crate) fn remove(self) {
        for dir in self.dirs.iter().rev() {
            if let Some(parent) = dir.parent() {
                let _ = std::fs::write(parent.join("cgroup.procs"), std::process::id().to_string());
            }
            let _ = std::fs::remove_dir(dir);
        }
    }
}

fn v2(own: &str, mounts: &str, limits: &Limits) -> Option<Cgroup> {
    let relative = own.lines().find_map(|l| l.strip_prefix("0::"))?;
    let root = mount_point(mounts, |fstype, _| fstype == "cgroup2")?;
    let own_dir = root.join(relative.trim_start_matches('/'));
    let parent = delegated_parent(&root, &own_dir, |dir| {
        let controllers =
            std::fs::read_to_string(dir.join("cgroup.subtree_control")).unwrap_or_default();
        let enabled = |name| controllers.split_whitespace().any(|c| c == name);
        // Moving this process needs write access to the common ancestor's
        // `cgroup.procs`; opening it for writing checks that, writing nothing.
        enabled("memory")
            && enabled("pids")
            && std::fs::OpenOptions::new()
                .write(true)
                .open(dir.join("cgroup.procs"))
                .is_ok()
    })?;
    let dir = make_dir(&parent)?;
    let ok = sys::write_file(
        &path_str(&dir, "memory.max"),
        &limits.memory_bytes.to_string(),
    )
    .is_ok()
        && sys::write_file(
            &path_str(&dir, "pids.max"),
            &limits.max_processes.to_string(),
        )
        .is_ok()
        && enter(&dir).is_ok();
    let _ = sys::write_file(&path_str(&dir, "memory.swap.max"), "0");
    finish(vec![dir], ok, "cgroup v2")
}

/// Our own cgroup when it may have children with the controllers, else the
/// nearest ancestor that may (a child there is a sibling of our leaf, as a
/// systemd user session delegates `user@UID.service`), never above `root`.
fn delegated_parent(root: &Path, own: &Path, usable: impl Fn(&Path) -> bool) -> Option<PathBuf> {
    own.ancestors()
        .take_while(|dir| dir.starts_with(root))
        .find(|dir| usable(dir))
        .map(Path::to_path_buf)
}

fn v1(own: &str, mounts: &str, limits: &Limits) -> Option<Cgroup> {
    let mut dirs = Vec::new();
    let mut ok = true;
    for (controller, settings) in [
        ("pids", vec![("pids.max", limits.max_processes.to_string())]),
        (
            "memory",
            vec![
                ("memory.limit_in_bytes", limits.memory_bytes.to_string()),
                (
                    "memory.memsw.limit_in_bytes",
                    limits.memory_bytes.to_string(),
                ),
            ],
        ),
    ] {
        let Some(dir) = v1_dir(own, mounts, controller) else {
            ok = false;
            break;
        };
        dirs.push(dir.clone());
        // memsw exists only with swap accounting; the first setting is the one that matters.
        for (index, (file, value)) in settings.iter().enumerate() {
            if sys::write_file(&path_str(&dir, file), value).is_err() && index == 0 {
                ok = false;
            }
        }
        ok = ok && enter(&dir).is_ok();
    }
    finish(dirs, ok, "cgroup v1")
}

fn v1_dir(own: &str, mounts: &str, controller: &str) -> Option<PathBuf> {
    let relative = own.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, names, path) = (parts.next()?, parts.next()?, parts.next()?);
        names.split(',').any(|n| n == controller).then_some(path)
    })?;
    let root = mount_point(mounts, |fstype, options| {
        fstype == "cgroup" && options.split(',').any(|o| o == controller)
    })?;
    make_dir(&root.join(relative.trim_start_matches('/')))
}

fn finish(dirs: Vec<PathBuf>, ok: bool, kind: &'static str) -> Option<Cgroup> {
    let cgroup = Cgroup { dirs, kind };
    if ok {
        Some(cgroup)
    } else {
        cgroup.remove();
        None
    }
}

/// Sweep what killed guests left, then make ours.
fn make_dir(parent: &Path) -> Option<PathBuf> {
    if let Ok(entries) = std::fs::read_dir(parent) {
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().starts_with(PREFIX) {
                // Fails harmlessly while a live guest is in it.
                let _ = std::fs::remove_dir(entry.path());
            }
        }
    }
    let dir = parent.join(format!("{PREFIX}{}", std::process::id()));
    std::fs::create_dir(&dir).ok()?;
    Some(dir)
}

fn enter(dir: &Path) -> io::Result<()> {
    sys::write_file(
        &path_str(dir, "cgroup.procs"),
        &std::process::id().to_string(),
    )
}

fn path_str(dir: &Path, file: &str) -> String {
    dir.join(file).display().to_string()
}

/// The mount point of the first mount whose fstype and super options match.
fn mount_point(mountinfo: &str, matches: impl Fn(&str, &str) -> bool) -> Option<PathBuf> {
    mountinfo.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        let mount_point = left.split(' ').nth(4)?;
        let mut right = right.split(' ');
        let fstype = right.next()?;
        let _source = right.next()?;
        let options = right.next().unwrap_or("");
        matches(fstype, options).then(|| PathBuf::from(mount_point))
    })
}

/// The bounds without a cgroup: each process's address space, and the
/// guest's process count (`RLIMIT_NPROC`, counted in the guest's user
/// namespace). Returns the warnings that say what is not bounded.
pub(crate) fn rlimits(limits: &Limits, host_uid: libc::uid_t) -> io::Result<Vec<String>> {
    sys::set_rlimit(libc::RLIMIT_AS, limits.memory_bytes)?;
    sys::set_rlimit(libc::RLIMIT_NPROC, limits.max_processes)?;
    let mut warnings = vec![format!(
        "memory bounded per process ({} MiB of address space each) by the kernel, and for the \
         whole guest by the agent's watch (resident memory and /tmp, /var/tmp, /dev/shm summed \
         every 0.2 s, every command killed past {} MiB): no writable cgroup (no delegated \
         cgroup v2 subtree and no cgroup v1 access)",
        limits.memory_bytes >> 20,
        limits.memory_bytes >> 20
    )];
    if host_uid == 0 {
        warnings.push(
            "process count not bounded: running as root without a writable cgroup".to_owned(),
        );
    }
    Ok(warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
30 25 0:26 / /sys/fs/cgroup/pids rw,relatime shared:12 - cgroup cgroup rw,pids
31 25 0:27 / /sys/fs/cgroup/memory rw,relatime shared:13 - cgroup cgroup rw,memory
32 25 0:28 / /sys/fs/cgroup/unified rw,relatime shared:14 - cgroup2 cgroup2 rw";

    #[test]
    fn finds_mount_points_by_type_and_controller() {
        assert_eq!(
            mount_point(MOUNTINFO, |t, o| t == "cgroup"
                && o.split(',').any(|x| x == "memory")),
            Some(PathBuf::from("/sys/fs/cgroup/memory"))
        );
        assert_eq!(
            mount_point(MOUNTINFO, |t, _| t == "cgroup2"),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
        assert_eq!(mount_point(MOUNTINFO, |t, _| t == "nfs"), None);
    }

    #[test]
    fn a_delegated_ancestor_is_used_when_the_own_group_is_a_leaf() {
        let root = Path::new("/sys/fs/cgroup");
        let own = root.join("user.slice/user-1000.slice/user@1000.service/app.slice/x.scope");
        let delegated = root.join("user.slice/user-1000.slice/user@1000.service");
        assert_eq!(
            delegated_parent(root, &own, |dir| dir == delegated),
            Some(delegated.clone())
        );
        // The own group first, when it qualifies.
        assert_eq!(delegated_parent(root, &own, |_| true), Some(own.clone()));
        // Never above the mount point.
        assert_eq!(
            delegated_parent(root, &own, |dir| !dir.starts_with(root)),
            None
        );
    }
}
