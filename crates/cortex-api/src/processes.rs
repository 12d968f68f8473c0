//! Bodies of `/v1/sessions/{id}/processes`: the session's background
//! commands (`bash` with `background: true`), and killing one.

use cortex_protocol::ProcessInfo;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The answer to `GET /v1/sessions/{id}/processes`: every background
/// command of the live session, running or ended, in the order started (a
/// session that is not live has none: its guest is gone).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ProcessList {
    /// The commands, oldest first.
    pub processes: Vec<ProcessInfo>,
}
