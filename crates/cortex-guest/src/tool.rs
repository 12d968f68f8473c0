//! Admitting and running one tool request.

use crate::state::{Capabilities, Responses, State};
use cortex_protocol::{
    Attachment, BashArgs, GuestReply, GuestResponse, OutcomeStatus, OutputStream, ReadFileArgs,
    ToolArgs, ToolName, ToolOutcome, WebFetchArgs,
};
use cortex_tools::{
    BashEnding, MAX_OUTPUT_BYTES, ToolError, Workspace, Written, cap_middle, run_bash, web,
};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Why the guest refused a tool request; the message is what the model
/// reads.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Refusal {
    #[error("{0} does not run in the guest; the harness handles it")]
    NotAGuestTool(ToolName),
    #[error("this guest is read-only: {0} refused")]
    ReadOnly(ToolName),
    #[error("this guest may not run commands: {0} refused")]
    NoCommands(ToolName),
}

/// Refuse what this guest does not run or was not granted. The arguments
/// arrive typed: the harness parsed them once, and a request whose
/// arguments do not parse never gets here (it is answered as malformed).
pub(crate) fn admit(caps: Capabilities, args: &ToolArgs) -> Result<(), Refusal> {
    let name = args.tool();
    if !name.runs_in_guest() {
        return Err(Refusal::NotAGuestTool(name));
    }
    match name {
        ToolName::WriteFile | ToolName::EditFile if !caps.writable => Err(Refusal::ReadOnly(name)),
        ToolName::Bash if !caps.bash => Err(Refusal::NoCommands(name)),
        _ => Ok(()),
    }
}

/// Whether the tool runs a command (or a fetch) that `stop` must be able
/// to reach.
pub(crate) fn needs_token(args: &ToolArgs) -> bool {
    matches!(args, ToolArgs::Bash(_) | ToolArgs::WebFetch(_))
}

/// `web_fetch` from this guest's network namespace: any public host, and
/// the hosts of `allow` whatever they resolve to (`cortex_tools::web`
/// checks every hop). `stop` cancels it.
pub(crate) async fn web_fetch(
    args: &WebFetchArgs,
    allow: &[String],
    token: CancellationToken,
) -> ToolOutcome {
    let allow = match web::AllowList::parse(allow) {
        Ok(allow) => allow,
        Err(e) => return ToolOutcome::error(e.to_string()),
    };
    let policy = web::FetchPolicy {
        allow,
        only_allowed: false,
    };
    let fetched = tokio::select! {
        fetched = web::fetch(args, &policy) => fetched,
        () = token.cancelled() => {
            return ToolOutcome {
                status: OutcomeStatus::Stopped,
                ..ToolOutcome::error("stopped")
            };
        }
    };
    let mut outcome = match fetched {
        Ok(page) if page.is_success() => ToolOutcome::ok(page.render(args.max_bytes)),
        Ok(page) => ToolOutcome::error(page.render(args.max_bytes)),
        Err(e) => ToolOutcome::error(e.to_string()),
    };
    outcome.output = cap_middle(&outcome.output, MAX_OUTPUT_BYTES);
    outcome
}

/// `read_file`: an image file (known by its bytes) as an image the
/// harness gives to a model that takes images; any other file as lines.
fn read_file(ws: &Workspace, args: &ReadFileArgs) -> Result<ToolOutcome, ToolError> {
    if let Ok(Some(image)) = ws.read_image(&args.path) {
        let attachments = image
            .data
            .map(|data| Attachment::Image {
                mime_type: image.mime_type.to_owned(),
                data,
            })
            .into_iter()
            .collect();
        return Ok(ToolOutcome {
            attachments,
            ..ToolOutcome::ok(image.description)
        });
    }
    ws.read_file(args).map(ToolOutcome::ok)
}

