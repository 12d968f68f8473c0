//! The gitignore-aware parallel walk shared by `glob` and `grep`.
//!
//! Both tools walk with the `ignore` crate's parallel walker (as ripgrep
//! does): `.gitignore`, `.ignore` and git excludes are respected even outside
//! a git repository, hidden files and `.git` are skipped, and symlinks are not
//! followed — so a symlink pointing outside the workspace is never read.
//! The walker opens each folder's `.gitignore` and `.ignore` itself, so a
//! folder where one of them is a FIFO, socket or device is not entered (and
//! named in a note); a FIFO in the search's own path refuses the search. A
//! walk ends [`MAX_WALK_DEPTH`] folders down; symlink loops never start,
//! since no link is followed.
//! Each walker thread collects into its own buffer; the buffers are merged
//! when the threads finish.

use crate::open::{Opened, open_no_block};
use crate::{ToolError, Workspace};
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkBuilder, WalkState};
use std::io::BufRead as _;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The deepest folder a search descends to, counted from where it starts
/// (as a copy's `MAX_DEPTH`): a tree made deep on purpose ends there.
pub(crate) const MAX_WALK_DEPTH: usize = 128;

/// The per-folder files the walker itself opens (ignore rules, and what a
/// `.git` file names): each must be a regular file, or absent, before the
/// walker may enter the folder, since opening a FIFO there would block it.
const READ_BY_THE_WALK: &[&str] = &[".gitignore", ".ignore"];

/// Folders a walk did not enter because one of their ignore files is a
/// FIFO, socket or device node (shown relative to the walk's start).
#[derive(Clone, Default)]
pub(crate) struct Skipped(Arc<Mutex<Vec<PathBuf>>>);

impl Skipped {
    fn push(&self, dir: &Path) {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(dir.to_path_buf());
    }

    /// One note line for the output, or `None` when nothing was skipped.
    pub(crate) fn note(&self, ws: &Workspace) -> Option<String> {
        let mut dirs = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone();
        if dirs.is_empty() {
            return None;
        }
        dirs.sort_unstable();
        let named: Vec<String> = dirs.iter().take(5).map(|d| ws.display(d)).collect();
        Some(format!(
            "({} folders not searched: their .gitignore or .ignore is not a regular file: {})",
            dirs.len(),
            named.join(", ")
        ))
    }
}

/// Whether the walker may read `dir`'s ignore files without blocking: each
/// is absent, a folder, or (after following a link) a regular file.
fn ignore_files_are_safe(dir: &Path) -> bool {
    READ_BY_THE_WALK.iter().all(|name| {
        let path = dir.join(name);
        match std::fs::symlink_metadata(&path) {
            Err(_) => true,
            Ok(meta) if meta.is_file() || meta.is_dir() => true,
            Ok(meta) if meta.file_type().is_symlink() => {
                std::fs::metadata(&path).map_or(true, |target| !is_special(&target))
            }
            Ok(_) => false,
        }
    })
}

fn is_special(meta: &std::fs::Metadata) -> bool {
    !meta.is_file() && !meta.is_dir()
}

/// The workspace's own `.git/info/exclude`, read without blocking (the
/// walker's own reading of excludes is off: it follows what a `.git` file
/// in any folder names).
fn root_excludes(root: &Path) -> Option<Gitignore> {
    let path = root.join(".git/info/exclude");
    let Ok(Opened::File(file, meta)) = open_no_block(&path, false) else {
        return None;
    };
    if meta.len() > MAX_EXCLUDE_BYTES {
        return None;
    }
    let mut builder = GitignoreBuilder::new(root);
    for line in std::io::BufReader::new(file).lines() {
        let _ = builder.add_line(Some(path.clone()), &line.ok()?);
    }
    builder.build().ok()
}

/// Larger exclude files are not read (git's own are a few lines).
const MAX_EXCLUDE_BYTES: u64 = 1024 * 1024;

