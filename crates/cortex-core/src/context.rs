//! The workspace context sent with each turn's message: the files in the
//! workspace, listed in the guest once it is attached, and the background
//! commands still running.
//!
//! Why: models that have not looked guess paths (`src/calc.py` for a
//! `calc.py` at the root) and then edit or answer from the guess; small local
//! models do it on most tasks. Claude Code and Codex send the same kind of
//! environment context. It rides on the turn's user message rather than the
//! system prompt so that the system prompt stays byte-identical across turns
//! (a kept KV cache or a provider's prompt cache reuses it) and earlier turns
//! keep the listing they were given.

use crate::{CoreError, Session};
use cortex_protocol::{EventKind, GlobArgs, GuestReply, ToolArgs, ToolOutcome, TurnId};
use tokio_util::sync::CancellationToken;

/// Files named at most; every path costs a small model ~25 ms of prompt time.
const MAX_FILES: usize = 40;

impl Session {
    /// The repository as the turn's context names it: its path, or for a
    /// small model (`verify_answers`) no name at all. Given the absolute
    /// path, the 0.5B wrote `hello.txt`'s content to the repository's own
    /// path, a folder; given the folder's name, it wrote it to a file of
    /// that name.
    fn repository_line(&self) -> String {
        if self.reads_first() {
            "the current folder (give every path relative to it)".to_owned()
        } else {
            self.repository.display().to_string()
        }
    }

    /// Lists the workspace in the guest and records it as `turn.context`,
    /// which the history puts before the turn's message. A listing that
    /// fails is logged and left out: the turn does not depend on it.
    /// Stop skips it.
    pub(crate) async fn add_turn_context(
        &mut self,
        turn: &TurnId,
        cancel: &CancellationToken,
    ) -> Result<(), CoreError> {
        let listing = tokio::select! {
            listing = self.list_workspace() => listing,
            () = cancel.cancelled() => return Ok(()),
        };
        let Some(listing) = listing else {
            return Ok(());
        };
        self.turn_work.set_files(&listing);
        let listing = Listing::parse(&listing);
        // The repository is named here, not in the system prompt: the
        // system prompt and the tool schemas after it are then the same for
        // every session of a mode, so a local model reuses their evaluated
        // prefix from one task to the next (docs/BENCHMARKS.md, "The task
        // set").
        let mut text = format!(
            "Repository: {}\n{}",
            self.repository_line(),
            listing.describe()
        );
        let message = self.turn_work.prompt().to_owned();
        let complete = listing.paths.len() == listing.total;
        self.note_listed(&listing.paths, complete);
        if let Some(files) = self
            .files_in_prompt(&listing.paths, complete, &message)
            .await
        {
            text.push_str("\n\n");
            text.push_str(&files);
        }
        if let Some(run) = self.reported_failure(&listing.paths, cancel).await {
            text.push_str("\n\n");
            text.push_str(&run);
        }
        // So the model does not start a second dev server.
        if let Some(running) = self.background.running_lines() {
            text.push_str("\n\n");
            text.push_str(&running);
        }
        // Folded in before the turn's message (`SessionState::apply`).
        self.record(Some(turn), EventKind::TurnContext { text })
            .await?;
        Ok(())
    }
}

impl Session {
    /// The glob tool's listing of every file, run in the guest.
    async fn list_workspace(&self) -> Option<String> {
        self.harness_call(ToolArgs::Glob(GlobArgs {
            pattern: "*".to_owned(),
            path: None,
        }))
        .await
    }

    /// A tool the harness itself runs in the guest (not the model): its
    /// output when it succeeded; `None` when it failed or there is no guest.
    pub(crate) async fn harness_call(&self, args: ToolArgs) -> Option<String> {
        self.harness_outcome(args, &CancellationToken::new())
            .await
            .filter(|outcome| outcome.is_ok())
            .map(|outcome| outcome.output)
    }

