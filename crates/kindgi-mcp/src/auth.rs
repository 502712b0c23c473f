//! How a registered MCP endpoint signs in (platform-api.md §6; `OA:MCPEndpointAuth`): the plan
//! its registration names — a `secretRef` sent as a bearer, or `auth` with `basic`,
//! `header` or `oauth2-client-credentials` — and the headers that plan sends once its secrets
//! are resolved ([`AuthHeaders`], which never print).
//!
//! The plan names secrets by reference only; whoever connects resolves them (the API for a
//! sync or a proxy request, a run for a tool call) and hands the values to
//! [`AuthPlan::headers`]. For client credentials that asks the token endpoint for an access
//! token (RFC 6749 §4.4) and keeps it in memory until shortly before it expires — never
//! stored — so a burst of calls asks once. Every HTTP request of both transports then carries
//! the headers, and a connection that carries them follows no redirect.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use kindgi_tools::egress::EgressPolicy;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// A secret an endpoint's sign-in needs, by reference (`{envName, name}`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SecretName {
    pub env_name: String,
    pub name: String,
}

/// How an endpoint signs in, as registered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthPlan {
    /// Nothing sent.
    None,
    /// `secretRef`: `Authorization: Bearer <secret>`.
    Bearer(SecretName),
    /// `Authorization: Basic base64(<username>:<secret>)`.
    Basic {
        username: String,
        secret: SecretName,
    },
    /// `<name>: <prefix><secret>` each.
    Headers(Vec<HeaderPlan>),
    /// An access token from `token_url`, sent as the bearer.
    ClientCredentials(ClientCredentials),
}

/// One header a `header` auth sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderPlan {
    pub name: String,
    pub prefix: String,
    pub secret: SecretName,
}

/// An `oauth2-client-credentials` auth.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCredentials {
    pub token_url: String,
    pub client_id: String,
    pub secret: SecretName,
    pub scope: Option<String>,
    pub audience: Option<String>,
    /// `client_secret_post`; otherwise `client_secret_basic` (the default).
    pub post: bool,
}

/// The resolved values of a plan's secrets, by reference.
pub type SecretValues = HashMap<SecretName, String>;

/// Why a plan's headers could not be made. Its text never carries a secret or a token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    #[error("secret \"{}\" (env \"{}\") was not resolved", .0.name, .0.env_name)]
    Unresolved(SecretName),
    #[error("a header of the endpoint's auth is not a valid HTTP header: {0}")]
    BadHeader(String),
    #[error("the token endpoint {url} could not be asked for an access token: {why}")]
    TokenRequest { url: String, why: String },
    #[error("the token endpoint {url} refused the client credentials: {why}")]
    TokenRefused { url: String, why: String },
}

/// Headers an endpoint's connection sends on every HTTP request; `Debug` prints names only.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct AuthHeaders(Vec<(String, String)>);

impl AuthHeaders {
    /// `Authorization: Bearer <token>`.
    pub fn bearer(token: &str) -> AuthHeaders {
        AuthHeaders(vec![("authorization".into(), format!("Bearer {token}"))])
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `(lower-case name, value)` pairs, to send.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }

    /// A digest of names and values: tells connections made with different credentials
    /// apart without keeping the credentials as a key.
    pub fn fingerprint(&self) -> Option<String> {
        if self.0.is_empty() {
            return None;
        }
        let mut h = Sha256::new();
        for (n, v) in &self.0 {
            h.update(n.as_bytes());
            h.update([0]);
            h.update(v.as_bytes());
            h.update([0]);
        }
        Some(hex_digest(&h.finalize()))
    }

    /// As reqwest headers (each marked sensitive, so no log prints it).
    pub fn header_map(&self) -> Result<reqwest::header::HeaderMap, AuthError> {
        let mut map = reqwest::header::HeaderMap::new();
        for (n, v) in &self.0 {
            let name = reqwest::header::HeaderName::from_bytes(n.as_bytes())
                .map_err(|_| AuthError::BadHeader(n.clone()))?;
            let mut value = reqwest::header::HeaderValue::from_str(v)
                .map_err(|_| AuthError::BadHeader(n.clone()))?;
            value.set_sensitive(true);
            map.insert(name, value);
        }
        Ok(map)
    }
}

