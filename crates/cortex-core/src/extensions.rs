//! What custom commands (`commands.rs`) and skills (`skills.rs`) share:
//! where they are looked for, how their files are read, and their front
//! matter.
//!
//! Repository files are untrusted. They are read on the host, but only on
//! directory descriptors below the workspace's root, every component opened
//! with `O_NOFOLLOW` (as `copy.rs` and the checkpoint walk do): no link is
//! ever followed, so nothing outside the tree is reached however the tree
//! changes meanwhile (a resolved path checked and then opened could be
//! swapped for a link in between; a descriptor walk cannot). A FIFO, socket
//! or device is refused on the descriptor (`O_NONBLOCK`: opening one does
//! not block), and every read is capped. This works before any guest is
//! attached, which listing commands for a new session needs. The user's own
//! folder is theirs: a link at its root (a dotfiles checkout) is followed,
//! links inside it are not.
//!
//! Front matter is the small YAML subset these files use (`key: value`
//! lines between `---` fences, quoted or not, a value continued on indented
//! lines), parsed by hand: no YAML crate is in the lock, and nothing here
//! needs more.

use crate::copy::open_dir;
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{Dir, FileType, Mode, OFlags};
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Entries read from one folder, at most: a folder of a million files must
/// not make a listing take minutes.
pub(crate) const MAX_ENTRIES: usize = 1000;

/// Where commands and skills are looked for: the session's workspace (the
/// repository or its copy) and the user's config folder.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Roots {
    /// The workspace's root on this host; `None` when there is none here.
    pub workspace: Option<PathBuf>,
    /// The repository an isolated copy is made from: read while the copy
    /// does not exist yet (it is made when the first turn attaches).
    pub repository: Option<PathBuf>,
    /// Cortex's config folder (`$XDG_CONFIG_HOME/cortex`).
    pub config: Option<PathBuf>,
}

impl Roots {
    /// The tree repository files are read from: the workspace once it
    /// exists, else the repository it will be copied from.
    pub fn tree(&self) -> Option<PathBuf> {
        match &self.workspace {
            Some(workspace) if workspace.is_dir() => Some(workspace.clone()),
            _ => self.repository.clone().or_else(|| self.workspace.clone()),
        }
    }
}

/// What an entry of a folder is, read without following it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Folder,
    Link,
    Special,
}

/// One entry of a folder: its name (UTF-8; other names are `Err` with the
/// name as shown) and what it is.
pub(crate) struct Entry {
    pub(crate) name: Result<String, String>,
    pub(crate) kind: Kind,
}

