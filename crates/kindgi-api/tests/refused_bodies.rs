//! Issue 21 item 7: a request refused before its body is read (a bad key with a 3 MB body,
//! a multipart upload to an unknown route) gets its answer over a real socket, read by a
//! real client that is still sending, and the connection stays usable.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use kindgi_api::router;
use kindgi_store::DatabaseKind;
use serde_json::Value;

const THREE_MB: usize = 3 * 1024 * 1024;

#[tokio::test]
async fn a_bad_key_with_a_3_mb_body_reads_as_401() {
    let env = support::env(DatabaseKind::Sqlite).await;
    let served = support::serve_loopback(router(env.state.clone())).await;
    let client = reqwest::Client::new();
    for _ in 0..2 {
        let res = client
            .post(format!("{}/v1/runs", served.url))
            .bearer_auth("kg_not_a_key")
            .header("content-type", "application/json")
            .body(format!("{{\"input\":\"{}\"}}", "x".repeat(THREE_MB)))
            .send()
            .await
            .expect("the answer arrives instead of a reset");
        assert_eq!(res.status(), 401);
        let body: Value = res.json().await.unwrap();
        assert_eq!(body["error"]["code"], "auth-missing", "{body}");
    }
    served.stop().await;
}

#[tokio::test]
async fn a_multipart_upload_to_an_unknown_route_reads_as_404() {
    let env = support::env(DatabaseKind::Sqlite).await;
    let served = support::serve_loopback(router(env.state.clone())).await;
    let boundary = "kindgi-test-boundary";
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n"
    )
    .into_bytes();
    body.extend(std::iter::repeat_n(b'z', THREE_MB));
    body.extend(format!("\r\n--{boundary}--\r\n").into_bytes());
    let res = reqwest::Client::new()
        .post(format!("{}/v1/no-such-family/uploads", served.url))
        .bearer_auth(&env.acme_key)
        .header(
            "content-type",
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(body)
        .send()
        .await
        .expect("the answer arrives instead of a reset");
    assert_eq!(res.status(), 404);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["error"]["code"], "route-not-found", "{body}");
    served.stop().await;
}
