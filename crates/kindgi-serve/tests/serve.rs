//! The serve loop against real sockets on loopback: slowloris, idle keep-alive, a stalled
//! body, the connection caps and the bounded drain, each with short limits.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use kindgi_serve::{BodyTimeout, CancellationToken, Drained, Limits, TimedBody, serve};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::task::JoinHandle;

/// Long enough that a limit under test is the only one that can fire.
const LONG: Duration = Duration::from_secs(30);
/// The bound that tells "closed" from "never closed".
const HANG: Duration = Duration::from_secs(10);

fn limits() -> Limits {
    Limits {
        header_read_timeout: LONG,
        idle_timeout: LONG,
        body_timeout: Some(LONG),
        write_timeout: LONG,
        max_connections: 100,
        max_connections_per_ip: 100,
        shutdown_grace: LONG,
    }
}

async fn app(
    req: Request<TimedBody<hyper::body::Incoming>>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let path = req.uri().path().to_owned();
    if path == "/slow" {
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let (status, body) = match req.into_body().collect().await {
        Ok(body) => (StatusCode::OK, format!("{path} {}", body.to_bytes().len())),
        Err(e) => (StatusCode::BAD_REQUEST, e.to_string()),
    };
    let mut res = Response::new(Full::new(Bytes::from(body)));
    *res.status_mut() = status;
    Ok(res)
}

struct Server {
    addr: SocketAddr,
    stop: CancellationToken,
    done: JoinHandle<Drained>,
}

async fn start(limits: Limits) -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = CancellationToken::new();
    let body_limit = limits.body_timeout.unwrap();
    let service = BodyTimeout::new(service_fn(app), body_limit, |_headers: &http::HeaderMap| {
        let mut res = Response::new(Full::new(Bytes::from_static(b"body timeout")));
        *res.status_mut() = StatusCode::REQUEST_TIMEOUT;
        res
    });
    let done = tokio::spawn(serve(listener, service, limits, stop.clone()));
    Server { addr, stop, done }
}

async fn connect(addr: SocketAddr) -> TcpStream {
    TcpStream::connect(addr).await.unwrap()
}

/// Reads until the server closes the connection; what it sent, or `None` if it did not
/// close within [`HANG`].
async fn until_closed(stream: &mut TcpStream) -> Option<String> {
    let mut got = Vec::new();
    let read = async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    };
    tokio::time::timeout(HANG, read).await.ok()?;
    Some(String::from_utf8_lossy(&got).into_owned())
}

/// One `GET path` on a fresh connection; the status line.
async fn get(addr: SocketAddr, path: &str) -> String {
    let mut s = connect(addr).await;
    let req = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let answer = until_closed(&mut s).await.expect("the answer never ended");
    answer.lines().next().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn slowloris_headers_are_cut_off_after_the_header_timeout() {
    let server = start(Limits {
        header_read_timeout: Duration::from_millis(300),
        ..limits()
    })
    .await;
    let mut s = connect(server.addr).await;
    s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    // Keep trickling header bytes, as a slowloris client does.
    let started = Instant::now();
    let mut closed_by_server = false;
    while started.elapsed() < HANG {
        if s.write_all(b"X-A: b\r\n").await.is_err() {
            closed_by_server = true;
            break;
        }
        let mut buf = [0u8; 64];
        match tokio::time::timeout(Duration::from_millis(100), s.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => {
                closed_by_server = true;
                break;
            }
            _ => {}
        }
    }
    assert!(closed_by_server, "a trickled head was never cut off");
    assert_eq!(get(server.addr, "/health").await, "HTTP/1.1 200 OK");
}

#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed() {
    let server = start(Limits {
        idle_timeout: Duration::from_millis(300),
        ..limits()
    })
    .await;
    let mut s = connect(server.addr).await;
    s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut buf = [0u8; 4096];
    let n = s.read(&mut buf).await.unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200 OK"));
    // Kept alive, then nothing more: the server closes it (the header timeout is 30 s).
    let rest = until_closed(&mut s).await;
    assert_eq!(
        rest.as_deref(),
        Some(""),
        "the idle connection was never closed"
    );
}

#[tokio::test]
async fn a_slow_request_is_not_cut_by_the_idle_timeout() {
    let server = start(Limits {
        idle_timeout: Duration::from_millis(200),
        ..limits()
    })
    .await;
    // /slow takes 500 ms: busy, so not idle.
    assert_eq!(get(server.addr, "/slow").await, "HTTP/1.1 200 OK");
}

