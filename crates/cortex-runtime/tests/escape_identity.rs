//! Escape attempts that need privilege, from `bash` inside a real local
//! sandbox (issue 13, "unprivileged inside"; "root and /proc"): the guest is
//! uid and gid 1000 inside with no capability left, whether Cortex runs as
//! root or not, and what a host root could do through `/proc` and `/sys`
//! fails. Files it writes in the workspace still belong to the host user.

mod common;

use common::sandbox::{Sandbox, as_nobody, bash, is_root, start};
use std::os::unix::fs::MetadataExt;

#[tokio::test]
async fn the_guest_is_uid_1000_without_capabilities_and_proc_is_read_only() {
    let runs: Vec<bool> = if is_root() {
        vec![false, true]
    } else {
        vec![false]
    };
    for nobody in runs {
        let sandbox = Sandbox::new();
        let provider = if nobody {
            as_nobody(&sandbox)
        } else {
            common::sandbox::provider(common::guest_binary(), Vec::new(), sandbox.homes.path())
        };
        let Some(guest) = start(&provider, &sandbox.spec()).await else {
            return;
        };
        let out = bash(
            &guest,
            "id -u; id -g; grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status",
        )
        .await;
        assert!(out.is_ok(), "{}", out.output);
        let lines: Vec<&str> = out.output.lines().collect();
        assert_eq!(
            lines[..2],
            ["1000", "1000"],
            "nobody: {nobody}: {}",
            out.output
        );
        for line in &lines[2..7] {
            assert!(
                line.ends_with("0000000000000000"),
                "a capability left: {line}"
            );
        }
        let attempts = [
            // What host root could do: run a program as real root on the
            // next crash, sync/reboot the machine, change the kernel.
            "echo '|/tmp/evil' > /proc/sys/kernel/core_pattern",
            "echo s > /proc/sysrq-trigger",
            "echo 1 > /proc/sys/vm/drop_caches",
            "echo 0 > /proc/sys/kernel/randomize_va_space",
            // Becoming root inside.
            "unshare -r id -u",
            "su -c id",
            "sudo id",
            "python3 -c 'import os; os.setuid(0)'",
        ];
        for attempt in attempts {
            let out = bash(&guest, attempt).await;
            assert!(
                !out.is_ok(),
                "`{attempt}` succeeded (nobody: {nobody}): {}",
                out.output
            );
        }
        let out = bash(&guest, "echo mine > mine.txt").await;
        assert!(out.is_ok(), "{}", out.output);
        guest.close().await;
        let owner = std::fs::metadata(sandbox.path("mine.txt"))
            .expect("written")
            .uid();
        let expected = if nobody {
            65534
        } else {
            // SAFETY: geteuid cannot fail.
            unsafe { libc::geteuid() }
        };
        assert_eq!(owner, expected, "the host owner of a file the guest wrote");
    }
}
