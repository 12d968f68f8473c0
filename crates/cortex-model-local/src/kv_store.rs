//! The KV cache kept on disk between processes.
//!
//! Every `cortex exec` is a new process, so the in-process prefix reuse of
//! [`crate::engine`] starts cold on each turn of a resumed session, and the
//! first round pays for the whole history again (~25 ms a token for the 1.5B
//! model here). When a model shuts down it saves its context (llama.cpp's
//! state file: the KV cache and the tokens it holds); the next process's first
//! request loads the saved state whose tokens share the longest prefix with
//! its prompt and evaluates only the rest.
//!
//! States are matched by content, not by session id: the provider never
//! learns which session it serves, and a resumed session's prompt starts with
//! the tokens its previous turn ended with, so the match finds it; a new
//! session in the same mode still reuses the system prompt and tool
//! definitions of another one.
//!
//! A process that continues a saved conversation (its prompt shares at least
//! 90 % of the saved tokens) replaces that state when it saves; one that
//! only shares a prefix with it (another session, same system prompt and
//! tools) saves a new one.
//!
//! Layout: `<root>/<model key>/<id>.state` (llama.cpp's file) and
//! `<id>.tokens` (the same tokens as little-endian `i32`, read to pick a
//! candidate without loading a state). The model key names the GGUF file, its
//! size and the context size, so a state is only offered to a context that
//! can load it. Only the newest [`KvStore::keep`] states are kept.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Why a state was not saved.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SaveError<E> {
    #[error("{}: {error}", path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    /// llama.cpp could not write its state file.
    #[error("{0}")]
    State(E),
}

/// Saved states under one model key.
#[derive(Debug, Clone)]
pub(crate) struct KvStore {
    dir: PathBuf,
    keep: usize,
}

/// A saved state and how many leading tokens it shares with a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Candidate {
    pub id: String,
    pub state: PathBuf,
    pub shared: usize,
}

impl KvStore {
    /// The store for the model at `model` run with a context of `context`
    /// tokens, under `root`.
    pub fn new(root: &Path, model: &Path, context: u32, keep: usize) -> KvStore {
        let stem = model
            .file_stem()
            .map_or_else(|| "model".into(), |s| s.to_string_lossy().into_owned());
        let size = std::fs::metadata(model).map_or(0, |m| m.len());
        let key: String = format!("{stem}-{size:x}-c{context}")
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "._-".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        KvStore {
            dir: root.join(key),
            keep: keep.max(1),
        }
    }

    /// How many states are kept.
    pub fn keep(&self) -> usize {
        self.keep
    }

    fn tokens_path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.tokens"))
    }

    fn state_path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.state"))
    }

    /// A fresh id for a state this process saves.
    pub fn new_id() -> String {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        format!("{nanos:x}-{:x}", std::process::id())
    }

    /// The saved state sharing the most leading tokens with `prompt`, if it
    /// shares at least `min`.
    pub fn best_match(&self, prompt: &[i32], min: usize) -> Option<Candidate> {
        let entries = std::fs::read_dir(&self.dir).ok()?;
        let mut best: Option<Candidate> = None;
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().and_then(|e| e.to_str()) != Some("tokens") {
                continue;
            }
            let Some(id) = path.file_stem().and_then(|s| s.to_str()) else {
                continue;
            };
            let state = self.state_path(id);
            if !state.is_file() {
                continue;
            }
            let Ok(saved) = read_tokens(&path) else {
                continue;
            };
            let shared = saved.iter().zip(prompt).take_while(|(a, b)| a == b).count();
            if shared >= min && best.as_ref().is_none_or(|b| shared > b.shared) {
                best = Some(Candidate {
                    id: id.to_owned(),
                    state,
                    shared,
                });
            }
        }
        best
    }

    /// Save a state under `id`: `write_state` writes llama.cpp's file to the
    /// path it is given; both files are written beside their final names and
    /// renamed into place, then the oldest states beyond [`Self::keep`] are
    /// removed. On error nothing of this save is left behind.
    pub fn save<E>(
        &self,
        id: &str,
        tokens: &[i32],
        write_state: impl FnOnce(&Path) -> Result<(), E>,
    ) -> Result<(), SaveError<E>> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |error| SaveError::Io { path, error }
        };
        // The saved state holds the prompts it was computed from: the
        // user's alone (folders `0700`, files `0600`).
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .map_err(io(&self.dir))?;
        let tmp_state = self.dir.join(format!(".{id}.state.tmp"));
        let tmp_tokens = self.dir.join(format!(".{id}.tokens.tmp"));
        let result = (|| {
            write_state(&tmp_state).map_err(SaveError::State)?;
            // llama.cpp wrote the state with the umask's mode.
            std::fs::set_permissions(&tmp_state, std::fs::Permissions::from_mode(0o600))
                .map_err(io(&tmp_state))?;
            let bytes: Vec<u8> = tokens.iter().flat_map(|t| t.to_le_bytes()).collect();
            std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(&tmp_tokens)
                .and_then(|mut file| file.write_all(&bytes))
                .map_err(io(&tmp_tokens))?;
            std::fs::rename(&tmp_state, self.state_path(id)).map_err(io(&tmp_state))?;
            std::fs::rename(&tmp_tokens, self.tokens_path(id)).map_err(io(&tmp_tokens))
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp_state);
            let _ = std::fs::remove_file(&tmp_tokens);
        }
        result?;
        self.prune();
        Ok(())
    }

    /// Keep the newest [`Self::keep`] states (by the time they were saved).
    fn prune(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let mut saved: Vec<(SystemTime, String)> = entries
            .flatten()
            .filter_map(|e| {
                let path = e.path();
                if path.extension().and_then(|x| x.to_str()) != Some("tokens") {
                    return None;
                }
                let id = path.file_stem()?.to_str()?.to_owned();
                let time = e.metadata().ok()?.modified().ok()?;
                Some((time, id))
            })
            .collect();
        saved.sort_by_key(|s| std::cmp::Reverse(s.0));
        for (_, id) in saved.into_iter().skip(self.keep) {
            let _ = std::fs::remove_file(self.tokens_path(&id));
            let _ = std::fs::remove_file(self.state_path(&id));
        }
    }
}

