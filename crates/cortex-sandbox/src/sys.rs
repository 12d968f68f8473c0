//! Thin, checked wrappers over the system calls the sandbox needs. Each one
//! turns `-1` into an `io::Error` that names the call, so a failure reads as
//! "mount tmpfs on /tmp: Operation not permitted", not a bare errno.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

// From <linux/mount.h>; not every libc target names them.
const OPEN_TREE_CLONE: libc::c_uint = 1;
const AT_RECURSIVE: libc::c_uint = 0x8000;
const AT_EMPTY_PATH: libc::c_uint = 0x1000;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;
pub const MOUNT_ATTR_RDONLY: u64 = 0x1;
pub const MOUNT_ATTR_NOSUID: u64 = 0x2;
pub const MOUNT_ATTR_NODEV: u64 = 0x4;
// The mount API calls have the same numbers on every architecture we build for.
const SYS_OPEN_TREE: libc::c_long = 428;
const SYS_MOVE_MOUNT: libc::c_long = 429;
const SYS_MOUNT_SETATTR: libc::c_long = 442;
const SYS_CLOSE_RANGE: libc::c_long = 436;

#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

pub fn cstr(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))
}

fn check(what: impl FnOnce() -> String, ret: libc::c_long) -> io::Result<libc::c_long> {
    if ret == -1 {
        let err = io::Error::last_os_error();
        Err(io::Error::new(err.kind(), format!("{}: {err}", what())))
    } else {
        Ok(ret)
    }
}

pub fn unshare(flags: libc::c_int) -> io::Result<()> {
    // SAFETY: unshare takes flags only.
    let ret = unsafe { libc::unshare(flags) };
    check(|| "unshare".into(), ret.into()).map(drop)
}

pub enum Fork {
    Child,
    Parent(libc::pid_t),
}

/// fork(2).
///
/// # Safety
/// The process must be single-threaded: a child forked from a threaded
/// process may find locks (the allocator's among them) held by threads that
/// no longer exist.
pub unsafe fn fork() -> io::Result<Fork> {
    // SAFETY: the caller guarantees no other thread exists, so the child
    // inherits a consistent address space.
    let pid = unsafe { libc::fork() };
    check(|| "fork".into(), pid.into())?;
    Ok(if pid == 0 {
        Fork::Child
    } else {
        Fork::Parent(pid)
    })
}

/// Wait for any child (`pid` -1) or one; retries on EINTR.
pub fn wait(pid: libc::pid_t) -> io::Result<(libc::pid_t, libc::c_int)> {
    loop {
        let mut status = 0;
        // SAFETY: status is a valid out-pointer.
        let ret = unsafe { libc::waitpid(pid, &mut status, 0) };
        if ret == -1 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(err);
        }
        return Ok((ret, status));
    }
}

/// The exit code a shell would report for a wait status.
pub fn exit_code(status: libc::c_int) -> i32 {
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else if libc::WIFSIGNALED(status) {
        128 + libc::WTERMSIG(status)
    } else {
        1
    }
}

/// Die with SIGKILL when the parent does; fails if the parent is already
/// gone. A parent outside our pid namespace shows as pid 0 (`expected` 0).
pub fn die_with_parent(expected_parent: libc::pid_t) -> io::Result<()> {
    // SAFETY: plain prctl with integer arguments.
    let ret = unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
    check(|| "prctl(PR_SET_PDEATHSIG)".into(), ret.into())?;
    // SAFETY: getppid cannot fail.
    if unsafe { libc::getppid() } != expected_parent {
        return Err(io::Error::other("the parent exited during start-up"));
    }
    Ok(())
}

pub fn mount(
    source: &str,
    target: &Path,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: Option<&str>,
) -> io::Result<()> {
    let c_source = CString::new(source).map_err(io::Error::other)?;
    let c_target = cstr(target)?;
    let c_fstype = fstype
        .map(CString::new)
        .transpose()
        .map_err(io::Error::other)?;
    let c_data = data
        .map(CString::new)
        .transpose()
        .map_err(io::Error::other)?;
    // SAFETY: every pointer is a valid NUL-terminated string or null.
    let ret = unsafe {
        libc::mount(
            c_source.as_ptr(),
            c_target.as_ptr(),
            c_fstype.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
            flags,
            c_data
                .as_ref()
                .map_or(std::ptr::null(), |s| s.as_ptr().cast()),
        )
    };
    check(
        || format!("mount {} on {}", fstype.unwrap_or(source), target.display()),
        ret.into(),
    )
    .map(drop)
}

