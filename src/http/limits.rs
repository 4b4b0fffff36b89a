//! Limits that keep a flood of clients from exhausting the daemon: a cap on open
//! connections, a time limit on request heads, a time limit on a client that takes
//! nothing of what it is sent, and a cap on request bodies.
//!
//! Over the connection cap, a new connection is answered at once with `503 Service
//! Unavailable` and closed (never queued: a client that holds its connection open, as
//! an SSE viewer does, must not hold up the next arbiter's call indefinitely). A
//! connection whose request head (request line and headers) is not in within the header
//! timeout is closed, so a client that opens connections and sends nothing, or dribbles
//! its headers a byte at a time, cannot hold the connection slots; the timer runs again
//! while an idle keep-alive connection waits for its next request. Once a request is
//! in, the response may stream as long as it likes (SSE, WebSocket), as long as the
//! client takes it: a connection whose writes make no progress for the stall timeout (a
//! viewer that stopped reading, its socket buffers full) is closed, so it cannot hold
//! its slot for good either.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::Request;
use axum::http::StatusCode;
use axum::http::header::CONTENT_LENGTH;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::serve::Listener;
use axum::{Json, Router};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Sleep;

/// The largest request body accepted (413 above it); the API's bodies are a few
/// hundred bytes.
pub const MAX_BODY: usize = 64 * 1024;

/// Answers `413 Payload Too Large` at once to a request that declares a body over
/// [`MAX_BODY`], without waiting for it (bodies without a declared length are cut off
/// at the limit as they are read).
pub async fn refuse_large_bodies(request: Request, next: Next) -> Response {
    let declared = request
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|length| length > MAX_BODY as u64) {
        let error = format!("request body over {MAX_BODY} bytes");
        return (
            StatusCode::PAYLOAD_TOO_LARGE,
            Json(serde_json::json!({ "error": error })),
        )
            .into_response();
    }
    next.run(request).await
}

/// Time a client has to send a request head unless told otherwise.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Time a client may take nothing of what it is sent unless told otherwise: far longer
/// than any network hiccup, short enough that stuck viewers do not pile up.
pub const DEFAULT_STALL_TIMEOUT: Duration = Duration::from_secs(60);

/// The limits of one HTTP server.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Most connections served at once; more are answered 503 and closed.
    pub max_connections: usize,
    /// Time a client has to send a request head; then its connection is closed.
    pub header_timeout: Duration,
    /// Time a connection's writes may make no progress; then it is closed.
    pub stall_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            stall_timeout: DEFAULT_STALL_TIMEOUT,
        }
    }
}

/// Serves `router` on the connections `listener` accepts (HTTP/1.1, with upgrades for
/// WebSocket), closing any connection whose request head takes longer than
/// `header_timeout` to arrive.
pub async fn serve(mut listener: LimitedListener, router: Router, header_timeout: Duration) {
    loop {
        let (io, addr) = listener.accept().await;
        let service = TowerToHyperService::new(router.clone());
        tokio::spawn(async move {
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout);
            let connection = builder
                .serve_connection(TokioIo::new(io), service)
                .with_upgrades();
            if let Err(e) = connection.await {
                tracing::debug!(%addr, "HTTP connection ended: {e}");
            }
        });
    }
}

/// Open connections served at once unless told otherwise.
pub const DEFAULT_MAX_CONNECTIONS: usize = 10_000;

/// What an over-limit connection is told before it is closed.
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\n\
content-type: text/plain\r\ncontent-length: 28\r\nretry-after: 5\r\n\r\n\
too many connections; retry\n";

/// A TCP listener that serves at most `max` connections at once, each closed once its
/// writes make no progress for `stall_timeout`.
pub struct LimitedListener {
    inner: TcpListener,
    permits: Arc<Semaphore>,
    stall_timeout: Duration,
}

impl LimitedListener {
    /// Wraps `inner`, serving at most `max` connections at once.
    pub fn new(inner: TcpListener, max: usize, stall_timeout: Duration) -> Self {
        LimitedListener {
            inner,
            permits: Arc::new(Semaphore::new(max)),
            stall_timeout,
        }
    }
}

impl Listener for LimitedListener {
    type Io = Limited;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Limited, SocketAddr) {
        loop {
            let (stream, addr) = match self.inner.accept().await {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors and the like: wait instead of spinning.
                    tracing::warn!("HTTP accept failed: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    continue;
                }
            };
            match self.permits.clone().try_acquire_owned() {
                Ok(permit) => {
                    // Live events are small writes in quick succession: with Nagle's
                    // algorithm one waits for the client's delayed ACK of the one
                    // before (40 ms on Linux).
                    if let Err(e) = stream.set_nodelay(true) {
                        tracing::debug!(%addr, "cannot set TCP_NODELAY: {e}");
                    }
                    return (
                        Limited {
                            stream,
                            _permit: permit,
                            stall_timeout: self.stall_timeout,
                            stalled: None,
                        },
                        addr,
                    );
                }
                Err(_) => {
                    tracing::debug!(%addr, "too many HTTP connections: refused");
                    // Best effort and never blocking: a client that does not read
                    // gets the close alone.
                    let _ = stream.try_write(BUSY);
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }
}

/// A served connection; its slot frees when it closes.
pub struct Limited {
    stream: TcpStream,
    _permit: OwnedSemaphorePermit,
    stall_timeout: Duration,
    /// Runs out `stall_timeout` after a write first found the socket full, unless a
    /// write gets through first.
    stalled: Option<Pin<Box<Sleep>>>,
}

impl Limited {
    /// `written` (a write's outcome), with the stall timer kept: cleared by any
    /// progress, started when the socket is full, and a timed-out error (which closes
    /// the connection) once it runs out.
    fn watch<T>(
        &mut self,
        cx: &mut Context<'_>,
        written: Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        if written.is_ready() {
            self.stalled = None;
            return written;
        }
        let timeout = self.stall_timeout;
        let stalled = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        if stalled.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        self.stalled = None;
        let secs = timeout.as_secs();
        tracing::debug!("HTTP client took nothing for {secs} s: closing its connection");
        Poll::Ready(Err(io::Error::new(
            io::ErrorKind::TimedOut,
            format!("client took nothing for {secs} s"),
        )))
    }
}

impl AsyncRead for Limited {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Limited {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.stream).poll_write(cx, buf);
        self.watch(cx, written)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let flushed = Pin::new(&mut self.stream).poll_flush(cx);
        self.watch(cx, flushed)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        self.watch(cx, written)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}