impl std::fmt::Debug for AuthHeaders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|(n, _)| format!("{n}: <redacted>")))
            .finish()
    }
}

fn hex_digest(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn secret_name(v: Option<&Value>) -> SecretName {
    let text = |key: &str| {
        v.and_then(|r| r.get(key))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    SecretName {
        env_name: text("envName"),
        name: text("name"),
    }
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_owned)
}

impl AuthPlan {
    /// The plan of an endpoint's registration body (already validated when it was
    /// registered: a field that is missing here reads as empty and fails to resolve).
    pub fn of_registration(body: &Value) -> AuthPlan {
        if let Some(reference) = body.get("secretRef") {
            return AuthPlan::Bearer(secret_name(Some(reference)));
        }
        let Some(auth) = body.get("auth") else {
            return AuthPlan::None;
        };
        match auth.get("scheme").and_then(Value::as_str) {
            Some("basic") => AuthPlan::Basic {
                username: text(auth, "username").unwrap_or_default(),
                secret: secret_name(auth.get("secretRef")),
            },
            Some("header") => AuthPlan::Headers(
                auth.get("headers")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(|h| HeaderPlan {
                        name: text(h, "name").unwrap_or_default().to_ascii_lowercase(),
                        prefix: text(h, "prefix").unwrap_or_default(),
                        secret: secret_name(h.get("secretRef")),
                    })
                    .collect(),
            ),
            Some("oauth2-client-credentials") => AuthPlan::ClientCredentials(ClientCredentials {
                token_url: text(auth, "tokenUrl").unwrap_or_default(),
                client_id: text(auth, "clientId").unwrap_or_default(),
                secret: secret_name(auth.get("secretRef")),
                scope: text(auth, "scope"),
                audience: text(auth, "audience"),
                post: auth.get("clientAuth").and_then(Value::as_str) == Some("client_secret_post"),
            }),
            _ => AuthPlan::None,
        }
    }

    /// The secrets the plan needs, in the order it names them.
    pub fn secrets(&self) -> Vec<&SecretName> {
        match self {
            AuthPlan::None => Vec::new(),
            AuthPlan::Bearer(s) | AuthPlan::Basic { secret: s, .. } => vec![s],
            AuthPlan::Headers(hs) => hs.iter().map(|h| &h.secret).collect(),
            AuthPlan::ClientCredentials(c) => vec![&c.secret],
        }
    }

    /// Short words for what the plan is, for messages (`secretRef`, `auth (basic)`, …).
    pub fn describe(&self) -> &'static str {
        match self {
            AuthPlan::None => "no auth",
            AuthPlan::Bearer(_) => "secretRef",
            AuthPlan::Basic { .. } => "auth (basic)",
            AuthPlan::Headers(_) => "auth (header)",
            AuthPlan::ClientCredentials(_) => "auth (oauth2-client-credentials)",
        }
    }

    /// The headers to connect with, given the resolved `values` of [`Self::secrets`]. Client
    /// credentials ask the token endpoint (under `egress`, or reuse a token asked for
    /// earlier); the access token is also returned, so the caller can mask it.
    pub async fn headers(
        &self,
        values: &SecretValues,
        egress: &EgressPolicy,
    ) -> Result<(AuthHeaders, Option<String>), AuthError> {
        let value = |s: &SecretName| {
            values
                .get(s)
                .map(String::as_str)
                .ok_or_else(|| AuthError::Unresolved(s.clone()))
        };
        let headers = match self {
            AuthPlan::None => AuthHeaders::default(),
            AuthPlan::Bearer(s) => AuthHeaders::bearer(value(s)?),
            AuthPlan::Basic { username, secret } => {
                let pair = format!("{username}:{}", value(secret)?);
                AuthHeaders(vec![(
                    "authorization".into(),
                    format!("Basic {}", BASE64.encode(pair)),
                )])
            }
            AuthPlan::Headers(hs) => AuthHeaders(
                hs.iter()
                    .map(|h| Ok((h.name.clone(), format!("{}{}", h.prefix, value(&h.secret)?))))
                    .collect::<Result<_, AuthError>>()?,
            ),
            AuthPlan::ClientCredentials(c) => {
                let token = access_token(c, value(&c.secret)?, egress).await?;
                return Ok((AuthHeaders::bearer(&token), Some(token)));
            }
        };
        headers.header_map()?;
        Ok((headers, None))
    }
}

