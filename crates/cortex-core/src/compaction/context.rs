//! The message that opens a compacted history: the summary of what was
//! dropped, then the keep-set restated (task, todos, plan, open files,
//! recent diffs).

use cortex_protocol::{CompactionKept, Todo};
use std::fmt::Write;

/// Everything besides the summary that the new history carries.
#[derive(Debug, Default)]
pub(crate) struct KeepSet {
    /// The latest user message, when it is not among the kept messages.
    pub task: Option<String>,
    pub todos: Vec<Todo>,
    pub plan: Option<(u32, String, String)>,
    /// The session's goal: objective, steps, status and evidence.
    pub goal: Option<cortex_protocol::Goal>,
    /// (path, current contents), newest first.
    pub open_files: Vec<(String, String)>,
    /// (path, diff), newest first.
    pub diffs: Vec<(String, String)>,
    /// Messages kept verbatim after the context message.
    pub recent: usize,
}

impl KeepSet {
    pub(crate) fn kept(&self) -> CompactionKept {
        CompactionKept {
            task: self.task.is_some(),
            todos: self.todos.len(),
            plan_version: self.plan.as_ref().map(|(v, _, _)| *v),
            open_files: self.open_files.iter().map(|(p, _)| p.clone()).collect(),
            diffs: self.diffs.iter().map(|(p, _)| p.clone()).collect(),
            recent_messages: self.recent,
        }
    }

    /// The text of the context message.
    pub(crate) fn render(&self, summary: &str) -> String {
        let mut out = String::from(
            "[Compacted history] The earlier part of this session was replaced by the \
             summary below to fit the model's context. Files may have changed since they \
             were last shown; the contents below are current.\n\n## Summary of earlier work\n",
        );
        out.push_str(summary.trim());
        out.push('\n');
        if let Some(task) = &self.task {
            let _ = write!(
                out,
                "\n## Current task (the user's latest message)\n{task}\n"
            );
        }
        if !self.todos.is_empty() {
            let _ = write!(
                out,
                "\n## Todo list\n{}\n",
                cortex_tools::render_todos(&self.todos)
            );
        }
        if let Some((version, title, markdown)) = &self.plan {
            let _ = write!(out, "\n## Plan v{version}: {title}\n{markdown}\n");
        }
        if let Some(goal) = &self.goal {
            let _ = write!(
                out,
                "\n## Goal ({})\nObjective: {}\n{}\n",
                goal.status.as_str(),
                goal.objective,
                crate::goal::render_steps(&goal.steps)
            );
            if let Some(evidence) = &goal.evidence {
                let _ = writeln!(out, "Evidence: {evidence}");
            }
        }
        if !self.open_files.is_empty() {
            out.push_str("\n## Open files (current contents, newest first)\n");
            for (path, contents) in &self.open_files {
                let _ = write!(out, "\n### {path}\n```\n{contents}\n```\n");
            }
        }
        if !self.diffs.is_empty() {
            out.push_str("\n## Recent changes (newest first)\n");
            for (path, diff) in &self.diffs {
                let _ = write!(out, "\n### {path}\n```diff\n{diff}\n```\n");
            }
        }
        if self.recent > 0 {
            let _ = write!(
                out,
                "\nThe last {} messages of the session follow unchanged.\n",
                self.recent
            );
        }
        out
    }
}
