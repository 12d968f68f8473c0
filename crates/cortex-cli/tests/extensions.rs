//! Custom commands and skills from the command line (issue 40, items 1, 2
//! and 6): `cortex commands list` and `cortex skills list` show what was
//! found, from where, and what was rejected with why (human output through
//! the sanitiser, `--json` exact), and `cortex exec --command NAME ARGS`
//! runs a command with its arguments substituted and an `@path` file
//! included.

mod common;

use common::{Env, json_lines, run_ok};
use serde_json::{Value, json};

/// A description that would recolour a terminal printed raw.
const HOSTILE: &str = "Review \u{1b}[31mred\u{1b}[0m";

fn write(root: &std::path::Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

fn env() -> Env {
    let env = Env::new(&[("a.txt", "alpha\n")]);
    let repo = env.repo.path();
    write(
        repo,
        ".cortex/commands/review.md",
        &format!(
            "---\ndescription: \"{HOSTILE}\"\nargument-hint: <file> <focus>\nmode: agent\n---\nReview @$1 for $2.\n"
        ),
    );
    write(
        repo,
        ".claude/commands/git/commit.md",
        "Commit the work: $ARGUMENTS\n",
    );
    std::os::unix::fs::symlink("/etc/passwd", repo.join(".cortex/commands/pw.md")).expect("link");
    write(
        env.home.path(),
        "config/cortex/commands/mine.md",
        "---\ndescription: Mine\n---\nMy own.\n",
    );
    write(
        repo,
        ".agents/skills/release-notes/SKILL.md",
        "---\nname: release-notes\ndescription: Write release notes\n---\nSteps.\n",
    );
    write(repo, ".claude/skills/broken/SKILL.md", "no front matter\n");
    env
}

fn list(env: &Env, what: &str, json: bool) -> std::process::Output {
    let mut cmd = env.command();
    cmd.args([what, "list", "--repo"]).arg(env.repo.path());
    if json {
        cmd.arg("--json");
    }
    run_ok(cmd)
}

#[test]
fn commands_list_shows_origin_and_rejections_sanitised_and_as_exact_json() {
    let env = env();
    let out = list(&env, "commands", false);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains('\u{1b}'), "{stdout:?}");
    assert_eq!(
        stdout,
        "/git:commit  Commit the work: $ARGUMENTS\n    repository .claude/commands/git/commit.md\n\
         /mine  Mine\n    user ~/config/cortex/commands/mine.md\n\
         /review <file> <focus>  Review ^[[31mred^[[0m\n    repository .cortex/commands/review.md; mode agent not applied\n\
         rejected (1):\n  repository .cortex/commands/pw.md: a symbolic link: not followed\n"
    );

    let out = list(&env, "commands", true);
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 1);
    let value = &lines[0];
    let names: Vec<&str> = value["commands"]
        .as_array()
        .expect("commands")
        .iter()
        .map(|c| c["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["git:commit", "mine", "review"]);
    // Exact: the description as the file wrote it.
    assert_eq!(value["commands"][2]["description"], HOSTILE);
    assert_eq!(value["commands"][1]["scope"], "user");
    assert_eq!(
        value["rejected"],
        json!([{"scope": "repository", "path": ".cortex/commands/pw.md",
                "reason": "a symbolic link: not followed"}])
    );
}

#[test]
fn skills_list_shows_each_skill_and_the_rejected_one() {
    let env = env();
    let out = list(&env, "skills", false);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout,
        "release-notes  Write release notes\n    repository .agents/skills/release-notes\n\
         rejected (1):\n  repository .claude/skills/broken: SKILL.md has no `name` in its front matter\n"
    );
    let out = list(&env, "skills", true);
    let value: Value = json_lines(&out.stdout).remove(0);
    assert_eq!(value["skills"][0]["name"], "release-notes");
    assert_eq!(value["rejected"][0]["path"], ".claude/skills/broken");
}

#[test]
fn exec_runs_a_command_with_arguments_and_an_included_file() {
    let env = env();
    let script = env.script(json!({"responses": [{"text": "Reviewed."}]}));
    let mut cmd = env.command();
    cmd.arg("exec")
        .arg("--repo")
        .arg(env.repo.path())
        .arg("--model")
        .arg(format!("scripted:{}", script.display()))
        .args([
            "--json",
            "--mode",
            "ask",
            "--command",
            "review",
            "a.txt",
            "the style",
        ]);
    let out = run_ok(cmd);
    let events = json_lines(&out.stdout);
    let started = events
        .iter()
        .find(|e| e["type"] == "turn.started")
        .expect("turn.started");
    assert_eq!(
        started["payload"]["message"],
        "Review @a.txt for the style."
    );
    // The file it includes, read in the guest once attached.
    assert!(
        events.iter().any(|e| e["type"] == "turn.context"
            && e["payload"]["text"]
                == "The files the command includes (`@path`), read from the workspace:\n\n`a.txt`:\n```\nalpha\n```"),
        "{events:#?}"
    );
    // The command's `mode: agent` is not applied.
    assert_eq!(started["payload"]["mode"], "ask");
    assert!(events.iter().any(|e| e["type"] == "turn.completed"));

    // An unknown command fails before any turn, saying so.
    let mut cmd = env.command();
    cmd.arg("exec")
        .arg("--repo")
        .arg(env.repo.path())
        .arg("--model")
        .arg(format!("scripted:{}", script.display()))
        .args(["--command", "pw"]);
    let out = common::run(cmd);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "no command named `pw` (.cortex/commands/pw.md: a symbolic link: not followed)"
        ),
        "{stderr}"
    );
}

/// Hooks a repository ships (Claude Code's `.claude/settings.json`, a
/// `hooks.json` in `.cortex/` or at the root) never run untrusted: a hook
/// there that would write a canary on the host does not run, while the
/// turn's `bash` call runs in the guest as usual (trusted, they run in the
/// guest: `repository_hooks.rs`).
#[test]
fn hooks_a_repository_ships_never_run() {
    let env = Env::new(&[("a.txt", "alpha\n")]);
    let canary = env.home.path().join("canary");
    let hook = json!({"hooks": {"PreToolUse": [{"matcher": ".*", "hooks": [
        {"type": "command", "command": format!("touch {}", canary.display())}
    ]}], "UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": format!("touch {}", canary.display())}
    ]}]}})
    .to_string();
    for path in [".claude/settings.json", ".cortex/hooks.json", "hooks.json"] {
        write(env.repo.path(), path, &hook);
    }
    let script = env.script(json!({"responses": [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo ran"}}]},
        {"text": "Done."}
    ]}));
    let mut cmd = env.command();
    cmd.arg("exec")
        .arg("--repo")
        .arg(env.repo.path())
        .arg("--model")
        .arg(format!("scripted:{}", script.display()))
        .args(["--json", "--approval", "auto", "Run echo."]);
    let out = run_ok(cmd);
    let events = json_lines(&out.stdout);
    let ran = events
        .iter()
        .find(|e| e["type"] == "tool.result")
        .expect("a tool.result");
    assert_eq!(ran["payload"]["status"], "ok", "{ran}");
    assert!(
        !events
            .iter()
            .any(|e| e["type"] == "hook.ran" || e["type"] == "hook.failed"),
        "no hook ran"
    );
    assert!(!canary.exists(), "a repository hook ran on the host");
}
