use crate::{Guest, GuestProvider, GuestSpec, RuntimeError};
use cortex_guest::GuestConfig;

/// Size of each in-memory pipe's buffer.
const PIPE_BYTES: usize = 256 * 1024;

/// The guest agent on a task of this process, over an in-memory pipe. Same
/// protocol, no process start: for tests and benchmarks.
pub struct InProcessProvider;

#[async_trait::async_trait]
impl GuestProvider for InProcessProvider {
    fn name(&self) -> &'static str {
        "in-process"
    }

    async fn start(&self, spec: &GuestSpec) -> Result<Guest, RuntimeError> {
        crate::process::check_workspace(self.name(), spec)?;
        let (harness_side, guest_side) = tokio::io::duplex(PIPE_BYTES);
        let (guest_reader, guest_writer) = tokio::io::split(guest_side);
        let config = GuestConfig {
            root: spec.workspace.clone(),
            bash_env: spec.env.clone(),
            sandbox: None,
            quotas: None,
            home: None,
            memory_watch: None,
        };
        // Ends when the harness side closes (the Guest is closed or dropped).
        tokio::spawn(async move {
            if let Err(e) = cortex_guest::serve(guest_reader, guest_writer, config).await {
                tracing::debug!("in-process guest ended: {e}");
            }
        });
        let (reader, writer) = tokio::io::split(harness_side);
        let guest = Guest::connect(reader, writer, None);
        guest
            .set_capabilities(spec.writable, spec.allow_bash)
            .await?;
        Ok(guest)
    }
}
