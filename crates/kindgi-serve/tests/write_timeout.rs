//! The write timeout and the response deadline against real sockets on loopback: a client
//! that stops reading an endless body gets its connection closed; one that reads a slow
//! body to its end is never cut off; a response with a deadline is cut off at it, read or
//! not. Short limits throughout.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Request, Response};
use hyper::body::{Body, Frame};
use hyper::service::service_fn;
use kindgi_serve::{CancellationToken, Limits, ResponseDeadline, serve};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// Long enough that a limit under test is the only one that can fire.
const LONG: Duration = Duration::from_secs(30);
/// The bound that tells "closed" from "never closed".
const HANG: Duration = Duration::from_secs(10);

/// A body of `chunks` chunks of `size` bytes (`None`: endless), one every `every` (`None`:
/// as fast as it is polled).
struct Chunks {
    left: Option<usize>,
    size: usize,
    tick: Option<tokio::time::Interval>,
}

impl Body for Chunks {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if self.left == Some(0) {
            return Poll::Ready(None);
        }
        if let Some(tick) = self.tick.as_mut()
            && tick.poll_tick(cx).is_pending()
        {
            return Poll::Pending;
        }
        if let Some(n) = self.left.as_mut() {
            *n -= 1;
        }
        Poll::Ready(Some(Ok(Frame::data(Bytes::from(vec![b'x'; self.size])))))
    }
}

async fn app(req: Request<hyper::body::Incoming>) -> Result<Response<Chunks>, Infallible> {
    let every = |ms| Some(tokio::time::interval(Duration::from_millis(ms)));
    let (left, size, tick) = match req.uri().path() {
        "/endless" | "/endless-with-deadline" => (None, 64 * 1024, None),
        "/slow" => (Some(20), 16, every(100)),
        _ => (Some(1), 2, None),
    };
    let mut res = Response::new(Chunks { left, size, tick });
    if req.uri().path() == "/endless-with-deadline" {
        let at = Instant::now() + Duration::from_millis(300);
        res.extensions_mut().insert(ResponseDeadline(at));
    }
    Ok(res)
}

async fn start(limits: Limits) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(serve(
        listener,
        service_fn(app),
        limits,
        CancellationToken::new(),
    ));
    addr
}

fn limits() -> Limits {
    Limits {
        header_read_timeout: LONG,
        idle_timeout: LONG,
        body_timeout: None,
        write_timeout: LONG,
        ..Limits::default()
    }
}

/// A connection with a small receive buffer, so that a client that does not read fills
/// it, and the server's send buffer, quickly.
async fn connect(addr: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    socket.connect(addr).await.unwrap()
}

/// Reads until the server closes the connection: how many bytes came, or `None` if it was
/// still open after [`HANG`] (an endless body keeps coming).
async fn until_closed(stream: &mut TcpStream) -> Option<usize> {
    let mut got = 0;
    let read = async {
        let mut buf = [0u8; 64 * 1024];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got += n,
            }
        }
    };
    tokio::time::timeout(HANG, read).await.ok()?;
    Some(got)
}

async fn request(addr: SocketAddr, path: &str) -> TcpStream {
    let mut s = connect(addr).await;
    let req = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    s
}

#[tokio::test]
async fn a_client_that_stops_reading_is_closed_after_the_write_timeout() {
    let addr = start(Limits {
        write_timeout: Duration::from_millis(300),
        ..limits()
    })
    .await;
    let mut s = request(addr, "/endless").await;
    // Read nothing for longer than 1.5 × the write timeout; then the server must have
    // closed the connection (an open one would stream forever).
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        until_closed(&mut s).await.is_some(),
        "a stalled reader kept its connection past the write timeout"
    );
}

#[tokio::test]
async fn a_slow_body_read_to_its_end_is_not_cut_off() {
    let addr = start(Limits {
        write_timeout: Duration::from_millis(200),
        ..limits()
    })
    .await;
    // 20 chunks, one every 100 ms: the body is pending most of the time, but every write
    // goes out, so it runs ten write timeouts long and still ends whole.
    let mut s = request(addr, "/slow").await;
    let mut got = Vec::new();
    tokio::time::timeout(HANG, s.read_to_end(&mut got))
        .await
        .expect("the slow body never ended")
        .unwrap();
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 200 OK"), "{text}");
    assert!(
        text.ends_with("0\r\n\r\n"),
        "the chunked body was cut off: {text}"
    );
    assert_eq!(text.matches(&"x".repeat(16)).count(), 20, "{text}");
}

#[tokio::test]
async fn a_response_deadline_closes_the_connection_whether_or_not_the_client_reads() {
    // The write timeout is long: only the deadline can close these.
    let addr = start(limits()).await;
    let mut stalled = request(addr, "/endless-with-deadline").await;
    let mut reading = request(addr, "/endless-with-deadline").await;
    assert!(
        until_closed(&mut reading).await.is_some(),
        "a read response outlived its deadline"
    );
    assert!(
        until_closed(&mut stalled).await.is_some(),
        "a stalled response outlived its deadline"
    );
}
