//! The escape suite, git metadata with `git_write` on (issue 13; the rest
//! is in `escape.rs`): each test drives the real `cortex exec` with a
//! scripted model against what `escape_support` checks (timeline,
//! unchanged host, plant-then-trigger, as root and as nobody).

mod escape_support;

use escape_support::{Attempt, Lab, MARKER, OUTSIDE, Trigger, bash, check, git, step, write};
use serde_json::json;

const GIT_TRIGGERS: &[Trigger] = &[Trigger::UserGit, Trigger::CopySession];

/// A program that leaves its marks when it runs: the marker on the host
/// and `planted-ran` in the folder it runs in (a guest can see only that).
fn planted() -> String {
    format!("#!/bin/sh\\ntouch {MARKER}; touch planted-ran\\n")
}

/// Commands against git's metadata with `git_write` on (prepared by
/// `prepare`), each of which must fail; then the user's git and a copy.
fn git_write_attempt(prepare: fn(&Lab), commands: &[&str]) -> Attempt {
    Attempt {
        rounds: vec![commands.iter().map(|c| bash(c)).collect()],
        triggers: GIT_TRIGGERS,
        prepare,
        ..Attempt::default()
    }
}

// ---- 1b. Git metadata with `git_write` on ----------------------------------
//
// The user lets the model commit (`[sandbox] git_write = true`): the git
// folder is writable, but nothing in it that sends git to another config,
// hook folder or object store may change.

/// `[sandbox] git_write = true` in the run's config.
fn with_git_write(lab: &Lab) {
    write(
        &lab.home.path().join("config/cortex"),
        "config.toml",
        "[sandbox]\ngit_write = true\n",
    );
}

#[test]
fn git_write_commondir_created_is_quarantined_after_the_turn() {
    // A missing `commondir` cannot be held by a placeholder (git refuses an
    // empty one): the model makes it, and the harness renames it when the
    // turn ends, before the user's git reads it.
    check(Attempt {
        prepare: with_git_write,
        rounds: vec![vec![step(
            "bash",
            json!({"command": format!(
                "git init -q --bare evil && printf '{}' > evil/hooks/pre-commit && chmod +x evil/hooks/pre-commit && echo \"$PWD/evil\" > .git/commondir",
                planted()
            )}),
        )]],
        triggers: GIT_TRIGGERS,
        absent: &[".git/commondir"],
        quarantined: &[".git/commondir.cortex-quarantined-1"],
        ..Attempt::default()
    });
}

#[test]
fn git_write_folder_moved_aside_and_rebuilt() {
    check(git_write_attempt(
        with_git_write,
        &[
            &format!(
                "mv .git .git-old && mkdir -p .git/hooks && printf '{}' > .git/hooks/pre-commit",
                planted()
            ),
            "mv .git/objects .git/objects-old",
            "mv .git/objects/info .git/objects/info-old && mkdir .git/objects/info && echo /tmp > .git/objects/info/alternates",
        ],
    ));
}

#[test]
fn git_write_worktree_metadata_redirected() {
    check(git_write_attempt(
        |lab| {
            with_git_write(lab);
            git(
                lab.repo.path(),
                &[
                    "worktree",
                    "add",
                    "-q",
                    &format!("{}/wt", lab.fill(OUTSIDE)),
                ],
            );
        },
        &[
            "mkdir -p evil/hooks && echo \"$PWD/evil\" > .git/worktrees/wt/commondir",
            &format!(
                "printf '[core]\\n\\tfsmonitor = touch {MARKER}\\n' > .git/worktrees/wt/config.worktree"
            ),
            "echo /tmp/elsewhere/.git > .git/worktrees/wt/gitdir",
            "mv .git/worktrees .git/worktrees-old && mkdir -p .git/worktrees/wt",
            "mkdir .git/worktrees/planted",
        ],
    ));
}

#[test]
fn git_write_worktree_folder_created() {
    check(git_write_attempt(
        with_git_write,
        &[
            "mkdir -p .git/worktrees/wt && echo \"$PWD/evil\" > .git/worktrees/wt/commondir",
            "git worktree add -q --detach planted-wt",
        ],
    ));
}

#[test]
fn git_write_module_config_planted() {
    check(git_write_attempt(
        with_git_write,
        &[&format!(
            "mkdir -p .git/modules/lib && printf '[core]\\n\\tfsmonitor = touch {MARKER}\\n' > .git/modules/lib/config"
        )],
    ));
}

#[test]
fn git_write_include_inside_the_git_folder() {
    check(git_write_attempt(
        |lab| {
            with_git_write(lab);
            git(lab.repo.path(), &["config", "include.path", "team.inc"]);
            git(
                lab.repo.path(),
                &["config", "--add", "include.path", "missing.inc"],
            );
            write(lab.repo.path(), ".git/team.inc", "[user]\n\tname = team\n");
        },
        &[
            &format!("printf '[core]\\n\\tfsmonitor = touch {MARKER}\\n' >> .git/team.inc"),
            &format!("printf '[core]\\n\\tfsmonitor = touch {MARKER}\\n' > .git/missing.inc"),
            "mv .git/team.inc .git/team.old",
        ],
    ));
}

#[test]
fn git_write_hooks_folder_the_config_names_inside_the_git_folder() {
    check(git_write_attempt(
        |lab| {
            with_git_write(lab);
            git(
                lab.repo.path(),
                &["config", "core.hooksPath", ".git/team-hooks"],
            );
        },
        &[&format!(
            "mkdir -p .git/team-hooks && printf '{}' > .git/team-hooks/pre-commit && chmod +x .git/team-hooks/pre-commit",
            planted()
        )],
    ));
}

#[test]
fn git_write_linked_worktree_gitdir_file_repointed() {
    check(Attempt {
        prepare: |lab| {
            with_git_write(lab);
            git(lab.repo.path(), &["worktree", "add", "-q", "wt"]);
        },
        repo: Some(|lab| lab.path("wt")),
        rounds: vec![vec![
            step("bash", json!({"command": "git init -q --bare evil-git"})),
            bash("echo 'gitdir: evil-git' > .git"),
            bash("mv .git .git-old"),
            bash("echo /tmp > \"$(git rev-parse --git-dir)/commondir\""),
        ]],
        triggers: &[Trigger::UserGit],
        ..Attempt::default()
    });
}

// ---- 2. Protected paths that do not exist yet ------------------------------
