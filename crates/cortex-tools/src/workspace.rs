//! The workspace root and path confinement.
//!
//! Every path a model supplies is resolved here before any tool touches the
//! filesystem: `..` and symlinks (including dangling ones) are resolved
//! first, and only then is the result checked to lie inside the root, so
//! that neither `../x`, `/etc/passwd`, nor a symlink pointing outside can be
//! used to read or write outside the workspace.

use crate::error::ToolError;
use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

/// Paths inside the workspace that the file tools never change, because what
/// is there runs on the user's machine outside any sandbox (git hooks, git's
/// config, which can name commands) or configures the guest itself. The local
/// sandbox also mounts them read-only, so `bash` cannot change them either.
pub const PROTECTED_PATHS: &[&str] = &[".git/hooks", ".git/config", ".cortex"];

/// How many symlinks one resolution may follow by hand (as Linux's MAXSYMLINKS).
const MAX_SYMLINK_HOPS: usize = 40;

/// A folder the tools operate in. Holds the canonical root.
///
/// The tools are its methods (`read_file`, `write_file`, `edit_file`,
/// `glob`, `grep`; `bash` is [`crate::run_bash`]), and they share one
/// contract:
///
/// - **Input.** Typed arguments, already parsed from the model's JSON by
///   the caller; paths are the model's, unchecked, and every one goes
///   through [`Workspace::resolve`] (writes through
///   [`Workspace::resolve_for_write`]) before the filesystem is touched.
/// - **Success** is the text the model reads (for writes, a [`Written`]
///   with a summary and a diff), already capped ([`crate::MAX_OUTPUT_BYTES`],
///   [`crate::MAX_DIFF_BYTES`]), with paths shown relative to the root.
/// - **Failure** is a [`ToolError`] whose `Display` is written for the
///   model: what was wrong and what to do instead. It is a result to pass
///   back, not a fault of the harness. A failed read or search changes
///   nothing; a write that fails part-way may leave parent folders created
///   or the file partly written (`std::fs::write`, not a rename).
/// - **Blocking.** The methods do synchronous filesystem I/O and may take
///   long on big trees (`grep`, `glob`): async callers run them on a
///   blocking thread (the guest uses `spawn_blocking`). They have no
///   cancellation of their own; a dropped caller leaves a running method to
///   finish.
/// - **Confinement** is checked when a path is resolved, not held while it
///   is used: a process in the workspace that swaps a folder for a symlink
///   between the two can redirect the access. The local sandbox's mounts
///   and Landlock bound where such a race can land.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
}

/// What a write or edit did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// One line for the model, e.g. "Edited src/lib.rs (1 replacement)",
    /// then a line for each note: the file no longer parses (JSON, TOML,
    /// YAML, and source code: see the `syntax` module), a Python name left
    /// unbound, a definition removed.
    pub summary: String,
    /// Unified diff of the change (capped).
    pub diff: String,
}

impl Workspace {
    /// Opens `root`, which must be an existing folder.
    pub fn new(root: impl AsRef<Path>) -> Result<Self, ToolError> {
        let given = root.as_ref();
        let root = std::fs::canonicalize(given).map_err(|source| {
            if source.kind() == io::ErrorKind::NotFound {
                ToolError::NotFound {
                    path: given.display().to_string(),
                    hint: String::new(),
                }
            } else {
                ToolError::Io {
                    path: given.to_path_buf(),
                    source,
                }
            }
        })?;
        if !root.is_dir() {
            return Err(ToolError::Invalid(format!(
                "workspace root `{}` is not a folder",
                given.display()
            )));
        }
        Ok(Workspace { root })
    }