#[tokio::test]
async fn a_body_that_stops_midway_gets_408_after_the_body_timeout() {
    let server = start(Limits {
        body_timeout: Some(Duration::from_millis(300)),
        ..limits()
    })
    .await;
    let mut s = connect(server.addr).await;
    s.write_all(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789")
        .await
        .unwrap();
    let answer = until_closed(&mut s)
        .await
        .expect("a stalled body was never answered");
    assert!(
        answer.starts_with("HTTP/1.1 408 Request Timeout"),
        "{answer}"
    );
    assert!(answer.contains("connection: close"), "{answer}");
    assert!(answer.ends_with("body timeout"), "{answer}");
    // A body that arrives in time is read as usual.
    let mut s = connect(server.addr).await;
    s.write_all(
        b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc",
    )
    .await
    .unwrap();
    let answer = until_closed(&mut s).await.unwrap();
    assert!(
        answer.starts_with("HTTP/1.1 200 OK") && answer.ends_with("/echo 3"),
        "{answer}"
    );
}

/// Is `s` closed by the server, with nothing sent?
async fn refused(s: &mut TcpStream) -> bool {
    let _ = s
        .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        .await;
    until_closed(s).await.is_some_and(|got| got.is_empty())
}

#[tokio::test]
async fn connections_over_the_global_cap_are_closed_and_health_stays_reachable_under_it() {
    let cap = 200;
    let server = start(Limits {
        max_connections: cap,
        max_connections_per_ip: cap,
        ..limits()
    })
    .await;
    // Hold cap - 1 silent sockets; a fresh connection is still served.
    let mut held = Vec::new();
    for _ in 0..cap - 1 {
        held.push(connect(server.addr).await);
    }
    assert_eq!(get(server.addr, "/health").await, "HTTP/1.1 200 OK");
    // Fill the last slot: the next one is closed unread.
    held.push(connect(server.addr).await);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut over = connect(server.addr).await;
    assert!(
        refused(&mut over).await,
        "a connection over the cap was served"
    );
    // A slot given back is a slot for the next client.
    drop(held.pop());
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(get(server.addr, "/health").await, "HTTP/1.1 200 OK");
}

async fn connect_from(source: [u8; 4], addr: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::from((source, 0))).unwrap();
    socket.connect(addr).await.unwrap()
}

#[tokio::test]
async fn the_per_ip_cap_refuses_one_address_and_serves_another() {
    let server = start(Limits {
        max_connections_per_ip: 2,
        ..limits()
    })
    .await;
    let _a = connect_from([127, 0, 0, 1], server.addr).await;
    let _b = connect_from([127, 0, 0, 1], server.addr).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut third = connect_from([127, 0, 0, 1], server.addr).await;
    assert!(
        refused(&mut third).await,
        "a third connection from one address was served"
    );
    let mut other = connect_from([127, 0, 0, 2], server.addr).await;
    other
        .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let answer = until_closed(&mut other).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
}

#[tokio::test]
async fn shutdown_finishes_within_grace_with_half_sent_requests_open() {
    let server = start(Limits {
        shutdown_grace: Duration::from_secs(1),
        ..limits()
    })
    .await;
    let mut half_sent = Vec::new();
    for _ in 0..3 {
        let mut s = connect(server.addr).await;
        s.write_all(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Le")
            .await
            .unwrap();
        half_sent.push(s);
    }
    let mut body_pending = connect(server.addr).await;
    body_pending
        .write_all(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n01")
        .await
        .unwrap();
    // A complete request in flight when the stop comes finishes normally.
    let mut in_flight = connect(server.addr).await;
    in_flight
        .write_all(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    server.stop.cancel();
    let answer = until_closed(&mut in_flight)
        .await
        .expect("in-flight request hung");
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
    assert!(answer.ends_with("/slow 0"), "{answer}");
    let drained = tokio::time::timeout(HANG, server.done)
        .await
        .expect("the drain never ended")
        .unwrap();
    assert_eq!(
        drained.dropped, 4,
        "the half-sent requests were dropped at the grace"
    );
    for s in &mut half_sent {
        assert!(
            until_closed(s).await.is_some(),
            "a half-sent request kept its socket"
        );
    }
    // Nothing listens any more.
    assert!(TcpStream::connect(server.addr).await.is_err());
}

#[tokio::test]
async fn shutdown_with_only_idle_connections_needs_no_grace() {
    let server = start(limits()).await;
    let mut idle = connect(server.addr).await;
    idle.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut buf = [0u8; 1024];
    let _ = idle.read(&mut buf).await.unwrap();
    server.stop.cancel();
    // The grace is 30 s; an idle connection closes at once, so this ends well before.
    let drained = tokio::time::timeout(HANG, server.done)
        .await
        .expect("drain waited on an idle connection")
        .unwrap();
    assert_eq!(drained.dropped, 0);
}