impl Workspace {
    /// A walker over `dir` (inside the workspace) with ripgrep's default
    /// filters, and the folders it will skip. Refused when an ignore file
    /// of `dir` or of a folder between it and the root is a special file.
    pub(crate) fn walker(&self, dir: &Path) -> Result<(WalkBuilder, Skipped), ToolError> {
        let root = self.root().to_path_buf();
        for ancestor in dir.ancestors().take_while(|a| a.starts_with(&root)) {
            if !ignore_files_are_safe(ancestor) {
                return Err(ToolError::Invalid(format!(
                    "`{}` holds a .gitignore or .ignore that is not a regular file (a FIFO, socket or device); remove it to search here",
                    self.display(ancestor)
                )));
            }
        }
        let skipped = Skipped::default();
        let excludes = root_excludes(&root);
        let mut builder = WalkBuilder::new(dir);
        let note = skipped.clone();
        builder
            .standard_filters(true)
            .require_git(false)
            .follow_links(false)
            // The global excludes come from the guest's home, which the
            // model writes; a `.git` file's target and its `info/exclude`
            // are the model's too.
            .git_global(false)
            .git_exclude(false)
            .max_depth(Some(MAX_WALK_DEPTH))
            .threads(walker_threads())
            .filter_entry(move |entry| {
                let path = entry.path();
                // Hidden files are skipped already, but a `.gitignore`
                // whitelist could bring `.git` back. Bytes, not
                // `file_name()`, which parses the path.
                if path.as_os_str().as_bytes().ends_with(b"/.git") {
                    return false;
                }
                let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
                if excludes
                    .as_ref()
                    .is_some_and(|ex| ex.matched(path, is_dir).is_ignore())
                {
                    return false;
                }
                if is_dir && !ignore_files_are_safe(path) {
                    note.push(path);
                    return false;
                }
                true
            });
        Ok((builder, skipped))
    }
}

/// At most this many threads per walk: the guest's process limit counts
/// them, and the walker waits forever for a thread it could not start.
const MAX_WALKER_THREADS: usize = 8;

/// One thread per core, up to [`MAX_WALKER_THREADS`].
fn walker_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_WALKER_THREADS))
}

/// Whether the walked entry is a regular file (symlinks are not followed).
pub(crate) fn is_file(entry: &DirEntry) -> bool {
    entry.file_type().is_some_and(|t| t.is_file())
}

/// Walk in parallel; `make` builds one per-thread visitor, which maps each
/// entry to an optional result. Results come back in no particular order.
pub(crate) fn collect_parallel<T, M, F>(builder: &WalkBuilder, make: M) -> Vec<T>
where
    T: Send,
    M: Fn() -> F,
    F: FnMut(DirEntry) -> Option<T> + Send,
{
    let sink = Mutex::new(Vec::new());
    let mut visitors = Visitors {
        make: &make,
        sink: &sink,
    };
    builder.build_parallel().visit(&mut visitors);
    sink.into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

struct Visitors<'s, T, M> {
    make: &'s M,
    sink: &'s Mutex<Vec<T>>,
}

impl<'s, T, M, F> ParallelVisitorBuilder<'s> for Visitors<'s, T, M>
where
    T: Send + 's,
    M: Fn() -> F,
    F: FnMut(DirEntry) -> Option<T> + Send + 's,
{
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Collector {
            f: (self.make)(),
            local: Vec::new(),
            sink: self.sink,
        })
    }
}

/// One thread's visitor; hands its results over when the walk drops it.
struct Collector<'s, T, F> {
    f: F,
    local: Vec<T>,
    sink: &'s Mutex<Vec<T>>,
}

impl<T: Send, F: FnMut(DirEntry) -> Option<T> + Send> ParallelVisitor for Collector<'_, T, F> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        // Unreadable entries are skipped, as ripgrep does (it only warns).
        if let Ok(entry) = entry
            && let Some(found) = (self.f)(entry)
        {
            self.local.push(found);
        }
        WalkState::Continue
    }
}

impl<T, F> Drop for Collector<'_, T, F> {
    fn drop(&mut self) {
        let mut sink = self
            .sink
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        sink.append(&mut self.local);
    }
}

impl Workspace {
    /// Resolve the optional `path` argument of a search tool, which must
    /// exist (default: the root).
    pub(crate) fn search_root(&self, path: Option<&str>) -> Result<PathBuf, ToolError> {
        let path = path.map(str::trim).filter(|p| !p.is_empty()).unwrap_or(".");
        let resolved = self.resolve(path)?;
        if !resolved.exists() {
            return Err(self.not_found(path.to_owned()));
        }
        Ok(resolved)
    }
}
