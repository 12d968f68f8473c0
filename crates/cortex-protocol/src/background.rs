//! Background processes: what a session says of each command it runs in the
//! background (`bash` with `background: true`), in the core, over the API
//! (`GET /v1/sessions/{id}/processes`) and in clients' lists.

use serde::{Deserialize, Serialize};

/// One background process of a live session, running or ended.
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessInfo {
    /// Its handle in the session, e.g. `bg1` (what `bash_output`,
    /// `bash_kill` and the API's kill name).
    pub id: String,
    /// The command as the model wrote it.
    pub command: String,
    /// When it started (RFC 3339, UTC).
    pub started_at: String,
    /// How long it has run (until its end, once ended), in milliseconds.
    pub running_ms: u64,
    /// Whether it still runs.
    pub running: bool,
    /// How much it has printed (stdout and stderr), in bytes; the harness
    /// keeps the last 256 KiB of it.
    pub output_bytes: u64,
    /// Its exit code, once it exited by itself with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// How it ended (`exited`, `killed by bash_kill`, `killed by the user`,
    /// `the guest ended`, …); `None` while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
}
