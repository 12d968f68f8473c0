//! The local guest sandbox, entered by the guest agent itself at start-up.
//!
//! `cortex guest --sandbox SPEC` calls [`enter`] before it starts anything
//! else (namespaces can only be entered by a single-threaded process). The
//! process then becomes three:
//!
//! ```text
//! outer   (host pid ns, new user ns)  waits, then removes the cgroup
//!  └─ init   (pid 1 of the new pid ns) builds the mounts, reaps orphans
//!      └─ guest (pid 2)               Landlock, seccomp, no capabilities;
//!                                     returns from `enter` and serves
//! ```
//!
//! Each dies with its parent (`PR_SET_PDEATHSIG`), and when init dies the
//! kernel kills every process of the namespace: killing the outer process,
//! as the harness does on close, leaves nothing behind. The layers, outermost
//! first: user, mount, pid, ipc, uts (and unless the network is on, net)
//! namespaces; a read-only view of the host with secrets hidden
//! (`mounts`); a cgroup or rlimits; Landlock; no new privileges, no
//! capabilities; seccomp.
//!
//! This crate knows nothing of the guest protocol; it only builds the room
//! the guest runs in.

#![warn(missing_docs)]

#[cfg(target_os = "linux")]
mod confine;
#[cfg(target_os = "linux")]
mod git;
#[cfg(target_os = "linux")]
mod limits;
#[cfg(target_os = "linux")]
mod mounts;
pub mod nested;
#[cfg(target_os = "linux")]
mod root;
mod spec;
#[cfg(target_os = "linux")]
mod sys;

pub use spec::{Limits, Quota, Quotas, Report, SandboxSpec, guest_home};

/// Why the sandbox could not be entered.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// Creating or joining the namespaces failed (unshare, the id maps,
    /// fork, the hostname, loopback): usually a system that forbids
    /// unprivileged user namespaces.
    #[error(
        "cannot create the guest's namespaces ({0}); this system does not allow unprivileged \
         user namespaces: run with --sandbox full-access to use no isolation"
    )]
    Namespaces(std::io::Error),
    /// Building the mount tree failed (reported by init on stderr, which
    /// then exits 1; never returned to a caller).
    #[error("cannot build the guest's filesystem view: {0}")]
    Mounts(std::io::Error),
    /// A confinement step of the guest process failed (workspace folder,
    /// rlimits, no-new-privileges, capabilities, seccomp). Landlock is not
    /// among them: a kernel without it is a warning in the [`Report`].
    #[error("cannot confine the guest: {0}")]
    Confine(std::io::Error),
    /// Not Linux: there is no local sandbox.
    #[error("the local sandbox needs Linux")]
    Unsupported,
}

/// The guest's uid and gid inside its user namespace.
#[cfg(target_os = "linux")]
const GUEST_ID: u32 = 1000;

/// Set by [`enter`] in the process that serves: it is pid 2 of its own pid
/// namespace, so `kill(-1, …)` reaches exactly the guest's other processes.
#[cfg(target_os = "linux")]
static IN_OWN_PID_NAMESPACE: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Kill every process of the guest except the caller and init. Returns false
/// (and does nothing) unless this process entered a sandbox.
pub fn kill_all_other_processes() -> bool {
    #[cfg(target_os = "linux")]
    {
        if IN_OWN_PID_NAMESPACE.load(std::sync::atomic::Ordering::SeqCst) {
            // SAFETY: kill(-1) inside our own pid namespace signals only the
            // guest's processes (never init, never the caller).
            unsafe { libc::kill(-1, libc::SIGKILL) };
            return true;
        }
    }
    false
}

/// [`kill_all_other_processes`], sparing the processes whose process group
/// is in `keep` (the guest's background commands: a stopped turn leaves a
/// dev server running). With `keep` empty it is exactly
/// `kill_all_other_processes`. Otherwise each other process is stopped
/// (`SIGSTOP`, so none forks meanwhile) pass after pass until a pass finds
/// no new one, then all are killed. A process that left a kept group
/// (`setsid`) is not spared. Returns false (and does nothing) unless this
/// process entered a sandbox.
pub fn kill_other_processes_sparing(keep: &[i32]) -> bool {
    if keep.is_empty() {
        return kill_all_other_processes();
    }
    #[cfg(target_os = "linux")]
    {
        if IN_OWN_PID_NAMESPACE.load(std::sync::atomic::Ordering::SeqCst) {
            sys_kill_sparing(keep);
            return true;
        }
    }
    false
}

