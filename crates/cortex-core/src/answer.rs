//! The answer to one tool call, as the dispatcher records it: shared by the
//! dispatcher and everything that answers a call for it (the session's own
//! tools, MCP calls), so none of them imports another.

use cortex_protocol::{CallSteer, STOPPED_BY_USER, ToolStatus};

/// The answer to one call.
#[derive(Debug, Clone)]
pub(crate) struct Answer {
    pub status: ToolStatus,
    pub output: String,
    pub diff: Option<String>,
    /// What an MCP tool returned besides text; it reaches the model with
    /// the result (see `Message::attachments`).
    pub attachments: Vec<cortex_protocol::Attachment>,
    /// What a refusal decided about the next reply (a repeat bars its
    /// tool; a hand-over names the tool to call), recorded with the result.
    pub steer: Option<CallSteer>,
}

impl Answer {
    pub fn ok(output: impl Into<String>) -> Self {
        Answer {
            status: ToolStatus::Ok,
            output: output.into(),
            diff: None,
            attachments: Vec::new(),
            steer: None,
        }
    }

    pub fn error(output: impl Into<String>) -> Self {
        Answer {
            status: ToolStatus::Error,
            output: output.into(),
            diff: None,
            attachments: Vec::new(),
            steer: None,
        }
    }

    /// The same answer, deciding `steer` about the next reply.
    pub fn steering(mut self, steer: Option<CallSteer>) -> Self {
        self.steer = steer;
        self
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
            attachments: Vec::new(),
            steer: None,
        }
    }
}