/// A folder of the workspace or the user's config folder, opened for
/// reading: `root` (the workspace or the config folder) then `parts`, each
/// component without following a link. `None` when it is not there (or is
/// not a plain folder).
/// Calls `visit` with each folder of one kind that exists: the user's
/// `<config>/<user>` first (the user's files win a name), then the
/// repository's `repository` folders in order, each with the scope and the
/// path shown for it. Repository folders are opened without following a
/// link anywhere (`open_folder`).
pub(crate) fn each_folder(
    roots: &Roots,
    user: &str,
    repository: &[[&str; 2]],
    mut visit: impl FnMut(BorrowedFd<'_>, cortex_protocol::ExtensionScope, &str),
) {
    if let Some(config) = &roots.config {
        let shown = user_shown(&config.join(user));
        if let Some(dir) = open_folder(config, true, &[user]) {
            visit(dir.as_fd(), cortex_protocol::ExtensionScope::User, &shown);
        }
    }
    if let Some(workspace) = &roots.tree() {
        for parts in repository {
            if let Some(dir) = open_folder(workspace, false, parts) {
                let shown = parts.join("/");
                visit(
                    dir.as_fd(),
                    cortex_protocol::ExtensionScope::Repository,
                    &shown,
                );
            }
        }
    }
}

pub(crate) fn open_folder(root: &Path, follow_root: bool, parts: &[&str]) -> Option<OwnedFd> {
    let root = if follow_root {
        std::fs::canonicalize(root).ok()?
    } else {
        root.to_path_buf()
    };
    let mut fd = open_dir(rustix::fs::CWD, root.as_os_str()).ok()?;
    for part in parts {
        fd = open_dir(fd.as_fd(), OsStr::new(part)).ok()?;
    }
    Some(fd)
}

/// A sub-folder of an open folder, without following a link.
pub(crate) fn open_child(dir: BorrowedFd<'_>, name: &str) -> Option<OwnedFd> {
    open_dir(dir, OsStr::new(name)).ok()
}

/// [`entries`] of the folder shown as `shown`, with a rejection pushed to
/// `rejected` when more than [`MAX_ENTRIES`] were left unread.
pub(crate) fn entries_noting_cut(
    dir: BorrowedFd<'_>,
    scope: cortex_protocol::ExtensionScope,
    shown: &str,
    rejected: &mut Vec<cortex_protocol::RejectedFile>,
) -> Vec<Entry> {
    let (entries, more) = entries(dir);
    if more {
        rejected.push(cortex_protocol::RejectedFile {
            scope,
            path: shown.to_owned(),
            reason: format!("more than {MAX_ENTRIES} entries: the rest not read"),
        });
    }
    entries
}

/// The entries of `dir` sorted by name, at most [`MAX_ENTRIES`]; the flag
/// says whether more were left out.
pub(crate) fn entries(dir: BorrowedFd<'_>) -> (Vec<Entry>, bool) {
    let mut out = Vec::new();
    let mut more = false;
    let Ok(mut stream) = Dir::read_from(dir) else {
        return (out, false);
    };
    while let Some(Ok(entry)) = stream.read() {
        let raw = OsStr::from_bytes(entry.file_name().to_bytes());
        if raw == "." || raw == ".." {
            continue;
        }
        if out.len() == MAX_ENTRIES {
            more = true;
            break;
        }
        // The kind from a stat that does not follow (a `d_type` may be
        // unknown on some filesystems).
        let kind = match rustix::fs::statat(dir, raw, rustix::fs::AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => match FileType::from_raw_mode(stat.st_mode) {
                FileType::RegularFile => Kind::File,
                FileType::Directory => Kind::Folder,
                FileType::Symlink => Kind::Link,
                _ => Kind::Special,
            },
            Err(_) => Kind::Special,
        };
        let name = raw
            .to_str()
            .map(str::to_owned)
            .ok_or_else(|| raw.to_string_lossy().into_owned());
        out.push(Entry { name, kind });
    }
    out.sort_by(|a, b| shown_name(&a.name).cmp(shown_name(&b.name)));
    (out, more)
}

fn shown_name(name: &Result<String, String>) -> &str {
    match name {
        Ok(n) | Err(n) => n,
    }
}

/// A regular file of `dir`, up to `cap` bytes: its bytes and its whole
/// size. `Err` says why it cannot be read (for a rejected file's reason).
pub(crate) fn read_prefix(
    dir: BorrowedFd<'_>,
    name: &str,
    cap: u64,
) -> Result<(Vec<u8>, u64), String> {
    // O_NONBLOCK: a FIFO swapped in after the listing opens at once, and
    // the check on the descriptor refuses it.
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| match e {
        rustix::io::Errno::LOOP => "a symbolic link: not followed".to_owned(),
        rustix::io::Errno::NOENT => "no such file".to_owned(),
        e => format!("cannot be opened: {e}"),
    })?;
    let stat = rustix::fs::fstat(&fd).map_err(|e| format!("cannot be read: {e}"))?;
    match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => {}
        FileType::Directory => return Err("a folder, not a file".to_owned()),
        _ => return Err("a special file (FIFO, socket or device): not read".to_owned()),
    }
    let size = stat.st_size.max(0) as u64;
    let mut bytes = Vec::new();
    std::fs::File::from(fd)
        .take(cap)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot be read: {e}"))?;
    Ok((bytes, size))
}

/// A whole regular file of at most `cap` bytes, as UTF-8 text; `Err` with
/// the reason otherwise.
pub(crate) fn read_text(dir: BorrowedFd<'_>, name: &str, cap: u64) -> Result<String, String> {
    let (bytes, size) = read_prefix(dir, name, cap + 1)?;
    if size > cap || bytes.len() as u64 > cap {
        return Err(format!(
            "{} bytes; the limit is {} KiB",
            size.max(bytes.len() as u64),
            cap / 1024
        ));
    }
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_owned())
}

/// A folder of the user's config folder as listings show it: under the home
/// folder with `~`.
pub(crate) fn user_shown(path: &Path) -> String {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    match home.as_deref().and_then(|h| path.strip_prefix(h).ok()) {
        Some(rest) if !rest.as_os_str().is_empty() => format!("~/{}", rest.display()),
        _ => path.display().to_string(),
    }
}

/// A file's front matter and body. A file that does not start with a `---`
/// line has none (its whole text is the body).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct FrontMatter {
    /// Keys in lower case, values unquoted; a key given twice keeps the last.
    pub(crate) fields: BTreeMap<String, String>,
}

impl FrontMatter {
    /// A field's value, `None` when absent or empty.
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }
}

