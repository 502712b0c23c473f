//! An in-process client for tests: requests go straight into the router with
//! `tower::ServiceExt::oneshot`, no socket.

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::BodyExt as _;
use serde_json::Value;
use tower::ServiceExt as _;

/// A response, read whole.
#[derive(Debug)]
pub struct TestResponse {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: bytes::Bytes,
}

impl TestResponse {
    /// The body as JSON (`Value::Null` when it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The envelope's `error.code`, if any.
    pub fn error_code(&self) -> Option<String> {
        self.json()
            .pointer("/error/code")
            .and_then(Value::as_str)
            .map(str::to_owned)
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// The in-process client.
#[derive(Debug, Clone)]
pub struct TestClient {
    pub app: Router,
    pub token: Option<String>,
}

impl TestClient {
    pub fn new(app: Router, token: Option<String>) -> TestClient {
        TestClient { app, token }
    }

    /// Send a request; `body` is sent verbatim with `Content-Type: application/json`.
    pub async fn send(
        &self,
        method: Method,
        uri: &str,
        body: Option<Vec<u8>>,
        headers: &[(&str, &str)],
    ) -> TestResponse {
        let mut builder = Request::builder().method(method).uri(uri);
        if let Some(t) = &self.token {
            builder = builder.header("authorization", format!("Bearer {t}"));
        }
        for (k, v) in headers {
            builder = builder.header(*k, *v);
        }
        let request = match body {
            Some(b) => builder
                .header("content-type", "application/json")
                .body(Body::from(b)),
            None => builder.body(Body::empty()),
        };
        let request = match request {
            Ok(r) => r,
            Err(e) => {
                return TestResponse {
                    status: StatusCode::BAD_REQUEST,
                    headers: HeaderMap::new(),
                    body: e.to_string().into(),
                };
            }
        };
        let response = match self.app.clone().oneshot(request).await {
            Ok(r) => r,
            Err(never) => match never {},
        };
        let (parts, body) = response.into_parts();
        let body = body
            .collect()
            .await
            .map(|c| c.to_bytes())
            .unwrap_or_default();
        TestResponse {
            status: parts.status,
            headers: parts.headers,
            body,
        }
    }

    pub async fn get(&self, uri: &str) -> TestResponse {
        self.send(Method::GET, uri, None, &[]).await
    }

    pub async fn post_json(&self, uri: &str, body: &Value) -> TestResponse {
        self.send(Method::POST, uri, Some(body.to_string().into_bytes()), &[])
            .await
    }

    pub async fn post(&self, uri: &str) -> TestResponse {
        self.send(Method::POST, uri, None, &[]).await
    }
}
