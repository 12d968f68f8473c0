//! Agent kinds: what a `task` call's `kind` names. Two are built in,
//! `explore` (read-only: read_file, glob, grep) and `general` (the
//! session's mode and tools); more come from Markdown files in the user's
//! `$XDG_CONFIG_HOME/cortex/agents/` and the repository's `.cortex/agents/`
//! and `.claude/agents/` (Claude Code's, read as they are), one kind per
//! file: front matter `name` (default: the file's name), `description`
//! (required) and `tools` (a subset, by our names or Claude Code's:
//! `Read`, `Grep`…; absent: every tool of the mode), the body its
//! instructions.
//!
//! A kind only ever narrows: its tools are intersected with what the
//! session's mode offers, so a repository's kind cannot give a subagent a
//! tool the session does not have. Unknown tool names are left out (which
//! narrows further); a kind left with no tool is rejected. The first kind of
//! a name wins (built-in, then the user's, then the repository's), and every
//! file that cannot be used is listed as rejected with the reason.

use crate::extensions::{self, Kind, Roots, front_matter, one_line};
use cortex_protocol::{ExtensionScope, RejectedFile, ToolName};
use rustix::fd::BorrowedFd;

/// A kind file's largest size.
const MAX_KIND_BYTES: u64 = 32 * 1024;
/// Kinds kept from one folder, at most.
const MAX_KINDS: usize = 64;
/// A description's longest length in the catalogue, in bytes.
const MAX_DESCRIPTION: usize = 512;

/// One agent kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentKind {
    /// What `task`'s `kind` names.
    pub name: String,
    /// One line for the model's list.
    pub description: String,
    /// The tools it may use, or `None` for every tool of the mode.
    pub tools: Option<Vec<ToolName>>,
    /// Its instructions, put before the task.
    pub instructions: String,
    /// Where it was found; `None` for a built-in kind.
    pub scope: Option<ExtensionScope>,
}

/// Every kind: the built-in ones first, then the files' in name order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KindCatalog {
    /// The usable kinds.
    pub kinds: Vec<AgentKind>,
    /// Files that were found and not used, with why.
    pub rejected: Vec<RejectedFile>,
}

impl KindCatalog {
    /// The kind named `name` (case-insensitive).
    pub fn find(&self, name: &str) -> Option<&AgentKind> {
        self.kinds
            .iter()
            .find(|k| k.name.eq_ignore_ascii_case(name))
    }

    /// The names, for an error that lists them.
    pub fn names(&self) -> String {
        let names: Vec<&str> = self.kinds.iter().map(|k| k.name.as_str()).collect();
        names.join(", ")
    }

    /// The kinds from files, as the model's instructions list them (the
    /// built-in ones are described by the tool itself); `None` without any.
    pub(crate) fn catalogue(&self) -> Option<String> {
        let custom: Vec<String> = self
            .kinds
            .iter()
            .filter(|k| k.scope.is_some())
            .map(|k| format!("- {}: {}", k.name, k.description))
            .collect();
        (!custom.is_empty()).then(|| {
            format!(
                "Agent kinds for the task tool, besides explore and general:\n{}",
                custom.join("\n")
            )
        })
    }
}

/// The two built-in kinds.
fn built_in() -> Vec<AgentKind> {
    vec![
        AgentKind {
            name: "explore".to_owned(),
            description: "read-only: searches and reads the workspace and reports".to_owned(),
            tools: Some(vec![ToolName::ReadFile, ToolName::Glob, ToolName::Grep]),
            instructions: "You are an explorer working on one task for another agent. Search \
                           and read the workspace to answer it; you cannot change anything. \
                           End with a concise answer: what you found, with file paths and line \
                           numbers. The other agent sees only that answer."
                .to_owned(),
            scope: None,
        },
        AgentKind {
            name: "general".to_owned(),
            description: "the session's tools: does the task and reports".to_owned(),
            tools: None,
            instructions: "You are a subagent working on one task for another agent. Do the \
                           task with your tools, then end with a concise report of what you \
                           did and found. The other agent sees only that report."
                .to_owned(),
            scope: None,
        },
    ]
}

