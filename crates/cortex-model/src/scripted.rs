//! A deterministic model that replays a JSON script. For tests and
//! benchmarks only; never a default.
//!
//! Script format:
//! ```json
//! {"responses": [
//!   {"text": "Reading it.", "tool_calls": [{"name": "read_file", "arguments": {"path": "a.rs"}}]},
//!   {"tool_calls": [{"name": "bash", "arguments": "{not json"}]},
//!   {"error": {"status": 500, "body": "boom"}},
//!   {"text": "Done."}
//! ]}
//! ```
//! Each `stream` call plays the next response. `arguments` may be an object
//! (serialised) or a string (sent raw, to script malformed calls). Optional
//! per response: `id` per call, `delay_ms` before the first event,
//! `chunk_delay_ms` between events, `hang: true` (never finishes; for Stop
//! tests), `cut_after` (events to send before failing with a cut stream).

use crate::{ModelError, ModelProvider, ModelRequest, ModelStream};

pub struct ScriptedProvider {
    _private: (),
}

impl ScriptedProvider {
    pub fn from_json(json: &str) -> Result<Self, ModelError> {
        let _ = json;
        unimplemented!()
    }

    pub fn from_file(path: &std::path::Path) -> Result<Self, ModelError> {
        let _ = path;
        unimplemented!()
    }

    /// The requests this provider has received, in order (for tests).
    pub fn requests(&self) -> Vec<ModelRequest> {
        unimplemented!()
    }
}

impl ModelProvider for ScriptedProvider {
    fn describe(&self) -> String {
        "scripted".to_owned()
    }

    fn stream(&self, request: ModelRequest) -> ModelStream {
        let _ = request;
        unimplemented!()
    }
}
