//! Helpers shared by the crate's unit tests.

use std::path::Path;
use std::process::Command;

/// Run `script` with bash in `dir` (git identity set, so commits work);
/// panics with the script when it fails.
pub(crate) fn sh(dir: &Path, script: &str) {
    let status = Command::new("bash")
        .args(["-c", script])
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .status()
        .expect("bash");
    assert!(status.success(), "{script}");
}
