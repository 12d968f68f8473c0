//! Approvals as the editor's permission requests: a session in `ask` policy
//! records `approval.requested` for a call no rule covers; the agent sends
//! `session/request_permission` with allow-once, allow-always and
//! reject-once options and posts the editor's choice to
//! `POST /v1/sessions/{id}/approvals/{call_id}`, where the waiting turn
//! takes it.
//!
//! Each request runs in a task of its own, so the prompt keeps streaming
//! the turn's updates while the editor decides. An editor that cancels the
//! request, answers with an option it was not offered or fails to answer
//! denies the call: nothing runs that the user did not allow.

use agent_client_protocol::Client as Editor;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    ToolCallUpdate, ToolCallUpdateFields,
};
use cortex_client::Client;
use cortex_protocol::{ApprovalDecision, CallId, SessionId};

/// The option ids offered, and what each means for the session API.
const OPTIONS: [(&str, &str, PermissionOptionKind, ApprovalDecision); 3] = [
    (
        "allow-once",
        "Allow once",
        PermissionOptionKind::AllowOnce,
        ApprovalDecision::Allow,
    ),
    (
        "allow-always",
        "Always allow",
        PermissionOptionKind::AllowAlways,
        ApprovalDecision::Always,
    ),
    (
        "reject-once",
        "Reject",
        PermissionOptionKind::RejectOnce,
        ApprovalDecision::Deny,
    ),
];

/// What the harness asks the editor about one call.
pub(crate) struct Ask {
    pub(crate) call_id: CallId,
    /// What the call does, as the approval request states it.
    pub(crate) summary: String,
    /// Why it needs the user (no rule covers it, …).
    pub(crate) reason: String,
}

/// The `session/request_permission` for `ask` in session `session`.
pub(crate) fn request(session: &SessionId, ask: &Ask) -> RequestPermissionRequest {
    let options = OPTIONS
        .iter()
        .map(|(id, name, kind, _)| PermissionOption::new(*id, *name, *kind))
        .collect();
    let fields = ToolCallUpdateFields::new().title(format!("{} ({})", ask.summary, ask.reason));
    RequestPermissionRequest::new(
        session.0.clone(),
        ToolCallUpdate::new(ask.call_id.0.clone(), fields),
        options,
    )
}

/// The session API's decision for the editor's answer.
pub(crate) fn decision(outcome: &RequestPermissionOutcome) -> ApprovalDecision {
    match outcome {
        RequestPermissionOutcome::Selected(selected) => OPTIONS
            .iter()
            .find(|(id, ..)| *id == &*selected.option_id.0)
            .map(|(.., decision)| *decision)
            .unwrap_or(ApprovalDecision::Deny),
        _ => ApprovalDecision::Deny,
    }
}

/// Ask the editor about `ask` in a task of its own and pass its answer on
/// to the API.
pub(crate) fn ask_editor(cx: &ConnectionTo<Editor>, api: &Client, session: &SessionId, ask: Ask) {
    let request = request(session, &ask);
    let call_id = ask.call_id.clone();
    let (connection, api, session) = (cx.clone(), api.clone(), session.clone());
    let spawned = cx.spawn(async move {
        let decision = match connection.send_request(request).block_task().await {
            Ok(answer) => decision(&answer.outcome),
            Err(e) => {
                tracing::warn!("session/request_permission failed, the call is denied: {e}");
                ApprovalDecision::Deny
            }
        };
        // A turn stopped meanwhile has resolved the request already: the
        // API answers that nothing waits, which changes nothing.
        if let Err(e) = api
            .answer_approval(&session, &ask.call_id.0, decision)
            .await
        {
            tracing::warn!("the answer to {} was not taken: {e}", ask.call_id);
        }
        Ok(())
    });
    if let Err(e) = spawned {
        tracing::warn!("cannot ask the editor about {call_id}: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::SelectedPermissionOutcome;

    #[test]
    fn the_three_options_map_to_decisions_and_anything_else_denies() {
        let ask = Ask {
            call_id: CallId::from("c1"),
            summary: "bash: rm -rf build".into(),
            reason: "no rule covers `rm`".into(),
        };
        let request = request(&SessionId("s1".into()), &ask);
        let kinds: Vec<_> = request.options.iter().map(|o| o.kind).collect();
        assert_eq!(
            kinds,
            [
                PermissionOptionKind::AllowOnce,
                PermissionOptionKind::AllowAlways,
                PermissionOptionKind::RejectOnce
            ]
        );
        let chosen = |id: &'static str| {
            decision(&RequestPermissionOutcome::Selected(
                SelectedPermissionOutcome::new(id),
            ))
        };
        assert_eq!(chosen("allow-once"), ApprovalDecision::Allow);
        assert_eq!(chosen("allow-always"), ApprovalDecision::Always);
        assert_eq!(chosen("reject-once"), ApprovalDecision::Deny);
        assert_eq!(chosen("something-else"), ApprovalDecision::Deny);
        assert_eq!(
            decision(&RequestPermissionOutcome::Cancelled),
            ApprovalDecision::Deny
        );
    }
}
