use std::path::PathBuf;
use tokio::io::{AsyncRead, AsyncWrite};

#[derive(Debug, Clone)]
pub struct GuestConfig {
    /// The workspace root.
    pub root: PathBuf,
    /// Exactly the environment `bash` commands get.
    pub bash_env: Vec<(String, String)>,
}

/// Serve requests from `reader` until it closes; then kill whatever still
/// runs and return.
pub async fn serve<R, W>(reader: R, writer: W, config: GuestConfig) -> std::io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let _ = (reader, writer, config);
    unimplemented!()
}
