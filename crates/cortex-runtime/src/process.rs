use crate::{Guest, GuestProvider, GuestSpec, RuntimeError};
use std::path::PathBuf;
use std::process::Stdio;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// The guest agent as an ordinary child process in the workspace folder, with
/// an environment built from the allow-list only. No isolation beyond that.
pub struct ProcessProvider {
    pub program: PathBuf,
    pub args: Vec<String>,
}

#[async_trait::async_trait]
impl GuestProvider for ProcessProvider {
    fn name(&self) -> &'static str {
        "process"
    }

    async fn start(&self, spec: &GuestSpec) -> Result<Guest, RuntimeError> {
        let program = self.program.display().to_string();
        check_workspace(&program, spec)?;
        let start_error = |reason: String| RuntimeError::Start {
            program: program.clone(),
            reason,
        };
        // The child starts in the workspace: relative paths must not be read
        // from there.
        let workspace = spec
            .workspace
            .canonicalize()
            .map_err(|e| start_error(format!("the workspace: {e}")))?;
        let executable = if self.program.components().count() > 1 {
            std::path::absolute(&self.program).unwrap_or_else(|_| self.program.clone())
        } else {
            self.program.clone() // a bare name is looked up in PATH
        };
        let mut child = tokio::process::Command::new(executable)
            .args(&self.args)
            .arg("--root")
            .arg(&workspace)
            .current_dir(&workspace)
            .env_clear()
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| start_error(e.to_string()))?;
        let pipes = (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let (Some(stdin), Some(stdout), Some(stderr)) = pipes else {
            return Err(start_error("the agent's stdio was not piped".to_owned()));
        };
        tokio::spawn(forward_stderr(stderr, child.id()));
        let guest = Guest::connect(stdout, stdin, Some(child));
        match guest.set_capabilities(spec.writable, spec.allow_bash).await {
            Ok(()) => Ok(guest),
            Err(e) => {
                let reason = match e {
                    RuntimeError::Exited => "it exited before answering".to_owned(),
                    other => other.to_string(),
                };
                guest.close().await;
                Err(start_error(reason))
            }
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

/// The agent logs to stderr; pass its lines on to our log.
async fn forward_stderr(stderr: impl AsyncRead + Unpin, pid: Option<u32>) {
    let mut lines = BufReader::new(stderr).lines();
    loop {
        match lines.next_line().await {
            Ok(Some(line)) => {
                if line.contains("ERROR") || line.contains("WARN") {
                    tracing::warn!(guest_pid = pid, "guest: {line}");
                } else {
                    tracing::debug!(guest_pid = pid, "guest: {line}");
                }
            }
            Ok(None) => break,
            Err(e) => {
                tracing::debug!(guest_pid = pid, "guest stderr: {e}");
                break;
            }
        }
    }
}
