//! `cortex commands list` and `cortex skills list`: the custom commands and
//! skills a session on the repository would find (`cortex_core::commands`,
//! `cortex_core::skills`), where each comes from, and every file that was
//! found and rejected with the reason.
//!
//! Repository files are read below the repository's root without following
//! links, as sessions read them. What they hold is untrusted: the human
//! output passes every field through the terminal sanitiser; `--json` is
//! exact (through the terminal-safe JSON writer). Commands and skills are
//! prompts and text for the model, never run here, so there is no trust to
//! show: the scope says whose they are.
//!
//! `cortex hooks list`: the user's own hooks (`[hooks]` of `config.toml`
//! and `hooks.json` beside it) and the `hooks.json` entries not run. Those
//! run on the host as the user; a repository's hooks are not read at all.

use anyhow::Context;
use clap::{Args, Subcommand};
use cortex_core::extensions::Roots;
use cortex_protocol::RejectedFile;
use cortex_term::sanitize_line;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum CommandsCommand {
    /// The custom commands of the repository and of the user, and the
    /// command files that were rejected with why.
    #[command(after_help = "Examples:\n  cortex commands list\n  \
        cortex commands list --repo ~/src/app --json")]
    List(ListArgs),
}

#[derive(Subcommand)]
pub enum SkillsCommand {
    /// The skills of the repository and of the user, and the skill folders
    /// that were rejected with why.
    #[command(after_help = "Examples:\n  cortex skills list\n  \
        cortex skills list --repo ~/src/app --json")]
    List(ListArgs),
}

#[derive(Subcommand)]
pub enum HooksCommand {
    /// The user's hooks (`[hooks]` in config.toml, `hooks.json` in Claude
    /// Code's format) and the entries that are not run, with why.
    #[command(after_help = "Examples:\n  cortex hooks list\n  cortex hooks list --json")]
    List(HooksListArgs),
}

#[derive(Args)]
pub struct HooksListArgs {
    /// One JSON object: the hooks and the entries not run.
    #[arg(long)]
    json: bool,
}

/// Said with the list: hooks a repository ships are not read yet.
const REPOSITORY_HOOKS: &str =
    "hooks in a repository are not read: only your own config's hooks run, on this machine";

