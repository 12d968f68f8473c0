//! The bearer tokens a server accepts, each naming a principal, and the
//! file of named tokens that `cortex tokens add|list|revoke` keeps.
//!
//! Only a token's SHA-256 is held, in memory and on disk: the token itself
//! is shown once, when it is made. The file (mode 0600) has a line per
//! principal, `NAME HEX CREATED`; a server re-reads it when it changes, so a
//! revoked token stops working without a restart.

use sha2::{Digest, Sha256};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

/// A token's SHA-256.
type Hash = [u8; 32];

/// Principals by token hash.
type Entries = Vec<(Hash, String)>;

/// Who a request acts as: the principal its bearer token names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal(pub String);

/// The principal reserved for the token of `CORTEX_TOKEN` or the single
/// `token` file (and the CLI's private in-process server).
pub const RESERVED_PRINCIPAL: &str = "local";

/// The accepted tokens: fixed ones, and those of a token file if any.
#[derive(Debug, Clone, Default)]
pub struct Tokens {
    fixed: Entries,
    file: Option<Arc<WatchedFile>>,
}

/// A token file and what it held when last read.
#[derive(Debug)]
struct WatchedFile {
    path: PathBuf,
    seen: Mutex<(Option<FileStamp>, Entries)>,
}

/// What tells that a file changed: an atomic rewrite gives a new inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileStamp {
    inode: u64,
    modified: i64,
    modified_nanos: i64,
    len: u64,
}

/// A principal's entry in the token file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenEntry {
    /// The principal the token names.
    pub name: String,
    /// When the token was made (RFC 3339).
    pub created: String,
    hash: Hash,
}

/// Why the token file could not be read, written or changed.
#[derive(Debug, thiserror::Error)]
pub enum TokenFileError {
    /// Reading or writing the file failed.
    #[error("cannot read or write the token file {path}: {source}")]
    Io {
        /// The token file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// A line is not `NAME SHA256-HEX CREATED`.
    #[error("the token file {path} is damaged at line {line}: expected `NAME SHA256-HEX CREATED`")]
    Malformed {
        /// The token file.
        path: PathBuf,
        /// The damaged line, from 1.
        line: usize,
    },
    /// Not a principal name (or the reserved `local`).
    #[error(
        "`{0}` is not a principal name: use 1 to 64 letters, digits, `.`, `_` or `-` \
         (`local` is reserved for CORTEX_TOKEN)"
    )]
    BadName(String),
    /// The principal has a token already.
    #[error("a token for `{0}` exists already; revoke it first")]
    Exists(String),
}

impl Tokens {
    /// No token accepted.
    pub fn new() -> Self {
        Self::default()
    }

    /// Accept `token` as `principal`. Empty tokens are ignored: they would
    /// match a bare `Bearer ` header.
    pub fn with(mut self, token: impl AsRef<str>, principal: impl Into<String>) -> Self {
        let token = token.as_ref();
        if !token.is_empty() {
            self.fixed.push((hash(token), principal.into()));
        }
        self
    }

    /// Also accept the tokens of the file at `path` (which need not exist
    /// yet), re-read whenever it changes.
    pub fn with_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.file = Some(Arc::new(WatchedFile {
            path: path.into(),
            seen: Mutex::new((None, Vec::new())),
        }));
        self
    }

    /// No token is accepted (neither fixed nor, at this moment, in the file).
    pub fn is_empty(&self) -> bool {
        self.fixed.is_empty() && self.file.as_ref().is_none_or(|f| f.current().is_empty())
    }

    /// The principal `token` acts as, if any.
    pub(crate) fn principal(&self, token: &str) -> Option<Principal> {
        let presented = hash(token);
        let from_file = self.file.as_ref().map(|f| f.current()).unwrap_or_default();
        // Compare with every entry in full so the time taken does not tell
        // which, or how much of one, matched.
        let mut found = None;
        for (known, principal) in self.fixed.iter().chain(from_file.iter()) {
            if constant_time_eq(known, &presented) {
                found = Some(Principal(principal.clone()));
            }
        }
        found
    }
}

impl WatchedFile {
    /// The entries as the file holds them now. A file that cannot be read
    /// or parsed accepts nothing (fail closed) and says so in the log.
    fn current(&self) -> Entries {
        let stamp = stamp(&self.path);
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        if seen.0 != stamp {
            let entries = match read_entries(&self.path) {
                Ok(entries) => entries.into_iter().map(|e| (e.hash, e.name)).collect(),
                Err(e) => {
                    tracing::warn!("{e}; no named token is accepted until it is mended");
                    Vec::new()
                }
            };
            *seen = (stamp, entries);
        }
        seen.1.clone()
    }
}

fn stamp(path: &Path) -> Option<FileStamp> {
    let meta = std::fs::metadata(path).ok()?;
    Some(FileStamp {
        inode: meta.ino(),
        modified: meta.mtime(),
        modified_nanos: meta.mtime_nsec(),
        len: meta.len(),
    })
}

/// A new token: 32 random bytes from the kernel, hex.
pub fn new_token() -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom")?, &mut bytes)?;
    Ok(hex(&bytes))
}

fn hash(token: &str) -> Hash {
    Sha256::digest(token.as_bytes()).into()
}