/// The passes of [`kill_other_processes_sparing`] in the guest's own pid
/// namespace.
#[cfg(target_os = "linux")]
fn sys_kill_sparing(keep: &[i32]) {
    /// A bound on the passes: each stops every process it finds, so only
    /// processes forked during a pass need another one.
    const MAX_PASSES: usize = 64;
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() };
    let mut stopped: std::collections::BTreeSet<i32> = std::collections::BTreeSet::new();
    for _ in 0..MAX_PASSES {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            break;
        };
        let mut new = 0;
        for pid in entries
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        {
            if pid == me || pid == 1 || stopped.contains(&pid) {
                continue;
            }
            // SAFETY: getpgid and kill have no memory-safety preconditions;
            // a pid that has gone meanwhile is an error, ignored.
            let group = unsafe { libc::getpgid(pid) };
            if group < 0 || keep.contains(&group) {
                continue;
            }
            // SAFETY: as above.
            unsafe { libc::kill(pid, libc::SIGSTOP) };
            stopped.insert(pid);
            new += 1;
        }
        if new == 0 {
            break;
        }
    }
    for pid in stopped {
        // SAFETY: as above.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

/// Close every descriptor but stdin, stdout and stderr (the agent's own
/// pipes): anything else its parent left open without `O_CLOEXEC` (a
/// terminal, a socket, a log file) must not reach the commands it runs.
/// Call it first thing, before any thread or descriptor of our own exists.
pub fn close_inherited_fds() -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        sys::close_from(3)
    }
    #[cfg(not(target_os = "linux"))]
    {
        Ok(())
    }
}

/// Enter the sandbox. Returns only in the process that serves (see the
/// crate docs); the outer and init processes exit with the guest's exit
/// code.
///
/// `Ok` carries the [`Report`] of what is in force: the layers applied and
/// a warning for each that could not be (Landlock missing, rlimits in place
/// of a cgroup). It is returned in the guest process (pid 2), confined,
/// with the workspace as its current folder.
///
/// An `Err` is not a clean refusal: it may be returned before anything
/// changed ([`SandboxError::Unsupported`], a first `unshare` that fails),
/// or in a process that is already part-way in (new namespaces entered, or
/// the guest process with only some layers applied). The caller must not
/// carry on unconfined: report the error and exit. Failures inside init
/// are never returned; init prints them on stderr and exits 1, which the
/// outer process passes on as its exit code.
///
/// # Safety
/// The process must be single-threaded: it forks twice and unshares its
/// user namespace, which the kernel refuses (or makes unsound) with other
/// threads alive. Call it first thing in `main`, before any runtime or
/// thread pool starts.
#[cfg(target_os = "linux")]
pub unsafe fn enter(spec: &SandboxSpec) -> Result<Report, SandboxError> {
    use std::time::Instant;
    let started = Instant::now();
    let (host_uid, host_gid) = unsafe_ids();
    let cgroup = limits::Cgroup::create(&spec.limits);
    // SAFETY: `enter`'s caller guarantees a single-threaded process.
    let namespaces = unsafe { enter_namespaces(spec, host_uid, host_gid) }?;
    // SAFETY: as above; only the process that goes on returns.
    let cgroup = unsafe { fork_outer(cgroup) }?;
    // SAFETY: still single-threaded (init has started no thread); only the
    // guest returns.
    let mut warnings = unsafe { fork_init(spec, cgroup.is_none()) };
    let mut layers = vec![namespaces];
    // SAFETY: the guest (pid 2) has started no thread either.
    unsafe { confine_guest(spec, cgroup.as_ref(), host_uid, &mut layers, &mut warnings) }?;
    IN_OWN_PID_NAMESPACE.store(true, std::sync::atomic::Ordering::SeqCst);
    Ok(Report {
        layers: layers.join(" "),
        warnings,
        setup_ms: started.elapsed().as_secs_f64() * 1000.0,
    })
}

