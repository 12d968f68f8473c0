//! Where a rename the task asks for left the old name: the workspace
//! searched as the harness, for the reminder that names every line.

use super::{DO_IT_PREFIX, RenameLeft, call_now, named_files};
use crate::Session;
use crate::steer::Said;
use cortex_protocol::{EditFormat, GrepArgs, GrepMode, ToolArgs};

/// Lines of remaining occurrences a rename reminder quotes.
const MAX_LEFT_LINES: usize = 8;

impl Session {
    /// Where the old names of the renames the task asks for still occur as
    /// words (the files the task names, else the whole workspace), as the
    /// reminder; `None` when nowhere.
    pub(super) async fn rename_left(&self, pairs: &[(String, String)]) -> Option<RenameLeft> {
        let named = named_files(&self.turn_work.prompt);
        let places: Vec<Option<String>> = if named.is_empty() {
            vec![None]
        } else {
            named.into_iter().map(Some).collect()
        };
        let mut lines = Vec::new();
        let mut left = Vec::new();
        for (old, new) in pairs {
            let mut occurs = false;
            for path in &places {
                let found = self
                    .harness_call(ToolArgs::Grep(GrepArgs {
                        // `old` is an identifier (see `rename_pairs`): no regex syntax.
                        pattern: format!(r"\b{old}\b"),
                        path: path.clone(),
                        glob: None,
                        mode: Some(GrepMode::Content),
                        context: None,
                        ignore_case: None,
                    }))
                    .await
                    .unwrap_or_default();
                // Two old names on one line: the line once.
                for line in found.lines().filter(|l| l.contains(old.as_str())) {
                    occurs = true;
                    if !lines.iter().any(|l| l == line) {
                        lines.push(line.to_owned());
                    }
                }
            }
            if occurs {
                left.push(format!("`{old}` to `{new}`"));
            }
        }
        if lines.is_empty() {
            return None;
        }
        let total = lines.len();
        lines.truncate(MAX_LEFT_LINES);
        let how = match self.edit_format() {
            EditFormat::String | EditFormat::Quoted => {
                "edit_file with replace_all: true changes all in a file"
            }
            EditFormat::Lines => "path:line:text above; edit_file each line",
            EditFormat::Whole | EditFormat::Blocks => {
                "write_file each file with every one of them changed"
            }
        };
        let tool = self.turn_work.edit_tool();
        let said = Said::call(
            tool,
            format!(
                "{DO_IT_PREFIX} the task renames {}, but the old name still occurs ({total} \
                 line{}):\n{}\n{} to change every one of them ({how}), then answer.",
                left.join(" and "),
                if total == 1 { "" } else { "s" },
                lines.join("\n"),
                call_now(tool)
            ),
        );
        Some(RenameLeft { said, lines })
    }
}
