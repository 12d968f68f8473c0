//! A repository's hooks: read from its files on the host (below the root,
//! no link followed, capped), never run there. Once the user has trusted a
//! file at its content (`trust.rs`), its hooks run in the session's guest
//! (`guest.rs`), under the mode's lock, like any command the model runs.
//!
//! The files are read again at every turn's start, so a file the model (or
//! anyone) changed is untrusted from the next turn on, and a file trusted
//! meanwhile runs from the next turn on. An untrusted file is recorded once
//! per content (`hooks.untrusted`), so the user is told what does not run.

use super::claude::parse_with_origin;
use super::trust::TrustedHooks;
use super::{HookOrigin, HookSpec};
use crate::extensions::{open_folder, read_text};
use crate::{CoreError, Session};
use cortex_protocol::{EventKind, TurnId};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::os::fd::AsFd;
use std::path::Path;

/// The files a repository's hooks are read from: (folder, name).
pub const REPOSITORY_HOOK_FILES: [(&str, &str); 3] = [
    (".cortex", "hooks.json"),
    (".claude", "settings.json"),
    (".claude", "settings.local.json"),
];

/// The largest hook file read.
const FILE_CAP: u64 = 256 * 1024;

/// One hook file of the repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RepositoryHookFile {
    /// Relative to the repository (`.cortex/hooks.json`).
    pub file: String,
    /// The sha256 of its content (what trusting it records).
    pub sha256: String,
    /// The hooks Cortex would run from it.
    pub hooks: Vec<HookSpec>,
    /// Its entries Cortex does not run, with why.
    pub skipped: Vec<String>,
}

/// What the repository's hook files hold.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FoundHooks {
    /// Files with hooks (a settings file without any is left out).
    pub files: Vec<RepositoryHookFile>,
    /// (file, why) for files that exist and cannot be used.
    pub rejected: Vec<(String, String)>,
}

/// The hook files of the repository whose workspace is `workspace`.
pub fn find(workspace: &Path) -> FoundHooks {
    let mut found = FoundHooks::default();
    for (folder, name) in REPOSITORY_HOOK_FILES {
        let file = format!("{folder}/{name}");
        let Some(dir) = open_folder(workspace, true, &[folder]) else {
            continue;
        };
        let text = match read_text(dir.as_fd(), name, FILE_CAP) {
            Ok(text) => text,
            Err(reason) if reason == "no such file" => continue,
            Err(reason) => {
                found.rejected.push((file, reason));
                continue;
            }
        };
        let sha256 = hex(&Sha256::digest(text.as_bytes()));
        let origin = HookOrigin::Repository {
            file: file.clone(),
            sha256: sha256.clone(),
        };
        match parse_with_origin(&text, &file, &origin) {
            Ok(parsed) if parsed.hooks.is_empty() && parsed.skipped.is_empty() => {}
            Ok(parsed) => found.files.push(RepositoryHookFile {
                file,
                sha256,
                hooks: parsed.hooks,
                skipped: parsed.skipped,
            }),
            Err(reason) => found.rejected.push((file, reason)),
        }
    }
    found
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Session {
    /// At a turn's start: the repository's hook files read again; the hooks
    /// of those the user trusted at this content run from now on, and each
    /// untrusted file is recorded the first time it is seen at a content.
    /// A trust file that cannot be read trusts nothing, said once.
    pub(crate) async fn load_repository_hooks(&mut self, turn: &TurnId) -> Result<(), CoreError> {
        let workspace = self.workspace.clone();
        let found = tokio::task::spawn_blocking(move || find(&workspace))
            .await
            .unwrap_or_default();
        let trusted = match self.hooks.trust_file() {
            Some(path) => TrustedHooks::load(path).map_err(|e| e.to_string()),
            None => Err("no trust file is configured".to_owned()),
        };
        let mut running = Vec::new();
        let mut untrusted = Vec::new();
        for file in found.files {
            let ok = trusted
                .as_ref()
                .is_ok_and(|t| t.is_trusted(&self.repository, &file.file, &file.sha256));
            if ok {
                running.extend(file.hooks);
            } else if self.hooks.first_seen(&file.file, &file.sha256) {
                untrusted.push(file);
            }
        }
        self.hooks.set_repository(running);
        for file in untrusted {
            if let Err(reason) = &trusted {
                tracing::warn!("repository hooks cannot be trusted: {reason}");
            }
            let event = EventKind::HooksUntrusted {
                file: file.file,
                sha256: file.sha256,
                hooks: u32::try_from(file.hooks.len()).unwrap_or(u32::MAX),
            };
            self.timeline.emit(Some(turn), event).await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_files_are_read_below_the_root_without_links() {
        let repo = tempfile::tempdir().expect("tempdir");
        let root = repo.path();
        std::fs::create_dir_all(root.join(".cortex")).expect("mkdir");
        std::fs::create_dir_all(root.join(".claude")).expect("mkdir");
        std::fs::write(
            root.join(".cortex/hooks.json"),
            r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}]}}"#,
        )
        .expect("write");
        // Settings without hooks are no hook file.
        std::fs::write(root.join(".claude/settings.json"), r#"{"model": "x"}"#).expect("write");
        let outside = tempfile::tempdir().expect("tempdir");
        std::fs::write(outside.path().join("h.json"), r#"{"hooks": {}}"#).expect("write");
        std::os::unix::fs::symlink(
            outside.path().join("h.json"),
            root.join(".claude/settings.local.json"),
        )
        .expect("link");
        let found = find(root);
        assert_eq!(found.files.len(), 1);
        let file = &found.files[0];
        assert_eq!(file.file, ".cortex/hooks.json");
        assert_eq!(file.sha256.len(), 64);
        assert_eq!(file.hooks[0].command, "./guard.sh");
        assert!(matches!(
            &file.hooks[0].origin,
            HookOrigin::Repository { file, .. } if file == ".cortex/hooks.json"
        ));
        assert_eq!(found.rejected.len(), 1);
        assert_eq!(found.rejected[0].0, ".claude/settings.local.json");
        assert!(found.rejected[0].1.contains("link"), "{:?}", found.rejected);
        // A folder swapped for a link is not entered.
        std::fs::remove_dir_all(root.join(".cortex")).expect("rm");
        std::os::unix::fs::symlink(outside.path(), root.join(".cortex")).expect("link");
        std::fs::write(
            outside.path().join("hooks.json"),
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}}"#,
        )
        .expect("write");
        assert!(find(root).files.is_empty());
    }
}
