//! A real HTTP server on 127.0.0.1:0 for the HTTP synthesizer tests, and tool helpers.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{OriginalUri, Path, Query};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use kindgi_spec::ToolManifest;
use kindgi_tools::context::SecretResolver;
use kindgi_tools::http::HttpSynthesizer;
use kindgi_tools::synth::SpecSynthesizer;
use kindgi_tools::{BoxFuture, Handler, HandlerError, ToolContext};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The test server: its base URL and how many requests it has seen.
pub struct Server {
    pub port: u16,
    pub hits: Arc<AtomicUsize>,
}

impl Server {
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
    /// The same server under another host name (a different origin for redirects).
    pub fn base_localhost(&self) -> String {
        format!("http://localhost:{}", self.port)
    }
    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

/// Echoes the request: method, the raw URI as received, headers (lower-case), body text.
async fn echo(
    method: Method,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut hs = serde_json::Map::new();
    for (name, value) in &headers {
        hs.insert(
            name.as_str().to_owned(),
            Value::String(value.to_str().unwrap_or("").to_owned()),
        );
    }
    axum::Json(json!({
        "method": method.as_str(),
        "uri": uri.to_string(),
        "headers": hs,
        "body": String::from_utf8_lossy(&body),
    }))
    .into_response()
}

async fn status(Path(code): Path<u16>) -> Response {
    (StatusCode::from_u16(code).unwrap(), "rate limit exceeded").into_response()
}

async fn redirect(Query(q): Query<HashMap<String, String>>) -> Response {
    let code = q.get("code").and_then(|c| c.parse().ok()).unwrap_or(302u16);
    Response::builder()
        .status(code)
        .header(header::LOCATION, q.get("to").cloned().unwrap_or_default())
        .body(Body::empty())
        .unwrap()
}

/// Redirects to itself forever.
async fn loop_redirect() -> Response {
    Response::builder()
        .status(302)
        .header(header::LOCATION, "/loop")
        .body(Body::empty())
        .unwrap()
}

async fn stall_headers() -> Response {
    tokio::time::sleep(Duration::from_secs(60)).await;
    "late".into_response()
}

/// Sends the headers and a first chunk at once, then never finishes the body.
async fn stall_body() -> Response {
    let stream = futures::stream::unfold(0u8, |state| async move {
        if state == 0 {
            Some((
                Ok::<_, std::io::Error>(Bytes::from_static(b"{\"partial\":")),
                1,
            ))
        } else {
            futures::future::pending::<()>().await;
            None
        }
    });
    Response::builder()
        .status(200)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from_stream(stream))
        .unwrap()
}

async fn big(Query(q): Query<HashMap<String, String>>) -> Response {
    let n: usize = q.get("n").and_then(|n| n.parse().ok()).unwrap_or(1024);
    let chunked = q.contains_key("chunked");
    let text = format!("\"{}\"", "x".repeat(n.saturating_sub(2)));
    if chunked {
        // No Content-Length: the cap has to be enforced while streaming.
        let stream = futures::stream::iter(
            text.into_bytes()
                .chunks(8192)
                .map(|c| Ok::<_, std::io::Error>(Bytes::copy_from_slice(c)))
                .collect::<Vec<_>>(),
        );
        Response::builder()
            .status(200)
            .body(Body::from_stream(stream))
            .unwrap()
    } else {
        text.into_response()
    }
}

/// A 500 whose body is `at` letters, then `times` copies of the request's `X-API-Key`
/// header, then `-tail` (a server that echoes the credential in its error page).
async fn secret_at(Query(q): Query<HashMap<String, usize>>, headers: HeaderMap) -> Response {
    let key = headers
        .get("x-api-key")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let at = q.get("at").copied().unwrap_or(0);
    let times = q.get("times").copied().unwrap_or(1);
    let body = format!("{}{}-tail", "x".repeat(at), key.repeat(times));
    (StatusCode::INTERNAL_SERVER_ERROR, body).into_response()
}

pub async fn start() -> Server {
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let app = Router::new()
        .route("/status/{code}", any(status))
        .route("/text", get(|| async { "plain text body" }))
        .route("/notjson", get(|| async { "not json {{" }))
        .route("/empty", get(|| async { "" }))
        .route(
            "/json",
            get(|| async { axum::Json(json!({"number": 42, "title": "ok", "extra": true})) }),
        )
        .route(
            "/found-json",
            get(|| async {
                Response::builder()
                    .status(302)
                    .header(header::CONTENT_TYPE, "application/json")
                    .body(Body::from("{\"moved\":false}"))
                    .unwrap()
            }),
        )
        .route("/redirect", any(redirect))
        .route("/loop", any(loop_redirect))
        .route("/stall-headers", any(stall_headers))
        .route("/stall-body", any(stall_body))
        .route("/big", get(big))
        .route("/secret-at", get(secret_at))
        .fallback(echo)
        .layer(axum::middleware::from_fn(
            move |req, next: axum::middleware::Next| {
                let counter = counter.clone();
                async move {
                    counter.fetch_add(1, Ordering::SeqCst);
                    next.run(req).await
                }
            },
        ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    Server { port, hits }
}

/// A manifest around an http `spec`, with an open input schema and extra manifest fields.
pub fn manifest(id: &str, spec: Value, extra: Value) -> ToolManifest {
    let mut m = json!({
        "id": id,
        "description": "test http tool",
        "version": "1.0.0",
        "input": {"type": "object"},
        "output": {},
        "spec": spec,
    });
    if let (Some(obj), Value::Object(extra)) = (m.as_object_mut(), extra) {
        obj.extend(extra);
    }
    serde_json::from_value(m).unwrap()
}

pub fn synthesize(m: &ToolManifest) -> Result<Handler, String> {
    HttpSynthesizer::new().synthesize(m, m.spec.as_ref().unwrap())
}

pub fn handler(id: &str, spec: Value) -> Handler {
    synthesize(&manifest(id, spec, json!({}))).unwrap()
}

pub async fn call(h: &Handler, input: Value) -> Result<Value, HandlerError> {
    h(input, ToolContext::for_test()).await
}

pub fn failed(r: Result<Value, HandlerError>) -> String {
    match r {
        Err(HandlerError::Failed(m)) => m,
        other => panic!("expected a handler failure, got {other:?}"),
    }
}

/// A secret resolver that records every reference it is asked for.
#[derive(Debug, Default)]
pub struct Secrets {
    pub value: String,
    pub calls: Mutex<Vec<(String, String)>>,
}

impl SecretResolver for Secrets {
    fn resolve<'a>(
        &'a self,
        env_name: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<String, String>> {
        self.calls
            .lock()
            .unwrap()
            .push((env_name.to_owned(), name.to_owned()));
        let value = self.value.clone();
        Box::pin(async move {
            if value.is_empty() {
                Err(format!("no secret \"{name}\" here"))
            } else {
                Ok(value)
            }
        })
    }
}
