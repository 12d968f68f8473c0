//! Copying a tree without ever following a link.
//!
//! The repository being copied may hold anything a hostile model (or a
//! hostile clone) left there: symlinks to host files or folders, symlink
//! loops, FIFOs that block a reader forever, sockets, device nodes, hard links
//! to files outside the tree, names with newlines or escape sequences, and
//! trees deep enough to exhaust a recursive walk. Every step here works on
//! directory file descriptors (`openat` with `O_NOFOLLOW`, `statat` without
//! following, `readlinkat`, `symlinkat`, `unlinkat`), so neither the source
//! nor the destination is ever reached through a link:
//! - a symlink is copied as a symlink (its target text, never what it names);
//! - a regular file is opened with `O_NOFOLLOW | O_NONBLOCK` and checked
//!   again on the descriptor, then copied into a new file (a hard-linked file
//!   becomes an independent copy: writing it never reaches its other names),
//!   its holes kept as holes (`SEEK_DATA`/`SEEK_HOLE`);
//! - a FIFO, socket or device node is skipped with a note;
//! - a folder deeper than [`MAX_DEPTH`] is skipped with a note;
//! - a path component that is a symlink in the source ends that path with a
//!   note; in the destination it is replaced by a real folder.

use rustix::fs::{AtFlags, CWD, Dir, FileType, Mode, OFlags};
use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// The deepest folder copied, counted from the top of the copy.
pub const MAX_DEPTH: usize = 128;

/// What a copy left out, one line each (`path: why`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CopyReport {
    /// `path: why` for each file or folder left out.
    pub skipped: Vec<String>,
}

impl CopyReport {
    fn skip(&mut self, path: &Path, why: &str) {
        self.skipped.push(format!("{}: {why}", path.display()));
    }
}

fn err(e: rustix::io::Errno) -> io::Error {
    io::Error::from(e)
}

fn with_path(path: &Path, e: impl Into<io::Error>) -> io::Error {
    let e = e.into();
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// A folder opened without following a final symlink.
pub(crate) fn open_dir(parent: BorrowedFd<'_>, name: &OsStr) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat(
        parent,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// An absolute folder (the copy's source or destination root).
pub(crate) fn open_root(path: &Path) -> io::Result<OwnedFd> {
    open_dir(CWD, path.as_os_str()).map_err(|e| with_path(path, err(e)))
}

/// Copy the whole tree under `from` into the existing folder `to`.
pub fn copy_tree(from: &Path, to: &Path) -> io::Result<CopyReport> {
    let mut report = CopyReport::default();
    let (src, dst) = (open_root(from)?, open_root(to)?);
    copy_dir(&src, &dst, Path::new(""), 0, &mut report)?;
    Ok(report)
}

fn copy_dir(
    src: &OwnedFd,
    dst: &OwnedFd,
    shown: &Path,
    depth: usize,
    report: &mut CopyReport,
) -> io::Result<()> {
    // Names first, so no directory stream stays open while we descend.
    let mut names = Vec::new();
    let mut dir = Dir::read_from(src).map_err(|e| with_path(shown, err(e)))?;
    while let Some(entry) = dir.read() {
        let entry = entry.map_err(|e| with_path(shown, err(e)))?;
        let name = OsStr::from_bytes(entry.file_name().to_bytes());
        if name != "." && name != ".." {
            names.push(name.to_owned());
        }
    }
    drop(dir);
    for name in names {
        copy_entry(
            src.as_fd(),
            dst.as_fd(),
            &name,
            &shown.join(&name),
            depth,
            report,
        )?;
    }
    Ok(())
}

/// Copy the entry `name` of `src` to `dst` (whatever `dst` had there is
/// replaced). `depth` is the depth of `src`.
pub(crate) fn copy_entry(
    src: BorrowedFd<'_>,
    dst: BorrowedFd<'_>,
    name: &OsStr,
    shown: &Path,
    depth: usize,
    report: &mut CopyReport,
) -> io::Result<()> {
    let stat = rustix::fs::statat(src, name, AtFlags::SYMLINK_NOFOLLOW)
        .map_err(|e| with_path(shown, err(e)))?;
    match FileType::from_raw_mode(stat.st_mode) {
        FileType::Symlink => {
            let target = rustix::fs::readlinkat(src, name, Vec::new())
                .map_err(|e| with_path(shown, err(e)))?;
            remove_entry(dst, name, shown, 0)?;
            rustix::fs::symlinkat(target.as_c_str(), dst, name)
                .map_err(|e| with_path(shown, err(e)))
        }
        FileType::RegularFile => copy_file(src, dst, name, shown, report),
        FileType::Directory if depth + 1 > MAX_DEPTH => {
            report.skip(
                shown,
                &format!("deeper than {MAX_DEPTH} folders, not copied"),
            );
            Ok(())
        }
        FileType::Directory => {
            let from = open_dir(src, name).map_err(|e| with_path(shown, err(e)))?;
            let to = ensure_dir(dst, name, shown)?;
            copy_dir(&from, &to, shown, depth + 1, report)
        }
        special => {
            // Whatever the copy had there (the committed version) goes too:
            // the copy shows the working tree, minus what cannot be copied.
            remove_entry(dst, name, shown, 0)?;
            skip(report, shown, special_kind(special))
        }
    }
}

pub(crate) fn special_kind(kind: FileType) -> &'static str {
    match kind {
        FileType::Fifo => "a FIFO, not copied",
        FileType::Socket => "a socket, not copied",
        FileType::CharacterDevice | FileType::BlockDevice => "a device node, not copied",
        _ => "not a file, folder or symlink, not copied",
    }
}

fn skip(report: &mut CopyReport, shown: &Path, why: &str) -> io::Result<()> {
    report.skip(shown, why);
    Ok(())
}

fn copy_file(
    src: BorrowedFd<'_>,
    dst: BorrowedFd<'_>,
    name: &OsStr,
    shown: &Path,
    report: &mut CopyReport,
) -> io::Result<()> {
    // O_NONBLOCK: had the file been swapped for a FIFO since the stat, the
    // open still returns at once, and the check below skips it.
    let fd = rustix::fs::openat(
        src,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| with_path(shown, err(e)))?;
    let stat = rustix::fs::fstat(&fd).map_err(|e| with_path(shown, err(e)))?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return skip(
            report,
            shown,
            "changed into a special file while copying, not copied",
        );
    }
    remove_entry(dst, name, shown, 0)?;
    let out = rustix::fs::openat(
        dst,
        name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(stat.st_mode & 0o777),
    )
    .map_err(|e| with_path(shown, err(e)))?;
    let mut reader = std::fs::File::from(fd);
    let mut writer = std::fs::File::from(out);
    copy_sparse(&mut reader, &mut writer, stat.st_size.max(0) as u64)
        .map_err(|e| with_path(shown, e))
}

