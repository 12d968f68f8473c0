//! Shared fixtures: a workspace folder next to an "outside" folder holding a
//! secret, so that escapes can be attempted and checked.
#![allow(dead_code)]

use cortex_tools::Workspace;
use std::path::{Path, PathBuf};

pub const SECRET: &str = "top secret\n";

pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub ws: Workspace,
    /// Canonical path of the folder outside the workspace.
    pub outside: PathBuf,
}

impl Fixture {
    pub fn new() -> Fixture {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("ws");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&root).expect("mkdir ws");
        std::fs::create_dir_all(&outside).expect("mkdir outside");
        std::fs::write(outside.join("secret.txt"), SECRET).expect("write secret");
        let ws = Workspace::new(&root).expect("workspace");
        let outside = std::fs::canonicalize(outside).expect("canonicalize");
        Fixture { dir, ws, outside }
    }

    pub fn root(&self) -> &Path {
        self.ws.root()
    }

    /// Write `content` at `rel` under the root, creating folders.
    pub fn write(&self, rel: &str, content: &str) {
        let path = self.root().join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(path, content).expect("write");
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root().join(rel)).expect("read")
    }

    pub fn link(&self, target: &Path, rel: &str) {
        std::os::unix::fs::symlink(target, self.root().join(rel)).expect("symlink");
    }

    /// The outside secret is unchanged and nothing new appeared outside.
    pub fn assert_outside_untouched(&self) {
        let secret = std::fs::read_to_string(self.outside.join("secret.txt")).expect("secret");
        assert_eq!(secret, SECRET);
        let names: Vec<_> = std::fs::read_dir(&self.outside)
            .expect("read_dir")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, ["secret.txt"], "files appeared outside");
    }
}

/// Set a file's modification time to `secs` after the epoch.
pub fn set_mtime(path: &Path, secs: u64) {
    let file = std::fs::File::options()
        .write(true)
        .open(path)
        .expect("open for mtime");
    let time = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
    file.set_modified(time).expect("set mtime");
}
