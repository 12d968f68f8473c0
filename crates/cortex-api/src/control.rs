//! Session controls between turns: `PUT …/mode`, `POST …/compact`.

use cortex_protocol::Mode;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// `PUT /v1/sessions/{id}/mode`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SetMode {
    /// The mode the session switches to; the next turn runs in it.
    pub mode: Mode,
}

/// `POST /v1/sessions/{id}/compact`: what the compaction did, the same
/// figures as the `compaction.done` event (the protocol's
/// [`CompactionReport`](cortex_protocol::CompactionReport), whose schema is
/// named `CompactAnswer`).
pub use cortex_protocol::CompactionReport as CompactAnswer;
