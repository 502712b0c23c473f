//! Pack protocol v2, client side: the pack client (`PackClient::invoke_raw`, `info`) against a
//! loopback server that answers with the input's bytes. An input starting `HTTP/` is sent
//! verbatim; otherwise its first byte picks a status and the rest is a well-formed answer's
//! body. Invariants:
//! - every call ends (Ok or a typed error) within the client's own deadline plus grace;
//! - a well-formed answer is classified by its status: 200 is `Ok` exactly when the body is
//!   a protocol response (else `BadResponse`), 503 is `Unavailable`, another 4xx `Refused`,
//!   anything else `ServerFailed`; only the first two families say the call did not run;
//! - the client talks to its own service only: a redirect is never followed (a witness
//!   server elsewhere on loopback must see no request, so the pack token never leaves).
#![no_main]

use kindgi_fuzz::pack::Scripted;
use kindgi_fuzz::{runtime, within_budget};
use kindgi_pack_client::client::{CallOptions, PackCallError, PackClient, PackClientConfig};
use kindgi_spec::pack_protocol::Response;
use std::net::TcpListener;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

const STATUSES: [u16; 20] = [
    200, 200, 200, 200, 200, 400, 401, 404, 405, 413, 415, 421, 429, 500, 502, 503, 504, 301, 307,
    308,
];
const CALL: &[u8] = br#"{"v":2,"kind":"invoke","tool":{"id":"fuzz.echo"},"input":{"message":"hi"},"ctx":{"tenantId":"t","runId":"r"}}"#;

struct Fixture {
    client: PackClient,
    witness: String,
    witnessed: &'static AtomicUsize,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        static SEEN: AtomicUsize = AtomicUsize::new(0);
        let witness = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
        let witness_addr = witness.local_addr().unwrap_or_else(|e| panic!("addr: {e}"));
        std::thread::spawn(move || {
            for _ in witness.incoming().flatten() {
                SEEN.fetch_add(1, Ordering::SeqCst);
            }
        });
        let scripted = Scripted::get();
        let mut config =
            PackClientConfig::new(format!("http://{}", scripted.addr), "fuzz-token-0123456789");
        config.default_timeout = Duration::from_millis(1500);
        config.answer_grace = Duration::from_millis(200);
        config.connect_timeout = Duration::from_millis(500);
        config.max_retries = 1;
        config.max_retry_after = Duration::from_millis(5);
        config.pool_max_idle_per_host = 0;
        config.max_response_bytes = 16 * 1024;
        let client = PackClient::new(config).unwrap_or_else(|e| panic!("client: {e}"));
        Fixture {
            client,
            witness: format!("http://{witness_addr}/elsewhere"),
            witnessed: &SEEN,
        }
    })
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let f = fixture();
    let (bytes, status, body) = if data.starts_with(b"HTTP/") {
        (data.to_vec(), None, &data[..0])
    } else {
        let (first, body) = data.split_first().map_or((0, &data[..0]), |(a, b)| (*a, b));
        let status = STATUSES[usize::from(first) % STATUSES.len()];
        let mut head = format!(
            "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nretry-after: 0\r\n",
            body.len()
        );
        if (300..400).contains(&status) {
            head.push_str(&format!("location: {}\r\n", f.witness));
        }
        head.push_str("connection: close\r\n\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(body);
        (bytes, Some(status), body)
    };
    Scripted::get().set(&bytes);
    let before = f.witnessed.load(Ordering::SeqCst);
    let outcome = within_budget("invoke_raw", || {
        runtime().block_on(
            f.client
                .invoke_raw(bytes::Bytes::from_static(CALL), &CallOptions::default()),
        )
    });
    let info = within_budget("info", || runtime().block_on(f.client.info()));
    assert_eq!(
        f.witnessed.load(Ordering::SeqCst),
        before,
        "the client followed a redirect away from its service (answer: {})",
        String::from_utf8_lossy(&bytes)
    );
    if let Err(e) = &info {
        assert!(!e.to_string().is_empty());
    }
    let Some(status) = status else {
        if let Err(e) = &outcome {
            let _ = e.may_have_run();
        }
        return;
    };
    let parses = serde_json::from_slice::<Response>(body).is_ok();
    match (status, &outcome) {
        (200, Ok(_)) => assert!(parses, "Ok for a body that is no response"),
        (200, Err(PackCallError::BadResponse { .. })) => {
            assert!(!parses, "BadResponse for a response")
        }
        (200, Err(PackCallError::TooLarge { .. })) => assert!(body.len() > 16 * 1024),
        (503, Err(e @ PackCallError::Unavailable { .. })) => assert!(!e.may_have_run()),
        (400..=499, Err(e @ PackCallError::Refused { status: s, .. })) => {
            assert_eq!(*s, status);
            assert!(!e.may_have_run());
        }
        (s, Err(e @ PackCallError::ServerFailed { status: got, .. }))
            if !(400..=499).contains(&s) && s != 503 =>
        {
            assert_eq!(*got, s);
            assert!(e.may_have_run());
        }
        (s, other) => panic!("a well-formed {s} answer came back as {other:?}"),
    }
});