fn hex(hash: &Hash) -> String {
    hash.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Hash> {
    if text.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

fn constant_time_eq(a: &Hash, b: &Hash) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name != RESERVED_PRINCIPAL
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> TokenFileError + '_ {
    move |source| TokenFileError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The entries of the token file; none when it does not exist.
pub fn read_entries(path: &Path) -> Result<Vec<TokenEntry>, TokenFileError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_error(path)(e)),
    };
    let mut entries = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let malformed = || TokenFileError::Malformed {
            path: path.to_path_buf(),
            line: index + 1,
        };
        let mut fields = line.split_whitespace();
        let (Some(name), Some(hex), Some(created), None) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return Err(malformed());
        };
        let hash = unhex(hex).ok_or_else(malformed)?;
        if !valid_name(name) {
            return Err(malformed());
        }
        entries.push(TokenEntry {
            name: name.to_owned(),
            created: created.to_owned(),
            hash,
        });
    }
    Ok(entries)
}

/// Record `token` for the new principal `name` (its hash only).
pub fn add_entry(path: &Path, name: &str, token: &str) -> Result<(), TokenFileError> {
    if !valid_name(name) {
        return Err(TokenFileError::BadName(name.to_owned()));
    }
    let mut entries = read_entries(path)?;
    if entries.iter().any(|e| e.name == name) {
        return Err(TokenFileError::Exists(name.to_owned()));
    }
    entries.push(TokenEntry {
        name: name.to_owned(),
        created: cortex_protocol::now_rfc3339(),
        hash: hash(token),
    });
    write_entries(path, &entries)
}

/// Remove `name`'s token; `false` when it had none.
pub fn revoke_entry(path: &Path, name: &str) -> Result<bool, TokenFileError> {
    let mut entries = read_entries(path)?;
    let before = entries.len();
    entries.retain(|e| e.name != name);
    if entries.len() == before {
        return Ok(false);
    }
    write_entries(path, &entries)?;
    Ok(true)
}

/// Replace the file atomically (a new file of mode 0600, then a rename), so
/// a server never reads half of it.
fn write_entries(path: &Path, entries: &[TokenEntry]) -> Result<(), TokenFileError> {
    let folder = path.parent().unwrap_or(Path::new("."));
    // A folder made here holds only tokens: the user's alone.
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(folder)
        .map_err(io_error(folder))?;
    let temporary = folder.join(format!(".tokens-{}.tmp", std::process::id()));
    let mut text = String::new();
    for e in entries {
        text.push_str(&format!("{} {} {}\n", e.name, hex(&e.hash), e.created));
    }
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&temporary)
        .and_then(|mut file| {
            file.write_all(text.as_bytes())?;
            file.sync_all()
        })
        .and_then(|()| std::fs::rename(&temporary, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written.map_err(io_error(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_map_to_their_principal_only() {
        let tokens = Tokens::new()
            .with("t-alice", "alice")
            .with("t-bob", "bob")
            .with("", "x");
        assert_eq!(tokens.principal("t-alice"), Some(Principal("alice".into())));
        assert_eq!(tokens.principal("t-bob"), Some(Principal("bob".into())));
        assert_eq!(tokens.principal("t-alic"), None);
        assert_eq!(tokens.principal(""), None);
    }

    #[test]
    fn the_file_holds_hashes_and_a_revoked_token_stops_at_once() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("cortex/tokens");
        let tokens = Tokens::new().with("t-local", "local").with_file(&path);
        assert_eq!(tokens.principal("t-carol"), None, "no file yet");
        add_entry(&path, "carol", "t-carol").expect("add");
        add_entry(&path, "dave", "t-dave").expect("add");
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(
            !text.contains("t-carol"),
            "the token itself is stored: {text}"
        );
        assert_eq!(
            std::fs::metadata(&path).expect("meta").mode() & 0o777,
            0o600
        );
        assert_eq!(tokens.principal("t-carol"), Some(Principal("carol".into())));
        assert_eq!(tokens.principal("t-dave"), Some(Principal("dave".into())));
        assert!(matches!(
            add_entry(&path, "carol", "other"),
            Err(TokenFileError::Exists(_))
        ));
        assert!(revoke_entry(&path, "carol").expect("revoke"));
        assert!(!revoke_entry(&path, "carol").expect("revoke twice"));
        assert_eq!(tokens.principal("t-carol"), None, "revoked");
        assert_eq!(tokens.principal("t-dave"), Some(Principal("dave".into())));
        assert_eq!(tokens.principal("t-local"), Some(Principal("local".into())));
        let names: Vec<String> = read_entries(&path)
            .expect("entries")
            .into_iter()
            .map(|e| e.name)
            .collect();
        assert_eq!(names, ["dave"]);
    }

    #[test]
    fn bad_names_and_a_damaged_file_are_refused() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("tokens");
        for bad in ["", "local", "a b", "x\ny", "a/b", &"x".repeat(65)] {
            assert!(
                matches!(add_entry(&path, bad, "t"), Err(TokenFileError::BadName(_))),
                "{bad:?}"
            );
        }
        std::fs::write(&path, "carol nothex 2026\n").expect("write");
        assert!(matches!(
            read_entries(&path),
            Err(TokenFileError::Malformed { line: 1, .. })
        ));
        // A damaged file accepts no named token (fail closed).
        let tokens = Tokens::new().with_file(&path);
        assert_eq!(tokens.principal("nothex"), None);
        assert!(tokens.is_empty());
    }
}
