//! The guest wire protocol: JSON lines between the harness and the guest
//! agent, over stdio, a Unix socket or TCP.
//!
//! The harness sends [`GuestRequest`]s, each with an id it chooses. The guest
//! answers each with zero or more `delta` responses (streamed command output)
//! and exactly one `result`. Requests may be in flight concurrently; responses
//! carry the id they answer.

use crate::event::{OutputStream, ToolStatus};
use crate::message::Attachment;
use crate::tools::{ToolArgs, WebFetchArgs};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One request from the harness to the guest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GuestRequest {
    /// Chosen by the harness, unique among its requests in flight; every
    /// response to this request carries it.
    pub id: u64,
    /// What to do.
    #[serde(flatten)]
    pub op: GuestOp,
}

/// What a request asks the guest to do (`"op"` on the wire).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum GuestOp {
    /// Set what this guest may do. A read-only guest refuses `write_file`,
    /// `edit_file` and `bash` itself, whatever the harness asks.
    Capabilities {
        /// `write_file` and `edit_file` are allowed.
        writable: bool,
        /// `bash` and `spawn` are allowed.
        bash: bool,
    },
    /// Run one workspace tool with its arguments, parsed and checked once
    /// by the harness's dispatcher (`{"op":"tool","tool":…,"args":{…}}`).
    Tool(ToolArgs),
    /// Kill the process group of every running command (or only the one
    /// started by request `target`). Without a target, background
    /// processes (`spawn` with `background`) are spared.
    Stop {
        /// The request whose command to kill; every command when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target: Option<u64>,
    },
    /// Start a long-lived process (a stdio MCP server) in the workspace
    /// with the environment `bash` gets plus `env`. Each line it writes
    /// comes back as one `delta` (newline stripped), and the `result` once
    /// it has exited. Needs the `bash` capability. `stop` with this
    /// request's id as `target` kills it and everything it started.
    Spawn {
        /// The program, looked up in the guest's `PATH`.
        command: String,
        /// Its arguments.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        args: Vec<String>,
        /// Added to the environment `bash` gets.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        env: BTreeMap<String, String>,
        /// A background command of the session (`bash` with `background`):
        /// its input is empty, output comes back in chunks as written
        /// (not lines), `stop` without a target spares it (a stopped turn
        /// leaves a dev server running), and its whole process group is
        /// killed once its first process exits.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        background: bool,
        /// A process with a framing of its own (a language server's
        /// `Content-Length` messages): its output comes back in chunks as
        /// written (a message need not end in a newline), and `input`
        /// writes its text exactly, adding no newline.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        raw: bool,
    },
    /// Write `line` and a newline (nothing added for a `raw` process) to
    /// the standard input of the process that request `target` spawned;
    /// answered once written.
    Input {
        /// The `spawn` request whose process reads it.
        target: u64,
        /// The line, without its newline.
        line: String,
    },
    /// Fetch a web page (`web_fetch`) from the guest's network namespace.
    /// The guest checks the URL and every redirect itself: http(s) only,
    /// and no loopback, private or link-local address unless the host is
    /// on `allow` (the user's `[network] allow`, which only the harness
    /// sends). Output as [`ToolOutcome::output`]; `stop` cancels it.
    WebFetch {
        /// The model's arguments, parsed by the harness.
        args: WebFetchArgs,
        /// Hosts (`docs.rs`, `*.rust-lang.org`, `127.0.0.1:8080`) whose
        /// addresses may be private or loopback.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        allow: Vec<String>,
    },
    /// Liveness check; answered with an ok result.
    Ping,
    /// What the agent runs in: an ok result whose output is a JSON object
    /// `{"sandbox": null | {"layers", "warnings", "setup_ms"}}`.
    Describe,
}

/// One response from the guest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GuestResponse {
    /// The request it answers.
    pub id: u64,
    /// A streamed piece or the final answer.
    #[serde(flatten)]
    pub reply: GuestReply,
}

/// What a response carries (`"type"` on the wire).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum GuestReply {
    /// Output a command (or a spawned process) wrote, as it arrives; zero
    /// or more before the result.
    Delta {
        /// Which stream it came from.
        stream: OutputStream,
        /// The text, valid UTF-8 (a character split across reads is held
        /// back).
        text: String,
    },
    /// The final answer; exactly one per request.
    Result(ToolOutcome),
}

/// How a request ended: one of three, never two at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeStatus {
    /// It did what was asked (a command exited with 0).
    Ok,
    /// It failed: refused by the guest, a tool error, a command that exited
    /// non-zero or timed out. The output says why.
    #[default]
    Error,
    /// A `stop` request killed it before it finished.
    Stopped,
}

impl From<OutcomeStatus> for ToolStatus {
    fn from(status: OutcomeStatus) -> Self {
        match status {
            OutcomeStatus::Ok => ToolStatus::Ok,
            OutcomeStatus::Error => ToolStatus::Error,
            OutcomeStatus::Stopped => ToolStatus::Stopped,
        }
    }
}

/// The final answer to one request
/// (`{"type":"result","status":"ok"|"error"|"stopped","output":…}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ToolOutcome {
    /// How it ended.
    pub status: OutcomeStatus,
    /// What the model reads: file lines, matches, command output, or an error.
    pub output: String,
    /// Unified diff of a write or edit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// Exit code of a command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// What a tool returned besides text: the image a `read_file` of an
    /// image file read ([`Attachment::Image`]), which `output` describes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
}

impl ToolOutcome {
    /// A successful answer with `output`.
    pub fn ok(output: impl Into<String>) -> Self {
        ToolOutcome {
            status: OutcomeStatus::Ok,
            output: output.into(),
            ..Default::default()
        }
    }

    /// A failed answer; `output` says why.
    pub fn error(output: impl Into<String>) -> Self {
        ToolOutcome {
            status: OutcomeStatus::Error,
            output: output.into(),
            ..Default::default()
        }
    }

    /// Whether it ended [`OutcomeStatus::Ok`].
    pub fn is_ok(&self) -> bool {
        self.status == OutcomeStatus::Ok
    }

    /// Whether a `stop` request ended it ([`OutcomeStatus::Stopped`]).
    pub fn is_stopped(&self) -> bool {
        self.status == OutcomeStatus::Stopped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_and_reply_lines() {
        let req = GuestRequest {
            id: 9,
            op: GuestOp::Tool(ToolArgs::Bash(crate::BashArgs {
                command: "ls".into(),
                timeout_ms: None,
                background: None,
            })),
        };
        let line = serde_json::to_string(&req).expect("serialize");
        assert_eq!(
            line,
            r#"{"id":9,"op":"tool","tool":"bash","args":{"command":"ls"}}"#
        );
        assert_eq!(
            serde_json::from_str::<GuestRequest>(&line).expect("parse"),
            req
        );
        let reply = GuestResponse {
            id: 9,
            reply: GuestReply::Result(ToolOutcome::ok("hi")),
        };
        let line = serde_json::to_string(&reply).expect("serialize");
        assert_eq!(
            line,
            r#"{"id":9,"type":"result","status":"ok","output":"hi"}"#
        );
        assert_eq!(
            serde_json::from_str::<GuestResponse>(&line).expect("parse"),
            reply
        );
    }
}