/// A detached copy of the mount at `path` (not its submounts), to attach
/// elsewhere later with [`attach`], even after `path` itself is hidden.
pub fn clone_mount(path: &Path) -> io::Result<OwnedFd> {
    let c_path = cstr(path)?;
    // SAFETY: valid path string; flags as documented for open_tree(2).
    let ret = unsafe {
        libc::syscall(
            SYS_OPEN_TREE,
            libc::AT_FDCWD,
            c_path.as_ptr(),
            OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint,
        )
    };
    let fd = check(|| format!("open_tree {}", path.display()), ret)?;
    // SAFETY: open_tree returned a new descriptor that we now own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) })
}

/// [`clone_mount`] with the submounts (`/usr` over several filesystems,
/// `/proc/sys/fs/binfmt_misc`).
pub fn clone_tree(path: &Path) -> io::Result<OwnedFd> {
    let c_path = cstr(path)?;
    // SAFETY: valid path string; flags as documented for open_tree(2).
    let ret = unsafe {
        libc::syscall(
            SYS_OPEN_TREE,
            libc::AT_FDCWD,
            c_path.as_ptr(),
            OPEN_TREE_CLONE | AT_RECURSIVE | libc::O_CLOEXEC as libc::c_uint,
        )
    };
    let fd = check(|| format!("open_tree {}", path.display()), ret)?;
    // SAFETY: open_tree returned a new descriptor that we now own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) })
}

/// Make the current folder's mount the root and let go of the old one
/// (`pivot_root(".", ".")`, then a lazy unmount of what is stacked on top).
pub fn pivot_root_here() -> io::Result<()> {
    // SAFETY: two valid path strings.
    let ret = unsafe { libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c".".as_ptr()) };
    check(|| "pivot_root".into(), ret)?;
    // SAFETY: a valid path string.
    let ret = unsafe { libc::umount2(c".".as_ptr(), libc::MNT_DETACH) };
    check(|| "umount the host's root".into(), ret.into()).map(drop)
}

