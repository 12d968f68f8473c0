//! Which of a repository's hook files the user has trusted.
//!
//! A repository's hooks run only after the user has trusted that exact file:
//! the trust names the repository, the file and the sha256 of its content,
//! so a changed file (by a teammate's commit, or by the model in an earlier
//! turn) is untrusted again until the user looks at it once more. The list
//! lives in one JSON file in the user's data folder, outside every
//! repository and out of the guest's reach; only the user's own tools
//! (`cortex hooks trust`, the API) write it.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The name of the trust file in Cortex's data folder.
pub const TRUST_FILE: &str = "trusted-hooks.json";

/// One trusted file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustEntry {
    /// The repository's folder, as sessions name it.
    pub repository: String,
    /// The file, relative to the repository (`.cortex/hooks.json`).
    pub file: String,
    /// The sha256 of the content that was trusted.
    pub sha256: String,
}

/// Every trusted file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustedHooks {
    /// In the order they were trusted.
    #[serde(default)]
    pub trusted: Vec<TrustEntry>,
}

/// The trust file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// Reading or writing failed.
    #[error("{path}: {source}")]
    Io {
        /// The trust file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// It is not a trust file.
    #[error("{path} is not a trust file: {message}")]
    Malformed {
        /// The trust file.
        path: PathBuf,
        /// What the parser said.
        message: String,
    },
}

impl TrustedHooks {
    /// The trust file at `path`; none there is an empty list.
    pub fn load(path: &Path) -> Result<TrustedHooks, TrustError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(TrustedHooks::default());
            }
            Err(source) => {
                return Err(TrustError::Io {
                    path: path.to_owned(),
                    source,
                });
            }
        };
        serde_json::from_str(&text).map_err(|e| TrustError::Malformed {
            path: path.to_owned(),
            message: e.to_string(),
        })
    }

    /// Whether `file` of `repository` is trusted at this content.
    pub fn is_trusted(&self, repository: &Path, file: &str, sha256: &str) -> bool {
        let repository = repository.to_string_lossy();
        self.trusted
            .iter()
            .any(|e| e.repository == repository && e.file == file && e.sha256 == sha256)
    }

    /// Trust `file` of `repository` at `sha256` in the file at `path`,
    /// replacing an earlier trust of the same file.
    pub fn trust(
        path: &Path,
        repository: &Path,
        file: &str,
        sha256: &str,
    ) -> Result<(), TrustError> {
        let mut list = TrustedHooks::load(path)?;
        let repository = repository.to_string_lossy().into_owned();
        list.trusted
            .retain(|e| !(e.repository == repository && e.file == file));
        list.trusted.push(TrustEntry {
            repository,
            file: file.to_owned(),
            sha256: sha256.to_owned(),
        });
        list.save(path)
    }

    /// Forget every trust of `repository`'s files; how many there were.
    pub fn revoke(path: &Path, repository: &Path) -> Result<usize, TrustError> {
        let mut list = TrustedHooks::load(path)?;
        let repository = repository.to_string_lossy();
        let before = list.trusted.len();
        list.trusted.retain(|e| e.repository != repository);
        let removed = before - list.trusted.len();
        if removed > 0 {
            list.save(path)?;
        }
        Ok(removed)
    }

    /// Written whole to a temporary file, then renamed over the old one: a
    /// reader never sees half a list.
    fn save(&self, path: &Path) -> Result<(), TrustError> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let io = |source| TrustError::Io {
            path: path.to_owned(),
            source,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let text = serde_json::to_string_pretty(self).map_err(|e| TrustError::Malformed {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        let temporary = path.with_extension(format!("tmp.{}", std::process::id()));
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&temporary)
            .map_err(io)?;
        file.write_all(text.as_bytes()).map_err(io)?;
        file.sync_all().map_err(io)?;
        std::fs::rename(&temporary, path).map_err(io)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_names_the_repository_the_file_and_the_content() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("data").join(TRUST_FILE);
        let repo = Path::new("/src/app");
        assert!(TrustedHooks::load(&path).expect("none").trusted.is_empty());
        TrustedHooks::trust(&path, repo, ".cortex/hooks.json", "aa").expect("trust");
        let list = TrustedHooks::load(&path).expect("load");
        assert!(list.is_trusted(repo, ".cortex/hooks.json", "aa"));
        assert!(
            !list.is_trusted(repo, ".cortex/hooks.json", "bb"),
            "changed content"
        );
        assert!(
            !list.is_trusted(repo, ".claude/settings.json", "aa"),
            "another file"
        );
        assert!(!list.is_trusted(Path::new("/src/other"), ".cortex/hooks.json", "aa"));
        // Trusting new content replaces the old.
        TrustedHooks::trust(&path, repo, ".cortex/hooks.json", "bb").expect("trust");
        let list = TrustedHooks::load(&path).expect("load");
        assert_eq!(list.trusted.len(), 1);
        assert!(list.is_trusted(repo, ".cortex/hooks.json", "bb"));
        assert_eq!(TrustedHooks::revoke(&path, repo).expect("revoke"), 1);
        assert!(TrustedHooks::load(&path).expect("load").trusted.is_empty());
        std::fs::write(&path, "{oops").expect("write");
        assert!(matches!(
            TrustedHooks::load(&path),
            Err(TrustError::Malformed { .. })
        ));
    }
}
