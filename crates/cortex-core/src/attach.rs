//! Attach before the first command: start the guest and prepare the
//! environment, with `runtime.*` and `env.*` events, before the model is asked
//! anything.
//!
//! Order of events: `runtime.starting`, then (an isolated copy is made here
//! the first time) `runtime.attached` with the start time and the isolation in
//! force, a `runtime.warning` per layer that could not be applied, then once
//! per session `env.preparing`, the output of `.cortex/setup` as `env.output`
//! (or `env.setup_skipped` when its content is not the committed one, see
//! [`crate::setup_trust`]), and `env.ready` or `env.failed`. Every process
//! the setup started is ended before the model gets the guest.

use crate::copy::CopyReport;
use crate::setup_trust::{self, Setup};
use crate::workspace::WorkspaceError;
use crate::{CoreError, Session};
use cortex_protocol::{BashArgs, EventKind, GuestReply, ToolArgs, ToolName, TurnId, WorkspaceMode};
use cortex_runtime::{Guest, GuestSpec};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// The repository's own environment preparation, run inside the guest.
pub const SETUP_SCRIPT: &str = ".cortex/setup";
/// How long `.cortex/setup` may run.
pub const SETUP_TIMEOUT: Duration = Duration::from_secs(300);
/// How much of a failed setup's output the failure message quotes.
const QUOTED_TAIL: usize = 600;

/// Whether the guest can take the turn's commands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Readiness {
    /// Attached, and the environment prepared.
    Ready,
    /// It could not be: why, as already recorded in the timeline
    /// (`runtime.failed` or `env.failed`); the turn fails with this message.
    NotReady(String),
}

/// How many of a copy's skipped paths are named one by one.
const NAMED_SKIPS: usize = 20;

/// One `runtime.warning` per path the copy left out (the first
/// [`NAMED_SKIPS`]), then one with how many more.
fn copy_notes(report: &CopyReport) -> Vec<String> {
    let mut notes: Vec<String> = report
        .skipped
        .iter()
        .take(NAMED_SKIPS)
        .map(|s| format!("the copy left out {s}"))
        .collect();
    if report.skipped.len() > NAMED_SKIPS {
        notes.push(format!(
            "the copy left out {} more paths",
            report.skipped.len() - NAMED_SKIPS
        ));
    }
    notes
}

impl Session {
    /// Whether the guest may change the workspace: the mode has a mutating
    /// tool and the sandbox policy is not read-only.
    pub(crate) fn guest_may_write(&self) -> bool {
        self.mode().may_mutate_workspace()
            && self.sandbox.policy != cortex_protocol::SandboxPolicy::ReadOnly
    }

    /// Make sure a live guest is attached and the environment prepared.
    /// `Err` only when the timeline cannot be written; a guest that cannot
    /// start or an environment that cannot be prepared is
    /// [`Readiness::NotReady`].
    pub(crate) async fn ensure_attached(
        &mut self,
        turn: &TurnId,
        cancel: &CancellationToken,
    ) -> Result<Readiness, CoreError> {
        if self.guest.as_ref().is_some_and(|g| g.is_alive()) {
            return Ok(Readiness::Ready);
        }
        if let Some(dead) = self.guest.take() {
            dead.close().await;
        }
        if let Readiness::NotReady(error) = self.attach_guest(turn).await? {
            return Ok(Readiness::NotReady(error));
        }
        if self.env_prepared {
            return Ok(Readiness::Ready);
        }
        self.prepare_env(turn, cancel).await
    }

