//! Running one of the user's own hooks on the host, and reading what any
//! hook answered.
//!
//! A user's hook is the user's own script, so it runs on the host as the
//! user; it still gets a clean environment (no provider keys), its own
//! process group killed at its timeout or on Stop, and its output capped and
//! stripped of control characters before anyone sees it.

use super::Decision;
use super::{HookAnswer, HookEvent, HookSpec};
use std::path::Path;
use std::process::Stdio;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

/// The most bytes of a hook's stdout and of its stderr that are kept.
pub const OUTPUT_CAP: usize = 64 * 1024;
/// The variables a hook inherits; everything else (provider keys above all)
/// is left out.
const INHERITED_ENV: [&str; 4] = ["PATH", "HOME", "LANG", "TERM"];

/// What a hook printed and how it ended, wherever it ran.
pub(crate) struct Ran {
    /// The exit code; `None` when a signal ended it.
    pub(crate) code: Option<i32>,
    pub(crate) stdout: Vec<u8>,
    pub(crate) stderr: Vec<u8>,
}

/// Run one hook on the host: `input` on its stdin, in `cwd`. `Err` says why
/// it failed (cannot start, exited other than 0 or 2, timed out, stopped,
/// answered malformed JSON).
pub(crate) async fn run_hook(
    spec: &HookSpec,
    input: &serde_json::Value,
    cwd: &Path,
    cancel: &CancellationToken,
) -> Result<HookAnswer, String> {
    let mut command = tokio::process::Command::new("/bin/sh");
    command
        .arg("-c")
        .arg(&spec.command)
        .env_clear()
        .current_dir(cwd)
        .env("CORTEX_PROJECT_DIR", cwd)
        // Claude Code's scripts find the project by this name.
        .env("CLAUDE_PROJECT_DIR", cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own group, so a timeout kills what it started too.
        .process_group(0)
        .kill_on_drop(true);
    for name in INHERITED_ENV {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("it could not start: {e}"))?;
    let group = child
        .id()
        .and_then(|id| rustix::process::Pid::from_raw(id as i32));
    let kill_group = || {
        if let Some(group) = group {
            // It may have exited already, leaving nothing to kill.
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        }
    };
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let input = serde_json::to_vec(input).unwrap_or_default();
    let run = async {
        let write = async {
            if let Some(mut stdin) = stdin {
                // A hook that does not read its input is no failure.
                let _ = stdin.write_all(&input).await;
            }
        };
        let (_, out, err, status) = tokio::join!(
            write,
            read_capped(stdout),
            read_capped(stderr),
            child.wait()
        );
        (out, err, status)
    };
    let (out, err, status) = tokio::select! {
        done = tokio::time::timeout(spec.timeout(), run) => match done {
            Ok(done) => done,
            Err(_) => {
                kill_group();
                return Err(format!("timed out after {} ms", spec.timeout().as_millis()));
            }
        },
        _ = cancel.cancelled() => {
            kill_group();
            return Err(STOPPED.to_owned());
        }
    };
    let status = status.map_err(|e| format!("it could not be waited for: {e}"))?;
    answer_of(
        spec.event,
        Ran {
            code: status.code(),
            stdout: out,
            stderr: err,
        },
    )
}

/// Why a hook the user stopped failed.
pub(crate) const STOPPED: &str = "stopped by the user";

/// A hook's answer from how it ended: exit 0 with its stdout, 2 with its
/// stderr as the reason; anything else is a failure.
pub(crate) fn answer_of(event: HookEvent, ran: Ran) -> Result<HookAnswer, String> {
    let stdout = clean(&String::from_utf8_lossy(&ran.stdout));
    let stderr = clean(&String::from_utf8_lossy(&ran.stderr));
    match ran.code {
        Some(0) => parse_answer(&stdout, event.plain_is_context()),
        Some(2) => Ok(HookAnswer {
            decision: Decision::Block,
            reason: Some(
                non_empty(stderr.trim())
                    .unwrap_or("no reason given")
                    .to_owned(),
            ),
            context: None,
        }),
        Some(code) => Err(format!("it exited with status {code}{}", said(&stderr))),
        None => Err(format!("it was killed by a signal{}", said(&stderr))),
    }
}

/// `: <stderr>` when the hook said something.
fn said(stderr: &str) -> String {
    non_empty(stderr.trim())
        .map(|s| format!(": {}", cut(s, 400)))
        .unwrap_or_default()
}

fn non_empty(text: &str) -> Option<&str> {
    (!text.is_empty()).then_some(text)
}

/// The answer on a hook's stdout after exit 0: a JSON object, or plain
/// text, which is context for the model only when `plain_is_context` (a
/// `UserPromptSubmit` or `SessionStart` hook, as Claude Code takes it;
/// other hooks' chatter, a formatter's say, is not the model's).
pub(crate) fn parse_answer(stdout: &str, plain_is_context: bool) -> Result<HookAnswer, String> {
    let text = stdout.trim();
    if !text.starts_with('{') {
        return Ok(HookAnswer {
            decision: Decision::Continue,
            reason: None,
            context: non_empty(text)
                .filter(|_| plain_is_context)
                .map(str::to_owned),
        });
    }
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("its answer is not valid JSON: {e}"))?;
    let specific = value.get("hookSpecificOutput");
    let field = |name: &str| {
        specific
            .and_then(|s| s.get(name))
            .or_else(|| value.get(name))
            .and_then(|v| v.as_str())
            .and_then(|s| non_empty(s.trim()))
            .map(str::to_owned)
    };
    let named = field("permissionDecision").or_else(|| field("decision"));
    let decision = match named {
        None => Decision::Continue,
        Some(name) => Decision::parse(&name)
            .ok_or_else(|| format!("its answer has an unknown decision `{}`", cut(&name, 40)))?,
    };
    Ok(HookAnswer {
        decision,
        reason: field("permissionDecisionReason").or_else(|| field("reason")),
        context: field("additionalContext"),
    })
}

