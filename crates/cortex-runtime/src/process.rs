use crate::{Guest, GuestProvider, GuestSpec, RuntimeError};
use std::path::PathBuf;

/// The guest agent as an ordinary child process in the workspace folder, with
/// an environment built from the allow-list only. No isolation beyond that.
pub struct ProcessProvider {
    pub program: PathBuf,
    pub args: Vec<String>,
}

#[async_trait::async_trait]
impl GuestProvider for ProcessProvider {
    fn name(&self) -> &'static str {
        "process"
    }

    async fn start(&self, spec: &GuestSpec) -> Result<Guest, RuntimeError> {
        let _ = spec;
        unimplemented!()
    }
}
