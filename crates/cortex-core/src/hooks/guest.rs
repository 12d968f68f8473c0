//! Running a repository's hook in the session's guest.
//!
//! A repository's hook is code the user trusted, not code the user wrote, so
//! it gets what a command of the model gets and nothing more: the guest's
//! sandbox, network policy and environment (no provider keys), and the
//! mode's lock on the workspace: in a read-only mode it runs read-only even
//! though the mode offers no `bash`. Its input reaches its stdin through the
//! command line (so it is capped); stdout and stderr come back apart, as the
//! guest streams them. The harness holds the timeout and Stop: either kills
//! the hook's command in the guest.

use super::host::{Ran, STOPPED, answer_of, cut};
use super::{HookAnswer, HookSpec, OUTPUT_CAP};
use crate::Session;
use cortex_protocol::{BashArgs, GuestReply, OutputStream, ToolArgs, ToolName};
use cortex_runtime::Guest;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The most bytes of input a guest hook gets (one command-line argument
/// may not pass 128 KiB); a longer `tool_response` is cut to fit.
pub(crate) const GUEST_INPUT_CAP: usize = 96 * 1024;

/// How much longer than the harness's timeout the guest's own is: the
/// harness kills first and says so; the guest's is a backstop.
const BACKSTOP: Duration = Duration::from_secs(2);

impl Session {
    /// Run `spec` in the guest with `input` on its stdin. `Err` says why it
    /// failed, as for a hook on the host.
    pub(crate) async fn run_guest_hook(
        &self,
        spec: &HookSpec,
        input: &serde_json::Value,
        cancel: &CancellationToken,
    ) -> Result<HookAnswer, String> {
        let guest = self
            .guest
            .as_ref()
            .filter(|g| g.is_alive())
            .ok_or_else(|| "the guest is not attached, so it cannot run".to_owned())?;
        let command = guest_command(&spec.command, &fitted(input)?);
        // The mode's lock on the workspace holds; only commands are let in,
        // and only for this hook.
        let lend_bash = !self.mode().offers(ToolName::Bash);
        if lend_bash {
            guest
                .set_capabilities(self.guest_may_write(), true)
                .await
                .map_err(|e| format!("the guest did not take the hook: {e}"))?;
        }
        let ran = run_in(guest, command, spec.timeout(), cancel).await;
        if lend_bash {
            guest
                .set_capabilities(self.guest_may_write(), false)
                .await
                .map_err(|e| format!("the guest did not take its capabilities back: {e}"))?;
        }
        answer_of(spec.event, ran?)
    }
}

/// The input as one line of JSON, a long `tool_response` cut to fit the
/// command line.
fn fitted(input: &serde_json::Value) -> Result<String, String> {
    let text = serde_json::to_string(input).map_err(|e| format!("its input: {e}"))?;
    if text.len() <= GUEST_INPUT_CAP {
        return Ok(text);
    }
    let mut smaller = input.clone();
    if let Some(response) = smaller.get_mut("tool_response")
        && let Some(output) = response.as_str()
    {
        let over = text.len() - GUEST_INPUT_CAP;
        let keep = output.chars().count().saturating_sub(over + 64);
        *response = serde_json::Value::from(cut(output, keep));
    }
    let text = serde_json::to_string(&smaller).map_err(|e| format!("its input: {e}"))?;
    if text.len() > GUEST_INPUT_CAP {
        return Err(format!(
            "its input is over {} KiB, more than a guest hook takes",
            GUEST_INPUT_CAP / 1024
        ));
    }
    Ok(text)
}

/// `'text'` for sh, whatever `text` holds.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The command the guest's bash runs: the hook under `/bin/sh -c` in the
/// workspace, its input on stdin, the project folder named as Claude Code
/// names it.
fn guest_command(command: &str, input: &str) -> String {
    format!(
        "export CORTEX_PROJECT_DIR=\"$PWD\" CLAUDE_PROJECT_DIR=\"$PWD\"; \
         printf '%s' {} | /bin/sh -c {}",
        quoted(input),
        quoted(command)
    )
}

/// Run `command` in `guest`, stdout and stderr kept apart and capped.
async fn run_in(
    guest: &Guest,
    command: String,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Result<Ran, String> {
    let args = ToolArgs::Bash(BashArgs {
        command,
        timeout_ms: Some((timeout + BACKSTOP).as_millis() as u64),
        background: None,
    });
    let mut call = guest
        .call(args)
        .await
        .map_err(|e| format!("it could not start in the guest: {e}"))?;
    let id = call.id();
    let mut ran = Ran {
        code: None,
        stdout: Vec::new(),
        stderr: Vec::new(),
    };
    let collect = async {
        loop {
            match call.next().await {
                Some(GuestReply::Delta { stream, text }) => {
                    let kept = match stream {
                        OutputStream::Stdout => &mut ran.stdout,
                        OutputStream::Stderr => &mut ran.stderr,
                    };
                    let room = OUTPUT_CAP.saturating_sub(kept.len());
                    kept.extend_from_slice(&text.as_bytes()[..text.len().min(room)]);
                }
                Some(GuestReply::Result(outcome)) => return Ok(outcome.exit_code),
                None => return Err("the guest exited while it ran".to_owned()),
            }
        }
    };
    let ended = tokio::select! {
        ended = tokio::time::timeout(timeout, collect) => ended.ok(),
        _ = cancel.cancelled() => {
            let _ = guest.stop_call(id).await;
            return Err(STOPPED.to_owned());
        }
    };
    match ended {
        Some(Ok(code)) => {
            ran.code = code;
            Ok(ran)
        }
        Some(Err(e)) => Err(e),
        None => {
            let _ = guest.stop_call(id).await;
            Err(format!("timed out after {} ms", timeout.as_millis()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_input_is_quoted_whatever_it_holds() {
        let command = guest_command("./guard.sh 'x'", r#"{"a":"it's $(rm -rf /)"}"#);
        assert!(command.contains(r#"printf '%s' '{"a":"it'\''s $(rm -rf /)"}'"#));
        assert!(command.ends_with(r"/bin/sh -c './guard.sh '\''x'\'''"));
    }

    #[test]
    fn a_long_tool_response_is_cut_to_fit() {
        let input = serde_json::json!({
            "hook_event_name": "PostToolUse",
            "tool_response": "x".repeat(200 * 1024),
        });
        let text = fitted(&input).expect("fits");
        assert!(text.len() <= GUEST_INPUT_CAP);
        assert!(text.contains("PostToolUse") && text.contains('…'));
        let huge = serde_json::json!({ "tool_input": "y".repeat(200 * 1024) });
        assert!(fitted(&huge).is_err());
    }
}