/// How long before its expiry a token is asked for again.
const REFRESH_MARGIN: Duration = Duration::from_secs(60);
/// A token whose answer names no `expires_in` is used this long.
const DEFAULT_TOKEN_LIFE: Duration = Duration::from_secs(300);
/// The longest a token is kept, whatever its `expires_in` says.
const MAX_TOKEN_LIFE: Duration = Duration::from_secs(24 * 3600);
/// The most tokens kept at once (one per distinct client and secret).
const MAX_TOKENS: usize = 1024;
/// Bounds a token request, connect to last byte.
const TOKEN_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest token answer read.
const MAX_TOKEN_ANSWER: usize = 64 * 1024;

/// Access tokens by a digest of everything that asked for them (the secret included, so a
/// rotated secret asks again).
static TOKENS: LazyLock<Mutex<HashMap<String, (String, Instant)>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

fn cache_key(c: &ClientCredentials, secret: &str) -> String {
    let mut h = Sha256::new();
    for part in [
        c.token_url.as_str(),
        c.client_id.as_str(),
        secret,
        c.scope.as_deref().unwrap_or(""),
        c.audience.as_deref().unwrap_or(""),
        if c.post { "post" } else { "basic" },
    ] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    hex_digest(&h.finalize())
}

fn cached(key: &str) -> Option<String> {
    let tokens = TOKENS.lock().ok()?;
    let (token, until) = tokens.get(key)?;
    (Instant::now() < *until).then(|| token.clone())
}

fn keep(key: String, token: &str, life: Duration) {
    let Ok(mut tokens) = TOKENS.lock() else {
        return;
    };
    let now = Instant::now();
    if tokens.len() >= MAX_TOKENS {
        tokens.retain(|_, (_, until)| *until > now);
        if tokens.len() >= MAX_TOKENS {
            tokens.clear();
        }
    }
    let usable = life.min(MAX_TOKEN_LIFE).saturating_sub(REFRESH_MARGIN);
    tokens.insert(key, (token.to_owned(), now + usable));
}

/// RFC 6749 §2.3.1: the client id and secret form-urlencoded, then joined for Basic.
fn form_encode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