/// Step 1 of [`enter`]: new user, mount, pid, IPC, UTS (and, without
/// network, net) namespaces, with this user mapped to [`GUEST_ID`]; the
/// layer as the report names it.
///
/// # Safety
/// The process must be single-threaded, as for [`enter`]: the kernel
/// refuses to unshare a user namespace with other threads alive.
#[cfg(target_os = "linux")]
unsafe fn enter_namespaces(
    spec: &SandboxSpec,
    host_uid: libc::uid_t,
    host_gid: libc::gid_t,
) -> Result<&'static str, SandboxError> {
    let mut flags = libc::CLONE_NEWUSER
        | libc::CLONE_NEWNS
        | libc::CLONE_NEWPID
        | libc::CLONE_NEWIPC
        | libc::CLONE_NEWUTS;
    if !spec.network {
        flags |= libc::CLONE_NEWNET;
    }
    sys::unshare(flags).map_err(SandboxError::Namespaces)?;
    sys::write_file("/proc/self/setgroups", "deny").map_err(SandboxError::Namespaces)?;
    // uid and gid 1000 inside, never 0: no program in the guest believes
    // it is root (set-uid checks, `sudo`, installers), and the capabilities
    // this process holds for the mounts are gone at its next `exec`.
    sys::write_file("/proc/self/uid_map", &format!("{GUEST_ID} {host_uid} 1"))
        .map_err(SandboxError::Namespaces)?;
    sys::write_file("/proc/self/gid_map", &format!("{GUEST_ID} {host_gid} 1"))
        .map_err(SandboxError::Namespaces)?;
    Ok(if spec.network {
        "namespaces(user,mnt,pid,ipc,uts; host network)"
    } else {
        "namespaces(user,mnt,pid,ipc,uts,net)"
    })
}

/// Step 2 of [`enter`]: fork. The outer process (host pid namespace) waits
/// for init, removes the cgroup and exits with init's code; it never
/// returns. The child, pid 1 of the new namespace, returns the cgroup.
///
/// # Safety
/// The process must be single-threaded (see [`sys::fork`]).
#[cfg(target_os = "linux")]
unsafe fn fork_outer(
    cgroup: Option<limits::Cgroup>,
) -> Result<Option<limits::Cgroup>, SandboxError> {
    // SAFETY: forwarded from this function's own contract.
    match unsafe { sys::fork() }.map_err(SandboxError::Namespaces)? {
        sys::Fork::Parent(init) => {
            let code = sys::wait(init)
                .map(|(_, status)| sys::exit_code(status))
                .unwrap_or(1);
            if let Some(cgroup) = cgroup {
                cgroup.remove();
            }
            std::process::exit(code);
        }
        sys::Fork::Child => Ok(cgroup),
    }
}

/// Step 3 of [`enter`], in init (pid 1): its own session, the mounts, the
/// host name and loopback; then fork the guest. init stays behind reaping
/// children and never returns; the guest (pid 2) returns the mounts'
/// warnings. A failure here is printed and exits 1, never returned.
/// `memory_watched`: no cgroup counts the guest's memory (the scratch tmpfs
/// are then sized to share the memory limit, see [`mounts::build`]).
///
/// # Safety
/// The process must be single-threaded (see [`sys::fork`]).
#[cfg(target_os = "linux")]
unsafe fn fork_init(spec: &SandboxSpec, memory_watched: bool) -> Vec<String> {
    let init_setup = (|| -> Result<Vec<String>, SandboxError> {
        // The outer process lives in the parent pid namespace: pid 0 here.
        sys::die_with_parent(0).map_err(SandboxError::Namespaces)?;
        // A session of its own: the user's terminal is no longer the
        // controlling terminal of anything in the guest (no `/dev/tty`, no
        // job-control signals). A forked child is never a group leader, so
        // this holds however the harness started us.
        sys::setsid().map_err(SandboxError::Namespaces)?;
        let warnings = mounts::build(spec, memory_watched).map_err(SandboxError::Mounts)?;
        sys::sethostname("cortex-guest").map_err(SandboxError::Namespaces)?;
        if !spec.network {
            sys::loopback_up().map_err(SandboxError::Namespaces)?;
        }
        Ok(warnings)
    })();
    let warnings = match init_setup {
        Ok(mount_warnings) => mount_warnings,
        Err(e) => {
            eprintln!("cortex-guest: {e}");
            std::process::exit(1);
        }
    };
    // SAFETY: forwarded from this function's own contract (init has
    // started no thread).
    match unsafe { sys::fork() } {
        Ok(sys::Fork::Parent(guest)) => {
            // init holds copies of the agent's pipes; a command of the guest
            // must not reach them through /proc/1/fd either.
            if let Err(e) = sys::not_dumpable().and_then(|()| sys::stdio_to_null()) {
                eprintln!("cortex-guest: {}", SandboxError::Confine(e));
                std::process::exit(1);
            }
            reap_until(guest)
        }
        Ok(sys::Fork::Child) => warnings,
        Err(e) => {
            eprintln!("cortex-guest: {}", SandboxError::Namespaces(e));
            std::process::exit(1);
        }
    }
}

