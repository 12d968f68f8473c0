use crate::{Guest, GuestProvider, GuestSpec, RuntimeError};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// The guest agent as an ordinary child process in the workspace folder, with
/// an environment built from the allow-list only. No isolation beyond that.
pub struct ProcessProvider {
    /// The agent's executable: a path, or a bare name looked up in `PATH`.
    pub program: PathBuf,
    /// Arguments before the ones the provider adds (`--die-with PID --root
    /// WORKSPACE`); for the CLI binary, `guest`.
    pub args: Vec<String>,
}

#[async_trait::async_trait]
impl GuestProvider for ProcessProvider {
    fn name(&self) -> &'static str {
        "process"
    }

    async fn start(&self, spec: &GuestSpec) -> Result<Guest, RuntimeError> {
        let args: Vec<OsString> = self.args.iter().map(OsString::from).collect();
        launch(&self.program, args, spec, &spec.env).await
    }
}

/// How many of the agent's last stderr lines a start failure quotes.
const QUOTED_LINES: usize = 5;
/// How long a failed start waits for the agent's last words on stderr: a
/// dead agent's stderr ends at once, but on a loaded machine the reader
/// may be scheduled late, and the reason is worth the wait.
const LAST_WORDS: Duration = Duration::from_secs(2);

/// Start `program args… --root WORKSPACE` in the workspace with exactly
/// `env`, connect, apply the spec's capabilities. The child dies with the
/// thread that started it, so a harness that is killed leaves no guest.
pub(crate) async fn launch(
    program: &Path,
    args: Vec<OsString>,
    spec: &GuestSpec,
    env: &[(String, String)],
) -> Result<Guest, RuntimeError> {
    let name = program.display().to_string();
    check_workspace(&name, spec)?;
    let start_error = |reason: String| RuntimeError::Start {
        program: name.clone(),
        reason,
    };
    // The child starts in the workspace: relative paths must not be read
    // from there.
    let workspace = spec
        .workspace
        .canonicalize()
        .map_err(|e| start_error(format!("the workspace: {e}")))?;
    let executable = if program.components().count() > 1 {
        std::path::absolute(program).unwrap_or_else(|_| program.to_path_buf())
    } else {
        program.to_path_buf() // a bare name is looked up in PATH
    };
    let mut command = tokio::process::Command::new(executable);
    // The agent sets its own death signal: a `pre_exec` hook here would make
    // every launch a fork of the whole harness instead of a `posix_spawn`.
    command
        .args(args)
        .arg("--die-with")
        .arg(std::process::id().to_string())
        .arg("--root")
        .arg(&workspace)
        .current_dir(&workspace)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().map_err(|e| start_error(e.to_string()))?;
    let pipes = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let (Some(stdin), Some(stdout), Some(stderr)) = pipes else {
        return Err(start_error("the agent's stdio was not piped".to_owned()));
    };
    let last_lines = Arc::new(Mutex::new(Vec::new()));
    let stderr_task = tokio::spawn(forward_stderr(stderr, child.id(), Arc::clone(&last_lines)));
    let guest = Guest::connect(stdout, stdin, Some(child));
    match guest.set_capabilities(spec.writable, spec.allow_bash).await {
        Ok(()) => Ok(guest),
        Err(e) => {
            let _ = tokio::time::timeout(LAST_WORDS, stderr_task).await;
            let said = last_lines
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .join("; ");
            // A guest that dies at start-up fails the request as a read
            // that sees it exit or as a write into its closed pipe
            // (EPIPE), whichever the race gives: its last words on stderr
            // say why in both cases.
            let reason = match e {
                _ if !said.is_empty() => said,
                RuntimeError::Exited => "it exited before answering".to_owned(),
                other => other.to_string(),
            };
            guest.close().await;
            Err(start_error(reason))
        }
    }
}

/// A workspace must be an existing folder.
pub(crate) fn check_workspace(program: &str, spec: &GuestSpec) -> Result<(), RuntimeError> {
    if spec.workspace.is_dir() {
        Ok(())
    } else {
        Err(RuntimeError::Start {
            program: program.to_owned(),
            reason: format!(
                "the workspace `{}` is not an existing folder",
                spec.workspace.display()
            ),
        })
    }
}

/// The agent logs to stderr; pass its lines on to our log and keep the last
/// few for a start failure's message.
async fn forward_stderr(
    stderr: impl AsyncRead + Unpin,
    pid: Option<u32>,
    last_lines: Arc<Mutex<Vec<String>>>,
) {
    let mut lines = BufReader::new(stderr).lines();
    loop {
        match lines.next_line().await {
            Ok(Some(line)) => {
                if line.contains("ERROR") || line.contains("WARN") {
                    tracing::warn!(guest_pid = pid, "guest: {line}");
                } else {
                    tracing::debug!(guest_pid = pid, "guest: {line}");
                }
                let mut last = last_lines.lock().unwrap_or_else(PoisonError::into_inner);
                if last.len() == QUOTED_LINES {
                    last.remove(0);
                }
                last.push(line.trim_start_matches("cortex-guest: ").to_owned());
            }
            Ok(None) => break,
            Err(e) => {
                tracing::debug!(guest_pid = pid, "guest stderr: {e}");
                break;
            }
        }
    }
}