/// Splits `text` into its front matter and its body. `Err` says what is
/// wrong: an opening fence never closed, or a line that is not `key: value`.
pub(crate) fn front_matter(text: &str) -> Result<(FrontMatter, &str), String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return Ok((FrontMatter::default(), text));
    };
    let mut fields: BTreeMap<String, String> = BTreeMap::new();
    let mut last: Option<String> = None;
    let mut offset = 0;
    for (number, line) in rest.split_inclusive('\n').enumerate() {
        offset += line.len();
        let line = line.trim_end_matches(['\n', '\r']);
        if line.trim_end() == "---" {
            let body = rest[offset..].trim_start_matches(['\n', '\r']);
            return Ok((FrontMatter { fields }, body));
        }
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            // A value continued (a folded description, or a list item of
            // a key no one reads here): joined with a space.
            if let Some(value) = last.as_ref().and_then(|k| fields.get_mut(k)) {
                let more = line.trim().trim_start_matches("- ");
                if !value.is_empty() {
                    value.push(' ');
                }
                value.push_str(more);
            }
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            return Err(format!(
                "front matter line {} is not `key: value`",
                number + 2
            ));
        };
        let key = key.trim().to_ascii_lowercase();
        let value = match value.trim() {
            // A block scalar's text follows on indented lines.
            ">" | "|" | ">-" | "|-" => String::new(),
            v => unquote(v),
        };
        fields.insert(key.clone(), value);
        last = Some(key);
    }
    Err("the front matter's `---` is never closed".to_owned())
}

/// A YAML scalar without its quotes (`'it''s'`, `"a \"b\""`).
fn unquote(value: &str) -> String {
    let quoted = |q: char| value.len() >= 2 && value.starts_with(q) && value.ends_with(q);
    if quoted('"') {
        value[1..value.len() - 1].replace("\\\"", "\"")
    } else if quoted('\'') {
        value[1..value.len() - 1].replace("''", "'")
    } else {
        value.to_owned()
    }
}

/// A one-line field (a description, a hint): line breaks and runs of
/// blanks made one space. Control characters stay: clients sanitise
/// what they print.
pub(crate) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_reads_the_subset_and_refuses_the_rest() {
        let (fm, body) = front_matter(
            "---\ndescription: \"Review a file\"\nargument-hint: '<file>'\n# note\nmode: plan\n\
             allowed-tools:\n  - Bash(git:*)\n---\n\nBody $1\n",
        )
        .expect("parses");
        assert_eq!(fm.get("description"), Some("Review a file"));
        assert_eq!(fm.get("argument-hint"), Some("<file>"));
        assert_eq!(fm.get("mode"), Some("plan"));
        assert_eq!(fm.get("allowed-tools"), Some("Bash(git:*)"));
        assert_eq!(body, "Body $1\n");

        let (fm, body) = front_matter("description: not front matter\n").expect("no fence");
        assert!(fm.fields.is_empty());
        assert_eq!(body, "description: not front matter\n");

        let folded = front_matter("---\ndescription: >\n  two\n  lines\n---\nx").expect("ok");
        assert_eq!(folded.0.get("description"), Some("two lines"));

        assert_eq!(
            front_matter("---\nname: x\n").expect_err("unclosed"),
            "the front matter's `---` is never closed"
        );
        assert_eq!(
            front_matter("---\nname x\n---\n").expect_err("not key: value"),
            "front matter line 2 is not `key: value`"
        );
    }

    #[test]
    fn a_copy_not_made_yet_reads_its_repository() {
        let repo = tempfile::tempdir().expect("tempdir");
        let copies = tempfile::tempdir().expect("tempdir");
        let copy = copies.path().join("session");
        let roots = Roots {
            workspace: Some(copy.clone()),
            repository: Some(repo.path().to_path_buf()),
            config: None,
        };
        assert_eq!(roots.tree(), Some(repo.path().to_path_buf()));
        std::fs::create_dir(&copy).expect("mkdir");
        assert_eq!(roots.tree(), Some(copy));
    }

    #[test]
    fn reads_refuse_links_special_files_and_oversize() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("a.md"), "hello").expect("write");
        std::fs::write(dir.path().join("big.md"), "x".repeat(2048)).expect("write");
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("link.md")).expect("link");
        let fd = open_folder(dir.path(), false, &[]).expect("open");
        assert_eq!(read_text(fd.as_fd(), "a.md", 1024).as_deref(), Ok("hello"));
        assert_eq!(
            read_text(fd.as_fd(), "big.md", 1024),
            Err("2048 bytes; the limit is 1 KiB".to_owned())
        );
        assert_eq!(
            read_text(fd.as_fd(), "link.md", 1024),
            Err("a symbolic link: not followed".to_owned())
        );
        let (listed, more) = entries(fd.as_fd());
        assert!(!more);
        let kinds: Vec<_> = listed
            .iter()
            .map(|e| (e.name.clone().unwrap_or_default(), e.kind))
            .collect();
        assert_eq!(
            kinds,
            [
                ("a.md".to_owned(), Kind::File),
                ("big.md".to_owned(), Kind::File),
                ("link.md".to_owned(), Kind::Link)
            ]
        );
        // A folder reached through a link is not opened.
        std::os::unix::fs::symlink("/etc", dir.path().join("etc")).expect("link");
        assert!(open_folder(dir.path(), false, &["etc"]).is_none());
    }
}
