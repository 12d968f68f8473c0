//! The gitignore-aware parallel walk shared by `glob` and `grep`.
//!
//! Both tools walk with the `ignore` crate's parallel walker (as ripgrep
//! does): `.gitignore`, `.ignore` and git excludes are respected even outside
//! a git repository, hidden files and `.git` are skipped, and symlinks are not
//! followed — so a symlink pointing outside the workspace is never read.
//! Each walker thread collects into its own buffer; the buffers are merged
//! when the threads finish.

use crate::{ToolError, Workspace};
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkBuilder, WalkState};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A walker over `dir` with ripgrep's default filters.
pub(crate) fn walker(dir: &Path) -> WalkBuilder {
    let mut builder = WalkBuilder::new(dir);
    builder
        .standard_filters(true)
        .require_git(false)
        .follow_links(false)
        .threads(walker_threads())
        // Hidden files are skipped already, but a `.gitignore` whitelist could
        // bring `.git` back. Bytes, not `file_name()`, which parses the path.
        .filter_entry(|entry| !entry.path().as_os_str().as_bytes().ends_with(b"/.git"));
    builder
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
