//! "Did you mean" for paths that do not exist.
//!
//! Models, small ones most of all, guess paths (`src/calc.py` for a root
//! `calc.py`). An error that names the real candidates turns the next call
//! into a correct one instead of a second guess.

use crate::search::{collect_parallel, is_file};
use crate::{ToolError, Workspace};
use std::path::Path;

/// Candidates named at most.
const MAX_SUGGESTIONS: usize = 3;

impl Workspace {
    /// The error for `shown` (as the model wrote it, relative to the root)
    /// not existing, naming files with the same name elsewhere.
    pub(crate) fn not_found(&self, shown: String) -> ToolError {
        let hint = match self.similar_files(&shown).as_slice() {
            [] => "; use glob to find files by name".to_owned(),
            [one] => format!("; did you mean `{one}`?"),
            many => format!(
                "; files with that name: {}",
                many.iter()
                    .map(|p| format!("`{p}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        ToolError::NotFound { path: shown, hint }
    }

    /// Files whose name equals the missing path's name, ignoring case; failing
    /// that, files with the same stem (`calc.rs` for `calc.py`). Sorted, at
    /// most [`MAX_SUGGESTIONS`].
    fn similar_files(&self, missing: &str) -> Vec<String> {
        let Some(name) = Path::new(missing).file_name().and_then(|n| n.to_str()) else {
            return Vec::new();
        };
        let name = name.to_lowercase();
        let stem = Path::new(&name)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or(&name)
            .to_owned();
        // A tree the walk refuses has no suggestions to give.
        let Ok((walk, _)) = self.walker(self.root()) else {
            return Vec::new();
        };
        let found = collect_parallel(&walk, || {
            |entry: ignore::DirEntry| {
                if !is_file(&entry) {
                    return None;
                }
                let candidate = entry.file_name().to_str()?.to_lowercase();
                let same_name = candidate == name;
                let same_stem = Path::new(&candidate).file_stem().and_then(|s| s.to_str())
                    == Some(stem.as_str());
                (same_name || same_stem).then(|| (!same_name, entry.into_path()))
            }
        });
        let best = found.iter().map(|(rank, _)| *rank).min();
        let mut paths: Vec<String> = found
            .iter()
            .filter(|(rank, _)| Some(*rank) == best)
            .map(|(_, path)| self.display(path))
            .collect();
        paths.sort_unstable();
        paths.truncate(MAX_SUGGESTIONS);
        paths
    }
}

#[cfg(test)]
mod tests {
    use crate::Workspace;
    use cortex_protocol::ReadFileArgs;

    fn read_error(ws: &Workspace, path: &str) -> String {
        let args = ReadFileArgs {
            path: path.to_owned(),
            offset: None,
            limit: None,
        };
        match ws.read_file(&args) {
            Ok(out) => panic!("read {path}: {out}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn names_the_file_with_the_same_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("calc.py"), "x = 1\n").expect("write");
        let ws = Workspace::new(dir.path()).expect("workspace");
        assert_eq!(
            read_error(&ws, "src/calc.py"),
            "`src/calc.py` does not exist; did you mean `calc.py`?"
        );
    }

    #[test]
    fn prefers_the_same_name_to_the_same_stem_and_caps_the_list() {
        let dir = tempfile::tempdir().expect("tempdir");
        for p in [
            "a/util.rs",
            "b/util.rs",
            "c/util.rs",
            "d/util.rs",
            "util.py",
        ] {
            let path = dir.path().join(p);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, "").expect("write");
        }
        let ws = Workspace::new(dir.path()).expect("workspace");
        assert_eq!(
            read_error(&ws, "src/util.rs"),
            "`src/util.rs` does not exist; files with that name: `a/util.rs`, `b/util.rs`, `c/util.rs`"
        );
        assert_eq!(
            read_error(&ws, "util.txt"),
            "`util.txt` does not exist; files with that name: `a/util.rs`, `b/util.rs`, `c/util.rs`"
        );
    }

    #[test]
    fn points_to_glob_when_nothing_is_similar() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = Workspace::new(dir.path()).expect("workspace");
        assert_eq!(
            read_error(&ws, "missing.md"),
            "`missing.md` does not exist; use glob to find files by name"
        );
    }
}
