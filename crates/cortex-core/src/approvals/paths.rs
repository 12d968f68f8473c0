//! Where a path a command or a tool names lands, relative to the
//! workspace, worked out lexically (the command has not run yet, so the
//! file may not exist): `..` is resolved against the path itself, `~` and
//! `$HOME` are the home folder.

use std::path::{Component, Path, PathBuf};

/// Where a path lands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Place {
    /// Inside the workspace: the path relative to it (empty: the workspace
    /// itself).
    Inside(PathBuf),
    /// The home folder or something in it.
    Home,
    /// Anywhere else: the absolute path.
    Outside(PathBuf),
}

/// Lexical normalisation: `.` dropped, `..` pops (never above `/`).
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Where `target` lands for a command running in `workspace`.
pub(crate) fn place(target: &str, workspace: &Path) -> Place {
    let home = ["~", "$HOME", "${HOME}"];
    if home
        .iter()
        .any(|h| target == *h || target.starts_with(&format!("{h}/")))
        || target.starts_with('~')
    {
        return Place::Home;
    }
    let absolute = if target.starts_with('/') {
        normalise(Path::new(target))
    } else {
        normalise(&workspace.join(target))
    };
    match absolute.strip_prefix(normalise(workspace)) {
        Ok(relative) => Place::Inside(relative.to_path_buf()),
        Err(_) => Place::Outside(absolute),
    }
}

/// Whether writing to `target` (inside the workspace by its text) stays
/// inside it on disk: every component that exists is followed as the
/// kernel would (a link, the last one included, since `>` follows it), and
/// `..` is applied to where the walk really is, not to the text. A dangling
/// link refuses (writing through it creates its target, wherever that is).
/// Components that do not exist yet are taken by their text. A workspace
/// that is not on disk has nothing to follow: the text decides.
pub(crate) fn stays_inside_on_disk(target: &str, workspace: &Path) -> bool {
    let Ok(root) = workspace.canonicalize() else {
        return true;
    };
    let mut here = if target.starts_with('/') {
        PathBuf::from("/")
    } else {
        root.clone()
    };
    let mut exists = true;
    for component in Path::new(target).components() {
        match component {
            Component::RootDir | Component::Prefix(_) | Component::CurDir => {}
            Component::ParentDir => {
                here.pop();
            }
            Component::Normal(name) => {
                here.push(name);
                if !exists {
                    continue;
                }
                match std::fs::symlink_metadata(&here) {
                    Ok(meta) if meta.file_type().is_symlink() => match here.canonicalize() {
                        Ok(real) => here = real,
                        Err(_) => return false,
                    },
                    Ok(_) => {}
                    Err(_) => exists = false,
                }
            }
        }
    }
    here.starts_with(&root)
}

/// Scratch folders every guest has privately: writing there harms nothing.
pub(crate) fn is_scratch(path: &Path) -> bool {
    ["/tmp", "/var/tmp", "/dev/shm"]
        .iter()
        .any(|dir| path.starts_with(dir) && path != Path::new(dir))
}

/// Device files that are safe to write to, and bash's own socket names
/// (`/dev/tcp/HOST/PORT`, `/dev/udp/…`: no file at all; whether they
/// connect is the sandbox's `--network`).
pub(crate) fn is_harmless_device(path: &Path) -> bool {
    [
        "/dev/null",
        "/dev/stdin",
        "/dev/stdout",
        "/dev/stderr",
        "/dev/tty",
    ]
    .iter()
    .any(|d| path == Path::new(d))
        || ["/dev/fd", "/dev/tcp", "/dev/udp"]
            .iter()
            .any(|dir| path.starts_with(dir) && path != Path::new(dir))
}

/// Whether a workspace-relative path is inside `.git/hooks`.
pub(crate) fn in_git_hooks(relative: &Path) -> bool {
    let parts: Vec<_> = relative.components().collect();
    parts.windows(2).any(|w| {
        w[0] == Component::Normal(".git".as_ref()) && w[1] == Component::Normal("hooks".as_ref())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places() {
        let ws = Path::new("/work/repo");
        assert_eq!(place("src/a.rs", ws), Place::Inside("src/a.rs".into()));
        assert_eq!(place("./x/../y", ws), Place::Inside("y".into()));
        assert_eq!(place("/work/repo/z", ws), Place::Inside("z".into()));
        assert_eq!(place("../other", ws), Place::Outside("/work/other".into()));
        assert_eq!(place("/", ws), Place::Outside("/".into()));
        assert_eq!(place("~", ws), Place::Home);
        assert_eq!(place("$HOME/.ssh", ws), Place::Home);
        assert!(in_git_hooks(Path::new(".git/hooks/pre-commit")));
        assert!(!in_git_hooks(Path::new("docs/.git-hooks")));
    }
}
