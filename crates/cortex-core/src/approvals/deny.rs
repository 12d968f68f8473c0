//! The built-in deny list: calls no rule and no policy can allow, refused
//! before anything else is asked, `auto` included. Each refusal names its
//! reason:
//! - deleting or overwriting outside the workspace (`rm -rf /`, `rm -rf ~`,
//!   `dd of=/dev/…`, a redirection onto a device or a file elsewhere);
//! - `git push --force` (or `+refspec`, `--mirror`) to the default branch;
//! - `git config` changes to hooks or fsmonitor (`-c core.hooksPath=…` too):
//!   they make git run a program;
//! - writing into `.git/hooks`.

use super::analysis::{Analysis, SimpleCommand, Word};
use super::paths::{Place, in_git_hooks, is_harmless_device, is_scratch, place};
use super::wrappers::program;
use std::path::Path;

/// What the deny list needs to know about the session.
pub(crate) struct DenyContext<'a> {
    pub workspace: &'a Path,
    /// Branch names a force-push may not target.
    pub default_branches: Vec<String>,
}

impl<'a> DenyContext<'a> {
    /// `main`, `master`, and the branch `origin/HEAD` names, if the
    /// workspace's git metadata says.
    pub(crate) fn for_workspace(workspace: &'a Path) -> Self {
        let mut default_branches = vec!["main".to_owned(), "master".to_owned()];
        let head = workspace.join(".git/refs/remotes/origin/HEAD");
        if let Ok(text) = std::fs::read_to_string(head)
            && let Some(branch) = text.trim().strip_prefix("ref: refs/remotes/origin/")
            && !default_branches.iter().any(|b| b == branch)
        {
            default_branches.push(branch.to_owned());
        }
        DenyContext {
            workspace,
            default_branches,
        }
    }
}

/// Why a file write is refused.
pub(crate) fn check_write(path: &str, ctx: &DenyContext<'_>) -> Option<String> {
    match place(path, ctx.workspace) {
        Place::Inside(relative) if in_git_hooks(&relative) => Some(format!(
            "writing into .git/hooks (`{path}`) is on the deny list: a hook runs on the host"
        )),
        _ => None,
    }
}

/// Why a `bash` command is refused.
pub(crate) fn check_bash(analysis: &Analysis, ctx: &DenyContext<'_>) -> Option<String> {
    analysis
        .commands
        .iter()
        .find_map(|command| check_command(command, ctx))
}

fn check_command(command: &SimpleCommand, ctx: &DenyContext<'_>) -> Option<String> {
    for target in &command.writes {
        if let Some(reason) = check_overwrite(target.text(), ctx, "redirecting output to") {
            return Some(reason);
        }
    }
    let args = command.argv.get(1..).unwrap_or_default();
    match program(&command.argv)? {
        "rm" | "rmdir" | "shred" | "unlink" => check_delete(args, ctx),
        "dd" => args.iter().find_map(|a| {
            let target = a.text().strip_prefix("of=")?;
            check_overwrite(target, ctx, "`dd` writing to")
        }),
        "cp" | "mv" | "tee" | "install" | "ln" | "truncate" | "touch" | "chmod" | "rsync"
        | "sed" => args.iter().find_map(|a| hooks_target(a.text(), ctx)),
        "mkfs" | "wipefs" | "fdisk" | "sfdisk" | "parted" => Some(format!(
            "`{}` rewrites a disk; it is on the deny list",
            command.argv[0].text()
        )),
        name if name.starts_with("mkfs.") => {
            Some(format!("`{name}` rewrites a disk; it is on the deny list"))
        }
        "git" => check_git(args, ctx),
        _ => None,
    }
}

fn hooks_target(text: &str, ctx: &DenyContext<'_>) -> Option<String> {
    match place(text, ctx.workspace) {
        Place::Inside(relative) if in_git_hooks(&relative) => Some(format!(
            "writing into .git/hooks (`{text}`) is on the deny list: a hook runs on the host"
        )),
        _ => None,
    }
}

/// A write to `target`: refused outside the workspace (scratch folders and
/// harmless devices aside) and into `.git/hooks`.
fn check_overwrite(target: &str, ctx: &DenyContext<'_>, what: &str) -> Option<String> {
    match place(target, ctx.workspace) {
        Place::Inside(relative) if in_git_hooks(&relative) => hooks_target(target, ctx),
        Place::Inside(_) => None,
        Place::Home => Some(format!(
            "{what} `{target}` overwrites the home folder, outside the workspace; it is on the \
             deny list"
        )),
        Place::Outside(path) if is_scratch(&path) || is_harmless_device(&path) => None,
        Place::Outside(_) => Some(format!(
            "{what} `{target}` overwrites outside the workspace; it is on the deny list"
        )),
    }
}

