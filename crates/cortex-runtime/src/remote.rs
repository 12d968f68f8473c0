//! `remote`: a guest agent already running elsewhere (`cortex guest --listen
//! ADDR --token-file FILE` on that machine), reached over TCP with a bearer
//! token. The workspace is the remote agent's own `--root`; what isolation it
//! has is whatever it was started with (`describe` reports it).

use crate::{Guest, GuestProvider, GuestSpec, RuntimeError};
use serde::Deserialize;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

pub struct RemoteProvider {
    /// `host:port` of the listening agent.
    pub address: String,
    pub token: String,
}

#[derive(Deserialize)]
struct Welcome {
    ok: bool,
    #[serde(default)]
    error: Option<String>,
}

#[async_trait::async_trait]
impl GuestProvider for RemoteProvider {
    fn name(&self) -> &'static str {
        "remote"
    }

    async fn start(&self, spec: &GuestSpec) -> Result<Guest, RuntimeError> {
        let start_error = |reason: String| RuntimeError::Start {
            program: format!("remote guest at {}", self.address),
            reason,
        };
        let stream = tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(&self.address))
            .await
            .map_err(|_| start_error("no connection within 10 s".to_owned()))?
            .map_err(|e| start_error(e.to_string()))?;
        let _ = stream.set_nodelay(true);
        let (reader, mut writer) = stream.into_split();
        let hello = serde_json::json!({ "token": self.token }).to_string() + "\n";
        writer
            .write_all(hello.as_bytes())
            .await
            .map_err(|e| start_error(e.to_string()))?;
        let mut reader = BufReader::new(reader);
        let mut line = String::new();
        tokio::time::timeout(CONNECT_TIMEOUT, reader.read_line(&mut line))
            .await
            .map_err(|_| start_error("no answer to the handshake within 10 s".to_owned()))?
            .map_err(|e| start_error(e.to_string()))?;
        match serde_json::from_str::<Welcome>(&line) {
            Ok(Welcome { ok: true, .. }) => {}
            Ok(Welcome { error, .. }) => {
                return Err(start_error(format!(
                    "the agent refused the connection: {}",
                    error.unwrap_or_else(|| "no reason given".to_owned())
                )));
            }
            Err(_) => return Err(start_error(format!("not a guest agent (it said {line:?})"))),
        }
        let guest = Guest::connect(reader, writer, None);
        if let Err(e) = guest.set_capabilities(spec.writable, spec.allow_bash).await {
            guest.close().await;
            return Err(start_error(e.to_string()));
        }
        Ok(guest)
    }
}