/// Change the flags of a detached mount (`fd`) or of the mount at `path`.
pub fn set_mount_attrs(
    target: MountRef<'_>,
    set: u64,
    clear: u64,
    recursive: bool,
) -> io::Result<()> {
    let attr = MountAttr {
        attr_set: set,
        attr_clr: clear,
        propagation: 0,
        userns_fd: 0,
    };
    let (dirfd, c_path, mut flags, name) = match target {
        MountRef::Fd(fd) => (
            fd.as_raw_fd(),
            CString::default(),
            AT_EMPTY_PATH,
            "a detached mount".to_owned(),
        ),
        MountRef::Path(path) => (libc::AT_FDCWD, cstr(path)?, 0, path.display().to_string()),
    };
    if recursive {
        flags |= AT_RECURSIVE;
    }
    // SAFETY: attr is a valid mount_attr of the size we pass.
    let ret = unsafe {
        libc::syscall(
            SYS_MOUNT_SETATTR,
            dirfd,
            c_path.as_ptr(),
            flags,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    check(|| format!("mount_setattr {name}"), ret).map(drop)
}

pub enum MountRef<'a> {
    Fd(&'a OwnedFd),
    Path(&'a Path),
}

/// Attach a detached mount at `target`.
pub fn attach(mount: &OwnedFd, target: &Path) -> io::Result<()> {
    let c_target = cstr(target)?;
    // SAFETY: valid descriptor and path strings.
    let ret = unsafe {
        libc::syscall(
            SYS_MOVE_MOUNT,
            mount.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_FDCWD,
            c_target.as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH,
        )
    };
    check(|| format!("move_mount onto {}", target.display()), ret).map(drop)
}

pub fn sethostname(name: &str) -> io::Result<()> {
    // SAFETY: pointer and length describe `name`.
    let ret = unsafe { libc::sethostname(name.as_ptr().cast(), name.len()) };
    check(|| "sethostname".into(), ret.into()).map(drop)
}

/// Bring up `lo` in a fresh network namespace (it starts down).
pub fn loopback_up() -> io::Result<()> {
    // SAFETY: a plain datagram socket used only for the ioctls below.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    check(|| "socket".into(), fd.into())?;
    // SAFETY: fd is a new socket we own.
    let socket = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: ifreq is plain old data; zeroed is a valid value.
    let mut request: libc::ifreq = unsafe { std::mem::zeroed() };
    for (slot, byte) in request.ifr_name.iter_mut().zip(b"lo\0") {
        *slot = *byte as libc::c_char;
    }
    // SAFETY: request is a valid ifreq for these ioctls.
    let ret = unsafe { libc::ioctl(socket.as_raw_fd(), libc::SIOCGIFFLAGS, &mut request) };
    check(|| "ioctl(SIOCGIFFLAGS lo)".into(), ret.into())?;
    // SAFETY: the union member for flags was just filled by the kernel.
    unsafe {
        request.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
    }
    // SAFETY: as above.
    let ret = unsafe { libc::ioctl(socket.as_raw_fd(), libc::SIOCSIFFLAGS, &request) };
    check(|| "ioctl(SIOCSIFFLAGS lo)".into(), ret.into()).map(drop)
}

/// `SIGXFSZ` ignored: a write past `RLIMIT_FSIZE` then fails with `EFBIG`
/// instead of killing the writer. Commands inherit the disposition (an
/// ignored signal stays ignored across `exec`).
pub fn ignore_file_size_signal() -> io::Result<()> {
    // SAFETY: SIG_IGN installs no handler code.
    let previous = unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    if previous == libc::SIG_ERR {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

pub fn set_rlimit(resource: libc::__rlimit_resource_t, value: u64) -> io::Result<()> {
    let limit = libc::rlimit {
        rlim_cur: value,
        rlim_max: value,
    };
    // SAFETY: limit is a valid rlimit.
    let ret = unsafe { libc::setrlimit(resource, &limit) };
    check(|| format!("setrlimit({resource})"), ret.into()).map(drop)
}

pub fn no_new_privs() -> io::Result<()> {
    // SAFETY: plain prctl with integer arguments.
    let ret = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
    check(|| "prctl(PR_SET_NO_NEW_PRIVS)".into(), ret.into()).map(drop)
}

/// Drop every capability: the bounding set (so an exec as uid 0 regains
/// nothing), the ambient set, then the current sets.
pub fn drop_capabilities() -> io::Result<()> {
    for cap in 0..=63 {
        // SAFETY: plain prctl; EINVAL past the last capability ends the loop.
        let ret = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) };
        if ret == -1 {
            let err = io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EINVAL) {
                break;
            }
            return Err(io::Error::new(
                err.kind(),
                format!("prctl(PR_CAPBSET_DROP {cap}): {err}"),
            ));
        }
    }
    // SAFETY: plain prctl.
    let ret = unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        )
    };
    check(|| "prctl(PR_CAP_AMBIENT_CLEAR_ALL)".into(), ret.into())?;
    #[repr(C)]
    struct Header {
        version: u32,
        pid: libc::c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const CAPABILITY_VERSION_3: u32 = 0x2008_0522;
    let header = Header {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let data = [Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: header and two data structs as capset(2) expects for version 3.
    let ret = unsafe { libc::syscall(libc::SYS_capset, &header as *const Header, data.as_ptr()) };
    check(|| "capset".into(), ret).map(drop)
}

pub fn write_file(path: &str, contents: &str) -> io::Result<()> {
    std::fs::write(path, contents)
        .map_err(|e| io::Error::new(e.kind(), format!("write {path}: {e}")))
}

/// A new session: no controlling terminal, and none of the caller's
/// terminal's signals or input. Fails in a process-group leader.
pub fn setsid() -> io::Result<()> {
    // SAFETY: setsid takes no arguments.
    let ret = unsafe { libc::setsid() };
    check(|| "setsid".into(), ret.into()).map(drop)
}

/// Nobody but this process (and a holder of `CAP_SYS_PTRACE`, which no
/// process of the guest has) may open its `/proc/PID/fd`, `mem` or `environ`.
/// An `exec` makes the new program dumpable again, so only this process is
/// concerned.
pub fn not_dumpable() -> io::Result<()> {
    // SAFETY: plain prctl with integer arguments.
    let ret = unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
    check(|| "prctl(PR_SET_DUMPABLE)".into(), ret.into()).map(drop)
}

/// Close every descriptor from `first` up: whatever the caller's parent left
/// open without `O_CLOEXEC` (a terminal, a socket, a log file).
pub fn close_from(first: libc::c_uint) -> io::Result<()> {
    // SAFETY: close_range only closes descriptors of this process.
    let ret = unsafe { libc::syscall(SYS_CLOSE_RANGE, first, libc::c_uint::MAX, 0) };
    if ret == 0 {
        return Ok(());
    }
    let err = io::Error::last_os_error();
    if err.raw_os_error() != Some(libc::ENOSYS) {
        return Err(io::Error::new(err.kind(), format!("close_range: {err}")));
    }
    // Kernels before 5.9: list them, then close them (closing while listing
    // would close the listing's own descriptor).
    let open: Vec<libc::c_int> = std::fs::read_dir("/proc/self/fd")?
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
        .filter(|fd: &libc::c_int| *fd >= first as libc::c_int)
        .collect();
    for fd in open {
        // SAFETY: closing a descriptor number; a stale one is EBADF, ignored.
        unsafe { libc::close(fd) };
    }
    Ok(())
}

/// Point stdin, stdout and stderr at `/dev/null`.
pub fn stdio_to_null() -> io::Result<()> {
    let null = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")?;
    for fd in 0..3 {
        // SAFETY: dup2 onto a standard descriptor of this process.
        let ret = unsafe { libc::dup2(null.as_raw_fd(), fd) };
        check(|| format!("dup2 onto {fd}"), ret.into())?;
    }
    Ok(())
}
