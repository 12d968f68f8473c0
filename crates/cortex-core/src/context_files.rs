//! The files in the prompt: for small models, the turn's context carries
//! the code itself, not only the files' names.
//!
//! Small models act before they look: an edit whose `old_string` is invented,
//! an answer guessed before the file that holds it was read (docs/
//! BENCHMARKS.md, the task set). Aider's answer is "files in the chat": the
//! model is shown the files it works on. When the model's info allows it
//! (`files_in_prompt`, bytes; 0 for hosted models), a workspace of at most
//! [`MAX_WHOLE_FILES`] files that fits the budget is shown whole; a larger
//! one shows the files the turn's message names, as many as fit, and a map
//! of the definitions in the other files (Aider's repo map: `path: name,
//! name`, from one grep in the guest and `cortex_tools::defs`), so that the
//! model knows where to look. Each file is its `read_file` output (numbered
//! lines), read by the harness in the guest, and counts as read
//! (`read_first.rs`): the model may edit it at once. Binary files, and files
//! `read_file` refuses, are left out.

use crate::Session;
use crate::coach::{named_files, same_file};
use cortex_protocol::{GrepArgs, GrepMode, ToolArgs};
use cortex_tools::defs::{DEFINITION_LINES, symbol_map};

/// A workspace with more files than this is never shown whole.
const MAX_WHOLE_FILES: usize = 30;
/// The most bytes of the budget the symbol map may take.
const MAX_MAP_BYTES: usize = 3 * 1024;

impl Session {
    /// The contents to add to the turn's context, given the workspace's
    /// `paths` (all of them when `complete`) and the turn's message; `None`
    /// when the model takes names only or nothing fits.
    pub(crate) async fn files_in_prompt(
        &mut self,
        paths: &[String],
        complete: bool,
        message: &str,
    ) -> Option<String> {
        let budget = self.model.info().map_or(0, |i| i.files_in_prompt) as usize;
        if budget == 0 {
            return None;
        }
        if complete && paths.len() <= MAX_WHOLE_FILES {
            let shown = self.read_within(paths.iter(), budget, true).await;
            if let Some(shown) = shown {
                if !shown.is_empty() && shown.len() == paths.len() {
                    self.turn_work.note_workspace_shown();
                }
                return Some(render(
                    "The files' contents, as read_file shows them",
                    &shown,
                ));
            }
        }
        let named: Vec<String> = named_files(message);
        let wanted = paths
            .iter()
            .filter(|p| named.iter().any(|n| same_file(p, n)));
        let shown = self.read_within(wanted, budget, false).await?;
        let used: usize = shown.iter().map(|(p, t)| p.len() + t.len()).sum();
        let skip: Vec<String> = shown.iter().map(|(p, _)| p.clone()).collect();
        let map = self
            .symbol_map(&skip, budget.saturating_sub(used).min(MAX_MAP_BYTES))
            .await;
        let files = (!shown.is_empty()).then(|| {
            render(
                "The contents of the files the task names, as read_file shows them",
                &shown,
            )
        });
        match (files, map) {
            (Some(files), Some(map)) => Some(format!("{files}\n\n{map}")),
            (files, map) => files.or(map),
        }
    }

    /// The definitions per file of the workspace but `skip`, within
    /// `budget` bytes; `None` when there are none or the grep failed.
    async fn symbol_map(&self, skip: &[String], budget: usize) -> Option<String> {
        let found = self
            .harness_call(ToolArgs::Grep(GrepArgs {
                pattern: DEFINITION_LINES.to_owned(),
                path: None,
                glob: None,
                mode: Some(GrepMode::Content),
                context: None,
                ignore_case: None,
            }))
            .await?;
        let map = symbol_map(&found, skip, budget);
        (!map.is_empty()).then(|| {
            format!(
                "Definitions in the other files (read_file a file for its code):\n{}",
                map.trim_end()
            )
        })
    }

    /// Reads `paths` in order while their outputs fit in `budget` bytes;
    /// with `all`, `None` as soon as one does not (the caller then shows
    /// fewer). What is shown is noted as read.
    async fn read_within<'a>(
        &mut self,
        paths: impl Iterator<Item = &'a String>,
        budget: usize,
        all: bool,
    ) -> Option<Vec<(String, String)>> {
        let mut shown = Vec::new();
        let mut used = 0usize;
        for path in paths {
            let Some(text) = self.read_whole(path).await else {
                continue;
            };
            if used + path.len() + text.len() > budget {
                if all {
                    return None;
                }
                continue;
            }
            used += path.len() + text.len();
            shown.push((path.clone(), text));
        }
        for (path, text) in &shown {
            self.note_shown(path, text);
        }
        Some(shown)
    }
}

fn render(title: &str, files: &[(String, String)]) -> String {
    let mut text = format!("{title} (you have read them):");
    for (path, content) in files {
        text.push_str(&format!("\n--- {path}\n{content}"));
        if !content.ends_with('\n') {
            text.push('\n');
        }
    }
    text.truncate(text.trim_end().len());
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_each_file_under_its_path() {
        let files = [
            ("a.py".to_owned(), "     1\tx = 1\n".to_owned()),
            ("b/c.txt".to_owned(), "     1\thello".to_owned()),
        ];
        assert_eq!(
            render("Contents", &files),
            "Contents (you have read them):\n--- a.py\n     1\tx = 1\n\n--- b/c.txt\n     1\thello"
        );
    }
}
