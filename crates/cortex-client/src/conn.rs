//! Connections to the server: HTTP/1.1 over TCP or a Unix socket, kept open
//! and reused for short requests (an event stream holds its own).

use crate::{ClientError, Endpoint};
use bytes::Bytes;
use http::{Method, Request};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use std::sync::{Arc, Mutex, PoisonError};

/// Most idle connections kept for reuse: enough for hundreds of sessions
/// driven at once from one client (each request then skips a connect, an
/// accept and two fresh connection tasks), few enough to bound the open
/// file descriptors. An idle connection costs a socket and small buffers.
const MAX_IDLE: usize = 512;

pub(crate) type Sender = SendRequest<Full<Bytes>>;

/// Idle connections, shared by a client's clones.
#[derive(Debug, Clone, Default)]
pub(crate) struct Pool {
    idle: Arc<Mutex<Vec<Sender>>>,
}

impl Pool {
    fn take(&self) -> Option<Sender> {
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        while let Some(sender) = idle.pop() {
            if !sender.is_closed() {
                return Some(sender);
            }
        }
        None
    }

    /// Keep a connection whose response has been read in full.
    pub(crate) fn give_back(&self, sender: Sender) {
        if sender.is_closed() {
            return;
        }
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < MAX_IDLE {
            idle.push(sender);
        }
    }

    /// Send `request` on an idle connection, or a new one.
    ///
    /// A server may close an idle connection at any moment (a restart, its
    /// idle timeout), and the close can cross our next request on the wire.
    /// So a request that failed on a reused connection goes again on a new
    /// one when the server cannot have acted on it: it was never written,
    /// or writing it failed (the server never saw the whole request), or it
    /// is idempotent and no answer came. Any failure on a new connection is
    /// the caller's error.
    pub(crate) async fn send(
        &self,
        endpoint: &Endpoint,
        request: Request<Full<Bytes>>,
    ) -> Result<(hyper::Response<Incoming>, Sender), ClientError> {
        while let Some(mut sender) = self.take() {
            if sender.ready().await.is_err() {
                continue;
            }
            let again = request.clone();
            match sender.try_send_request(request).await {
                Ok(response) => return Ok((response, sender)),
                Err(mut e) => {
                    if e.take_message().is_none() && !unseen(e.error(), again.method()) {
                        return Err(ClientError::Http(e.into_error().to_string()));
                    }
                    return send_new(endpoint, again).await;
                }
            }
        }
        send_new(endpoint, request).await
    }
}

/// Whether a request that failed on a reused connection cannot have been
/// acted on, so that sending it again does not repeat it.
fn unseen(error: &hyper::Error, method: &Method) -> bool {
    let write_failed = std::error::Error::source(error)
        .and_then(|source| source.downcast_ref::<std::io::Error>())
        .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe);
    let no_answer = error.is_incomplete_message() || error.is_closed() || error.is_canceled();
    write_failed || (no_answer && method.is_idempotent())
}

async fn send_new(
    endpoint: &Endpoint,
    request: Request<Full<Bytes>>,
) -> Result<(hyper::Response<Incoming>, Sender), ClientError> {
    let mut sender = connect(endpoint).await?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| ClientError::Http(e.to_string()))?;
    Ok((response, sender))
}

/// A new connection to `endpoint`.
pub(crate) async fn connect(endpoint: &Endpoint) -> Result<Sender, ClientError> {
    let failed = |e: std::io::Error| ClientError::Connect(format!("{endpoint:?}: {e}"));
    match endpoint {
        Endpoint::Tcp(authority) => {
            let stream = tokio::net::TcpStream::connect(authority)
                .await
                .map_err(failed)?;
            let _ = stream.set_nodelay(true);
            handshake(stream).await
        }
        Endpoint::Unix(path) => {
            let stream = tokio::net::UnixStream::connect(path)
                .await
                .map_err(failed)?;
            handshake(stream).await
        }
    }
}

async fn handshake<S>(stream: S) -> Result<Sender, ClientError>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| ClientError::Http(e.to_string()))?;
    // A failure of the connection surfaces through the request or the body.
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(sender)
}

#[cfg(test)]
mod tests;
