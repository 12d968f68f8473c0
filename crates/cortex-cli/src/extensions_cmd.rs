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

#[derive(Args)]
pub struct ListArgs {
    /// The repository (default: the current folder).
    #[arg(long)]
    repo: Option<PathBuf>,
    /// One JSON object: the list and the rejected files.
    #[arg(long)]
    json: bool,
}

/// The repository a listing is about: `repo`, or the current folder,
/// canonicalised as sessions name it.
pub(crate) fn repository(repo: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    let repo = match repo {
        Some(repo) => repo,
        None => std::env::current_dir()?,
    };
    repo.canonicalize()
        .with_context(|| format!("no repository at {}", repo.display()))
}

fn roots(repo: Option<PathBuf>) -> anyhow::Result<Roots> {
    let repo = repository(repo)?;
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
