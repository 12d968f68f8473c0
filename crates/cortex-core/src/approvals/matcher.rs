//! What a call would do, as far as approvals go ([`Subject`]), and whether
//! the user's rules cover it.
//!
//! A `bash` command is covered when it is not opaque and *every* command it
//! would run starts with a rule's words and writes nowhere outside the
//! workspace: a `git status` rule covers `git status --short` but never
//! `git status && rm -rf x`. A script that runs no command at all (`> f`,
//! `x=1`, a comment) is never covered. A redirection target must be inside
//! the workspace by its text *and* on disk (no link out), and after a `cd`
//! only an absolute one can be judged. A file write is covered by a glob over its
//! workspace-relative path, an MCP call by a rule naming its server and tool.

use super::analysis::{Analysis, SimpleCommand, Word};
use super::paths::{Place, is_harmless_device, is_scratch, place, stays_inside_on_disk};
use super::shell::analyse;
use cortex_protocol::{RuleMatch, ToolArgs};
use std::path::Path;

/// What approving a call approves.
#[derive(Debug)]
pub(crate) enum Subject {
    Bash { command: String, analysis: Analysis },
    Write { path: String },
    Mcp { server: String, tool: String },
}

/// `mcp__SERVER__TOOL` → (server, tool).
pub(crate) fn mcp_name(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix("mcp__")?;
    let (server, tool) = rest.split_once("__")?;
    (!server.is_empty() && !tool.is_empty()).then_some((server, tool))
}

impl Subject {
    /// The subject of a call, or `None` for a call that never needs
    /// approval (reads, the todo list, the plan).
    pub(crate) fn of(name: &str, args: Option<&ToolArgs>) -> Option<Subject> {
        if let Some((server, tool)) = mcp_name(name) {
            return Some(Subject::Mcp {
                server: server.to_owned(),
                tool: tool.to_owned(),
            });
        }
        match args? {
            ToolArgs::Bash(a) => Some(Subject::Bash {
                analysis: analyse(&a.command),
                command: a.command.clone(),
            }),
            other => other.written_path().map(|path| Subject::Write {
                path: path.to_owned(),
            }),
        }
    }

    /// One line for the user: what would run or be written.
    pub(crate) fn summary(&self) -> String {
        match self {
            Subject::Bash { command, .. } => command.clone(),
            Subject::Write { path } => format!("write {path}"),
            Subject::Mcp { server, tool } => format!("MCP tool {tool} of {server}"),
        }
    }

    /// Why the rules do not cover it (empty: they do).
    pub(crate) fn uncovered(&self, rules: &[RuleMatch], workspace: &Path) -> Vec<String> {
        match self {
            Subject::Bash { analysis, .. } => bash_uncovered(analysis, rules, workspace),
            Subject::Write { path } => {
                let relative = relative_path(path, workspace);
                let covered = relative.as_deref().is_some_and(|relative| {
                    rules.iter().any(|rule| match rule {
                        RuleMatch::Write { glob } => globset::Glob::new(glob)
                            .map(|g| g.compile_matcher().is_match(relative))
                            .unwrap_or(false),
                        _ => false,
                    })
                });
                if covered {
                    Vec::new()
                } else {
                    vec![format!("no rule covers writing `{path}`")]
                }
            }
            Subject::Mcp { server, tool } => {
                let covered = rules.iter().any(|rule| {
                    matches!(rule, RuleMatch::Mcp { server: s, tool: t } if s == server && t == tool)
                });
                if covered {
                    Vec::new()
                } else {
                    vec![format!(
                        "no rule covers the MCP tool `{tool}` of `{server}`"
                    )]
                }
            }
        }
    }