async fn access_token(
    c: &ClientCredentials,
    secret: &str,
    egress: &EgressPolicy,
) -> Result<String, AuthError> {
    let key = cache_key(c, secret);
    if let Some(token) = cached(&key) {
        return Ok(token);
    }
    let fail = |why: String| AuthError::TokenRequest {
        url: c.token_url.clone(),
        why,
    };
    let url = url::Url::parse(&c.token_url).map_err(|e| fail(format!("bad URL: {e}")))?;
    egress.check_url(&url).map_err(|e| fail(e.to_string()))?;
    let client = egress
        .client_builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(TOKEN_TIMEOUT)
        .build()
        .map_err(|e| fail(format!("the HTTP client could not be set up: {e}")))?;
    let mut form: Vec<(&str, &str)> = vec![("grant_type", "client_credentials")];
    if let Some(scope) = &c.scope {
        form.push(("scope", scope));
    }
    if let Some(audience) = &c.audience {
        form.push(("audience", audience));
    }
    let mut request = client
        .post(url)
        .header(reqwest::header::ACCEPT, "application/json");
    if c.post {
        form.push(("client_id", &c.client_id));
        form.push(("client_secret", secret));
    } else {
        let pair = format!("{}:{}", form_encode(&c.client_id), form_encode(secret));
        let mut value =
            reqwest::header::HeaderValue::from_str(&format!("Basic {}", BASE64.encode(pair)))
                .map_err(|_| fail("the client id cannot be sent in a header".into()))?;
        value.set_sensitive(true);
        request = request.header(reqwest::header::AUTHORIZATION, value);
    }
    let body: String = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form)
        .finish();
    let response = request
        .header(
            reqwest::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .body(body)
        .send()
        .await
        .map_err(|e| fail(crate::sse::describe(&e)))?;
    let status = response.status();
    let answer = read_capped(response).await.map_err(fail)?;
    let parsed: Value = serde_json::from_slice(&answer).unwrap_or(Value::Null);
    if !status.is_success() {
        let why = match (text(&parsed, "error"), text(&parsed, "error_description")) {
            (Some(e), Some(d)) => format!("{status}: {e} ({d})"),
            (Some(e), None) => format!("{status}: {e}"),
            _ => format!("{status}"),
        };
        return Err(AuthError::TokenRefused {
            url: c.token_url.clone(),
            why: why.replace(secret, "***"),
        });
    }
    let token = text(&parsed, "access_token")
        .filter(|t| !t.is_empty())
        .ok_or_else(|| fail("its answer has no `access_token`".into()))?;
    if let Some(kind) = text(&parsed, "token_type")
        && !kind.eq_ignore_ascii_case("bearer")
    {
        return Err(fail(format!(
            "its answer's token_type is \"{kind}\", not Bearer"
        )));
    }
    let life = parsed
        .get("expires_in")
        .and_then(Value::as_u64)
        .map_or(DEFAULT_TOKEN_LIFE, Duration::from_secs);
    keep(key, &token, life);
    Ok(token)
}

async fn read_capped(mut response: reqwest::Response) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("its answer could not be read: {}", crate::sse::describe(&e)))?
    {
        if out.len() + chunk.len() > MAX_TOKEN_ANSWER {
            return Err(format!(
                "its answer is larger than {MAX_TOKEN_ANSWER} bytes"
            ));
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn name(n: &str) -> SecretName {
        SecretName {
            env_name: "local".into(),
            name: n.into(),
        }
    }

    #[test]
    fn plans_of_registrations() {
        let bearer = json!({"secretRef": {"envName": "local", "name": "T"}});
        assert_eq!(
            AuthPlan::of_registration(&bearer),
            AuthPlan::Bearer(name("T"))
        );
        let basic = json!({"auth": {"scheme": "basic", "username": "wp",
                           "secretRef": {"envName": "local", "name": "P"}}});
        assert_eq!(
            AuthPlan::of_registration(&basic).secrets(),
            vec![&name("P")]
        );
        let headers = json!({"auth": {"scheme": "header", "headers": [
            {"name": "X-Api-Key", "secretRef": {"envName": "local", "name": "K"}},
            {"name": "X-Api-Secret", "prefix": "S ", "secretRef": {"envName": "local", "name": "S"}}]}});
        assert_eq!(AuthPlan::of_registration(&headers).secrets().len(), 2);
        assert_eq!(AuthPlan::of_registration(&json!({})), AuthPlan::None);
    }

    #[tokio::test]
    async fn headers_of_resolved_plans_never_print() {
        let values: SecretValues = [(name("P"), "s3cr3t".to_owned())].into_iter().collect();
        let plan = AuthPlan::Basic {
            username: "wp".into(),
            secret: name("P"),
        };
        let (h, token) = plan.headers(&values, &EgressPolicy::open()).await.unwrap();
        assert_eq!(token, None);
        let sent: Vec<_> = h.iter().collect();
        assert_eq!(
            sent,
            vec![(
                "authorization",
                format!("Basic {}", BASE64.encode("wp:s3cr3t")).as_str()
            )]
        );
        assert!(!format!("{h:?}").contains("s3cr3t"));
        let missing = AuthPlan::Bearer(name("Q"));
        assert_eq!(
            missing.headers(&values, &EgressPolicy::open()).await,
            Err(AuthError::Unresolved(name("Q")))
        );
    }
}
