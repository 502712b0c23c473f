//! Findings of the fuzz targets (docs/fuzzing.md) about the pack client, each with its
//! reproducer inline, against real loopback servers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use kindgi_pack_client::client::{CallOptions, PackCallError, PackClient, PackClientConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const CALL: &str = r#"{"v":2,"kind":"invoke","tool":{"id":"p.echo"},"input":{"message":"hi"},"ctx":{"tenantId":"t","runId":"r","secrets":{"API_KEY":"s3cret"}}}"#;

/// A server that counts its connections and answers nothing useful (it stands for "somewhere
/// else": any host a redirect could name).
async fn witness() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/elsewhere", listener.local_addr().unwrap());
    let seen = Arc::new(AtomicUsize::new(0));
    let count = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf).await;
            let _ = s
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}")
                .await;
        }
    });
    (url, seen)
}

/// A "pack service" that answers every request with `status` and `location: target`.
async fn redirecting(status: u16, target: String) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let mut buf = vec![0u8; 65536];
            let _ = s.read(&mut buf).await;
            let answer = format!(
                "HTTP/1.1 {status} Moved\r\nlocation: {target}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            );
            let _ = s.write_all(answer.as_bytes()).await;
        }
    });
    url
}

/// Fuzz finding (pack_client, reproducer: status byte 0x12 → `HTTP/1.1 307` with a
/// `location` elsewhere): the client followed redirects, re-sending the call — its
/// `kindgi-pack-token` header and its body with `ctx.secrets` — to whatever host the answer
/// named. A pack client talks to its own service only: a 3xx is an answer, not a pointer.
#[tokio::test]
async fn a_redirect_is_not_followed_so_the_token_and_secrets_stay_home() {
    for status in [301u16, 302, 303, 307, 308] {
        let (elsewhere, seen) = witness().await;
        let base = redirecting(status, elsewhere).await;
        let mut config = PackClientConfig::new(base, "pack-token-0123456789");
        config.default_timeout = Duration::from_secs(5);
        config.max_retries = 0;
        let client = PackClient::new(config).unwrap();
        let outcome = client
            .invoke_raw(
                bytes::Bytes::from_static(CALL.as_bytes()),
                &CallOptions::default(),
            )
            .await;
        assert_eq!(
            seen.load(Ordering::SeqCst),
            0,
            "a {status} made the client send the call elsewhere"
        );
        match outcome {
            Err(PackCallError::ServerFailed { status: s, .. }) => assert_eq!(s, status),
            other => panic!("a {status} answer came back as {other:?}"),
        }
        let info = client.info().await;
        assert_eq!(seen.load(Ordering::SeqCst), 0, "info followed a {status}");
        assert!(info.is_err(), "info took a {status} for an answer");
    }
}