/// Every kind under `roots`, read on the host (blocking; see
/// `extensions.rs` for how repository files are read).
pub fn discover_kinds(roots: &Roots) -> KindCatalog {
    let mut catalog = KindCatalog {
        kinds: built_in(),
        rejected: Vec::new(),
    };
    let repository = [[".cortex", "agents"], [".claude", "agents"]];
    extensions::each_folder(roots, "agents", &repository, |dir, scope, shown| {
        scan(dir, scope, shown, &mut catalog)
    });
    catalog
}

/// [`discover_kinds`] off the async threads.
pub async fn discover_kinds_async(roots: Roots) -> KindCatalog {
    tokio::task::spawn_blocking(move || discover_kinds(&roots))
        .await
        .unwrap_or_default()
}

fn scan(dir: BorrowedFd<'_>, scope: ExtensionScope, shown: &str, catalog: &mut KindCatalog) {
    let reject = |catalog: &mut KindCatalog, path: String, reason: String| {
        catalog.rejected.push(RejectedFile {
            scope,
            path,
            reason,
        });
    };
    let entries = extensions::entries_noting_cut(dir, scope, shown, &mut catalog.rejected);
    let mut found = 0;
    for entry in entries {
        let Ok(name) = entry.name else { continue };
        if !name.ends_with(".md") {
            continue;
        }
        let path = format!("{shown}/{name}");
        match entry.kind {
            Kind::Folder => {}
            Kind::Link => reject(catalog, path, "a symbolic link: not followed".to_owned()),
            Kind::Special => reject(catalog, path, "not a regular file".to_owned()),
            Kind::File if found >= MAX_KINDS => {
                reject(catalog, path, format!("more than {MAX_KINDS} kinds here"));
            }
            Kind::File => match load(dir, &name, scope) {
                Ok(kind) => match catalog.find(&kind.name) {
                    Some(first) => {
                        let by = match first.scope {
                            None => "a built-in kind".to_owned(),
                            Some(_) => format!("an earlier kind `{}`", first.name),
                        };
                        reject(catalog, path, format!("shadowed by {by}"));
                    }
                    None => {
                        found += 1;
                        catalog.kinds.push(kind);
                    }
                },
                Err(reason) => reject(catalog, path, reason),
            },
        }
    }
}

fn load(dir: BorrowedFd<'_>, file: &str, scope: ExtensionScope) -> Result<AgentKind, String> {
    let text = extensions::read_text(dir, file, MAX_KIND_BYTES)?;
    let (fields, body) = front_matter(&text)?;
    let stem = file.strip_suffix(".md").unwrap_or(file);
    let name = fields.get("name").unwrap_or(stem).trim().to_owned();
    let valid = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric())
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if !valid {
        return Err(format!(
            "invalid name `{name}`: use letters, digits, `_`, `-` and `.`, at most 64"
        ));
    }
    let description = one_line(fields.get("description").unwrap_or_default());
    if description.is_empty() {
        return Err("no `description` in its front matter".to_owned());
    }
    let description = cut(&description, MAX_DESCRIPTION);
    let tools = match fields.get("tools") {
        None => None,
        Some(list) => {
            let mut tools: Vec<ToolName> = list
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter_map(tool_named)
                .collect();
            tools.dedup();
            if tools.is_empty() {
                return Err(format!("`tools: {list}` names no tool Cortex has"));
            }
            Some(tools)
        }
    };
    Ok(AgentKind {
        name,
        description,
        tools,
        instructions: body.trim().to_owned(),
        scope: Some(scope),
    })
}