    /// `runtime.starting`, the isolated copy when the session asked for
    /// one, the guest started, then `runtime.attached` and a
    /// `runtime.warning` per layer or file that could not be kept.
    async fn attach_guest(&mut self, turn: &TurnId) -> Result<Readiness, CoreError> {
        let provider = self.guests.name().to_owned();
        self.timeline
            .emit(
                Some(turn),
                EventKind::RuntimeStarting {
                    provider: provider.clone(),
                },
            )
            .await?;
        let copied = match self.materialise().await {
            Ok(report) => report,
            Err(e) => {
                let error = e.to_string();
                return self.fail(turn, EventKind::EnvFailed { error }).await;
            }
        };
        let spec = GuestSpec {
            workspace: self.workspace.clone(),
            writable: self.guest_may_write(),
            allow_bash: self.mode().offers(ToolName::Bash),
            env: self.guest_env.clone(),
            policy: self.sandbox.policy,
            network: self.sandbox.network,
        };
        let started = Instant::now();
        let guest = match self.guests.start(&spec).await {
            Ok(guest) => guest,
            Err(e) => {
                let error = format!("the {provider} guest could not start: {e}");
                return self.fail(turn, EventKind::RuntimeFailed { error }).await;
            }
        };
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        let (isolation, warnings) = self.isolation_of(&guest).await;
        self.timeline
            .emit(
                Some(turn),
                EventKind::RuntimeAttached {
                    provider,
                    ms,
                    isolation,
                },
            )
            .await?;
        for message in copy_notes(&copied).into_iter().chain(warnings) {
            self.timeline
                .emit(Some(turn), EventKind::RuntimeWarning { message })
                .await?;
        }
        self.guest = Some(guest);
        Ok(Readiness::Ready)
    }

    /// What isolation the guest reports (its layers), and its warnings.
    async fn isolation_of(&self, guest: &cortex_runtime::Guest) -> (String, Vec<String>) {
        match guest.describe().await {
            Ok(Some(report)) => (report.layers, report.warnings),
            Ok(None) => (format!("none ({})", self.sandbox.policy), Vec::new()),
            Err(e) => (
                "unknown".to_owned(),
                vec![format!("the guest did not describe its isolation: {e}")],
            ),
        }
    }

    /// Once per session: `env.preparing`, `.cortex/setup` in the guest, then
    /// `env.ready` or `env.failed`.
    async fn prepare_env(
        &mut self,
        turn: &TurnId,
        cancel: &CancellationToken,
    ) -> Result<Readiness, CoreError> {
        let prepared = Instant::now();
        self.timeline
            .emit(
                Some(turn),
                EventKind::EnvPreparing {
                    workspace: self.workspace.display().to_string(),
                },
            )
            .await?;
        if let Readiness::NotReady(error) = self.run_setup(turn, cancel).await? {
            return self.fail(turn, EventKind::EnvFailed { error }).await;
        }
        self.env_prepared = true;
        self.timeline
            .emit(
                Some(turn),
                EventKind::EnvReady {
                    ms: prepared.elapsed().as_secs_f64() * 1000.0,
                },
            )
            .await?;
        Ok(Readiness::Ready)
    }

    /// Record `event` (a failure) and answer [`Readiness::NotReady`].
    async fn fail(&mut self, turn: &TurnId, event: EventKind) -> Result<Readiness, CoreError> {
        let error = match &event {
            EventKind::EnvFailed { error } | EventKind::RuntimeFailed { error } => error.clone(),
            other => other.type_name().to_owned(),
        };
        self.timeline.emit(Some(turn), event).await?;
        Ok(Readiness::NotReady(error))
    }

    /// The isolated copy, made the first time (blocking file work off the
    /// async threads).
    async fn materialise(&self) -> Result<CopyReport, WorkspaceError> {
        if self.sandbox.workspace != WorkspaceMode::Copy || self.workspace.is_dir() {
            return Ok(CopyReport::default());
        }
        let (from, to) = (self.repository.clone(), self.workspace.clone());
        tokio::task::spawn_blocking(move || crate::workspace::materialise_copy(&from, &to))
            .await
            .map_err(WorkspaceError::Interrupted)?
    }