    /// The rules an "Always" answer adds: what it takes for the same call
    /// to be covered next time, never wider than the command the user saw:
    /// each uncovered command's exact argv. Nothing at all for an opaque
    /// command, or one with a word only known when it runs (`$x`, `*`,
    /// `$(…)`) or run through a wrapper: a rule made of its static words
    /// would cover commands the user never saw (`git status $(…)` storing
    /// `git status` covers every argument; `timeout 5 ls` storing `ls`
    /// names a command that was not shown).
    pub(crate) fn rules_for_always(
        &self,
        existing: &[RuleMatch],
        workspace: &Path,
    ) -> Vec<RuleMatch> {
        match self {
            Subject::Bash { analysis, .. } => {
                if !analysis.opaque.is_empty()
                    || analysis.commands.iter().any(|c| {
                        c.wrapped
                            || c.argv
                                .iter()
                                .chain(&c.writes)
                                .any(|w| w.as_static().is_none())
                    })
                {
                    return Vec::new();
                }
                let mut added: Vec<RuleMatch> = Vec::new();
                for command in &analysis.commands {
                    let prefix: Vec<String> = command
                        .argv
                        .iter()
                        .filter_map(|w| w.as_static().map(str::to_owned))
                        .collect();
                    let rule = RuleMatch::Bash { prefix };
                    let known = |rules: &[RuleMatch]| argv_covered(&command.argv, rules);
                    if !command.argv.is_empty()
                        && !matches!(&rule, RuleMatch::Bash { prefix } if prefix.is_empty())
                        && !known(existing)
                        && !known(&added)
                    {
                        added.push(rule);
                    }
                }
                added
            }
            Subject::Write { path } => relative_path(path, workspace)
                .map(|relative| RuleMatch::Write {
                    glob: globset::escape(&relative),
                })
                .into_iter()
                .collect(),
            Subject::Mcp { server, tool } => vec![RuleMatch::Mcp {
                server: server.clone(),
                tool: tool.clone(),
            }],
        }
    }
}

/// The path relative to the workspace, or `None` outside it.
fn relative_path(path: &str, workspace: &Path) -> Option<String> {
    match place(path, workspace) {
        Place::Inside(relative) => Some(relative.to_string_lossy().into_owned()),
        _ => None,
    }
}

pub(crate) fn argv_covered(argv: &[Word], rules: &[RuleMatch]) -> bool {
    rules.iter().any(|rule| match rule {
        RuleMatch::Bash { prefix } => {
            !prefix.is_empty()
                && prefix.len() <= argv.len()
                && prefix
                    .iter()
                    .zip(argv)
                    .all(|(want, word)| word.as_static() == Some(want.as_str()))
        }
        _ => false,
    })
}

fn render(command: &SimpleCommand) -> String {
    command
        .argv
        .iter()
        .map(Word::text)
        .collect::<Vec<_>>()
        .join(" ")
}

pub(crate) fn bash_uncovered(
    analysis: &Analysis,
    rules: &[RuleMatch],
    workspace: &Path,
) -> Vec<String> {
    let mut reasons = analysis.opaque.clone();
    if analysis.commands.iter().all(|c| c.argv.is_empty()) {
        // Nothing a rule could name: a rule covers commands, not their
        // absence, so this needs the user (and `deny` refuses it).
        reasons.push("the script runs no command a rule could cover".to_owned());
    }
    for command in &analysis.commands {
        if !command.argv.is_empty() && !argv_covered(&command.argv, rules) {
            reasons.push(format!("no rule covers `{}`", render(command)));
        }
        for target in &command.writes {
            let relative = !target.text().starts_with('/');
            let fine = match (target, place(target.text(), workspace)) {
                (Word::Dynamic(_), _) => false,
                // After `cd`, `out.txt` may be anywhere.
                (_, Place::Inside(_)) if analysis.cwd_changes && relative => false,
                (_, Place::Inside(_)) => stays_inside_on_disk(target.text(), workspace),
                (_, Place::Outside(path)) => is_scratch(&path) || is_harmless_device(&path),
                (_, Place::Home) => false,
            };
            if !fine {
                reasons.push(format!(
                    "`{}` redirects output to `{}`, outside the workspace",
                    render(command),
                    target.text()
                ));
            }
        }
    }
    reasons.dedup();
    reasons
}
