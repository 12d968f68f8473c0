//! Cortex's own folders, which no repository may contain or sit inside.
//!
//! The config folder holds the API tokens, the data folder the session store
//! (every session's timeline), the models and the guest homes, the runtime
//! folder the private API socket. A repository that contained one of them
//! (`--repo ~`) would hand it to the model, even in Ask mode; one inside them
//! would let the model write Cortex's own state. The one exception is the
//! folder where Cortex keeps isolated copies and clones (`workspaces`), which
//! the caller names.
//!
//! The folders are given by the program that knows them (the CLI reads the
//! XDG variables once); this module only compares paths.

use std::path::{Path, PathBuf};

/// Cortex's folders, each with the role it is named by in errors.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HarnessDirs {
    dirs: Vec<(&'static str, PathBuf)>,
}

/// A repository that would put Cortex's own state in the model's reach.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HarnessFolderError {
    /// The repository contains one of Cortex's folders.
    #[error(
        "`{repository}` contains Cortex's {role} folder `{folder}`, which the model must never \
         reach; pick the project folder itself"
    )]
    Contains {
        /// The refused repository.
        repository: PathBuf,
        /// Which folder: config, data or runtime.
        role: &'static str,
        /// The folder inside it.
        folder: PathBuf,
    },
    /// The repository lies inside one of Cortex's folders.
    #[error(
        "`{repository}` is inside Cortex's {role} folder `{folder}`, which the model must never reach"
    )]
    Inside {
        /// The refused repository.
        repository: PathBuf,
        /// Which folder: config, data or runtime.
        role: &'static str,
        /// The folder around it.
        folder: PathBuf,
    },
}

impl HarnessDirs {
    /// No folders: nothing is refused (tests, embedders without state).
    pub fn new() -> HarnessDirs {
        HarnessDirs::default()
    }

    /// Add a folder; `role` names it in errors ("config", "data", "runtime").
    /// The folder need not exist yet.
    pub fn with(mut self, role: &'static str, folder: impl Into<PathBuf>) -> HarnessDirs {
        self.dirs.push((role, folder.into()));
        self
    }

    /// The folder added under `role`, if any: the session reads the user's
    /// own instructions from the config folder (`instructions.rs`).
    pub fn folder(&self, role: &str) -> Option<&Path> {
        self.dirs
            .iter()
            .find(|(r, _)| *r == role)
            .map(|(_, folder)| folder.as_path())
    }

    /// Whether `repository` (canonical) may be a session's repository: it
    /// must neither contain nor be inside any of the folders, except that a
    /// folder strictly inside `workspaces` (Cortex's copies and clones) is
    /// fine. Folders are compared canonicalised when they exist, as given
    /// when they do not.
    pub fn check(
        &self,
        repository: &Path,
        workspaces: Option<&Path>,
    ) -> Result<(), HarnessFolderError> {
        let workspaces = workspaces.map(canonical_or_given);
        let own_copy = workspaces
            .as_deref()
            .is_some_and(|dir| repository.starts_with(dir) && repository != dir);
        for (role, folder) in &self.dirs {
            let folder = canonical_or_given(folder);
            if folder.starts_with(repository) {
                return Err(HarnessFolderError::Contains {
                    repository: repository.to_path_buf(),
                    role,
                    folder,
                });
            }
            if repository.starts_with(&folder) && !own_copy {
                return Err(HarnessFolderError::Inside {
                    repository: repository.to_path_buf(),
                    role,
                    folder,
                });
            }
        }
        Ok(())
    }
}

fn canonical_or_given(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs() -> HarnessDirs {
        HarnessDirs::new()
            .with("config", "/r/home/.config/cortex")
            .with("data", "/r/home/.local/share/cortex")
            .with("runtime", "/r/run/cortex")
    }

    fn workspaces() -> Option<&'static Path> {
        Some(Path::new("/r/home/.local/share/cortex/workspaces"))
    }

    #[test]
    fn a_folder_containing_or_inside_cortex_state_is_refused() {
        let d = dirs();
        let home = d
            .check(Path::new("/r/home"), workspaces())
            .expect_err("home");
        assert!(
            home.to_string()
                .contains("config folder `/r/home/.config/cortex`"),
            "{home}"
        );
        assert!(matches!(
            d.check(Path::new("/r"), workspaces()),
            Err(HarnessFolderError::Contains { .. })
        ));
        let inside = d
            .check(
                Path::new("/r/home/.local/share/cortex/models"),
                workspaces(),
            )
            .expect_err("in");
        assert!(
            matches!(inside, HarnessFolderError::Inside { role: "data", .. }),
            "{inside}"
        );
        assert!(d.check(Path::new("/r/run/cortex"), workspaces()).is_err());
        // The workspaces folder itself holds every copy: not a repository.
        assert!(
            d.check(
                Path::new("/r/home/.local/share/cortex/workspaces"),
                workspaces()
            )
            .is_err()
        );
        // Without a workspaces folder nothing under data is an exception.
        assert!(
            d.check(Path::new("/r/home/.local/share/cortex/workspaces/s1"), None)
                .is_err()
        );
    }

    #[test]
    fn projects_and_cortex_own_copies_are_fine() {
        let d = dirs();
        assert!(d.check(Path::new("/r/home/src/calc"), workspaces()).is_ok());
        assert!(d.check(Path::new("/r/home/.config"), None).is_err());
        assert!(
            d.check(
                Path::new("/r/home/.local/share/cortex/workspaces/s1"),
                workspaces()
            )
            .is_ok()
        );
        assert!(
            d.check(
                Path::new("/r/home/.local/share/cortex/workspaces/clones/calc-1"),
                workspaces()
            )
            .is_ok()
        );
        assert!(HarnessDirs::new().check(Path::new("/"), None).is_ok());
    }
}