    /// Run `.cortex/setup` in the guest, if the workspace has one, streaming
    /// its output. [`Readiness::NotReady`] says why it failed.
    async fn run_setup(
        &mut self,
        turn: &TurnId,
        cancel: &CancellationToken,
    ) -> Result<Readiness, CoreError> {
        let (repository, workspace) = (self.repository.clone(), self.workspace.clone());
        let decided =
            tokio::task::spawn_blocking(move || setup_trust::check(&repository, &workspace))
                .await
                .unwrap_or_else(|e| Setup::Skipped(format!("the check did not finish: {e}")));
        let content = match decided {
            Setup::Absent => return Ok(Readiness::Ready),
            Setup::Skipped(reason) => {
                self.timeline
                    .emit(Some(turn), EventKind::EnvSetupSkipped { reason })
                    .await?;
                return Ok(Readiness::Ready);
            }
            Setup::Trusted(content) => content,
        };
        let Some(guest) = self.guest.as_ref() else {
            return Ok(Readiness::NotReady("no guest".to_owned()));
        };
        // Setup may run commands whatever the mode; the mode's own
        // capabilities are restored before the model sees the guest.
        if let Err(e) = guest.set_capabilities(self.guest_may_write(), true).await {
            return Ok(Readiness::NotReady(format!("{SETUP_SCRIPT}: {e}")));
        }
        let args = ToolArgs::Bash(BashArgs {
            command: setup_trust::command(&content),
            timeout_ms: Some(SETUP_TIMEOUT.as_millis() as u64),
            background: None,
        });
        let result = self.stream_setup(turn, guest, args, cancel).await?;
        // Whatever the script left running in the background ends with it,
        // before the model gets the guest.
        let ended = guest.stop().await;
        let result = match (result, ended) {
            (Readiness::Ready, Err(e)) => Readiness::NotReady(format!(
                "{SETUP_SCRIPT}: its background processes could not be ended: {e}"
            )),
            (result, _) => result,
        };
        let restore = guest
            .set_capabilities(self.guest_may_write(), self.mode().offers(ToolName::Bash))
            .await;
        Ok(match (result, restore) {
            (Readiness::Ready, Err(e)) => {
                Readiness::NotReady(format!("the guest did not take its capabilities back: {e}"))
            }
            (result, _) => result,
        })
    }

    async fn stream_setup(
        &self,
        turn: &TurnId,
        guest: &Guest,
        args: ToolArgs,
        cancel: &CancellationToken,
    ) -> Result<Readiness, CoreError> {
        let not_ready = |message: String| Ok(Readiness::NotReady(message));
        let mut call = match guest.call(args).await {
            Ok(call) => call,
            Err(e) => return not_ready(format!("{SETUP_SCRIPT} could not start: {e}")),
        };
        loop {
            let reply = tokio::select! {
                reply = call.next() => reply,
                _ = cancel.cancelled() => {
                    let _ = guest.stop().await;
                    return not_ready(format!("{SETUP_SCRIPT} stopped by user"));
                }
            };
            match reply {
                Some(GuestReply::Delta { stream, text }) => {
                    self.timeline
                        .emit(Some(turn), EventKind::EnvOutput { stream, text })
                        .await?;
                }
                Some(GuestReply::Result(outcome)) if outcome.is_ok() => {
                    return Ok(Readiness::Ready);
                }
                Some(GuestReply::Result(outcome)) => {
                    let output = outcome.output.trim_end();
                    let start = output.len().saturating_sub(QUOTED_TAIL);
                    let start = (start..=output.len())
                        .find(|i| output.is_char_boundary(*i))
                        .unwrap_or(output.len());
                    return not_ready(format!(
                        "{SETUP_SCRIPT} failed (exit code {}): {}",
                        outcome
                            .exit_code
                            .map_or_else(|| "none".to_owned(), |c| c.to_string()),
                        &output[start..]
                    ));
                }
                None => return not_ready(format!("the guest exited during {SETUP_SCRIPT}")),
            }
        }
    }
}