pub fn run_hooks(command: HooksCommand) -> anyhow::Result<ExitCode> {
    let HooksCommand::List(args) = command;
    let config = crate::config::Config::load()?;
    let found = config.user_hooks()?;
    if args.json {
        let value = serde_json::json!({
            "hooks": found.hooks,
            "skipped": found.skipped,
            "repository_hooks": "not read",
        });
        println!("{}", crate::json_out::to_line(&value)?);
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", human_hooks(&found));
    Ok(ExitCode::SUCCESS)
}

/// The human listing of the user's hooks; every field from a file goes
/// through the sanitiser.
fn human_hooks(found: &crate::config::UserHooks) -> String {
    let mut out = String::new();
    if found.hooks.is_empty() {
        out.push_str("no hooks found\n");
    }
    for hook in &found.hooks {
        let matcher = match (&hook.matcher, hook.event) {
            (Some(m), _) if !m.trim().is_empty() => format!(" [{}]", sanitize_line(m)),
            (_, cortex_core::HookEvent::PreToolUse | cortex_core::HookEvent::PostToolUse) => {
                " [every tool]".to_owned()
            }
            _ => String::new(),
        };
        let timeout = hook
            .timeout_ms
            .unwrap_or(cortex_core::hooks::DEFAULT_TIMEOUT.as_millis() as u64);
        out.push_str(&format!(
            "{}{matcher}  {}\n    user {}; timeout {timeout} ms; runs on the host\n",
            hook.event,
            sanitize_line(&hook.command),
            sanitize_line(&hook.source),
        ));
    }
    if !found.skipped.is_empty() {
        out.push_str(&format!("not run ({}):\n", found.skipped.len()));
        for line in &found.skipped {
            out.push_str(&format!("  {}\n", sanitize_line(line)));
        }
    }
    out.push_str(REPOSITORY_HOOKS);
    out.push('\n');
    out
}

#[derive(Args)]
pub struct ListArgs {
    /// The repository (default: the current folder).
    #[arg(long)]
    repo: Option<PathBuf>,
    /// One JSON object: the list and the rejected files.
    #[arg(long)]
    json: bool,
}

fn roots(repo: Option<PathBuf>) -> anyhow::Result<Roots> {
    let repo = match repo {
        Some(repo) => repo,
        None => std::env::current_dir()?,
    };
    let repo = repo
        .canonicalize()
        .with_context(|| format!("no repository at {}", repo.display()))?;
    let dirs = crate::config::harness_dirs()?;
    Ok(Roots {
        workspace: Some(repo),
        repository: None,
        config: dirs.folder("config").map(std::path::Path::to_path_buf),
    })
}

pub fn run_commands(command: CommandsCommand) -> anyhow::Result<ExitCode> {
    let CommandsCommand::List(args) = command;
    let catalog = cortex_core::commands::discover_commands(&roots(args.repo)?);
    if args.json {
        let value = serde_json::json!({
            "commands": catalog.infos(),
            "rejected": catalog.rejected,
        });
        println!("{}", crate::json_out::to_line(&value)?);
        return Ok(ExitCode::SUCCESS);
    }
    let rows: Vec<Row> = catalog
        .commands
        .iter()
        .map(|c| {
            let info = &c.info;
            let mut name = format!("/{}", info.name);
            if let Some(hint) = &info.argument_hint {
                name.push(' ');
                name.push_str(hint);
            }
            let mut notes = Vec::new();
            if let Some(mode) = &info.mode {
                notes.push(format!("mode {mode} not applied"));
            }
            if let Some(model) = &info.model {
                notes.push(format!("model {model} not applied"));
            }
            Row {
                name,
                description: info.description.clone(),
                scope: info.scope.as_str(),
                path: info.path.clone(),
                notes,
            }
        })
        .collect();
    print!("{}", human("commands", &rows, &catalog.rejected));
    Ok(ExitCode::SUCCESS)
}

pub fn run_skills(command: SkillsCommand) -> anyhow::Result<ExitCode> {
    let SkillsCommand::List(args) = command;
    let catalog = cortex_core::skills::discover_skills(&roots(args.repo)?);
    if args.json {
        let value = serde_json::json!({
            "skills": catalog.infos(),
            "rejected": catalog.rejected,
        });
        println!("{}", crate::json_out::to_line(&value)?);
        return Ok(ExitCode::SUCCESS);
    }
    let rows: Vec<Row> = catalog
        .skills
        .iter()
        .map(|s| Row {
            name: s.info.name.clone(),
            description: s.info.description.clone(),
            scope: s.info.scope.as_str(),
            path: s.info.path.clone(),
            notes: Vec::new(),
        })
        .collect();
    print!("{}", human("skills", &rows, &catalog.rejected));
    Ok(ExitCode::SUCCESS)
}

/// One listed command or skill, as printed.
struct Row {
    name: String,
    description: String,
    scope: &'static str,
    path: String,
    notes: Vec<String>,
}

/// The human listing: a line per item with its description and origin, then
/// the rejected files; every field a file wrote goes through the sanitiser.
fn human(what: &str, rows: &[Row], rejected: &[RejectedFile]) -> String {
    let mut out = String::new();
    if rows.is_empty() {
        out.push_str(&format!("no {what} found\n"));
    }
    for row in rows {
        out.push_str(&format!(
            "{}  {}\n    {} {}",
            sanitize_line(&row.name),
            sanitize_line(&row.description),
            row.scope,
            sanitize_line(&row.path),
        ));
        for note in &row.notes {
            out.push_str(&format!("; {}", sanitize_line(note)));
        }
        out.push('\n');
    }
    if !rejected.is_empty() {
        out.push_str(&format!("rejected ({}):\n", rejected.len()));
        for file in rejected {
            out.push_str(&format!(
                "  {} {}: {}\n",
                file.scope.as_str(),
                sanitize_line(&file.path),
                sanitize_line(&file.reason)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hook_listing_is_sanitised_and_says_repository_hooks_are_not_read() {
        let found = crate::config::UserHooks {
            hooks: vec![cortex_core::HookSpec {
                event: cortex_core::HookEvent::PreToolUse,
                matcher: Some("Bash\x1b[2J".into()),
                command: "/home/me/guard\x1b]0;pwned\x07".into(),
                timeout_ms: Some(500),
                source: "/home/me/.config/cortex/hooks.json".into(),
                claude: true,
            }],
            skipped: vec!["SessionStart: an event Cortex does not run yet\x1b[31m".into()],
        };
        let out = human_hooks(&found);
        assert!(!out.contains('\x1b') && !out.contains('\x07'), "{out:?}");
        assert!(out.starts_with("PreToolUse [Bash"), "{out}");
        assert!(out.contains("timeout 500 ms"), "{out}");
        assert!(out.contains("not run (1):\n  SessionStart"), "{out}");
        assert!(out.ends_with(&format!("{REPOSITORY_HOOKS}\n")), "{out}");
    }
}