/// Copy `size` bytes keeping holes as holes: only the data ranges the
/// filesystem reports (`SEEK_DATA`/`SEEK_HOLE`) are read and written, so a
/// file of a terabyte of holes costs what its data costs. Where the source's
/// filesystem cannot say, the whole file is copied.
fn copy_sparse(
    reader: &mut std::fs::File,
    writer: &mut std::fs::File,
    size: u64,
) -> io::Result<()> {
    use rustix::fs::SeekFrom;
    use std::io::{Read as _, Seek as _};
    let mut offset = 0u64;
    while offset < size {
        let data = match rustix::fs::seek(&*reader, SeekFrom::Data(offset)) {
            Ok(data) => data,
            // No data after `offset`: the rest is a hole.
            Err(rustix::io::Errno::NXIO) => break,
            Err(rustix::io::Errno::INVAL | rustix::io::Errno::OPNOTSUPP) if offset == 0 => {
                io::copy(&mut reader.take(size), writer)?;
                return Ok(());
            }
            Err(e) => return Err(err(e)),
        };
        if data >= size {
            break;
        }
        let hole = rustix::fs::seek(&*reader, SeekFrom::Hole(data))
            .map_err(err)?
            .min(size);
        reader.seek(io::SeekFrom::Start(data))?;
        writer.seek(io::SeekFrom::Start(data))?;
        io::copy(&mut (&mut *reader).take(hole - data), writer)?;
        offset = hole.max(data + 1);
    }
    // A trailing hole (or a file that shrank meanwhile): the size is the
    // source's as it was stat'ed.
    writer.set_len(size)
}

/// The folder `name` of `dst`, made when absent; anything else there (a
/// file, or a symlink the clone checked out) is replaced by a real folder.
pub(crate) fn ensure_dir(dst: BorrowedFd<'_>, name: &OsStr, shown: &Path) -> io::Result<OwnedFd> {
    match rustix::fs::statat(dst, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) if FileType::from_raw_mode(stat.st_mode) == FileType::Directory => {}
        Ok(_) => {
            remove_entry(dst, name, shown, 0)?;
            mkdir(dst, name, shown)?;
        }
        Err(rustix::io::Errno::NOENT) => mkdir(dst, name, shown)?,
        Err(e) => return Err(with_path(shown, err(e))),
    }
    open_dir(dst, name).map_err(|e| with_path(shown, err(e)))
}

fn mkdir(dst: BorrowedFd<'_>, name: &OsStr, shown: &Path) -> io::Result<()> {
    rustix::fs::mkdirat(dst, name, Mode::from_raw_mode(0o755)).map_err(|e| with_path(shown, err(e)))
}