    /// How a tool the harness runs in the guest ended, whatever its status;
    /// `None` when it could not run, there is no guest, or `cancel` fired
    /// first (the call is then stopped in the guest: dropping it would leave
    /// it running).
    pub(crate) async fn harness_outcome(
        &self,
        args: ToolArgs,
        cancel: &CancellationToken,
    ) -> Option<ToolOutcome> {
        let guest = self.guest.as_ref()?;
        let mut handle = match guest.call(args).await {
            Ok(handle) => handle,
            Err(e) => {
                tracing::warn!("a call of the harness in the guest failed: {e}");
                return None;
            }
        };
        loop {
            tokio::select! {
                reply = handle.next() => match reply? {
                    GuestReply::Result(outcome) => return Some(outcome),
                    _ => continue,
                },
                () = cancel.cancelled() => {
                    if let Err(e) = guest.stop_call(handle.id()).await {
                        tracing::warn!("stopping a call of the harness failed: {e}");
                    }
                    return None;
                }
            }
        }
    }
}

/// The user message as the model sees it: the context, then the message.
pub(crate) fn with_context(context: &str, message: &str) -> String {
    format!("{context}\n\n{message}")
}

/// The glob tool's output (newest first, capped, with a "(N more not
/// shown)" line) read back: the paths it lists, newest first, and how many
/// files there are in all.
struct Listing {
    paths: Vec<String>,
    total: usize,
}

impl Listing {
    fn parse(glob_output: &str) -> Listing {
        let mut paths = Vec::new();
        let mut total = 0usize;
        for line in glob_output.lines() {
            if let Some(more) = line
                .strip_prefix('(')
                .and_then(|l| l.strip_suffix(" more not shown)"))
                .and_then(|n| n.parse::<usize>().ok())
            {
                total += more;
            } else if line.starts_with('(') && line.contains(" folders not searched: ") {
                // The walk's note, not a path (a path's newlines are escaped).
            } else if !line.is_empty() && line != "No files matched" {
                total += 1;
                paths.push(line.to_owned());
            }
        }
        Listing { paths, total }
    }

    /// A sorted list of at most [`MAX_FILES`] paths, the newest kept when
    /// there are more.
    fn describe(&self) -> String {
        if self.total == 0 {
            return "The repository has no files yet.".to_owned();
        }
        let mut paths: Vec<&str> = self
            .paths
            .iter()
            .take(MAX_FILES)
            .map(String::as_str)
            .collect();
        paths.sort_unstable();
        let mut text = format!("Files in the repository ({}):\n", self.total);
        text.push_str(&paths.join("\n"));
        if self.total > paths.len() {
            text.push_str(&format!(
                "\n(and {} more; the {} most recently changed are listed)",
                self.total - paths.len(),
                paths.len()
            ));
        }
        text
    }
}

/// [`Listing::describe`] of the glob tool's output.
#[cfg(test)]
fn describe_files(glob_output: &str) -> String {
    Listing::parse(glob_output).describe()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_files_sorted() {
        let text = describe_files("src/b.py\napp.py\nsrc/a.py");
        assert_eq!(
            text,
            "Files in the repository (3):\napp.py\nsrc/a.py\nsrc/b.py"
        );
    }

    #[test]
    fn caps_the_list_and_counts_the_rest() {
        let lines: Vec<String> = (0..100).map(|i| format!("f{i:03}.rs")).collect();
        let output = format!("{}\n(250 more not shown)", lines.join("\n"));
        let text = describe_files(&output);
        assert!(text.starts_with("Files in the repository (350):\n"));
        assert_eq!(text.lines().count(), 1 + MAX_FILES + 1);
        assert!(text.contains("f039.rs") && !text.contains("f040.rs"));
        assert!(text.ends_with("(and 310 more; the 40 most recently changed are listed)"));
    }

    #[test]
    fn says_when_the_repository_is_empty() {
        assert_eq!(
            describe_files("No files matched"),
            "The repository has no files yet."
        );
    }
}
