//! Attach before the first command: start the guest and prepare the
//! environment, with `runtime.*` and `env.*` events, before the model is asked
//! anything.

use crate::{CoreError, Session};
use cortex_protocol::{EventKind, ToolName, TurnId};
use cortex_runtime::GuestSpec;
use std::time::Instant;

impl Session {
    /// Make sure a live guest is attached. Returns the error message to put in
    /// front of the user (and the turn) when it cannot be.
    pub(crate) async fn ensure_attached(
        &mut self,
        turn: &TurnId,
    ) -> Result<Result<(), String>, CoreError> {
        if self.guest.as_ref().is_some_and(|g| g.is_alive()) {
            return Ok(Ok(()));
        }
        if let Some(dead) = self.guest.take() {
            dead.close().await;
        }
        let provider = self.guests.name().to_owned();
        self.timeline
            .emit(
                Some(turn),
                EventKind::RuntimeStarting {
                    provider: provider.clone(),
                },
            )
            .await?;
        let spec = GuestSpec {
            workspace: self.repository.clone(),
            writable: self.mode.may_mutate_workspace(),
            allow_bash: self.mode.offers(ToolName::Bash),
            env: self.guest_env.clone(),
        };
        let started = Instant::now();
        let guest = match self.guests.start(&spec).await {
            Ok(guest) => guest,
            Err(e) => {
                let error = format!("the {provider} guest could not start: {e}");
                self.timeline
                    .emit(
                        Some(turn),
                        EventKind::RuntimeFailed {
                            error: error.clone(),
                        },
                    )
                    .await?;
                return Ok(Err(error));
            }
        };
        self.timeline
            .emit(
                Some(turn),
                EventKind::RuntimeAttached {
                    provider,
                    ms: started.elapsed().as_secs_f64() * 1000.0,
                },
            )
            .await?;
        self.guest = Some(guest);

        // Preparing the environment: the workspace is the repository in
        // place; setup scripts and isolated copies come with the sandbox.
        let prepared = Instant::now();
        self.timeline
            .emit(
                Some(turn),
                EventKind::EnvPreparing {
                    workspace: self.repository.display().to_string(),
                },
            )
            .await?;
        self.timeline
            .emit(
                Some(turn),
                EventKind::EnvReady {
                    ms: prepared.elapsed().as_secs_f64() * 1000.0,
                },
            )
            .await?;
        Ok(Ok(()))
    }
}
