//! The whole guest's memory, watched where no cgroup bounds it.
//!
//! Without a writable cgroup (Cortex run by an ordinary user with no
//! delegated cgroup v2 subtree), the kernel bounds memory per process only
//! (`RLIMIT_AS`): a hundred processes each under the bound can still take
//! the host's memory. So the agent sums what the guest holds — the resident
//! memory of every process of its pid namespace (which is all it can see in
//! `/proc`) and what `/tmp`, `/var/tmp` and `/dev/shm` hold (tmpfs, memory
//! too) — while any command runs, and kills every command when the sum
//! passes the guest's limit; the call that ran it says why. As with the
//! disk quotas, this is measured, not enforced by the kernel: the guest may
//! pass the limit by what it allocates within one interval (0.2 s).

use crate::state::State;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// How often the guest's memory is summed while a command runs.
const INTERVAL: Duration = Duration::from_millis(200);

/// The scratch folders, all tmpfs in the guest.
const SCRATCH: &[&str] = &["/tmp", "/var/tmp", "/dev/shm"];

/// Watches the guest's memory against `state.config.memory_watch` until the
/// agent ends; returns at once when there is nothing to watch (a cgroup
/// bounds the guest, or there is no sandbox).
pub(crate) async fn watch(state: Arc<State>) {
    let Some(limit) = state.config.memory_watch else {
        return;
    };
    loop {
        tokio::time::sleep(INTERVAL).await;
        let used = tokio::task::spawn_blocking(|| {
            crate::quota::others_running().then(|| guest_memory(Path::new("/proc")))
        })
        .await;
        let Ok(Some(used)) = used else {
            continue;
        };
        if used <= limit {
            continue;
        }
        let reason = format!(
            "the guest's memory limit was reached ({} MiB in use, the limit is {} MiB)",
            used >> 20,
            limit >> 20
        );
        tracing::warn!("{reason}: killing the guest's commands");
        if let Some(guard) = state.quota.as_ref() {
            guard.note_killed(reason);
        }
        cortex_sandbox::kill_all_other_processes();
    }
}

/// Bytes the guest holds: every process's resident memory (`VmRSS` of each
/// `/proc/PID/status` under `proc`) plus what the scratch tmpfs hold.
pub(crate) fn guest_memory(proc: &Path) -> u64 {
    resident(proc).saturating_add(SCRATCH.iter().map(|p| used_space(Path::new(p))).sum())
}

fn resident(proc: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(proc) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .filter_map(|e| std::fs::read_to_string(e.path().join("status")).ok())
        .map(|status| vm_rss(&status))
        .fold(0u64, u64::saturating_add)
}

/// `VmRSS:  1234 kB` in bytes; 0 when absent (a kernel thread, a zombie).
fn vm_rss(status: &str) -> u64 {
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .map_or(0, |kb| kb.saturating_mul(1024))
}

/// Bytes in use on the filesystem at `path` (0 when it cannot be read).
fn used_space(path: &Path) -> u64 {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return 0;
    };
    // SAFETY: `c_path` is a valid NUL-terminated string and `stat` a
    // zeroed, writable statvfs the call fills in.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above; the pointers live for the call.
    if unsafe { libc::statvfs(c_path.as_ptr(), &mut stat) } != 0 {
        return 0;
    }
    let blocks = stat.f_blocks.saturating_sub(stat.f_bfree);
    blocks.saturating_mul(stat.f_frsize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resident_memory_is_read_from_status() {
        let status = "Name:\tpython3\nVmPeak:\t  90000 kB\nVmRSS:\t   65536 kB\nThreads:\t1\n";
        assert_eq!(vm_rss(status), 64 << 20);
        assert_eq!(vm_rss("Name:\tkthreadd\n"), 0);
    }

    #[test]
    fn the_sum_counts_every_process_it_can_read() {
        let proc = tempfile::tempdir().expect("tempdir");
        for (pid, kb) in [("1", 1024u64), ("2", 2048), ("37", 4096)] {
            let dir = proc.path().join(pid);
            std::fs::create_dir(&dir).expect("mkdir");
            std::fs::write(dir.join("status"), format!("VmRSS:\t{kb} kB\n")).expect("write");
        }
        std::fs::create_dir(proc.path().join("self")).expect("mkdir");
        assert_eq!(resident(proc.path()), (1024 + 2048 + 4096) * 1024);
    }

    #[test]
    fn this_process_is_counted_on_the_real_proc() {
        // At least this test's own resident memory.
        assert!(resident(Path::new("/proc")) > 1 << 20);
    }
}
