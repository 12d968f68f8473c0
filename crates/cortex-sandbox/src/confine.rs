//! The second and third layers, applied by the guest process itself after the
//! mounts are in place: Landlock (which paths may be read or written, matching
//! the mounts), `PR_SET_NO_NEW_PRIVS`, a seccomp filter against the calls an
//! escape would need, and no capabilities.

use crate::spec::{SandboxSpec, guest_home};
use crate::sys;
use landlock::{
    ABI, Access, AccessFs, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus,
    path_beneath_rules,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};
use std::collections::BTreeMap;
use std::io;
use std::path::PathBuf;

/// Folders the guest may read and execute from.
const SYSTEM: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/var",
    "/proc", "/sys",
];
/// Folders the guest may change besides the workspace and its home.
const SCRATCH: &[&str] = &["/tmp", "/var/tmp", "/dev"];

/// Why Landlock is not in force. `Display` is the warning put in the report.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LandlockUnavailable {
    /// Building or applying the ruleset failed.
    #[error("Landlock not applied: {0}")]
    Ruleset(#[from] landlock::RulesetError),
    /// The kernel has no Landlock.
    #[error("Landlock is not supported by this kernel; mounts alone confine the files")]
    NotSupported,
}

/// Landlock, best effort. Returns the layer's name when it is in force, or
/// why not (which the caller reports as a warning).
pub(crate) fn landlock(spec: &SandboxSpec) -> Result<&'static str, LandlockUnavailable> {
    let abi = ABI::V5;
    let mut writable: Vec<PathBuf> = SCRATCH.iter().map(PathBuf::from).collect();
    let mut readable: Vec<PathBuf> = SYSTEM.iter().map(PathBuf::from).collect();
    if spec.home_writable {
        writable.push(guest_home());
    } else {
        readable.push(guest_home());
    }
    readable.extend(spec.read_only.iter().cloned());
    // A linked worktree's metadata outside the workspace, mounted read-only.
    readable.extend(crate::git::metadata(&spec.workspace).paths);
    writable.extend(spec.read_write.iter().cloned());
    if spec.workspace_writable {
        writable.push(spec.workspace.clone());
    } else {
        readable.push(spec.workspace.clone());
    }
    let status = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        .and_then(|r| r.create())
        // Listing folders is harmless (what is secret is hidden by the mounts)
        // and `ls /`, `find` and shells' completion expect it.
        .and_then(|r| r.add_rules(path_beneath_rules(["/"], AccessFs::ReadDir)))
        .and_then(|r| r.add_rules(path_beneath_rules(&readable, AccessFs::from_read(abi))))
        .and_then(|r| r.add_rules(path_beneath_rules(&writable, AccessFs::from_all(abi))))
        .and_then(|r| r.restrict_self())?;
    match status.ruleset {
        RulesetStatus::FullyEnforced => Ok("landlock"),
        RulesetStatus::PartiallyEnforced => Ok("landlock(partial)"),
        RulesetStatus::NotEnforced => Err(LandlockUnavailable::NotSupported),
    }
}

/// Calls no command in the guest needs and every escape wants.
const DENIED: &[libc::c_long] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_open_tree,
    libc::SYS_move_mount,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_reboot,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_userfaultfd,
    libc::SYS_open_by_handle_at,
    libc::SYS_acct,
    libc::SYS_syslog,
];

/// Namespace flags `clone` may not be given.
const NAMESPACE_FLAGS: &[libc::c_int] = &[
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWNS,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWCGROUP,
];

/// `ioctl` requests refused whatever the descriptor.
const TERMINAL_IOCTLS: &[libc::Ioctl] = &[libc::TIOCSTI, libc::TIOCLINUX];

/// The calls that set a file's mode, with the index of their mode
/// argument. A set-user-ID or set-group-ID bit in it is refused: the guest
/// writes the user's own files, and such a bit would survive on the host,
/// where the file then runs with the user's (or the group's) rights for
/// whoever starts it. `open` and friends take a mode only when they create
/// a file (libc passes 0 otherwise), so the rule never refuses a plain open.
fn mode_setting_calls() -> Vec<(libc::c_long, u8)> {
    let mut calls = vec![
        (libc::SYS_fchmod, 1),
        (libc::SYS_fchmodat, 2),
        (libc::SYS_fchmodat2, 2),
        (libc::SYS_openat, 3),
        (libc::SYS_mkdirat, 2),
        (libc::SYS_mknodat, 2),
    ];
    #[cfg(target_arch = "x86_64")]
    calls.extend([
        (libc::SYS_chmod, 1),
        (libc::SYS_open, 2),
        (libc::SYS_creat, 1),
        (libc::SYS_mkdir, 1),
        (libc::SYS_mknod, 1),
    ]);
    calls
}

/// The bits [`mode_setting_calls`] may not set.
const SET_ID_BITS: [u64; 2] = [libc::S_ISUID as u64, libc::S_ISGID as u64];

fn filter_error(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("seccomp: {e}"))
}

/// The seccomp filters: denied calls fail with EPERM; `clone3` and
/// `openat2`, whose flags and mode a filter cannot read, fail with ENOSYS
/// so libc falls back to `clone` and `openat`, whose arguments it can.
pub(crate) fn seccomp() -> io::Result<()> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(filter_error)?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> =
        DENIED.iter().map(|call| (*call, Vec::new())).collect();
    let clone_rules = NAMESPACE_FLAGS
        .iter()
        .map(|flag| {
            let flag = *flag as u64;
            SeccompCondition::new(
                0,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::MaskedEq(flag),
                flag,
            )
            .and_then(|c| SeccompRule::new(vec![c]))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(filter_error)?;
    rules.insert(libc::SYS_clone, clone_rules);
    // Typing into a terminal (TIOCSTI) and the console's own requests
    // (TIOCLINUX): the guest has no terminal, and may not use one it finds.
    let ioctl_rules = TERMINAL_IOCTLS
        .iter()
        .map(|request| {
            // `Ioctl` is a u64 on glibc and an i32 on musl.
            #[allow(clippy::unnecessary_cast)]
            let request = *request as u64;
            SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, request)
                .and_then(|c| SeccompRule::new(vec![c]))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(filter_error)?;
    rules.insert(libc::SYS_ioctl, ioctl_rules);
    for (call, argument) in mode_setting_calls() {
        let bit_rules = SET_ID_BITS
            .iter()
            .map(|bit| {
                SeccompCondition::new(
                    argument,
                    SeccompCmpArgLen::Dword,
                    SeccompCmpOp::MaskedEq(*bit),
                    *bit,
                )
                .and_then(|c| SeccompRule::new(vec![c]))
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(filter_error)?;
        rules.insert(call, bit_rules);
    }
    let deny = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(filter_error)?;
    // `openat2` carries its mode in a struct a filter cannot read: libc
    // does not need it, and a caller that tries it falls back to `openat`.
    let clone3 = SeccompFilter::new(
        BTreeMap::from([
            (libc::SYS_clone3, Vec::new()),
            (libc::SYS_openat2, Vec::new()),
        ]),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )
    .map_err(filter_error)?;
    for filter in [deny, clone3] {
        let program = BpfProgram::try_from(filter).map_err(filter_error)?;
        seccompiler::apply_filter(&program).map_err(filter_error)?;
    }
    Ok(())
}

/// No new privileges and no capabilities, for the guest and all it runs.
pub(crate) fn drop_privileges() -> io::Result<()> {
    sys::no_new_privs()?;
    sys::drop_capabilities()
}
