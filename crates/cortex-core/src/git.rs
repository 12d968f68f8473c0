//! Every git command Cortex runs on the host, hardened against the repository
//! it runs in.
//!
//! A repository's metadata may have been written by a hostile model (an
//! earlier session, a `--workspace copy`'s own git directory, a nested
//! repository) or come with a hostile clone. Git runs programs named by
//! configuration (`core.fsmonitor`, hooks, `core.hooksPath`), reads
//! configuration from several places, and follows `.git` files and
//! `commondir` to other git directories. So every host-side git goes through
//! [`command`], which:
//! - runs git by absolute path ([`program`]: `CORTEX_GIT`, else the system's
//!   locations), never through a `PATH` lookup that a workspace could shadow;
//! - starts from an empty environment plus a short allow-list (home, locale,
//!   proxies, the SSH agent), so no `GIT_*` variable of the caller leaks in;
//! - reads no system or global configuration (`GIT_CONFIG_NOSYSTEM=1`,
//!   `GIT_CONFIG_GLOBAL=/dev/null`);
//! - overrides what runs programs: `core.fsmonitor=false`,
//!   `core.hooksPath=/dev/null`, `protocol.file.allow=user`,
//!   `safe.bareRepository=explicit`; command-line `-c` wins over the
//!   repository's own configuration and every file it includes;
//! - names the git directory and the work tree explicitly ([`Repo`]), so no
//!   discovery, `core.worktree` or bare repository in the tree is honoured,
//!   and [`Repo::open`] refuses a `.git` file or `commondir` that points
//!   outside the repository.

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// Where git is looked for, in order, when `CORTEX_GIT` is not set.
pub const GIT_LOCATIONS: &[&str] = &[
    "/usr/bin/git",
    "/bin/git",
    "/usr/local/bin/git",
    "/opt/homebrew/bin/git",
];

/// The `PATH` git itself gets (for `ssh` and its own helpers): system
/// folders only.
const GIT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Variables passed through to git; everything else is cleared.
const PASSED_ENV: &[&str] = &[
    "HOME",
    "USER",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TMPDIR",
    "SSH_AUTH_SOCK",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
];

/// `-c` settings given to every command.
const OVERRIDES: &[&str] = &[
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "protocol.file.allow=user",
    "safe.bareRepository=explicit",
];

/// Why a host-side git could not run.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// No git binary at the usual places and no `CORTEX_GIT`.
    #[error("git was not found (set CORTEX_GIT to its absolute path; looked in {})", GIT_LOCATIONS.join(", "))]
    NotFound,
    /// `CORTEX_GIT` is not an absolute path.
    #[error("CORTEX_GIT must be an absolute path to git, not `{0}`")]
    BadOverride(String),
    /// git could not be started.
    #[error("cannot run git: {0}")]
    Spawn(std::io::Error),
    /// Git ran and failed; its standard error.
    #[error("{0}")]
    Failed(String),
    /// The repository's git metadata leads outside it.
    #[error("{file} points outside the repository (to {target}); Cortex runs no git on it")]
    Outside {
        /// The `.git` file, symlink or `commondir` that leads out.
        file: String,
        /// Where it leads.
        target: String,
    },
    /// An I/O error on the path named first.
    #[error("{0}: {1}")]
    Io(String, std::io::Error),
}

