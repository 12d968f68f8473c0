//! Accepting connections under hostile clients: how many connections the
//! server holds at once, how many one peer may hold, how long a client may
//! take to send its request head and its body.
//!
//! A connection over a limit is closed at once, before a byte is read: the
//! refusal costs an `accept` and a `close`. The per-peer cap keeps one
//! client (an address over TCP, a user over the Unix socket) from taking
//! every slot, so a slow or half-open flood from one peer leaves room for
//! the others. Request heads must arrive within
//! [`ConnectionLimits::header_timeout`], and a connection with no request
//! in flight (one that opens and says nothing, or idles between requests)
//! is closed after that long too; request bodies must arrive within
//! [`ConnectionLimits::body_timeout`]. Authentication runs before the body
//! is read (the principal is extracted first), so an unauthenticated client
//! cannot make the server wait for its body either.

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::service::TowerToHyperService;
use std::collections::HashMap;
use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::watch;
use tower::ServiceExt;

/// The limits [`crate::serve_tcp`] and [`crate::serve_unix`] apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Connections held at once, all peers together.
    pub max_connections: usize,
    /// Connections one peer may hold at once.
    pub max_per_peer: usize,
    /// Time to send a request's head (also the longest a connection may sit
    /// idle between requests).
    pub header_timeout: Duration,
    /// Time to send a request's body, from the end of its head.
    pub body_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            max_connections: 512,
            max_per_peer: 128,
            header_timeout: Duration::from_secs(15),
            body_timeout: Duration::from_secs(30),
        }
    }
}

/// Who holds a connection, for the per-peer cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Peer {
    Ip(IpAddr),
    Uid(u32),
    Unknown,
}

/// A listener the serve loop can take connections from.
pub(crate) trait Accept: Send + 'static {
    type Io: AsyncRead + AsyncWrite + Unpin + Send + 'static;
    /// The next connection and its peer; errors are the listener's.
    fn accept(&self) -> impl Future<Output = std::io::Result<(Self::Io, Peer)>> + Send;
}

impl Accept for tokio::net::TcpListener {
    type Io = tokio::net::TcpStream;
    async fn accept(&self) -> std::io::Result<(Self::Io, Peer)> {
        let (io, addr) = tokio::net::TcpListener::accept(self).await?;
        Ok((io, Peer::Ip(addr.ip())))
    }
}

impl Accept for tokio::net::UnixListener {
    type Io = tokio::net::UnixStream;
    async fn accept(&self) -> std::io::Result<(Self::Io, Peer)> {
        let (io, _) = tokio::net::UnixListener::accept(self).await?;
        let peer = io.peer_cred().map_or(Peer::Unknown, |c| Peer::Uid(c.uid()));
        Ok((io, peer))
    }
}

/// Counts of open connections, total and per peer.
struct Gate {
    limits: ConnectionLimits,
    open: Mutex<(usize, HashMap<Peer, usize>)>,
}

/// One admitted connection; dropping it frees the slot.
struct Slot {
    gate: Arc<Gate>,
    peer: Peer,
}

impl Gate {
    fn admit(self: &Arc<Self>, peer: Peer) -> Option<Slot> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let (total, per_peer) = &mut *open;
        let mine = per_peer.entry(peer).or_insert(0);
        if *total >= self.limits.max_connections || *mine >= self.limits.max_per_peer {
            return None;
        }
        *total += 1;
        *mine += 1;
        Some(Slot {
            gate: Arc::clone(self),
            peer,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self
            .gate
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let (total, per_peer) = &mut *open;
        *total = total.saturating_sub(1);
        if let Some(mine) = per_peer.get_mut(&self.peer) {
            *mine = mine.saturating_sub(1);
            if *mine == 0 {
                per_peer.remove(&self.peer);
            }
        }
    }
}

/// Serve `router` on `listener` within `limits` until `shutdown` resolves;
/// then let open connections finish their requests and return.
pub(crate) async fn serve<L: Accept>(
    listener: L,
    router: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let router = router.layer(axum::middleware::from_fn(move |req, next| {
        body_deadline(limits.body_timeout, req, next)
    }));
    let gate = Arc::new(Gate {
        limits,
        open: Mutex::new((0, HashMap::new())),
    });
    let (signal_tx, signal_rx) = watch::channel(());
    let (close_tx, close_rx) = watch::channel(());
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let (io, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of file descriptors and the like: wait, then go on.
                tracing::warn!("accepting a connection failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Some(slot) = gate.admit(peer) else {
            tracing::debug!(?peer, "connection refused: over the connection limits");
            drop(io);
            continue;
        };
        let activity = Arc::new(Activity::new());
        let service = TowerToHyperService::new(counted(router.clone(), Arc::clone(&activity)));
        let io = Watched {
            io,
            activity: Arc::clone(&activity),
        };
        let signal = signal_rx.clone();
        let close = close_rx.clone();
        tokio::spawn(async move {
            serve_connection(io, service, limits.header_timeout, activity, signal).await;
            drop((slot, close));
        });
    }
    drop(listener);
    let _ = signal_tx.send(());
    drop(close_rx);
    close_tx.closed().await;
    Ok(())
}

/// One connection until it ends, the server shuts down (the request in
/// flight finishes first) or it sits idle for `idle`.
async fn serve_connection<I, S>(
    io: Watched<I>,
    service: S,
    idle: Duration,
    activity: Arc<Activity>,
    mut signal: watch::Receiver<()>,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    S: hyper::service::Service<
            Request<hyper::body::Incoming>,
            Response = Response,
            Error = std::convert::Infallible,
        > + Send
        + 'static,
    S::Future: Send + 'static,
{
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(idle);
    let conn = builder.serve_connection_with_upgrades(TokioIo::new(io), service);
    let mut conn = std::pin::pin!(conn);
    // Checked twice per period, so an idle connection lives at most 1.5×.
    let mut check = tokio::time::interval(idle / 2);
    check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(e) = result {
                    tracing::trace!("connection ended: {e}");
                }
                return;
            }
            _ = signal.changed() => conn.as_mut().graceful_shutdown(),
            _ = check.tick() => {
                if activity.idle_for(idle) {
                    tracing::debug!("closing a connection idle for {} s", idle.as_secs());
                    return;
                }
            }
        }
    }
}

