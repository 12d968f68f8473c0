//! `glob`: find files by name pattern, newest first.
//!
//! A pattern without `/` matches file names at any depth (like ripgrep's
//! `--glob`); one with `/` matches the path relative to the searched folder,
//! with `*` not crossing `/` and `**` spanning folders.

use crate::search::{collect_parallel, is_file};
use crate::{ToolError, Workspace};
use cortex_protocol::GlobArgs;
use globset::{GlobBuilder, GlobSetBuilder};
use std::cmp::Reverse;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::time::SystemTime;

/// Paths listed at most.
pub(crate) const MAX_GLOB_RESULTS: usize = 100;

impl Workspace {
    /// Gitignore-aware glob, newest first, capped with a count of what was
    /// left out.
    pub fn glob(&self, args: &GlobArgs) -> Result<String, ToolError> {
        let dir = self.search_root(args.path.as_deref())?;
        if !dir.is_dir() {
            return Err(ToolError::Invalid(format!(
                "`{}` is a file; glob searches a folder",
                self.display(&dir)
            )));
        }
        let pattern = args.pattern.trim();
        // An absolute pattern inside the workspace: make it relative.
        let root_prefix = format!("{}/", self.root().display());
        let pattern = pattern.strip_prefix(&root_prefix).unwrap_or(pattern);
        let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
        let pattern = pattern.strip_prefix('/').unwrap_or(pattern);
        // The searched folder named again at the pattern's start (path `src`,
        // pattern `src/**/*.py`, after grep's hint named `src/**/*.py`), when
        // the folder has no folder of that name inside it.
        let shown = self.display(&dir);
        let pattern = match pattern.strip_prefix(&format!("{shown}/")) {
            Some(rest) if dir != self.root() && !dir.join(&shown).is_dir() => rest,
            _ => pattern,
        };
        if pattern.is_empty() {
            return Err(ToolError::Invalid("the glob pattern is empty".to_owned()));
        }
        let by_name = !pattern.contains('/');
        let glob = GlobBuilder::new(pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| ToolError::Invalid(format!("invalid glob `{pattern}`: {e}")))?;
        // A one-glob set rather than a GlobMatcher: the set picks a fast
        // strategy (extension, literal, prefix…) where the matcher always runs
        // a regex.
        let matcher = GlobSetBuilder::new()
            .add(glob)
            .build()
            .map_err(|e| ToolError::Invalid(format!("invalid glob `{pattern}`: {e}")))?;
        // Entries under `dir` are `dir` + `/` + the relative path.
        let prefix_len = dir.as_os_str().len() + 1;
        let (walk, skipped) = self.walker(&dir)?;
        let mut found = collect_parallel(&walk, || {
            |entry: ignore::DirEntry| {
                if !is_file(&entry) {
                    return None;
                }
                let path = entry.path().as_os_str().as_bytes();
                let hit = if by_name {
                    // The name is what follows the last `/` (cheaper than
                    // `file_name()`, which parses the whole path).
                    let start = memchr::memrchr(b'/', path).map_or(0, |i| i + 1);
                    matcher.is_match(OsStr::from_bytes(&path[start..]))
                } else {
                    path.get(prefix_len..)
                        .is_some_and(|rel| matcher.is_match(OsStr::from_bytes(rel)))
                };
                if !hit {
                    return None;
                }
                let mtime = entry
                    .metadata()
                    .ok()
                    .and_then(|m| m.modified().ok())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                Some((mtime, entry.into_path()))
            }
        });
        let note = skipped.note(self);
        if found.is_empty() {
            let none = "No files matched".to_owned();
            return Ok(note.map_or(none.clone(), |note| format!("{none}\n{note}")));
        }
        let total = found.len();
        let newest_first = |a: &(SystemTime, _), b: &(SystemTime, _)| {
            (Reverse(a.0), &a.1).cmp(&(Reverse(b.0), &b.1))
        };
        if total > MAX_GLOB_RESULTS {
            found.select_nth_unstable_by(MAX_GLOB_RESULTS, newest_first);
            found.truncate(MAX_GLOB_RESULTS);
        }
        found.sort_unstable_by(newest_first);
        let mut out: Vec<String> = found.iter().map(|(_, p)| self.display(p)).collect();
        if total > MAX_GLOB_RESULTS {
            out.push(format!("({} more not shown)", total - MAX_GLOB_RESULTS));
        }
        out.extend(note);
        Ok(out.join("\n"))
    }
}
