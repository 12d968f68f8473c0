use crate::{Guest, GuestProvider, GuestSpec, RuntimeError};

/// The guest agent on a task of this process, over an in-memory pipe. Same
/// protocol, no process start: for tests and benchmarks.
pub struct InProcessProvider;

#[async_trait::async_trait]
impl GuestProvider for InProcessProvider {
    fn name(&self) -> &'static str {
        "in-process"
    }

    async fn start(&self, spec: &GuestSpec) -> Result<Guest, RuntimeError> {
        let _ = spec;
        unimplemented!()
    }
}