/// Aborts the task when dropped, so abandoning a request abandons its work.
pub(crate) struct AbortOnDrop<T>(pub(crate) JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Run the tool on its own task, so that a panic in it becomes an error
/// result instead of a request that is never answered.
pub(crate) async fn run_supervised(
    state: Arc<State>,
    id: u64,
    args: ToolArgs,
    command: Option<(u64, CancellationToken)>,
    tx: Responses,
) -> ToolOutcome {
    let name = args.tool();
    let seq = command.as_ref().map(|(seq, _)| *seq);
    let token = command.map(|(_, token)| token);
    let mut task = AbortOnDrop(tokio::spawn(run(Arc::clone(&state), id, args, token, tx)));
    let outcome = match (&mut task.0).await {
        Ok(outcome) => outcome,
        Err(e) => {
            tracing::error!(id, "{name} failed inside the guest: {e}");
            ToolOutcome::error(format!("internal error in the guest while running {name}"))
        }
    };
    if let Some(seq) = seq {
        state.finished(seq);
    }
    outcome
}

async fn run(
    state: Arc<State>,
    id: u64,
    args: ToolArgs,
    token: Option<CancellationToken>,
    tx: Responses,
) -> ToolOutcome {
    let root = state.config.root.clone();
    let mut outcome = match args {
        ToolArgs::ReadFile(a) => blocking(root, move |ws| read_file(ws, &a)).await,
        ToolArgs::WriteFile(a) => {
            let size = a.content.len() as u64;
            write(&state, size, move |ws| ws.write_file(&a).map(written)).await
        }
        ToolArgs::EditFile(a) => {
            let size = a.new_string.len() as u64;
            write(&state, size, move |ws| ws.edit_file(&a).map(written)).await
        }
        ToolArgs::EditLines(a) => {
            let size = a.new_text.len() as u64;
            write(&state, size, move |ws| ws.edit_lines(&a).map(written)).await
        }
        ToolArgs::Glob(a) => blocking(root, move |ws| ws.glob(&a).map(ToolOutcome::ok)).await,
        ToolArgs::Grep(a) => blocking(root, move |ws| ws.grep(&a).map(ToolOutcome::ok)).await,
        ToolArgs::Bash(a) => {
            let token = token.unwrap_or_default();
            bash(&state, id, &a, token, &tx).await
        }
        // Asked as a tool, not as `web_fetch` with the harness's allow-list:
        // public hosts only.
        ToolArgs::WebFetch(a) => web_fetch(&a, &[], token.unwrap_or_default()).await,
        other => ToolOutcome::error(format!(
            "{} does not run in the guest; the harness handles it",
            other.tool()
        )),
    };
    outcome.output = cap_middle(&outcome.output, MAX_OUTPUT_BYTES);
    outcome
}

fn written(w: Written) -> ToolOutcome {
    ToolOutcome {
        diff: Some(w.diff),
        ..ToolOutcome::ok(w.summary)
    }
}

/// Run a file tool that writes about `size` bytes, within the disk quotas:
/// refused while a tree is over its quota or when the write would take the
/// workspace past it; measured again afterwards.
async fn write<F>(state: &Arc<State>, size: u64, f: F) -> ToolOutcome
where
    F: FnOnce(&Workspace) -> Result<ToolOutcome, ToolError> + Send + 'static,
{
    if let Some(guard) = &state.quota
        && let Err(refusal) = guard.admit_write(size)
    {
        return ToolOutcome::error(refusal.to_string());
    }
    let outcome = blocking(state.config.root.clone(), f).await;
    settle(state, outcome, false).await
}

/// Measure the quota'd trees after a tool that may have written, and make
/// its outcome an error that says so when one is over (or, for a
/// `command`, when the watchdog killed it meanwhile).
async fn settle(state: &Arc<State>, mut outcome: ToolOutcome, command: bool) -> ToolOutcome {
    if state.quota.is_none() {
        return outcome;
    }
    let measured = Arc::clone(state);
    let verdict = tokio::task::spawn_blocking(move || {
        let guard = measured.quota.as_ref()?;
        let killed = command.then(|| guard.take_killed()).flatten();
        let over = guard.settle();
        Some((killed, over))
    })
    .await;
    let (killed, over) = match verdict {
        Ok(Some(verdict)) => verdict,
        Ok(None) => return outcome,
        Err(e) => {
            tracing::error!("measuring the disk quotas failed: {e}");
            return outcome;
        }
    };
    let note = match (killed, over) {
        (Some(reason), _) => format!("the command was killed: {reason}"),
        (None, Some(reason)) => reason,
        (None, None) => return outcome,
    };
    if outcome.status == OutcomeStatus::Ok {
        outcome.status = OutcomeStatus::Error;
    }
    if !outcome.output.is_empty() && !outcome.output.ends_with('\n') {
        outcome.output.push('\n');
    }
    outcome.output.push_str(&note);
    outcome
}

/// How many workspace tools (reads, writes, searches) run at once; the rest
/// wait for a turn. Each holds a blocking thread, and a search its walker's
/// threads too, all counted by the guest's process limit; a walker that
/// cannot start one of its threads waits for it forever (the `ignore`
/// crate), so a round of a thousand searches must queue, not start a
/// thousand walks at once.
const WORKSPACE_TOOLS_AT_ONCE: usize = 4;
static WORKSPACE_TOOLS: tokio::sync::Semaphore =
    tokio::sync::Semaphore::const_new(WORKSPACE_TOOLS_AT_ONCE);

/// The longest a workspace tool may take. A walk whose worker threads the
/// guest's process limit refused (the model's own processes filled it)
/// waits for them forever inside the `ignore` crate, while the agent still
/// answers pings: past this the call ends with an error, so the turn goes
/// on (the stuck thread is left to the guest's end).
const WORKSPACE_TOOL_DEADLINE: Duration = Duration::from_secs(120);

/// Run a filesystem tool on the blocking pool.
async fn blocking<F>(root: std::path::PathBuf, f: F) -> ToolOutcome
where
    F: FnOnce(&Workspace) -> Result<ToolOutcome, ToolError> + Send + 'static,
{
    blocking_within(root, f, WORKSPACE_TOOL_DEADLINE).await
}

/// [`blocking`] with its deadline given.
async fn blocking_within<F>(root: std::path::PathBuf, f: F, deadline: Duration) -> ToolOutcome
where
    F: FnOnce(&Workspace) -> Result<ToolOutcome, ToolError> + Send + 'static,
{
    // The semaphore is never closed; a closed one would only mean shutdown.
    let Ok(_turn) = WORKSPACE_TOOLS.acquire().await else {
        return ToolOutcome::error("the guest is shutting down");
    };
    let work = tokio::task::spawn_blocking(move || {
        let workspace = Workspace::new(&root)?;
        f(&workspace)
    });
    match tokio::time::timeout(deadline, work).await {
        Ok(Ok(Ok(outcome))) => outcome,
        Ok(Ok(Err(e))) => ToolOutcome::error(e.to_string()),
        Ok(Err(e)) => {
            tracing::error!("a workspace tool failed inside the guest: {e}");
            ToolOutcome::error("internal error in the guest")
        }
        Err(_) => ToolOutcome::error(format!(
            "the tool did not finish within {} s and was given up (too many processes in the \
             guest, or a very large tree); a write may still complete, so check before retrying",
            deadline.as_secs()
        )),
    }
}

async fn bash(
    state: &Arc<State>,
    id: u64,
    args: &BashArgs,
    token: CancellationToken,
    tx: &Responses,
) -> ToolOutcome {
    let deltas = tx.clone();
    let mut on_output = move |stream: OutputStream, text: String| {
        let _ = deltas.send(GuestResponse {
            id,
            reply: GuestReply::Delta { stream, text },
        });
    };
    let result = run_bash(
        &state.config.root,
        args,
        &state.config.bash_env,
        &mut on_output,
        token,
    )
    .await;
    let outcome = match result {
        Err(e) => ToolOutcome::error(format!("cannot run the command: {e}")),
        // run_bash's output already ends with notes on how the command ended
        // (exit code, timeout, stop).
        Ok(done) => ToolOutcome {
            status: match done.ending {
                BashEnding::Stopped => OutcomeStatus::Stopped,
                BashEnding::TimedOut => OutcomeStatus::Error,
                BashEnding::Exited if done.exit_code == Some(0) => OutcomeStatus::Ok,
                BashEnding::Exited => OutcomeStatus::Error,
            },
            output: done.output,
            diff: None,
            exit_code: done.exit_code,
            attachments: Vec::new(),
        },
    };
    settle(state, outcome, true).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_workspace_tool_that_never_ends_is_given_up_at_its_deadline() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (release, wait) = std::sync::mpsc::channel::<()>();
        let outcome = blocking_within(
            dir.path().to_path_buf(),
            move |_| {
                // Stuck until the test ends, as a walk waiting for a thread
                // that never started.
                let _ = wait.recv();
                Ok(ToolOutcome::ok("never"))
            },
            Duration::from_millis(200),
        )
        .await;
        assert!(!outcome.is_ok());
        assert!(
            outcome.output.contains("did not finish"),
            "{}",
            outcome.output
        );
        // The semaphore's permit came back: the next tool runs.
        let next = blocking_within(
            dir.path().to_path_buf(),
            |_| Ok(ToolOutcome::ok("ran")),
            Duration::from_secs(30),
        )
        .await;
        assert_eq!(next.output, "ran");
        drop(release);
    }
}
