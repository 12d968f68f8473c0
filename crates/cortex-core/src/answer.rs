//! The answer to one tool call, as the dispatcher records it: shared by the
//! dispatcher and everything that answers a call for it (the session's own
//! tools, MCP calls), so none of them imports another.

use cortex_protocol::{STOPPED_BY_USER, ToolStatus};

/// The answer to one call.
#[derive(Debug, Clone)]
pub(crate) struct Answer {
    pub status: ToolStatus,
    pub output: String,
    pub diff: Option<String>,
}

impl Answer {
    pub fn ok(output: impl Into<String>) -> Self {
        Answer {
            status: ToolStatus::Ok,
            output: output.into(),
            diff: None,
        }
    }

    pub fn error(output: impl Into<String>) -> Self {
        Answer {
            status: ToolStatus::Error,
            output: output.into(),
            diff: None,
        }
    }

    /// A call Stop ended.
    pub fn stopped() -> Self {
        Self::with_status(ToolStatus::Stopped, STOPPED_BY_USER)
    }

    pub(crate) fn with_status(status: ToolStatus, output: impl Into<String>) -> Self {
        Answer {
            status,
            output: output.into(),
            diff: None,
        }
    }
}
