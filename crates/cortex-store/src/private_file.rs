//! The SQLite file and its companions hold every session's prompts, tool
//! output and file contents: they are the user's alone. A folder the store
//! creates for the file is `0700`; the file is created `0600` before SQLite
//! opens it, so its `-wal` and `-shm` (which SQLite creates with the
//! database file's permissions) are too; and a file an older version left
//! readable by others is tightened to `0600` at open. The umask is left
//! alone: it also governs what tools write into the user's repository.

use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The files of a database at `path`: itself, its WAL and its shared memory.
pub(crate) fn companions(path: &Path) -> [PathBuf; 3] {
    let with = |suffix: &str| {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    };
    [path.to_path_buf(), with("-wal"), with("-shm")]
}

/// Create `folder` and any missing parent with mode `0700` (folders that
/// exist keep their mode: they may be the user's).
pub(crate) fn create_folder(folder: &Path) -> io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(folder)
}

/// Create the database file `0600` when it does not exist yet. Any other
/// failure is left for SQLite's open to report; SQLite's in-memory name is
/// not a file.
pub(crate) fn create_file(path: &Path) {
    if path.as_os_str() == ":memory:" {
        return;
    }
    let _ = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path);
}

/// Take group and other access away from `path` if it exists and has any.
pub(crate) fn restrict(path: &Path) -> io::Result<()> {
    let mode = match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() => meta.permissions().mode(),
        Ok(_) => return Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    if mode & 0o077 == 0 {
        return Ok(());
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode & 0o700))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SqliteStore;

    fn mode(path: &Path) -> u32 {
        std::fs::symlink_metadata(path)
            .expect("metadata")
            .permissions()
            .mode()
            & 0o777
    }

    #[test]
    fn the_store_its_companions_and_its_new_folders_are_private() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let folder = tmp.path().join("data/cortex");
        let path = folder.join("cortex.db");
        let store = SqliteStore::open(&path).expect("open");
        assert_eq!(mode(&tmp.path().join("data")), 0o700);
        assert_eq!(mode(&folder), 0o700);
        let files = companions(&path);
        assert!(files[0].is_file() && files[1].is_file(), "db and WAL");
        for file in files.iter().filter(|f| f.exists()) {
            assert_eq!(mode(file), 0o600, "{}", file.display());
        }
        drop(store);

        // Left readable by an older version: tightened at the next open.
        for file in files.iter().filter(|f| f.exists()) {
            std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        }
        let _store = SqliteStore::open(&path).expect("reopen");
        for file in files.iter().filter(|f| f.exists()) {
            assert_eq!(mode(file), 0o600, "{}", file.display());
        }

        // A folder that was there keeps its mode: it may be the user's.
        let shared = tmp.path().join("shared");
        std::fs::create_dir(&shared).expect("mkdir");
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let _other = SqliteStore::open(&shared.join("x.db")).expect("open");
        assert_eq!(mode(&shared), 0o755);
        assert_eq!(mode(&shared.join("x.db")), 0o600);
    }
}