fn read_tokens(path: &Path) -> std::io::Result<Vec<i32>> {
    let bytes = std::fs::read(path)?;
    Ok(bytes
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(dir: &Path, keep: usize) -> KvStore {
        let model = dir.join("m.gguf");
        std::fs::write(&model, b"GGUF").expect("model");
        KvStore::new(&dir.join("kv"), &model, 4096, keep)
    }

    fn save(store: &KvStore, id: &str, tokens: &[i32]) {
        store
            .save(id, tokens, |p| std::fs::write(p, format!("state of {id}")))
            .expect("save");
    }

    #[test]
    fn picks_the_state_with_the_longest_shared_prefix() {
        let dir = tempfile::tempdir().expect("dir");
        let s = store(dir.path(), 8);
        save(&s, "a", &[1, 2, 3, 9]);
        save(&s, "b", &[1, 2, 3, 4, 5, 6]);
        save(&s, "c", &[7, 7]);
        let best = s.best_match(&[1, 2, 3, 4, 5, 0, 0], 2).expect("match");
        assert_eq!((best.id.as_str(), best.shared), ("b", 5));
        assert_eq!(
            std::fs::read_to_string(&best.state).expect("state"),
            "state of b"
        );
        assert_eq!(s.best_match(&[1, 2, 3, 4, 5], 6), None);
        assert_eq!(s.best_match(&[8], 1), None);
    }

    #[test]
    fn keeps_only_the_newest_states() {
        let dir = tempfile::tempdir().expect("dir");
        let s = store(dir.path(), 2);
        for (i, id) in ["old", "mid", "new"].iter().enumerate() {
            save(&s, id, &[1, i32::try_from(i).expect("i")]);
            // Modification times must differ for the order to be defined.
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let mut left: Vec<String> = std::fs::read_dir(&s.dir)
            .expect("dir")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["mid.state", "mid.tokens", "new.state", "new.tokens"]);
    }

    #[test]
    fn a_failed_save_leaves_no_files() {
        let dir = tempfile::tempdir().expect("dir");
        let s = store(dir.path(), 2);
        let err = s
            .save("x", &[1], |p| {
                std::fs::write(p, b"half").expect("half a state");
                Err("disk full")
            })
            .expect_err("fails");
        assert!(matches!(err, SaveError::State("disk full")), "{err}");
        assert_eq!(std::fs::read_dir(&s.dir).expect("dir").count(), 0);
    }

    #[test]
    fn the_key_separates_models_and_context_sizes() {
        let dir = tempfile::tempdir().expect("dir");
        let model = dir.path().join("m.gguf");
        std::fs::write(&model, b"GGUF").expect("model");
        let a = KvStore::new(dir.path(), &model, 4096, 1);
        let b = KvStore::new(dir.path(), &model, 8192, 1);
        assert_ne!(a.dir, b.dir);
    }
}