/// What a connection is doing: requests in flight (until their response
/// body is sent) and when it last read a byte or finished a response.
struct Activity {
    in_flight: AtomicUsize,
    last: Mutex<Instant>,
}

impl Activity {
    fn new() -> Activity {
        Activity {
            in_flight: AtomicUsize::new(0),
            last: Mutex::new(Instant::now()),
        }
    }

    fn touch(&self) {
        *self.last.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now();
    }

    /// No request in flight and nothing read for `idle`.
    fn idle_for(&self, idle: Duration) -> bool {
        self.in_flight.load(Ordering::SeqCst) == 0
            && self
                .last
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .elapsed()
                >= idle
    }
}

/// A request in flight; dropped with its response body.
struct InFlight(Arc<Activity>);

impl InFlight {
    fn enter(activity: &Arc<Activity>) -> InFlight {
        activity.in_flight.fetch_add(1, Ordering::SeqCst);
        InFlight(Arc::clone(activity))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.touch();
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The router as one connection's service: each request counts as in
/// flight until its response body has been sent (an SSE stream for as long
/// as it runs).
fn counted(
    router: Router,
    activity: Arc<Activity>,
) -> impl tower::Service<
    Request<hyper::body::Incoming>,
    Response = Response,
    Error = std::convert::Infallible,
    Future = impl Future<Output = Result<Response, std::convert::Infallible>> + Send,
> + Clone
+ Send
+ 'static {
    tower::service_fn(move |req: Request<hyper::body::Incoming>| {
        let guard = InFlight::enter(&activity);
        let router = router.clone();
        async move {
            let response = router.oneshot(req.map(Body::new)).await?;
            Ok(response.map(|inner| {
                Body::new(Counted {
                    inner,
                    _guard: guard,
                })
            }))
        }
    })
}

/// A response body that holds its request's [`InFlight`].
struct Counted {
    inner: Body,
    _guard: InFlight,
}

impl http_body::Body for Counted {
    type Data = bytes::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.get_mut().inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// A connection's IO that notes when bytes arrive.
struct Watched<I> {
    io: I,
    activity: Arc<Activity>,
}

impl<I: AsyncRead + Unpin> AsyncRead for Watched<I> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.io).poll_read(cx, buf);
        if buf.filled().len() > before {
            this.activity.touch();
        }
        polled
    }
}

impl<I: AsyncWrite + Unpin> AsyncWrite for Watched<I> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}

/// The request body must arrive within `within` of the handler asking for
/// it; past that its stream fails, the extractor answers 400 and the
/// handler never runs.
async fn body_deadline(within: Duration, req: Request, next: Next) -> Response {
    let (parts, body) = req.into_parts();
    let deadline = tokio::time::Instant::now() + within;
    let mut stream = body.into_data_stream();
    let timed = async_stream::stream! {
        loop {
            match tokio::time::timeout_at(deadline, stream.next()).await {
                Ok(Some(chunk)) => yield chunk,
                Ok(None) => break,
                Err(_) => {
                    yield Err(axum::Error::new(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!("the request body did not arrive within {} s", within.as_secs()),
                    )));
                    break;
                }
            }
        }
    };
    next.run(Request::from_parts(parts, Body::from_stream(timed)))
        .await
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gate_caps_each_peer_and_the_total_and_frees_slots() {
        let gate = Arc::new(Gate {
            limits: ConnectionLimits {
                max_connections: 3,
                max_per_peer: 2,
                ..ConnectionLimits::default()
            },
            open: Mutex::new((0, HashMap::new())),
        });
        let (a, b) = (Peer::Uid(1), Peer::Uid(2));
        let first = gate.admit(a).expect("a's first");
        let _second = gate.admit(a).expect("a's second");
        assert!(gate.admit(a).is_none(), "a is at its cap");
        let _third = gate.admit(b).expect("b still gets in");
        assert!(gate.admit(b).is_none(), "the total is at its cap");
        drop(first);
        assert!(gate.admit(a).is_some(), "a freed a slot");
    }
}
