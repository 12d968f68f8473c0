//! How tool calls and turns end, and when a turn stops on its own: the small
//! enums the timeline's payloads and every client share.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The reason of a `turn.stopped` the user's Stop caused (and the output of
/// the calls it interrupted); any other reason is the session's stop rule.
pub const STOPPED_BY_USER: &str = "stopped by user";

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    /// The tool ran and succeeded (a command exited with 0).
    Ok,
    /// The tool ran (or its arguments were refused) and failed.
    Error,
    /// A gate refused it before anything ran (mode, stop rule, unknown tool).
    Refused,
    /// The approval policy or the user denied it.
    Denied,
    /// Stop was pressed before it finished.
    Stopped,
}

/// Which output stream of a process a piece of text came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputStream {
    /// Standard output (`stdout`).
    Stdout,
    /// Standard error (`stderr`).
    Stderr,
}

/// When a turn stops on its own besides the model finishing. Code has none;
/// the other presets exist for the Chat and Bot products.
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum StopRule {
    /// No round budget: the model stops or the user presses Stop.
    #[default]
    Code,
    /// At most 8 tool rounds.
    Chat,
    /// A 15-minute deadline, or six identical consecutive calls.
    Bot,
}

impl StopRule {
    /// The wire and config name: `code`, `chat` or `bot`.
    pub fn as_str(self) -> &'static str {
        match self {
            StopRule::Code => "code",
            StopRule::Chat => "chat",
            StopRule::Bot => "bot",
        }
    }
}

impl fmt::Display for StopRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for StopRule {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "code" => Ok(StopRule::Code),
            "chat" => Ok(StopRule::Chat),
            "bot" => Ok(StopRule::Bot),
            other => Err(format!(
                "unknown stop rule `{other}` (expected code, chat or bot)"
            )),
        }
    }
}

/// How a provider reported that the model's last response ended, when
/// that is not an ordinary end (the reason an editor's `stopReason` is
/// `max_tokens` or `refusal`).
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnFinish {
    /// The response was cut at the provider's output token limit.
    MaxTokens,
    /// The provider refused to answer.
    Refusal,
}

/// How a turn ended, as the turn loop returns it and as a client reads it
/// from the turn's last event (`turn.completed`, `turn.stopped` or
/// `turn.failed`; see [`crate::EventKind::turn_outcome`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnOutcome {
    /// The model answered without a tool call.
    Completed {
        /// Model requests the turn made.
        rounds: u32,
    },
    /// Stopped before the model finished.
    Stopped {
        /// Why: the user's Stop ([`STOPPED_BY_USER`]) or the stop rule.
        reason: String,
    },
    /// The turn failed (model, guest or environment); the timeline says how.
    Failed {
        /// What failed, for the user.
        error: String,
    },
}

/// The status line a client shows for a `model.retry`, without its reason
/// (which each client sanitises its own way): `retrying the model request
/// (2 of 4) in 2.5 s`. One wording for every client.
pub fn retry_status(attempt: u32, of: Option<u32>, delay_ms: u64) -> String {
    let count = match of {
        Some(of) => format!("{attempt} of {of}"),
        None => format!("attempt {attempt}"),
    };
    let wait = if delay_ms < 1_000 {
        format!("{delay_ms} ms")
    } else {
        format!("{:.1} s", delay_ms as f64 / 1_000.0)
    };
    format!("retrying the model request ({count}) in {wait}")
}

#[cfg(test)]
mod retry_tests {
    use super::retry_status;

    #[test]
    fn a_retry_reads_as_a_count_and_a_wait() {
        assert_eq!(
            retry_status(2, Some(4), 2_500),
            "retrying the model request (2 of 4) in 2.5 s"
        );
        assert_eq!(
            retry_status(1, None, 500),
            "retrying the model request (attempt 1) in 500 ms"
        );
    }
}

/// Which checkpoint quota a `checkpoint.pruned` answered.
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PruneScope {
    /// The session's own quota.
    #[default]
    Session,
    /// The quota of every session's checkpoints together.
    Total,
}

impl PruneScope {
    /// Whether it is the session's (left out on the wire).
    pub fn is_session(&self) -> bool {
        *self == PruneScope::Session
    }
}

/// For `skip_serializing_if` on counts that are usually 0.
pub(super) fn is_zero(value: &u64) -> bool {
    *value == 0
}
