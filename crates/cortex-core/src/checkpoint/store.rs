//! A session's checkpoint store: `<checkpoints>/<session id>/`.
//!
//! - `objects/ab/cdef…`: file contents and folder objects (`tree.rs`) by
//!   sha256, each stored once however many checkpoints hold it;
//! - `records/<checkpoint id>.json`: one per checkpoint (its order, its
//!   root folder's object, how many entries);
//! - `sealed.json`: the root folder object of the tree as the session last
//!   left it (a turn's end, a rewind), against which a rewind finds what
//!   the user changed outside the session; the folder objects hold each
//!   entry's stat key, so they are also the stat index of a session's
//!   first walk;
//! - `used.json`: the bytes the store uses, for the other sessions' total.
//!
//! Stores written before folder objects (a whole manifest per checkpoint,
//! an `index.json` stat index, a `sealed.json` of stat keys) are still
//! read; `index.json` is removed after the first walk.
//!
//! Folders are created `0700` and files `0600`: the store holds copies of
//! the user's files. Nothing here is inside the workspace or its `.git`.

use super::{CheckpointError, Record};
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

pub(crate) struct Store {
    dir: PathBuf,
}

fn private_dir(path: &Path) -> io::Result<()> {
    DirBuilder::new().recursive(true).mode(0o700).create(path)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn ctx(path: &Path, e: io::Error) -> CheckpointError {
    CheckpointError::Io(format!("{}: {e}", path.display()))
}

/// The sha256 of what `reader` holds, nothing stored (a preview's walk).
pub(crate) fn hash_reader(mut reader: impl Read) -> io::Result<String> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => hasher.update(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(hex(&hasher.finalize()))
}

impl Store {
    /// Open (creating) the store in `dir`.
    pub(crate) fn open(dir: PathBuf) -> Result<Store, CheckpointError> {
        for sub in ["objects", "records", "tmp"] {
            private_dir(&dir.join(sub)).map_err(|e| ctx(&dir, e))?;
        }
        Ok(Store { dir })
    }

    /// Its folder.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The store in `dir`, not created (for reading its size).
    pub(crate) fn at(dir: PathBuf) -> Store {
        Store { dir }
    }

    fn object_path(&self, hash: &str) -> PathBuf {
        let (head, tail) = hash.split_at(hash.len().min(2));
        self.dir.join("objects").join(head).join(tail)
    }

    /// A new private file in `tmp/`.
    fn temp(&self) -> io::Result<(PathBuf, File)> {
        let path = self.dir.join("tmp").join(crate::new_id());
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)?;
        Ok((path, file))
    }

    /// Store what `reader` holds; its object and the bytes it added (0 when
    /// the content was already there).
    pub(crate) fn put_reader(&self, mut reader: impl Read) -> io::Result<(String, u64)> {
        let (temp, mut out) = self.temp()?;
        let result = (|| {
            let mut hasher = Sha256::new();
            let mut buf = vec![0u8; 64 * 1024];
            let mut size = 0u64;
            loop {
                let n = match reader.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                };
                hasher.update(&buf[..n]);
                out.write_all(&buf[..n])?;
                size += n as u64;
            }
            Ok((hex(&hasher.finalize()), size))
        })();
        drop(out);
        let (hash, size) = match result {
            Ok(done) => done,
            Err(e) => {
                let _ = fs::remove_file(&temp);
                return Err(e);
            }
        };
        let path = self.object_path(&hash);
        if path.exists() {
            let _ = fs::remove_file(&temp);
            return Ok((hash, 0));
        }
        if let Some(parent) = path.parent() {
            private_dir(parent)?;
        }
        fs::rename(&temp, &path)?;
        Ok((hash, size))
    }

    /// Store `bytes` (a manifest).
    pub(crate) fn put_bytes(&self, bytes: &[u8]) -> Result<(String, u64), CheckpointError> {
        self.put_reader(bytes).map_err(|e| ctx(&self.dir, e))
    }

    /// Open an object for reading.
    pub(crate) fn open_object(&self, hash: &str) -> Result<File, CheckpointError> {
        if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(CheckpointError::Corrupt(format!(
                "bad object name `{hash}`"
            )));
        }
        let path = self.object_path(hash);
        File::open(&path).map_err(|e| ctx(&path, e))
    }

    /// An object's whole content.
    pub(crate) fn read_object(&self, hash: &str) -> Result<Vec<u8>, CheckpointError> {
        let mut bytes = Vec::new();
        self.open_object(hash)?
            .read_to_end(&mut bytes)
            .map_err(|e| ctx(&self.dir, e))?;
        Ok(bytes)
    }

    fn record_path(&self, id: &str) -> PathBuf {
        self.dir.join("records").join(format!("{id}.json"))
    }

    /// Write `record`; the bytes it takes.
    pub(crate) fn write_record(&self, record: &Record) -> Result<u64, CheckpointError> {
        self.write_json(&self.record_path(&record.id), record)
    }

    pub(crate) fn read_record(&self, id: &str) -> Result<Option<Record>, CheckpointError> {
        self.read_json(&self.record_path(id))
    }

    pub(crate) fn remove_record(&self, id: &str) -> Result<(), CheckpointError> {
        let path = self.record_path(id);
        fs::remove_file(&path).map_err(|e| ctx(&path, e))
    }

    /// Every checkpoint's record, oldest first.
    pub(crate) fn records(&self) -> Result<Vec<Record>, CheckpointError> {
        let dir = self.dir.join("records");
        let mut records = Vec::new();
        for entry in fs::read_dir(&dir).map_err(|e| ctx(&dir, e))? {
            let path = entry.map_err(|e| ctx(&dir, e))?.path();
            if path.extension().is_some_and(|e| e == "json")
                && let Some(record) = self.read_json::<Record>(&path)?
            {
                records.push(record);
            }
        }
        records.sort_by_key(|r| r.seq);
        Ok(records)
    }

    /// Bytes the store uses: objects and records.
    pub(crate) fn used(&self) -> Result<u64, CheckpointError> {
        fn size(path: &Path) -> io::Result<u64> {
            let mut total = 0;
            for entry in fs::read_dir(path)? {
                let entry = entry?;
                let meta = entry.metadata()?;
                total += if meta.is_dir() {
                    size(&entry.path())?
                } else {
                    meta.len()
                };
            }
            Ok(total)
        }
        let mut total = 0;
        for sub in ["objects", "records"] {
            let path = self.dir.join(sub);
            total += size(&path).map_err(|e| ctx(&path, e))?;
        }
        Ok(total)
    }

    /// Remove every object not in `keep`; the objects removed.
    pub(crate) fn gc(&self, keep: &HashSet<String>) -> Result<HashSet<String>, CheckpointError> {
        let objects = self.dir.join("objects");
        let mut removed = HashSet::new();
        for head in fs::read_dir(&objects).map_err(|e| ctx(&objects, e))? {
            let head = head.map_err(|e| ctx(&objects, e))?;
            let head_name = head.file_name().to_string_lossy().into_owned();
            for object in fs::read_dir(head.path()).map_err(|e| ctx(&objects, e))? {
                let object = object.map_err(|e| ctx(&objects, e))?;
                let hash = format!("{head_name}{}", object.file_name().to_string_lossy());
                if !keep.contains(&hash) {
                    fs::remove_file(object.path()).map_err(|e| ctx(&object.path(), e))?;
                    removed.insert(hash);
                }
            }
        }
        Ok(removed)
    }

    pub(crate) fn json_path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Write `value` as JSON to `path` all at once (temp file, rename);
    /// the bytes written.
    pub(crate) fn write_json<T: serde::Serialize>(
        &self,
        path: &Path,
        value: &T,
    ) -> Result<u64, CheckpointError> {
        let bytes = serde_json::to_vec(value)
            .map_err(|e| CheckpointError::Corrupt(format!("{}: {e}", path.display())))?;
        let (temp, mut file) = self.temp().map_err(|e| ctx(&self.dir, e))?;
        let written = file
            .write_all(&bytes)
            .and_then(|()| fs::rename(&temp, path));
        if let Err(e) = written {
            let _ = fs::remove_file(&temp);
            return Err(ctx(path, e));
        }
        Ok(bytes.len() as u64)
    }

    /// Read JSON written by [`Store::write_json`]; `None` when absent.
    pub(crate) fn read_json<T: serde::de::DeserializeOwned>(
        &self,
        path: &Path,
    ) -> Result<Option<T>, CheckpointError> {
        let bytes = match fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(ctx(path, e)),
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| CheckpointError::Corrupt(format!("{}: {e}", path.display())))
    }
}
