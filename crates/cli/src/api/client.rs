//! The one API client every API command uses: one address and key (from
//! [`super::address`]), one HTTP client, one request function with the official CLI's
//! headers (platform-api.md §12.1): `Accept: application/json`, `Authorization: Bearer`,
//! JSON bodies as `application/json; charset=utf-8`, `Idempotency-Key` when given, repeated
//! query parameters for arrays, and a 30 s timeout on every call.

use std::time::Duration;

use reqwest::Method;
use serde_json::Value;

use super::errors::CliError;

/// Every call's timeout.
pub const TIMEOUT: Duration = Duration::from_secs(30);
/// The largest answer read (a bigger one is a local failure, not a hang or an OOM).
pub const MAX_ANSWER_BYTES: usize = 64 * 1024 * 1024;

/// An API call's parts beyond method and path.
#[derive(Debug, Default)]
pub struct Call<'a> {
    pub query: Vec<(&'static str, String)>,
    pub body: Option<&'a Value>,
    pub idempotency_key: Option<&'a str>,
}

/// The client: base URL (no trailing `/`), key, HTTP client.
#[derive(Debug, Clone)]
pub struct ApiClient {
    pub base: String,
    token: Option<String>,
    http: reqwest::Client,
}

/// Percent-encode one path segment (everything but unreserved characters).
pub fn segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Adds `name=value` to a query when there is a value.
pub fn push(q: &mut Vec<(&'static str, String)>, name: &'static str, value: Option<String>) {
    if let Some(v) = value.filter(|v| !v.is_empty()) {
        q.push((name, v));
    }
}

impl ApiClient {
    pub fn new(base: &str, token: Option<String>) -> Result<ApiClient, CliError> {
        let http = reqwest::Client::builder()
            .no_proxy()
            .timeout(TIMEOUT)
            .user_agent(concat!("kindgi/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| CliError::Local(format!("cannot build the HTTP client: {e}")))?;
        Ok(ApiClient {
            base: base.trim_end_matches('/').to_owned(),
            token,
            http,
        })
    }

    /// Does the client send a key?
    pub fn has_token(&self) -> bool {
        self.token.is_some()
    }

    /// A request builder with the common headers.
    pub fn builder(&self, method: Method, path: &str, call: &Call<'_>) -> reqwest::RequestBuilder {
        let query: Vec<String> = call
            .query
            .iter()
            .map(|(k, v)| format!("{k}={}", segment(v)))
            .collect();
        let url = if query.is_empty() {
            format!("{}{path}", self.base)
        } else {
            format!("{}{path}?{}", self.base, query.join("&"))
        };
        let mut req = self
            .http
            .request(method, url)
            .header(reqwest::header::ACCEPT, "application/json");
        if let Some(t) = &self.token {
            req = req.bearer_auth(t);
        }
        if let Some(k) = call.idempotency_key {
            req = req.header("Idempotency-Key", k);
        }
        if let Some(b) = call.body {
            req = req
                .header(
                    reqwest::header::CONTENT_TYPE,
                    "application/json; charset=utf-8",
                )
                .body(b.to_string());
        }
        req
    }

    /// Send a call; the answer's JSON on 2xx, else the [`CliError`] it is.
    pub async fn request(
        &self,
        method: Method,
        path: &str,
        call: Call<'_>,
    ) -> Result<Value, CliError> {
        let resp = self
            .builder(method, path, &call)
            .send()
            .await
            .map_err(|e| self.network(&e))?;
        let status = resp.status().as_u16();
        let bytes = read_capped(resp).await.map_err(|e| self.network_text(&e))?;
        let value = serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
        if (200..300).contains(&status) {
            Ok(value)
        } else {
            Err(CliError::from_answer(status, &value))
        }
    }

    pub async fn get(
        &self,
        path: &str,
        query: Vec<(&'static str, String)>,
    ) -> Result<Value, CliError> {
        self.request(
            Method::GET,
            path,
            Call {
                query,
                ..Call::default()
            },
        )
        .await
    }

    /// `PATCH path` with a JSON body.
    pub async fn patch(&self, path: &str, body: &Value) -> Result<Value, CliError> {
        self.request(
            Method::PATCH,
            path,
            Call {
                body: Some(body),
                ..Call::default()
            },
        )
        .await
    }

    pub async fn post(
        &self,
        path: &str,
        body: &Value,
        idempotency_key: Option<&str>,
    ) -> Result<Value, CliError> {
        self.request(
            Method::POST,
            path,
            Call {
                body: Some(body),
                idempotency_key,
                ..Call::default()
            },
        )
        .await
    }

    fn network(&self, e: &reqwest::Error) -> CliError {
        let what = if e.is_timeout() {
            format!(
                "the API at {} did not answer within {} s",
                self.base,
                TIMEOUT.as_secs()
            )
        } else {
            format!("cannot reach the API at {}: {}", self.base, root_cause(e))
        };
        CliError::Network(what)
    }

    fn network_text(&self, e: &str) -> CliError {
        CliError::Network(format!("the API at {} answered unreadably: {e}", self.base))
    }
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// The body, at most [`MAX_ANSWER_BYTES`].
async fn read_capped(mut resp: reqwest::Response) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(|e| root_cause(&e))? {
        if out.len() + chunk.len() > MAX_ANSWER_BYTES {
            return Err(format!("the answer is over {MAX_ANSWER_BYTES} bytes"));
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}