/// The git program: `CORTEX_GIT` (an absolute path) or the first of
/// [`GIT_LOCATIONS`] that is an executable file. Looked up once.
pub fn program() -> Result<&'static Path, GitError> {
    /// Why no git was found, kept for every later call.
    enum Missing {
        NotFound,
        BadOverride(String),
    }
    static PROGRAM: OnceLock<Result<PathBuf, Missing>> = OnceLock::new();
    let found = PROGRAM.get_or_init(|| match std::env::var_os("CORTEX_GIT") {
        Some(path) if Path::new(&path).is_absolute() => Ok(PathBuf::from(path)),
        Some(path) => Err(Missing::BadOverride(path.to_string_lossy().into_owned())),
        None => GIT_LOCATIONS
            .iter()
            .map(PathBuf::from)
            .find(|p| is_executable(p))
            .ok_or(Missing::NotFound),
    });
    match found {
        Ok(path) => Ok(path),
        Err(Missing::NotFound) => Err(GitError::NotFound),
        Err(Missing::BadOverride(bad)) => Err(GitError::BadOverride(bad.clone())),
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A hardened git command (see the module docs), in `repo` when given (its
/// git directory and work tree named explicitly, its top as the current
/// folder), else in `/`.
pub fn command(repo: Option<&Repo>) -> Result<Command, GitError> {
    let mut command = Command::new(program()?);
    command.env_clear();
    for name in PASSED_ENV {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    command
        .env("PATH", GIT_PATH)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_PAGER", "cat")
        .stdin(Stdio::null());
    for setting in OVERRIDES {
        command.arg("-c").arg(setting);
    }
    match repo {
        Some(repo) => {
            let mut git_dir = OsString::from("--git-dir=");
            git_dir.push(&repo.git_dir);
            let mut work_tree = OsString::from("--work-tree=");
            work_tree.push(&repo.top);
            command.arg(git_dir).arg(work_tree).current_dir(&repo.top);
        }
        None => {
            command.current_dir("/");
        }
    }
    Ok(command)
}

/// Run `command` with `args`; its standard output on success, its standard
/// error as [`GitError::Failed`] otherwise.
pub fn run(mut command: Command, args: &[&std::ffi::OsStr]) -> Result<Vec<u8>, GitError> {
    let output = command.args(args).output().map_err(GitError::Spawn)?;
    if output.status.success() {
        Ok(output.stdout)
    } else {
        Err(GitError::Failed(
            String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        ))
    }
}

/// A repository with its git directory inside its top folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    /// The working tree's top folder (canonical).
    pub top: PathBuf,
    /// Its git directory (canonical), inside `top`.
    pub git_dir: PathBuf,
}

/// The most a `.git` file or `commondir` is read of.
const POINTER_MAX: u64 = 4096;

impl Repo {
    /// The repository whose top folder is `top`: `Ok(None)` when `top` has
    /// no `.git`. A `.git` file (`gitdir: …`), a `.git` symlink or a
    /// `commondir` that leads outside `top` is refused with
    /// [`GitError::Outside`] (a linked worktree or a submodule checkout
    /// therefore is too).
    pub fn open(top: &Path) -> Result<Option<Repo>, GitError> {
        let top = top
            .canonicalize()
            .map_err(|e| GitError::Io(top.display().to_string(), e))?;
        let dot = top.join(".git");
        let meta = match std::fs::symlink_metadata(&dot) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(GitError::Io(dot.display().to_string(), e)),
        };
        let git_dir = if meta.is_file() {
            let text = read_pointer(&dot)?;
            let target = text.strip_prefix("gitdir:").map(str::trim).ok_or_else(|| {
                GitError::Failed(format!("{}: not a `gitdir:` file", dot.display()))
            })?;
            inside(&top, &top.join(target), &dot)?
        } else {
            // A directory, or a symlink to one: either way it must resolve
            // inside the repository.
            inside(&top, &dot, &dot)?
        };
        let commondir = git_dir.join("commondir");
        if std::fs::symlink_metadata(&commondir).is_ok() {
            let text = read_pointer(&commondir)?;
            inside(&top, &git_dir.join(text.trim()), &commondir)?;
        }
        // A `.git` that resolves to the top itself would make the whole
        // tree git's metadata.
        if git_dir == top {
            return Err(GitError::Outside {
                file: dot.display().to_string(),
                target: git_dir.display().to_string(),
            });
        }
        Ok(Some(Repo { top, git_dir }))
    }
}

fn read_pointer(path: &Path) -> Result<String, GitError> {
    let io = |e| GitError::Io(path.display().to_string(), e);
    let mut text = String::new();
    std::fs::File::open(path)
        .map_err(io)?
        .take(POINTER_MAX)
        .read_to_string(&mut text)
        .map_err(io)?;
    Ok(text)
}

/// `target` canonicalised, which must be `top` or below it; `file` is what
/// pointed there, for the error.
fn inside(top: &Path, target: &Path, file: &Path) -> Result<PathBuf, GitError> {
    let outside = || GitError::Outside {
        file: file.display().to_string(),
        target: target.display().to_string(),
    };
    let resolved = target.canonicalize().map_err(|e| {
        GitError::Io(
            format!("{} (named by {})", target.display(), file.display()),
            e,
        )
    })?;
    if resolved.starts_with(top) {
        Ok(resolved)
    } else {
        Err(outside())
    }
}