/// Remove `name` from `dst` (a folder with everything in it), if present.
/// Only ever called on the copy being made, never on the source.
pub(crate) fn remove_entry(
    dst: BorrowedFd<'_>,
    name: &OsStr,
    shown: &Path,
    depth: usize,
) -> io::Result<()> {
    let stat = match rustix::fs::statat(dst, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => stat,
        Err(rustix::io::Errno::NOENT) => return Ok(()),
        Err(e) => return Err(with_path(shown, err(e))),
    };
    if FileType::from_raw_mode(stat.st_mode) != FileType::Directory {
        return rustix::fs::unlinkat(dst, name, AtFlags::empty())
            .map_err(|e| with_path(shown, err(e)));
    }
    if depth > MAX_DEPTH {
        return Err(with_path(shown, io::Error::other("too deep to remove")));
    }
    let dir = open_dir(dst, name).map_err(|e| with_path(shown, err(e)))?;
    let mut names: Vec<OsString> = Vec::new();
    let mut stream = Dir::read_from(&dir).map_err(|e| with_path(shown, err(e)))?;
    while let Some(entry) = stream.read() {
        let entry = entry.map_err(|e| with_path(shown, err(e)))?;
        let child = OsStr::from_bytes(entry.file_name().to_bytes());
        if child != "." && child != ".." {
            names.push(child.to_owned());
        }
    }
    drop(stream);
    for child in names {
        remove_entry(dir.as_fd(), &child, &shown.join(&child), depth + 1)?;
    }
    rustix::fs::unlinkat(dst, name, AtFlags::REMOVEDIR).map_err(|e| with_path(shown, err(e)))
}

/// The components of a path git listed, when every one is a plain name
/// (no `..`, `.`, root or empty part that could lead out of the tree).
pub(crate) fn plain_components(relative: &Path) -> Option<Vec<&OsStr>> {
    let mut parts = Vec::new();
    for component in relative.components() {
        match component {
            Component::Normal(name) => parts.push(name),
            _ => return None,
        }
    }
    (!parts.is_empty()).then_some(parts)
}

/// Lay the working tree's entry `relative` (as git lists it) from the tree
/// at `src` over the copy at `dst`: copied when present, removed from the
/// copy when the user deleted it. Never follows a link on either side.
pub(crate) fn overlay(
    src: &OwnedFd,
    dst: &OwnedFd,
    relative: &Path,
    report: &mut CopyReport,
) -> io::Result<()> {
    let Some(parts) = plain_components(relative) else {
        report.skip(relative, "not a plain relative path, not copied");
        return Ok(());
    };
    let (last, folders) = parts.split_last().unwrap_or((&parts[0], &[]));
    let mut from: Option<OwnedFd> = None;
    let mut to: Option<OwnedFd> = None;
    let mut shown = PathBuf::new();
    for folder in folders {
        shown.push(folder);
        let here = from.as_ref().map_or(src.as_fd(), |fd| fd.as_fd());
        match open_dir(here, folder) {
            Ok(fd) => from = Some(fd),
            Err(rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR) => {
                report.skip(relative, "beyond a symbolic link, not copied");
                return Ok(());
            }
            Err(rustix::io::Errno::NOENT) => {
                let there = to.as_ref().map_or(dst.as_fd(), |fd| fd.as_fd());
                // Deleted in the working tree, folder and all.
                return remove_entry(there, folder, &shown, 0);
            }
            Err(e) => return Err(with_path(&shown, err(e))),
        }
        let there = to.as_ref().map_or(dst.as_fd(), |fd| fd.as_fd());
        to = Some(ensure_dir(there, folder, &shown)?);
    }
    let here = from.as_ref().map_or(src.as_fd(), |fd| fd.as_fd());
    let there = to.as_ref().map_or(dst.as_fd(), |fd| fd.as_fd());
    match rustix::fs::statat(here, *last, AtFlags::SYMLINK_NOFOLLOW) {
        Err(rustix::io::Errno::NOENT) => remove_entry(there, last, relative, 0),
        Err(e) => Err(with_path(relative, err(e))),
        Ok(_) => copy_entry(here, there, last, relative, folders.len(), report),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Seek as _, Write as _};
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn a_sparse_file_is_copied_sparse() {
        let tmp = tempfile::tempdir().expect("tmp");
        let (from, to) = (tmp.path().join("from"), tmp.path().join("to"));
        std::fs::create_dir_all(&from).expect("mkdir");
        std::fs::create_dir_all(&to).expect("mkdir");
        let size: u64 = 8 << 30;
        let mut file = std::fs::File::create(from.join("big")).expect("create");
        file.write_all(b"head").expect("write");
        file.seek(io::SeekFrom::Start(4 << 30)).expect("seek");
        file.write_all(b"middle").expect("write");
        file.set_len(size).expect("extend");
        drop(file);
        let report = copy_tree(&from, &to).expect("copy");
        assert!(report.skipped.is_empty(), "{report:?}");
        let copied = std::fs::metadata(to.join("big")).expect("stat");
        assert_eq!(copied.len(), size);
        // Holes stay holes: a few blocks, not 8 GiB.
        assert!(
            copied.blocks() * 512 < 16 << 20,
            "{} blocks",
            copied.blocks()
        );
        let mut bytes = [0u8; 6];
        let mut copy = std::fs::File::open(to.join("big")).expect("open");
        copy.seek(io::SeekFrom::Start(4 << 30)).expect("seek");
        std::io::Read::read_exact(&mut copy, &mut bytes).expect("read");
        assert_eq!(&bytes, b"middle");
        copy.seek(io::SeekFrom::Start(0)).expect("seek");
        std::io::Read::read_exact(&mut copy, &mut bytes[..4]).expect("read");
        assert_eq!(&bytes[..4], b"head");
    }
}