    /// The canonical root (symlinks resolved), which every resolved path
    /// starts with.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolve a model-supplied path (relative to the root, or absolute inside
    /// it) to a real path inside the root. `..` and symlinks are resolved
    /// first; anything that ends up outside is [`ToolError::Escape`]. A path
    /// that does not exist yet (for writes) is resolved through its nearest
    /// existing ancestor.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, ToolError> {
        let escape = || ToolError::Escape {
            path: path.to_owned(),
        };
        let given = Path::new(path);
        let joined = if given.is_absolute() {
            given.to_path_buf()
        } else {
            self.root.join(given)
        };
        let resolved = real_path(&joined).map_err(|source| match source.kind() {
            // A `..` that cannot be resolved against anything real.
            io::ErrorKind::InvalidInput => escape(),
            _ => ToolError::Io {
                path: PathBuf::from(path),
                source,
            },
        })?;
        if resolved.starts_with(&self.root) {
            Ok(resolved)
        } else {
            Err(escape())
        }
    }

    /// Resolve a path that is about to be written: as [`Workspace::resolve`],
    /// and refused when it lies in one of the [`PROTECTED_PATHS`].
    pub fn resolve_for_write(&self, path: &str) -> Result<PathBuf, ToolError> {
        let resolved = self.resolve(path)?;
        if let Some(protected) = PROTECTED_PATHS
            .iter()
            .find(|p| resolved.starts_with(self.root.join(p)))
        {
            return Err(ToolError::Protected {
                path: path.to_owned(),
                protected: (*protected).to_owned(),
            });
        }
        Ok(resolved)
    }

    /// `abs` (a resolved path) as the model should see it: relative to the
    /// root, `.` for the root itself.
    pub(crate) fn display(&self, abs: &Path) -> String {
        match abs.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
            Ok(rel) => shown_path(rel),
            Err(_) => shown_path(abs),
        }
    }
}

