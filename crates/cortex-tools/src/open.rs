//! Opening workspace files without ever blocking on a special file.
//!
//! A path that was a regular file when it was checked may be a FIFO, a socket
//! or a device node by the time it is opened (a process in the workspace can
//! swap it), and opening a FIFO blocks until a writer comes. So every file a
//! tool reads or writes is opened here with `O_NONBLOCK` (a FIFO opens at
//! once, or fails with `ENXIO` for a write with no reader) and `O_NOFOLLOW`
//! (the path was resolved already: a symlink in its place now is a swap), and
//! checked on the descriptor before a byte moves. `O_NONBLOCK` is then
//! cleared; it changes nothing for a regular file anyway.

use crate::ToolError;
use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// What is at a path, opened without blocking.
pub(crate) enum Opened {
    /// A regular file, ready to read (or write).
    File(File, Metadata),
    /// A folder.
    Folder,
    /// A FIFO, socket or device node: never read or written.
    Special,
}

/// Open `path` for reading (`write` false) or for writing, created when
/// absent and never truncated here (`write` true).
pub(crate) fn open_no_block(path: &Path, write: bool) -> io::Result<Opened> {
    let mut options = OpenOptions::new();
    if write {
        options.write(true).create(true).mode(0o644);
    } else {
        options.read(true);
    }
    options.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_CLOEXEC);
    let file = match options.open(path) {
        Ok(file) => file,
        // A FIFO with no reader refuses a non-blocking writer.
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) => return Ok(Opened::Special),
        Err(e) if e.raw_os_error() == Some(libc::EISDIR) => return Ok(Opened::Folder),
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Ok(Opened::Folder);
    }
    if !meta.is_file() {
        return Ok(Opened::Special);
    }
    clear_non_blocking(&file)?;
    Ok(Opened::File(file, meta))
}

fn clear_non_blocking(file: &File) -> io::Result<()> {
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is a descriptor this function's caller owns for the call.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above; only the status flags change.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Open a regular file for reading: a folder or special file is the error
/// the model reads (`folder` is the message for a folder).
pub(crate) fn open_regular(path: &Path, shown: &str, folder: &str) -> Result<File, ToolError> {
    match open_no_block(path, false).map_err(|source| ToolError::Io {
        path: path.to_path_buf(),
        source,
    })? {
        Opened::File(file, _) => Ok(file),
        Opened::Folder => Err(ToolError::Invalid(folder.to_owned())),
        Opened::Special => Err(ToolError::not_regular(shown)),
    }
}

/// Replace the content of the regular file at `path` (made when absent); a
/// special file or folder there is refused without a byte written.
pub(crate) fn write_regular(path: &Path, shown: &str, content: &str) -> Result<(), ToolError> {
    use std::io::Write as _;
    let io_err = |source| ToolError::Io {
        path: path.to_path_buf(),
        source,
    };
    match open_no_block(path, true).map_err(io_err)? {
        Opened::File(mut file, _) => {
            file.set_len(0).map_err(io_err)?;
            file.write_all(content.as_bytes()).map_err(io_err)
        }
        Opened::Folder => Err(ToolError::Invalid(format!(
            "`{shown}` is a folder; give the path of a file inside it"
        ))),
        Opened::Special => Err(ToolError::not_regular(shown)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;

    fn mkfifo(path: &Path) {
        let c = CString::new(path.as_os_str().as_bytes()).expect("path");
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    }

    #[test]
    fn a_fifo_is_refused_at_once_for_reading_and_writing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("pipe");
        mkfifo(&fifo);
        assert!(matches!(
            open_no_block(&fifo, false).expect("open"),
            Opened::Special
        ));
        assert!(matches!(
            open_no_block(&fifo, true).expect("open"),
            Opened::Special
        ));
        let err = write_regular(&fifo, "pipe", "x").expect_err("refused");
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }

    #[test]
    fn a_socket_and_a_symlink_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let sock = dir.path().join("sock");
        let _listener = std::os::unix::net::UnixListener::bind(&sock).expect("bind");
        assert!(matches!(
            open_no_block(&sock, false).expect("open"),
            Opened::Special
        ));
        std::fs::write(dir.path().join("real"), "x").expect("write");
        std::os::unix::fs::symlink("real", dir.path().join("link")).expect("symlink");
        let err = open_no_block(&dir.path().join("link"), false)
            .err()
            .expect("a symlink in place of a resolved path is refused");
        assert_eq!(err.raw_os_error(), Some(libc::ELOOP));
    }

    #[test]
    fn a_regular_file_reads_and_writes_in_blocking_mode() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("f");
        write_regular(&path, "f", "longer text").expect("create");
        write_regular(&path, "f", "short").expect("replace");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "short");
        let Opened::File(file, meta) = open_no_block(&path, false).expect("open") else {
            panic!("a regular file");
        };
        assert_eq!(meta.len(), 5);
        // SAFETY: a descriptor we own.
        let flags = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETFL) };
        assert_eq!(flags & libc::O_NONBLOCK, 0);
    }
}
