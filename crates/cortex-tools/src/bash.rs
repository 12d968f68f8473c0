//! Running a shell command in the workspace, in its own process group.

use cortex_protocol::{BashArgs, OutputStream};
use std::path::Path;
use tokio_util::sync::CancellationToken;

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BashOutcome {
    /// Combined output for the model, capped by cutting the middle.
    pub output: String,
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    /// Killed because `cancel` fired.
    pub stopped: bool,
}

/// Run `bash -c command` in `cwd` with exactly `env` as its environment, in a
/// new process group. Output is streamed through `on_output` (itself capped so
/// a flood cannot flood the caller). On timeout or `cancel` the whole process
/// group is killed.
pub async fn run_bash(
    cwd: &Path,
    args: &BashArgs,
    env: &[(String, String)],
    on_output: &mut (dyn FnMut(OutputStream, String) + Send),
    cancel: CancellationToken,
) -> std::io::Result<BashOutcome> {
    let _ = (cwd, args, env, on_output, cancel);
    unimplemented!()
}
