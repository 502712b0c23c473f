//! A loopback fake of a site's HTTP API for the template tests (a WooCommerce store, a
//! Drupal site): a real HTTP/1.1 server (axum) on 127.0.0.1 that answers each request with
//! what the test's `answer` function returns, and keeps every request it saw (method, path,
//! query, `Authorization`, body) for the test to assert on.
//!
//! Not in `dev_common/mod.rs`: a test file that needs it declares it with `#[path]`, so the
//! other test binaries do not build the server.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

/// One request the fake answered.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    /// The raw query string (`""` when there is none).
    pub query: String,
    pub authorization: Option<String>,
    pub content_type: Option<String>,
    pub body: String,
}

impl Seen {
    /// The body as JSON (`Null` when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
}

type Answer = dyn Fn(&Seen) -> (u16, Value) + Send + Sync;

/// A running fake; it stops with the test process.
pub struct FakeApi {
    /// `http://127.0.0.1:<port>`
    pub url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl FakeApi {
    /// Starts the fake on a free loopback port; `answer` gives each request's status and JSON
    /// body (`Null`: no body, as for a `202` or a `405`).
    pub fn start(answer: impl Fn(&Seen) -> (u16, Value) + Send + Sync + 'static) -> FakeApi {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let answer: Arc<Answer> = Arc::new(answer);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let log = seen.clone();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                let app = axum::Router::new().fallback(
                    move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
                        let (log, answer) = (log.clone(), answer.clone());
                        async move { respond(&log, &*answer, method, uri, &headers, &body) }
                    },
                );
                axum::serve(listener, app).await.unwrap();
            });
        });
        FakeApi { url, seen }
    }

    /// Every request so far, in order.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

fn respond(
    log: &Mutex<Vec<Seen>>,
    answer: &Answer,
    method: Method,
    uri: Uri,
    headers: &HeaderMap,
    body: &[u8],
) -> Response {
    let text = |name: header::HeaderName| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let seen = Seen {
        method: method.to_string(),
        path: uri.path().to_owned(),
        query: uri.query().unwrap_or("").to_owned(),
        authorization: text(header::AUTHORIZATION),
        content_type: text(header::CONTENT_TYPE),
        body: String::from_utf8_lossy(body).into_owned(),
    };
    let (status, value) = answer(&seen);
    log.lock().unwrap().push(seen);
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if value.is_null() {
        return status.into_response();
    }
    (status, axum::Json(value)).into_response()
}
