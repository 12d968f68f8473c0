//! The agent as a network service, for guests that run elsewhere (another
//! machine, a VM, a pod): it listens on TCP and serves each connection that
//! opens with the right bearer token.
//!
//! Handshake: the client's first line is `{"token": "…"}` (at most 4 KiB,
//! within 10 s); the agent answers `{"ok": true}` and then speaks the usual
//! protocol on that connection, or `{"ok": false, "error": "unauthorized"}`,
//! logs the peer and closes. The token is compared in constant time. With a
//! certificate and key (`--tls-cert`, `--tls-key`, PEM) every connection is
//! TLS first (rustls); without, use it only on a trusted network or through
//! a tunnel.

use crate::lines::{Line, read_bounded_line};
use crate::{GuestConfig, serve};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use serde::Deserialize;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

const HANDSHAKE_BYTES: usize = 4096;
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Hello {
    token: String,
}

/// Why [`tls_acceptor`] could not build an acceptor. `Display` is a message
/// for the operator.
#[derive(Debug, thiserror::Error)]
pub enum TlsSetupError {
    /// The certificate file is missing or is not a PEM certificate chain.
    #[error("cannot read the certificate {}: {source}", path.display())]
    Certificate {
        /// The file given as the certificate.
        path: PathBuf,
        /// What reading it reported.
        #[source]
        source: rustls_pki_types::pem::Error,
    },
    /// The key file is missing or is not a PEM private key.
    #[error("cannot read the key {}: {source}", path.display())]
    Key {
        /// The file given as the key.
        path: PathBuf,
        /// What reading it reported.
        #[source]
        source: rustls_pki_types::pem::Error,
    },
    /// rustls refused the pair (the key does not match, unsupported algorithm…).
    #[error("bad certificate or key: {0}")]
    Config(#[from] tokio_rustls::rustls::Error),
}

/// A TLS acceptor from a PEM certificate chain and private key.
pub fn tls_acceptor(cert: &Path, key: &Path) -> Result<TlsAcceptor, TlsSetupError> {
    let chain = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|source| TlsSetupError::Certificate {
            path: cert.to_owned(),
            source,
        })?;
    let key = PrivateKeyDer::from_pem_file(key).map_err(|source| TlsSetupError::Key {
        path: key.to_owned(),
        source,
    })?;
    let config = tokio_rustls::rustls::ServerConfig::builder_with_provider(Arc::new(
        tokio_rustls::rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .and_then(|b| b.with_no_client_auth().with_single_cert(chain, key))?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// Accept connections on `listener` forever; each authenticated one is
/// served on its own task (after a TLS handshake when `tls` is given).
pub async fn listen(
    listener: TcpListener,
    token: String,
    tls: Option<TlsAcceptor>,
    config: GuestConfig,
) -> std::io::Result<()> {
    loop {
        let (stream, peer) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        let (token, config, tls) = (token.clone(), config.clone(), tls.clone());
        tokio::spawn(async move {
            let result = match tls {
                Some(tls) => match tls.accept(stream).await {
                    Ok(stream) => handle(stream, peer, &token, config).await,
                    Err(e) => Err(e),
                },
                None => handle(stream, peer, &token, config).await,
            };
            if let Err(e) = result {
                tracing::warn!(%peer, "connection ended: {e}");
            }
        });
    }
}

async fn handle<S>(
    stream: S,
    peer: SocketAddr,
    token: &str,
    config: GuestConfig,
) -> std::io::Result<()>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (reader, mut writer) = tokio::io::split(stream);
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