/// Step 4 of [`enter`], in the guest (pid 2): the workspace as its folder,
/// the cgroup or rlimits, Landlock, no new privileges and seccomp; each
/// layer applied is added to `layers`, each that could not be to
/// `warnings`.
///
/// # Safety
/// The process must be single-threaded: Landlock, no-new-privs and the
/// seccomp filter bind the calling thread only, so a thread started
/// before would stay unconfined.
#[cfg(target_os = "linux")]
unsafe fn confine_guest(
    spec: &SandboxSpec,
    cgroup: Option<&limits::Cgroup>,
    host_uid: libc::uid_t,
    layers: &mut Vec<&'static str>,
    warnings: &mut Vec<String>,
) -> Result<(), SandboxError> {
    sys::die_with_parent(1).map_err(SandboxError::Confine)?;
    std::env::set_current_dir(&spec.workspace).map_err(SandboxError::Confine)?;
    layers.push("mounts");
    match cgroup {
        Some(cgroup) => layers.push(cgroup.kind),
        None => {
            warnings
                .extend(limits::rlimits(&spec.limits, host_uid).map_err(SandboxError::Confine)?);
            layers.push("rlimits");
        }
    }
    sys::set_rlimit(libc::RLIMIT_CORE, 0).map_err(SandboxError::Confine)?;
    // No single file may outgrow the largest quota before the agent's next
    // measurement; a write past it fails with EFBIG (the agent ignores
    // SIGXFSZ, and commands inherit that) instead of killing the writer.
    let largest_file = spec.quotas.workspace.bytes.max(spec.quotas.home.bytes);
    sys::set_rlimit(libc::RLIMIT_FSIZE, largest_file).map_err(SandboxError::Confine)?;
    sys::ignore_file_size_signal().map_err(SandboxError::Confine)?;
    match confine::landlock(spec) {
        Ok(layer) => layers.push(layer),
        Err(warning) => warnings.push(warning.to_string()),
    }
    confine::drop_privileges().map_err(SandboxError::Confine)?;
    layers.push("no-new-privs");
    confine::seccomp().map_err(SandboxError::Confine)?;
    layers.push("seccomp");
    // The agent's pipes are the harness's channel: commands of the guest
    // (same uid) may not open them through /proc/2/fd.
    sys::not_dumpable().map_err(SandboxError::Confine)?;
    layers.push("own-session");
    Ok(())
}

/// Enter the sandbox: unsupported here.
///
/// # Safety
/// None needed; `unsafe` only to match the Linux signature.
#[cfg(not(target_os = "linux"))]
pub unsafe fn enter(_spec: &SandboxSpec) -> Result<Report, SandboxError> {
    Err(SandboxError::Unsupported)
}

#[cfg(target_os = "linux")]
fn unsafe_ids() -> (libc::uid_t, libc::gid_t) {
    // SAFETY: getuid and getgid cannot fail.
    unsafe { (libc::getuid(), libc::getgid()) }
}

/// init's life: reap every child (orphans are re-parented to init) until the
/// guest exits, then exit with its code, which ends the namespace.
#[cfg(target_os = "linux")]
fn reap_until(guest: libc::pid_t) -> ! {
    loop {
        match sys::wait(-1) {
            Ok((pid, status)) if pid == guest => std::process::exit(sys::exit_code(status)),
            Ok(_) => {}
            Err(_) => std::process::exit(1),
        }
    }
}
