//! The failure the task reports, run by the harness before the first
//! round, for small models.
//!
//! Told "python3 test_users.py fails with a KeyError. Fix users.py", the
//! 1.5B changed `user["mail"]` to `user.get('mail', None)` without running
//! the test: the `KeyError` became an `AssertionError`, and the hint the
//! bash tool adds to a `KeyError` (the keys the dict has,
//! [`cortex_tools::KEY_HINT`]) was never seen. A person handed that report
//! runs the command first. So for models with `verify_answers`, in Agent
//! mode, when the task says a file of the workspace fails, the turn's
//! context carries what running it printed, as the bash tool shows it.
//!
//! It runs in the guest as any bash call does, and only when the session's
//! approval policy is `auto`: under `ask` or `deny` a command runs only by
//! the user's leave, and the harness does not ask for one the model did not
//! make. The command is the harness's own (`python3 FILE`,
//! [`crate::coach::run_command`]) for a file the listing has, never the
//! task's text.

use crate::Session;
use cortex_protocol::{ApprovalPolicy, BashArgs, Mode, ToolArgs, ToolName};
use tokio_util::sync::CancellationToken;

/// How long the run may take: a test the task reports failing, not a build.
const TIMEOUT_MS: u64 = 30_000;

impl Session {
    /// What the failing run printed, as a section of the turn's context
    /// (`listed`: the workspace's files); `None` when nothing is to run or
    /// the run did not finish (Stop stops it).
    pub(crate) async fn reported_failure(
        &mut self,
        listed: &[String],
        cancel: &CancellationToken,
    ) -> Option<String> {
        let runs = self.reads_first()
            && self.mode() == Mode::Agent
            && self.offered_tools().contains(&ToolName::Bash)
            && self.approvals().policy() == ApprovalPolicy::Auto;
        if !runs {
            return None;
        }
        let file = crate::coach::failing_files(self.turn_work.prompt())
            .into_iter()
            .find(|file| listed.iter().any(|l| l == file) && is_plain_path(file))?;
        let command = without_bytecode(crate::coach::run_command(&file));
        let args = ToolArgs::Bash(BashArgs {
            command: command.clone(),
            timeout_ms: Some(TIMEOUT_MS),
            background: None,
        });
        let output = self.harness_outcome(args, cancel).await?.output;
        self.turn_work.note_reported_failure(&output, listed);
        Some(format!(
            "The task says {file} fails. `{command}`, run now, printed:\n{}",
            output.trim_end()
        ))
    }
}

/// `command` such that Python writes no bytecode cache: the harness's run
/// must leave the workspace as it was, and a `__pycache__` written in the
/// same second as a later edit that keeps the file's size is taken for
/// current (this crate's tests saw the old code run after the edit).
fn without_bytecode(command: String) -> String {
    match command.strip_prefix("python3 ") {
        Some(file) => format!("python3 -B {file}"),
        None => command,
    }
}

/// A path of letters, digits and `._-/` only: it goes into a command line.
fn is_plain_path(path: &str) -> bool {
    !path.starts_with('-')
        && path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'))
}

#[cfg(test)]
mod tests {
    use super::{is_plain_path, without_bytecode};

    #[test]
    fn only_plain_paths_go_into_the_command() {
        assert!(is_plain_path("tests/test_users.py"));
        assert!(!is_plain_path("a;rm -rf x.py"));
        assert!(!is_plain_path("$(x).py"));
        assert!(!is_plain_path("-c.py"));
        assert_eq!(without_bytecode("python3 t.py".into()), "python3 -B t.py");
        assert_eq!(without_bytecode("sh t.sh".into()), "sh t.sh");
    }
}