/// A path as a tool's output shows it: one line whatever its bytes. Control
/// characters (a newline in a name could forge a line of a listing, an
/// escape sequence acts on a terminal) are written as `\u{..}`, bytes that
/// are not UTF-8 as U+FFFD.
pub(crate) fn shown_path(path: &Path) -> String {
    let text = path.to_string_lossy();
    if !text.chars().any(char::is_control) {
        return text.into_owned();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// The real path of `path`: canonical up to its nearest existing ancestor,
/// followed by the components that do not exist yet. Dangling symlinks are
/// followed by hand so that a write through one lands where the OS would put
/// it (and is then checked like any other path).
fn real_path(path: &Path) -> io::Result<PathBuf> {
    let mut path = path.to_path_buf();
    for _ in 0..MAX_SYMLINK_HOPS {
        // Components popped off because they do not exist, innermost first.
        let mut rest: Vec<OsString> = Vec::new();
        let mut candidate = path.clone();
        let base = loop {
            match std::fs::canonicalize(&candidate) {
                Ok(real) => break Some(real),
                Err(_) if is_symlink(&candidate) => break None,
                Err(_) => {}
            }
            let Some(name) = candidate.file_name().map(|n| n.to_os_string()) else {
                // `..`, `.` or the filesystem root as the last component.
                match candidate.components().next_back() {
                    Some(Component::ParentDir) => rest.push(OsString::from("..")),
                    Some(Component::CurDir) => {}
                    _ => {
                        return Err(io::Error::new(
                            io::ErrorKind::NotFound,
                            "no existing ancestor",
                        ));
                    }
                }
                if !candidate.pop() {
                    return Err(io::Error::new(
                        io::ErrorKind::NotFound,
                        "no existing ancestor",
                    ));
                }
                continue;
            };
            rest.push(name);
            if !candidate.pop() {
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    "no existing ancestor",
                ));
            }
        };
        let Some(mut real) = base else {
            // `candidate` is a dangling (or looping) symlink: splice its target
            // in and resolve again.
            let target = std::fs::read_link(&candidate)?;
            let mut next = match candidate.parent() {
                Some(parent) => parent.join(target),
                None => target,
            };
            for name in rest.iter().rev() {
                next.push(name);
            }
            path = next;
            continue;
        };
        // What is left does not exist, so it holds no symlinks: `..` can be
        // resolved lexically (against a canonical base, whose parent is also
        // canonical).
        for name in rest.iter().rev() {
            if name == ".." {
                if !real.pop() {
                    return Err(io::Error::new(io::ErrorKind::InvalidInput, "`..` above /"));
                }
            } else {
                real.push(name);
            }
        }
        return Ok(real);
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    struct Fixture {
        _dir: tempfile::TempDir,
        ws: Workspace,
        outside: PathBuf,
    }

    /// `<tmp>/ws` is the workspace; `<tmp>/outside` holds `secret.txt`.
    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("ws");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(root.join("src")).expect("mkdir");
        std::fs::create_dir_all(&outside).expect("mkdir");
        std::fs::write(outside.join("secret.txt"), "secret").expect("write");
        std::fs::write(root.join("src/lib.rs"), "fn x() {}").expect("write");
        let ws = Workspace::new(&root).expect("workspace");
        let outside = std::fs::canonicalize(outside).expect("canon");
        Fixture {
            _dir: dir,
            ws,
            outside,
        }
    }

    fn is_escape(r: Result<PathBuf, ToolError>) -> bool {
        matches!(r, Err(ToolError::Escape { .. }))
    }

    #[test]
    fn new_requires_an_existing_folder() {
        let f = fixture();
        assert!(matches!(
            Workspace::new(f.ws.root().join("nope")),
            Err(ToolError::NotFound { .. })
        ));
        assert!(matches!(
            Workspace::new(f.ws.root().join("src/lib.rs")),
            Err(ToolError::Invalid(_))
        ));
        assert!(f.ws.root().is_absolute());
    }

    #[test]
    fn resolves_inside_paths() {
        let f = fixture();
        let root = f.ws.root();
        assert_eq!(
            f.ws.resolve("src/lib.rs").expect("rel"),
            root.join("src/lib.rs")
        );
        assert_eq!(f.ws.resolve("").expect("empty"), root);
        assert_eq!(f.ws.resolve(".").expect("dot"), root);
        assert_eq!(
            f.ws.resolve("src/../src/./lib.rs").expect("dots"),
            root.join("src/lib.rs")
        );
        let abs = root.join("src/lib.rs").display().to_string();
        assert_eq!(f.ws.resolve(&abs).expect("abs"), root.join("src/lib.rs"));
        assert_eq!(
            f.ws.resolve("new/dir/a.rs").expect("new"),
            root.join("new/dir/a.rs")
        );
        assert_eq!(
            f.ws.resolve("new/../b.rs").expect("new .."),
            root.join("b.rs")
        );
        assert_eq!(f.ws.display(&root.join("src/lib.rs")), "src/lib.rs");
        assert_eq!(f.ws.display(root), ".");
    }

    #[test]
    fn rejects_escapes() {
        let f = fixture();
        let root = f.ws.root();
        assert!(is_escape(f.ws.resolve("../outside/secret.txt")));
        assert!(is_escape(f.ws.resolve("../x")));
        assert!(is_escape(f.ws.resolve("src/../../x")));
        assert!(is_escape(f.ws.resolve("new/../../x")));
        assert!(is_escape(f.ws.resolve("/etc/passwd")));
        assert!(is_escape(
            f.ws.resolve(&f.outside.join("secret.txt").display().to_string())
        ));
        let err = f.ws.resolve("/etc/passwd").expect_err("escape");
        assert!(err.to_string().contains("/etc/passwd"), "{err}");

        symlink(f.outside.join("secret.txt"), root.join("link.txt")).expect("symlink");
        symlink(&f.outside, root.join("linkdir")).expect("symlink");
        symlink(f.outside.join("new.txt"), root.join("dangling.txt")).expect("symlink");
        symlink("../../outside", root.join("src/rel")).expect("symlink");
        assert!(is_escape(f.ws.resolve("link.txt")));
        assert!(is_escape(f.ws.resolve("linkdir")));
        assert!(is_escape(f.ws.resolve("linkdir/secret.txt")));
        assert!(is_escape(f.ws.resolve("linkdir/new/file.txt")));
        assert!(is_escape(f.ws.resolve("dangling.txt")));
        assert!(is_escape(f.ws.resolve("src/rel/x")));
        assert!(!f.outside.join("new.txt").exists());
    }

    #[test]
    fn symlinks_inside_the_root_are_fine() {
        let f = fixture();
        let root = f.ws.root();
        symlink(root.join("src"), root.join("alias")).expect("symlink");
        symlink("lib.rs", root.join("src/again.rs")).expect("symlink");
        assert_eq!(
            f.ws.resolve("alias/lib.rs").expect("alias"),
            root.join("src/lib.rs")
        );
        assert_eq!(
            f.ws.resolve("src/again.rs").expect("rel link"),
            root.join("src/lib.rs")
        );
        symlink("looping", root.join("looping")).expect("symlink");
        assert!(f.ws.resolve("looping").is_err());
    }
}
