//! The whole guest's memory, watched where no cgroup bounds it.
//!
//! Without a writable cgroup (Cortex run by an ordinary user with no
//! delegated cgroup v2 subtree), the kernel bounds memory per process only
//! (`RLIMIT_AS`): a hundred processes each under the bound can still take
//! the host's memory. So the agent sums what the guest holds — the resident
//! memory of every process of its pid namespace (which is all it can see in
//! `/proc`) and what `/tmp`, `/var/tmp` and `/dev/shm` hold (tmpfs, memory
//! too) — while any command runs, and kills every command when the sum
//! passes the guest's limit; the call that ran it says why (and how much
//! of it is files in those folders, which a kill does not free: the
//! sandbox sizes them so that together they fit in the limit). As with the
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
        if used.total() <= limit {
            continue;
        }
        let reason = over_limit(used, limit);
        tracing::warn!("{reason}: killing the guest's commands");
        if let Some(guard) = state.quota.as_ref() {
            guard.note_killed(reason);
        }
        cortex_sandbox::kill_all_other_processes();
    }
}

/// What the guest holds, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Used {
    /// Every process's resident memory.
    pub resident: u64,
    /// What the scratch tmpfs hold (memory too, and not freed by a kill).
    pub scratch: u64,
}

impl Used {
    pub(crate) fn total(self) -> u64 {
        self.resident.saturating_add(self.scratch)
    }
}

/// Bytes the guest holds: every process's resident memory (`VmRSS` of each
/// `/proc/PID/status` under `proc`) plus what the scratch tmpfs hold.
pub(crate) fn guest_memory(proc: &Path) -> Used {
    Used {
        resident: resident(proc),
        scratch: SCRATCH
            .iter()
            .map(|p| used_space(Path::new(p)))
            .fold(0, u64::saturating_add),
    }
}

/// What the killed call says: how much was in use, and, when the scratch
/// folders hold part of it, that killing freed none of that.
fn over_limit(used: Used, limit: u64) -> String {
    let mut reason = format!(
        "the guest's memory limit was reached ({} MiB in use, the limit is {} MiB",
        used.total() >> 20,
        limit >> 20
    );
    if used.scratch >= 1 << 20 {
        reason.push_str(&format!(
            "; {} MiB of it are files in /tmp, /var/tmp and /dev/shm, which count as memory: \
             delete what is not needed there",
            used.scratch >> 20
        ));
    }
    reason.push(')');
    reason
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
    fn the_message_says_what_the_scratch_folders_hold() {
        let used = Used {
            resident: 40 << 20,
            scratch: 240 << 20,
        };
        assert_eq!(used.total(), 280 << 20);
        let reason = over_limit(used, 256 << 20);
        assert!(
            reason.contains("280 MiB in use") && reason.contains("240 MiB of it are files"),
            "{reason}"
        );
        let reason = over_limit(
            Used {
                resident: 300 << 20,
                scratch: 4096,
            },
            256 << 20,
        );
        assert!(!reason.contains("files"), "{reason}");
    }

    #[test]
    fn this_process_is_counted_on_the_real_proc() {
        // At least this test's own resident memory.
        assert!(resident(Path::new("/proc")) > 1 << 20);
    }
}
