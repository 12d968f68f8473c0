//! `remote`: a guest agent already running elsewhere (`cortex guest --listen
//! ADDR --token-file FILE` on that machine), reached over TCP with a bearer
//! token, over TLS when a CA certificate is given (the agent then runs with
//! `--tls-cert` and `--tls-key`). The workspace is the remote agent's own
//! `--root`; what isolation it has is whatever it was started with
//! (`describe` reports it).

use crate::{Guest, GuestProvider, GuestSpec, RuntimeError};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName};
use serde::Deserialize;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::{ClientConfig, RootCertStore};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The `remote` provider: connects to an agent that is already listening
/// (see the module doc). Each `start` opens a new connection; the agent on
/// the other side outlives it.
pub struct RemoteProvider {
    /// `host:port` of the listening agent.
    pub address: String,
    /// The bearer token the agent was started with (`--token-file`), sent
    /// first on every connection; a wrong one is refused by the agent.
    pub token: String,
    /// PEM file of the CA that signed the agent's certificate: TLS on.
    pub tls_ca: Option<PathBuf>,
}

#[derive(Deserialize)]
struct Welcome {
    ok: bool,
    #[serde(default)]
    error: Option<String>,
}

/// Why the token handshake with a remote agent failed.
#[derive(Debug, thiserror::Error)]
enum HandshakeError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("no answer to the handshake within 10 s")]
    Timeout,
    #[error("the agent refused the connection: {}", .0.as_deref().unwrap_or("no reason given"))]
    Refused(Option<String>),
    #[error("not a guest agent (it said {0:?})")]
    NotAnAgent(String),
}

impl RemoteProvider {
    /// Present the token; a connected guest, or why not.
    async fn handshake<S>(&self, stream: S) -> Result<Guest, HandshakeError>
    where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let (reader, mut writer) = tokio::io::split(stream);
        let hello = serde_json::json!({ "token": self.token }).to_string() + "\n";
        writer.write_all(hello.as_bytes()).await?;
        let mut reader = BufReader::new(reader);
        let mut line = String::new();
        tokio::time::timeout(CONNECT_TIMEOUT, reader.read_line(&mut line))
            .await
            .map_err(|_| HandshakeError::Timeout)??;
        match serde_json::from_str::<Welcome>(&line) {
            Ok(Welcome { ok: true, .. }) => Ok(Guest::connect(reader, writer, None)),
            Ok(Welcome { error, .. }) => Err(HandshakeError::Refused(error)),
            Err(_) => Err(HandshakeError::NotAnAgent(line)),
        }
    }
}

/// Why the CA file given for a remote guest cannot be used.
#[derive(Debug, thiserror::Error)]
enum CaError {
    #[error("cannot read the CA {}: {source}", path.display())]
    Read {
        path: std::path::PathBuf,
        source: rustls_pki_types::pem::Error,
    },
    #[error("bad CA {}: {source}", path.display())]
    BadPem {
        path: std::path::PathBuf,
        source: rustls_pki_types::pem::Error,
    },
    #[error("bad CA {}: {source}", path.display())]
    Rejected {
        path: std::path::PathBuf,
        source: tokio_rustls::rustls::Error,
    },
    #[error("{0}")]
    Config(#[from] tokio_rustls::rustls::Error),
}

fn tls_connector(ca: &std::path::Path) -> Result<TlsConnector, CaError> {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(ca).map_err(|source| CaError::Read {
        path: ca.to_owned(),
        source,
    })? {
        let cert = cert.map_err(|source| CaError::BadPem {
            path: ca.to_owned(),
            source,
        })?;
        roots.add(cert).map_err(|source| CaError::Rejected {
            path: ca.to_owned(),
            source,
        })?;
    }
    let config = ClientConfig::builder_with_provider(Arc::new(
        tokio_rustls::rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(TlsConnector::from(Arc::new(config)))
}

#[async_trait::async_trait]
impl GuestProvider for RemoteProvider {
    fn name(&self) -> &'static str {
        "remote"
    }

    /// The agent's own `--root`, which the harness is not told.
    fn workspace_in_guest(&self, _spec: &GuestSpec) -> Option<std::path::PathBuf> {
        None
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
        let guest = match &self.tls_ca {
            None => self.handshake(stream).await,
            Some(ca) => {
                let connector = tls_connector(ca).map_err(|e| start_error(e.to_string()))?;
                let host = self
                    .address
                    .rsplit_once(':')
                    .map_or(self.address.as_str(), |(host, _)| host)
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .to_owned();
                let name = ServerName::try_from(host)
                    .map_err(|e| start_error(format!("bad server name: {e}")))?;
                let stream = connector
                    .connect(name, stream)
                    .await
                    .map_err(|e| start_error(format!("TLS: {e}")))?;
                self.handshake(stream).await
            }
        }
        .map_err(|e| start_error(e.to_string()))?;
        if let Err(e) = guest.set_capabilities(spec.writable, spec.allow_bash).await {
            guest.close().await;
            return Err(start_error(e.to_string()));
        }
        Ok(guest)
    }
}
