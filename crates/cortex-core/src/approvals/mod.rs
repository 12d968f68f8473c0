//! Approvals: the session's policy (`ask`, `auto`, `deny`), the user's
//! rules, the built-in deny list, and the pause of a turn that waits for
//! the user's answer.
//!
//! The gate ([`Session::approve`], called by the dispatcher after the mode
//! and argument gates) takes a `bash` call, a file write or an MCP call:
//! 1. the deny list refuses what nothing may allow, in every policy;
//! 2. `auto` runs the call (inside the sandbox);
//! 3. a call the principal's rules cover runs;
//! 4. `deny` refuses the rest; `ask` records `approval.requested` and waits
//!    for [`Approvals::answer`] (or Stop) before `approval.resolved`.
//!
//! The answer arrives from another task (the API's handler) through the
//! shared [`Approvals`] handle, so the session stays with its turn. A
//! request whose process died is resolved `interrupted` on recovery
//! ([`resolve_interrupted_approvals`]), before its turn is failed, so no
//! call is left half-approved. Answering never changes the mode.

mod analysis;
#[cfg(test)]
mod corpus;
mod deny;
#[cfg(test)]
mod differential;
mod expansion;
mod gate;
mod matcher;
mod paths;
mod shell;
#[cfg(test)]
mod tests;
mod wrappers;

use crate::{CoreError, Timeline};
use cortex_protocol::{
    ApprovalDecision, ApprovalPolicy, ApprovalResolution, CallId, Event, EventKind,
};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::oneshot;

pub(crate) use gate::Approval;

/// The principal of sessions that have no owner (run by the CLI without a
/// server): the same name the CLI's own server uses.
pub const LOCAL_PRINCIPAL: &str = "local";

/// Why an answer was refused.
#[derive(Debug, thiserror::Error)]
pub enum ApprovalError {
    /// No request with this id waits for an answer.
    #[error(
        "no approval request `{0}` is waiting (it was answered already, its turn was stopped, \
         or it was never asked)"
    )]
    NotPending(String),
    /// The timeline could not be written.
    #[error(transparent)]
    Core(#[from] CoreError),
}

/// The session's approval state, shared with the tasks that answer it.
#[derive(Clone)]
pub struct Approvals {
    inner: Arc<Inner>,
}

struct Inner {
    policy: Mutex<ApprovalPolicy>,
    pending: Mutex<HashMap<String, oneshot::Sender<ApprovalDecision>>>,
    timeline: Timeline,
}

impl Approvals {
    pub(crate) fn new(timeline: Timeline, policy: ApprovalPolicy) -> Self {
        Approvals {
            inner: Arc::new(Inner {
                policy: Mutex::new(policy),
                pending: Mutex::new(HashMap::new()),
                timeline,
            }),
        }
    }

    /// The policy in force.
    pub fn policy(&self) -> ApprovalPolicy {
        *self
            .inner
            .policy
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The user sets the policy (`approval.policy` when it changes). A call
    /// already waiting keeps waiting for its answer.
    pub async fn set_policy(&self, policy: ApprovalPolicy) -> Result<(), CoreError> {
        let changed = {
            let mut current = self
                .inner
                .policy
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            std::mem::replace(&mut *current, policy) != policy
        };
        if changed {
            self.inner
                .timeline
                .emit(None, EventKind::ApprovalPolicySet { policy })
                .await?;
        }
        Ok(())
    }

    /// The calls waiting for an answer now.
    pub fn pending(&self) -> Vec<CallId> {
        let pending = self.pending_map();
        let mut ids: Vec<CallId> = pending.keys().map(|id| CallId::from(id.as_str())).collect();
        ids.sort_by(|a, b| a.0.cmp(&b.0));
        ids
    }

    /// The user's answer to the request of `call_id`; the waiting turn
    /// records `approval.resolved` and goes on.
    pub fn answer(&self, call_id: &str, decision: ApprovalDecision) -> Result<(), ApprovalError> {
        let sender = self
            .pending_map()
            .remove(call_id)
            .ok_or_else(|| ApprovalError::NotPending(call_id.to_owned()))?;
        sender
            .send(decision)
            .map_err(|_| ApprovalError::NotPending(call_id.to_owned()))
    }

    fn pending_map(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<ApprovalDecision>>> {
        self.inner
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Register a request before it is announced, so an answer that comes
    /// at once finds it.
    fn register(&self, call_id: &CallId) -> oneshot::Receiver<ApprovalDecision> {
        let (tx, rx) = oneshot::channel();
        self.pending_map().insert(call_id.0.clone(), tx);
        rx
    }

    fn forget(&self, call_id: &CallId) {
        self.pending_map().remove(&call_id.0);
    }
}

/// The policy the timeline last recorded (`auto` when it never did).
pub(crate) fn policy_from(events: &[Event]) -> ApprovalPolicy {
    events
        .iter()
        .rev()
        .find_map(|e| match &e.kind {
            EventKind::ApprovalPolicySet { policy } => Some(*policy),
            _ => None,
        })
        .unwrap_or_default()
}

/// Resolve, as `interrupted`, every approval request of the session that
/// has no `approval.resolved` (its process exited while it waited). Call
/// before the interrupted turns are failed. Returns how many there were.
pub async fn resolve_interrupted_approvals(timeline: &Timeline) -> Result<usize, CoreError> {
    let events = timeline.store().events(timeline.session(), 0).await?;
    let resolved: HashSet<&CallId> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ApprovalResolved { call_id, .. } => Some(call_id),
            _ => None,
        })
        .collect();
    let open: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ApprovalRequested { call_id, .. } if !resolved.contains(call_id) => {
                Some((e.turn_id.clone(), call_id.clone()))
            }
            _ => None,
        })
        .collect();
    for (turn, call_id) in &open {
        timeline
            .emit(
                turn.as_ref(),
                EventKind::ApprovalResolved {
                    call_id: call_id.clone(),
                    decision: ApprovalResolution::Interrupted,
                },
            )
            .await?;
    }
    Ok(open.len())
}

/// The principal whose rules apply: the session's owner, or the CLI's.
pub(crate) fn principal_or_local(owner: Option<String>) -> String {
    owner.unwrap_or_else(|| LOCAL_PRINCIPAL.to_owned())
}
