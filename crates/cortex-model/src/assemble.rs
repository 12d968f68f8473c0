//! Folding a stream of [`ModelEvent`]s into one response.

use crate::{FinishReason, ModelEvent};
use cortex_protocol::ToolCallRequest;

/// A whole response, assembled.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Assembled {
    pub text: String,
    /// In the order the model started them.
    pub tool_calls: Vec<ToolCallRequest>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub finish: Option<FinishReason>,
}

/// Feed events in order; `finish` yields the response. Calls without an id
/// get one minted (`call_<index>`), so every call can be answered.
#[derive(Debug, Default)]
pub struct Assembler {
    inner: Assembled,
}

impl Assembler {
    pub fn push(&mut self, event: &ModelEvent) {
        let _ = event;
        unimplemented!()
    }

    pub fn finish(self) -> Assembled {
        self.inner
    }
}