/// Up to [`OUTPUT_CAP`] bytes of a stream, the rest read and dropped so the
/// hook never blocks on a full pipe.
async fn read_capped(stream: Option<impl AsyncRead + Unpin>) -> Vec<u8> {
    let mut kept = Vec::new();
    let Some(mut stream) = stream else {
        return kept;
    };
    let mut buf = [0u8; 8192];
    while let Ok(n) = stream.read(&mut buf).await {
        if n == 0 {
            break;
        }
        let room = OUTPUT_CAP.saturating_sub(kept.len());
        kept.extend_from_slice(&buf[..n.min(room)]);
    }
    kept
}

/// `text` without control characters but newlines and tabs: a hook's words
/// reach terminals and the model, and escape sequences belong to neither.
pub(crate) fn clean(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .collect()
}

pub(crate) fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let kept: String = text.chars().take(max).collect();
    format!("{kept}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_by_json() {
        let a = parse_answer(r#"{"decision":"deny","reason":"no"}"#, false).expect("answer");
        assert_eq!(a.decision, Decision::Deny);
        assert_eq!(a.reason.as_deref(), Some("no"));
        let a = parse_answer(
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"why"}}"#,
            false,
        )
        .expect("answer");
        assert_eq!(a.decision, Decision::Ask);
        assert_eq!(a.reason.as_deref(), Some("why"));
        let a = parse_answer(
            r#"{"hookSpecificOutput":{"additionalContext":"ctx"}}"#,
            false,
        )
        .expect("answer");
        assert_eq!(
            (a.decision, a.context.as_deref()),
            (Decision::Continue, Some("ctx"))
        );
        assert!(parse_answer(r#"{"decision":"maybe"}"#, false).is_err());
        assert!(parse_answer("{not json", false).is_err());
        assert_eq!(parse_answer("", true).expect("empty").context, None);
        // Plain text is context for a prompt hook only.
        let plain = |is_context| parse_answer("formatted 3 files\n", is_context);
        assert_eq!(plain(false).expect("plain").context, None);
        assert_eq!(
            plain(true).expect("plain").context.as_deref(),
            Some("formatted 3 files")
        );
    }

    #[test]
    fn exit_codes_decide() {
        let ran = |code, stderr: &str| Ran {
            code,
            stdout: Vec::new(),
            stderr: stderr.as_bytes().to_vec(),
        };
        let blocked = answer_of(HookEvent::PreToolUse, ran(Some(2), "no \x1b[31mrm")).expect("2");
        assert_eq!(blocked.decision, Decision::Block);
        assert_eq!(blocked.reason.as_deref(), Some("no [31mrm"));
        let failed = answer_of(HookEvent::PreToolUse, ran(Some(1), "boom"));
        assert_eq!(failed, Err("it exited with status 1: boom".to_owned()));
        assert!(answer_of(HookEvent::Stop, ran(None, "")).is_err());
    }

    #[test]
    fn cleaning_drops_escape_sequences() {
        assert_eq!(clean("a\x1b[31mb\x07\nc\td"), "a[31mb\nc\td");
    }
}