/// A tool by our name or Claude Code's; `None` for any other word. A
/// subagent never gets `task` (no nesting) nor the session tools (plan,
/// spec, goal), whatever a file says.
fn tool_named(word: &str) -> Option<ToolName> {
    let word = word.trim().trim_matches(['"', '\'', '[', ']']);
    let tool = match word {
        "Read" => ToolName::ReadFile,
        "Write" => ToolName::WriteFile,
        "Edit" | "MultiEdit" => ToolName::EditFile,
        "Glob" => ToolName::Glob,
        "Grep" => ToolName::Grep,
        "Bash" => ToolName::Bash,
        "BashOutput" => ToolName::BashOutput,
        "KillBash" | "KillShell" => ToolName::BashKill,
        "TodoWrite" => ToolName::TodoWrite,
        "Skill" => ToolName::Skill,
        "WebFetch" => ToolName::WebFetch,
        "WebSearch" => ToolName::WebSearch,
        other => other.parse().ok()?,
    };
    (!matches!(
        tool,
        ToolName::Task | ToolName::Plan | ToolName::Spec | ToolName::Goal
    ))
    .then_some(tool)
}

fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roots(repo: &std::path::Path, config: &std::path::Path) -> Roots {
        Roots {
            workspace: Some(repo.to_path_buf()),
            repository: None,
            config: Some(config.to_path_buf()),
        }
    }

    fn write(path: std::path::PathBuf, text: &str) {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
        std::fs::write(path, text).expect("write");
    }

    #[test]
    fn kinds_come_from_files_narrowed_and_the_bad_ones_are_listed() {
        let repo = tempfile::tempdir().expect("repo");
        let config = tempfile::tempdir().expect("config");
        write(
            repo.path().join(".claude/agents/reviewer.md"),
            "---\nname: reviewer\ndescription: reviews a diff\ntools: Read, Grep, Glob, NotebookRead, Task\n---\nReview it.\n",
        );
        write(
            repo.path().join(".cortex/agents/fixer.md"),
            "---\ndescription: fixes one bug\n---\nFix it.\n",
        );
        write(
            repo.path().join(".cortex/agents/explore.md"),
            "---\ndescription: mine\n---\nx\n",
        );
        write(
            repo.path().join(".cortex/agents/bare.md"),
            "no front matter\n",
        );
        write(
            repo.path().join(".cortex/agents/web.md"),
            "---\ndescription: d\ntools: NotebookEdit\n---\nx\n",
        );
        write(
            config.path().join("agents/fixer.md"),
            "---\ndescription: the user's fixer\ntools:\n  - read_file\n  - bash\n---\nMine.\n",
        );
        let catalog = discover_kinds(&roots(repo.path(), config.path()));
        let names: Vec<&str> = catalog.kinds.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, ["explore", "general", "fixer", "reviewer"]);
        let fixer = catalog.find("fixer").expect("fixer");
        assert_eq!(fixer.description, "the user's fixer");
        assert_eq!(fixer.tools, Some(vec![ToolName::ReadFile, ToolName::Bash]));
        let reviewer = catalog.find("reviewer").expect("reviewer");
        // Unknown names and `task` are left out: a kind only narrows.
        assert_eq!(
            reviewer.tools,
            Some(vec![ToolName::ReadFile, ToolName::Grep, ToolName::Glob])
        );
        assert_eq!(reviewer.instructions, "Review it.");
        let reasons: Vec<(&str, &str)> = catalog
            .rejected
            .iter()
            .map(|r| (r.path.as_str(), r.reason.as_str()))
            .collect();
        assert!(
            reasons.contains(&(
                ".cortex/agents/bare.md",
                "no `description` in its front matter"
            )),
            "{reasons:?}"
        );
        assert!(
            reasons
                .iter()
                .any(|(p, r)| p.ends_with("explore.md") && r.contains("built-in"))
        );
        assert!(
            reasons
                .iter()
                .any(|(p, r)| p.ends_with("fixer.md") && r.contains("shadowed"))
        );
        assert!(
            reasons
                .iter()
                .any(|(p, r)| p.ends_with("web.md") && r.contains("no tool"))
        );
        let listed = catalog.catalogue().expect("custom kinds");
        assert!(listed.contains("- reviewer: reviews a diff"), "{listed}");
        assert!(!listed.contains("- explore"), "{listed}");
    }
}
