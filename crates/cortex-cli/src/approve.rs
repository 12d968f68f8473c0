//! Approvals in `cortex exec`: which policy a run uses, and the prompt on
//! standard input that answers `approval.requested` (Allow / Deny /
//! Always). Without a terminal nothing waits: `ask` behaves as `deny`, and
//! the run says so once.

use cortex_client::Client;
use cortex_protocol::{ApprovalDecision, ApprovalPolicy, EventKind, SessionId, TurnId};
use cortex_term::sanitize_line;
use std::io::{BufRead, IsTerminal, Write};

/// The note printed once when `ask` cannot be answered.
pub const HEADLESS_NOTE: &str = "note: --approval ask needs a terminal to answer on; without one \
     this run behaves as --approval deny (calls that would ask are refused)";

/// Whether a person can answer on this process's standard input.
pub fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// The policy a new `exec` session gets: `auto` unless `--approval` says;
/// `ask` without a terminal becomes `deny`, with the note to print.
pub fn exec_policy(
    requested: Option<ApprovalPolicy>,
    interactive: bool,
) -> (ApprovalPolicy, Option<&'static str>) {
    match requested.unwrap_or_default() {
        ApprovalPolicy::Ask if !interactive => (ApprovalPolicy::Deny, Some(HEADLESS_NOTE)),
        policy => (policy, None),
    }
}

/// What a typed answer means (`None`: ask again).
pub fn parse_answer(line: &str) -> Option<ApprovalDecision> {
    match line.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" | "allow" => Some(ApprovalDecision::Allow),
        "n" | "no" | "deny" | "" => Some(ApprovalDecision::Deny),
        "a" | "always" => Some(ApprovalDecision::Always),
        _ => None,
    }
}

/// Answer every approval request of `turn` until it ends: on the terminal
/// when `interactive`, else `deny` at once (a session resumed in `ask`),
/// saying so once. Runs beside the printer on an event stream of its own.
pub async fn answer_requests(
    client: Client,
    id: SessionId,
    after: u64,
    turn: TurnId,
    interactive: bool,
) {
    let Ok(mut events) = client.events(&id, after).await else {
        return;
    };
    let mut told = false;
    while let Some(Ok(event)) = events.next().await {
        if event.turn_id.as_ref() != Some(&turn) {
            continue;
        }
        if event.kind.ends_turn() {
            return;
        }
        let EventKind::ApprovalRequested {
            call_id,
            summary,
            reason,
            ..
        } = event.kind
        else {
            continue;
        };
        let decision = if interactive {
            let summary = sanitize_line(&summary).into_owned();
            let reason = sanitize_line(&reason).into_owned();
            match tokio::task::spawn_blocking(move || prompt(&summary, &reason)).await {
                Ok(decision) => decision,
                Err(_) => ApprovalDecision::Deny,
            }
        } else {
            if !std::mem::replace(&mut told, true) {
                eprintln!("{HEADLESS_NOTE}");
            }
            ApprovalDecision::Deny
        };
        if let Err(e) = client.answer_approval(&id, &call_id.0, decision).await {
            tracing::warn!("answering the approval request: {e}");
        }
    }
}

/// Ask on standard error, read standard input; end of input is Deny.
fn prompt(summary: &str, reason: &str) -> ApprovalDecision {
    let stdin = std::io::stdin();
    loop {
        eprint!("\n? approve `{summary}` ({reason})\n  [y] allow once  [n] deny  [a] always: ");
        let _ = std::io::stderr().flush();
        let mut line = String::new();
        match stdin.lock().read_line(&mut line) {
            Ok(0) | Err(_) => return ApprovalDecision::Deny,
            Ok(_) => {
                if let Some(decision) = parse_answer(&line) {
                    return decision;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headless_ask_is_deny_and_says_so() {
        assert_eq!(exec_policy(None, false), (ApprovalPolicy::Auto, None));
        assert_eq!(
            exec_policy(Some(ApprovalPolicy::Ask), false),
            (ApprovalPolicy::Deny, Some(HEADLESS_NOTE))
        );
        assert_eq!(
            exec_policy(Some(ApprovalPolicy::Ask), true),
            (ApprovalPolicy::Ask, None)
        );
    }

    #[test]
    fn answers() {
        assert_eq!(parse_answer("y\n"), Some(ApprovalDecision::Allow));
        assert_eq!(parse_answer(" Always "), Some(ApprovalDecision::Always));
        assert_eq!(parse_answer("\n"), Some(ApprovalDecision::Deny));
        assert_eq!(parse_answer("maybe"), None);
    }
}