/// `rm` and friends: every operand must be inside the workspace (or a
/// scratch folder), and never the workspace itself's parent.
fn check_delete(args: &[Word], ctx: &DenyContext<'_>) -> Option<String> {
    let mut options_done = false;
    for arg in args {
        let text = arg.text();
        if !options_done && text == "--" {
            options_done = true;
            continue;
        }
        if !options_done && text.starts_with('-') {
            if text == "--no-preserve-root" {
                return Some("`rm --no-preserve-root` is on the deny list".to_owned());
            }
            continue;
        }
        let refusal = match place(text, ctx.workspace) {
            Place::Inside(relative) if in_git_hooks(&relative) => None,
            Place::Inside(_) => None,
            Place::Home => Some(format!(
                "deleting `{text}` (the home folder) is on the deny list"
            )),
            Place::Outside(path) if is_scratch(&path) => None,
            Place::Outside(_) => Some(format!(
                "deleting `{text}` outside the workspace is on the deny list"
            )),
        };
        if refusal.is_some() {
            return refusal;
        }
    }
    None
}

/// Git's options before the subcommand, checked for `-c` overrides; the
/// subcommand and its arguments.
fn check_git(args: &[Word], ctx: &DenyContext<'_>) -> Option<String> {
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let text = word.text();
        match text {
            "-c" => {
                if let Some(value) = args.get(i + 1)
                    && is_hook_key(value.text())
                {
                    return Some(hook_config_refusal(value.text()));
                }
                i += 2;
            }
            "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--exec-path" => i += 2,
            _ if text.starts_with("--config-env") => i += if text.contains('=') { 1 } else { 2 },
            _ if text.starts_with('-') => i += 1,
            _ => break,
        }
    }
    let sub = args.get(i)?.text();
    let rest = args.get(i + 1..).unwrap_or_default();
    match sub {
        "push" => check_push(rest, ctx),
        "config" => check_config(rest),
        _ => None,
    }
}

fn is_hook_key(text: &str) -> bool {
    let key = text.split('=').next().unwrap_or(text).to_ascii_lowercase();
    key.contains("hookspath") || key.contains("fsmonitor") || key.starts_with("hook.")
}

fn hook_config_refusal(key: &str) -> String {
    format!(
        "changing git's `{key}` is on the deny list: hooks and fsmonitor make git run a program"
    )
}

/// `git config` that sets or unsets a hook or fsmonitor key (reading one
/// is fine).
fn check_config(rest: &[Word]) -> Option<String> {
    let reads = rest.iter().any(|w| {
        matches!(
            w.text(),
            "--get" | "--get-all" | "--get-regexp" | "--list" | "-l" | "get" | "list"
        )
    });
    if reads {
        return None;
    }
    rest.iter()
        .map(Word::text)
        .find(|t| !t.starts_with('-') && is_hook_key(t))
        .map(hook_config_refusal)
}

/// A forced push whose destination is a default branch, or unnamed (then
/// it is the current branch's upstream, which may be the default branch).
fn check_push(rest: &[Word], ctx: &DenyContext<'_>) -> Option<String> {
    let mut forced = false;
    let mut operands = Vec::new();
    for word in rest {
        let text = word.text();
        match text {
            "-f" | "--force" | "--mirror" | "--force-if-includes" => forced = true,
            _ if text.starts_with("--force-with-lease") => forced = true,
            _ if text.starts_with('-') && !text.starts_with("--") && text.contains('f') => {
                forced = true
            }
            _ if text.starts_with('-') => {}
            _ => operands.push(text),
        }
    }
    let refspecs = operands.get(1..).unwrap_or_default();
    forced |= refspecs.iter().any(|r| r.starts_with('+'));
    if !forced {
        return None;
    }
    let default = |spec: &str| {
        let destination = spec.rsplit(':').next().unwrap_or(spec);
        let destination = destination.trim_start_matches('+');
        let destination = destination
            .strip_prefix("refs/heads/")
            .unwrap_or(destination);
        destination == "HEAD" || ctx.default_branches.iter().any(|b| b == destination)
    };
    if refspecs.is_empty() || refspecs.iter().any(|r| default(r)) {
        return Some(format!(
            "a forced `git push` to the default branch ({}) is on the deny list",
            ctx.default_branches.join(", ")
        ));
    }
    None
}
