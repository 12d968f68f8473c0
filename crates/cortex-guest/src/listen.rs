//! The agent as a network service, for guests that run elsewhere (another
//! machine, a VM, a pod): it listens on TCP and serves each connection that
//! opens with the right bearer token.
//!
//! Handshake: the client's first line is `{"token": "…"}` (at most 4 KiB,
//! within 10 s); the agent answers `{"ok": true}` and then speaks the usual
//! protocol on that connection, or `{"ok": false, "error": "unauthorized"}`,
//! logs the peer and closes. The token is compared in constant time. TLS is
//! not built in: run it over a tunnel (SSH, WireGuard) across untrusted
//! networks.

use crate::lines::{Line, read_bounded_line};
use crate::{GuestConfig, serve};
use serde::Deserialize;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

const HANDSHAKE_BYTES: usize = 4096;
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Hello {
    token: String,
}

/// Accept connections on `listener` forever; each authenticated one is
/// served on its own task.
pub async fn listen(
    listener: TcpListener,
    token: String,
    config: GuestConfig,
) -> std::io::Result<()> {
    loop {
        let (stream, peer) = listener.accept().await?;
        let (token, config) = (token.clone(), config.clone());
        tokio::spawn(async move {
            if let Err(e) = handle(stream, peer, &token, config).await {
                tracing::warn!(%peer, "connection ended: {e}");
            }
        });
    }
}

async fn handle(
    stream: TcpStream,
    peer: SocketAddr,
    token: &str,
    config: GuestConfig,
) -> std::io::Result<()> {
    let _ = stream.set_nodelay(true);
    let (reader, mut writer) = stream.into_split();
    let mut reader = BufReader::new(reader);
    let line = tokio::time::timeout(
        HANDSHAKE_TIMEOUT,
        read_bounded_line(&mut reader, HANDSHAKE_BYTES),
    )
    .await;
    let presented = match line {
        Ok(Ok(Line::Text(bytes))) => serde_json::from_slice::<Hello>(&bytes)
            .ok()
            .map(|h| h.token),
        _ => None,
    };
    if !presented.is_some_and(|p| constant_time_eq(p.as_bytes(), token.as_bytes())) {
        tracing::warn!(%peer, "refused a connection: missing or wrong token");
        writer
            .write_all(b"{\"ok\":false,\"error\":\"unauthorized\"}\n")
            .await?;
        return writer.shutdown().await;
    }
    tracing::info!(%peer, "connection authenticated");
    writer.write_all(b"{\"ok\":true}\n").await?;
    serve(reader, writer, config).await
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::constant_time_eq;

    #[test]
    fn tokens_compare_exactly() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret2"));
        assert!(!constant_time_eq(b"", b"x"));
    }
}
