//! Completion in the composer: `/command` names from the registry (then the
//! session's custom commands), and
//! `@path` from the repository's files (listed once, in the background,
//! honouring `.gitignore`).

use crate::app::editor::Editor;
use crate::app::slash;
use std::path::Path;

/// Files listed at most (a huge tree must not stall the first `@`).
const MAX_FILES: usize = 50_000;
/// Candidates shown at once.
pub const MAX_ITEMS: usize = 8;

/// One candidate of the completion list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// What the list shows.
    pub label: String,
    /// Shown beside it (a command's help, a file's folder).
    pub detail: String,
    /// What the current word becomes.
    pub replacement: String,
}

/// The completion list for the word at the cursor (`/command`, `@path`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Completion {
    /// The candidates, at most [`MAX_ITEMS`].
    pub items: Vec<Item>,
    /// The highlighted candidate.
    pub selected: usize,
}

impl Completion {
    /// The highlighted candidate, if any.
    pub fn selected(&self) -> Option<&Item> {
        self.items.get(self.selected)
    }

    /// Highlight the next candidate (wrapping).
    pub fn next(&mut self) {
        if !self.items.is_empty() {
            self.selected = (self.selected + 1) % self.items.len();
        }
    }

    /// Highlight the previous candidate (wrapping).
    pub fn prev(&mut self) {
        if !self.items.is_empty() {
            self.selected = (self.selected + self.items.len() - 1) % self.items.len();
        }
    }
}

/// What completes the editor's current word, if anything. `files` is the
/// repository listing once it is known.
pub fn candidates(
    editor: &Editor,
    files: Option<&[String]>,
    custom: &[slash::CustomCommand],
) -> Vec<Item> {
    let text = editor.text();
    if let Some(name) = text.strip_prefix('/')
        && !name.contains(char::is_whitespace)
        && editor.cursor() == text.len()
    {
        return slash::matching(name)
            .map(|c| Item {
                label: format!("/{}", c.name),
                detail: c.help.to_owned(),
                replacement: if c.args.is_empty() {
                    format!("/{}", c.name)
                } else {
                    format!("/{} ", c.name)
                },
            })
            .chain(slash::matching_custom(name, custom).map(|c| Item {
                label: format!("/{}", c.name),
                detail: c.help.clone(),
                replacement: format!("/{} ", c.name),
            }))
            .collect();
    }
    let (_, word) = editor.current_word();
    match (word.strip_prefix('@'), files) {
        (Some(query), Some(files)) => paths(query, files),
        _ => Vec::new(),
    }
}

/// Files matching `query`: those whose name starts with it first, then
/// those whose path contains it (case-insensitive), shortest first.
fn paths(query: &str, files: &[String]) -> Vec<Item> {
    let query = query.to_lowercase();
    let mut scored: Vec<(u8, usize, &String)> = files
        .iter()
        .filter_map(|path| {
            let lower = path.to_lowercase();
            let name = lower.rsplit('/').next().unwrap_or(&lower);
            let rank = if lower.starts_with(&query) {
                0
            } else if name.starts_with(&query) {
                1
            } else if lower.contains(&query) {
                2
            } else {
                return None;
            };
            Some((rank, path.len(), path))
        })
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(MAX_ITEMS * 4)
        .map(|(_, _, path)| Item {
            label: format!("@{path}"),
            detail: String::new(),
            replacement: format!("@{path} "),
        })
        .collect()
}

/// The repository's files (relative paths, `/`-separated), skipping what
/// git ignores and hidden folders. Blocking: run it off the UI thread.
pub fn list_files(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(true)
        .git_ignore(true)
        .build();
    for entry in walker.flatten() {
        if files.len() >= MAX_FILES {
            break;
        }
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        if let Ok(relative) = entry.path().strip_prefix(root) {
            let shown = crate::text::clean_line(&relative.to_string_lossy());
            files.push(shown.replace('\\', "/"));
        }
    }
    files.sort();
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slash_names_complete_from_the_registry() {
        let mut e = Editor::default();
        e.insert("/co");
        let items = candidates(&e, None, &[]);
        assert_eq!(items[0].replacement, "/compact");
        e.insert("mpact now");
        assert!(candidates(&e, None, &[]).is_empty());
        e.set("/mo");
        assert_eq!(candidates(&e, None, &[])[0].replacement, "/mode ");
    }

    #[test]
    fn paths_rank_prefixes_first() {
        let files: Vec<String> = [
            "src/main.rs",
            "tests/main_test.rs",
            "README.md",
            "src/lib.rs",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut e = Editor::default();
        e.insert("look at @mai");
        let labels: Vec<String> = candidates(&e, Some(&files), &[])
            .into_iter()
            .map(|i| i.label)
            .collect();
        assert_eq!(labels, ["@src/main.rs", "@tests/main_test.rs"]);
        e.set("look at @src/");
        assert_eq!(candidates(&e, Some(&files), &[]).len(), 2);
    }

    #[test]
    fn listing_honours_gitignore() {
        let dir = std::env::temp_dir().join(format!("cortex-tui-files-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("src")).expect("dir");
        std::fs::create_dir_all(dir.join("target")).expect("dir");
        std::fs::create_dir_all(dir.join(".git")).expect("git dir");
        std::fs::write(dir.join(".gitignore"), "target/\n").expect("ignore");
        std::fs::write(dir.join("src/a.rs"), "").expect("file");
        std::fs::write(dir.join("target/b.o"), "").expect("file");
        let files = list_files(&dir);
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(files, ["src/a.rs"]);
    }
}
