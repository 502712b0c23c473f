//! The declarative HTTP spec synthesizer (`spec.kind == "http"`): turns an [`HttpToolSpec`]
//! into a handler that fills the URL template from the input, resolves secrets and
//! connections, sends the request and returns the (JSON-parsed) response.
//!
//! Behaviour follows the reference synthesizer rule by rule (messages included) with these
//! deliberate differences, all on the safe side:
//! - `timeoutMs` covers the whole exchange, redirects and the response body included;
//! - the tool's `network` policy, and the host's address policy
//!   ([`EgressPolicy`](crate::egress::EgressPolicy), [`HttpSynthesizer::with_egress`]), are
//!   checked for the first request and for every redirect hop, which is why redirects are
//!   followed here by hand (at most [`MAX_REDIRECTS`]); names are checked as they resolve;
//!   auth headers are dropped when a redirect leaves the original origin;
//! - a response body larger than the cap ([`DEFAULT_MAX_RESPONSE_BYTES`]) is an error;
//! - an auth header replaces a static header of the same name whatever its case, and
//!   `Content-Type` is only defaulted when no header of that name (any case) is set.
//! - a failed answer's quoted body has the credential the call sent masked (`***`), also
//!   where the server echoes it across the quote's cut.
//!
//! All synthesized tools of one synthesizer share one pooled [`reqwest::Client`] (without an
//! address policy, the process-wide one).

mod network;
mod template;

use kindgi_spec::{
    HttpAuthSpec, HttpMethod, HttpRequestBodySpec, HttpToolSpec, ToolManifest, ToolSpec,
};
use reqwest::header::{
    AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, LOCATION,
};
use reqwest::{Method, StatusCode};
use serde_json::{Map, Value};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use url::Url;

use crate::context::ToolContext;
use crate::egress::{EgressError, EgressPolicy};
use crate::secret_mask::SecretMask;
use crate::synth::{SpecSynthesizer, SynthesizerRegistry};
use crate::tool::{Handler, HandlerError};
use network::Network;
use template::{Template, js_typeof};

/// `timeoutMs` when the spec has none.
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;
/// The largest response body a synthesized tool reads (10 MiB) unless configured otherwise.
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 10 * 1024 * 1024;
/// Redirect hops followed before giving up (the `fetch` default).
pub const MAX_REDIRECTS: usize = 20;
/// How much of a failed response's body the error quotes.
const ERROR_BODY_CHARS: usize = 512;

/// Registers the built-in `http` synthesizer (with the shared client) into `registry`.
pub fn register_builtin(registry: &SynthesizerRegistry) {
    registry.register("http", Arc::new(HttpSynthesizer::new()));
}

impl SynthesizerRegistry {
    /// A registry with the built-in kinds (`http`). Each call builds a new registry; clone
    /// one to share it. Defined here, by the built-in, so the registry does not know it.
    pub fn builtin() -> Self {
        let registry = Self::empty();
        register_builtin(&registry);
        registry
    }
}

/// The process-wide client: pooled, no automatic redirects (every hop is checked here).
fn shared_client() -> Result<reqwest::Client, String> {
    static CLIENT: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(|e| format!("the HTTP client could not be set up: {}", describe(&e)))
        })
        .clone()
}

/// The `http` [`SpecSynthesizer`].
#[derive(Debug, Clone)]
pub struct HttpSynthesizer {
    client: Result<reqwest::Client, String>,
    egress: EgressPolicy,
    max_response_bytes: usize,
    max_redirects: usize,
}

impl Default for HttpSynthesizer {
    fn default() -> Self {
        Self::new()
    }
}

impl HttpSynthesizer {
    /// Uses the shared pooled client and the default caps.
    pub fn new() -> Self {
        Self {
            client: shared_client(),
            egress: EgressPolicy::open(),
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            max_redirects: MAX_REDIRECTS,
        }
    }

    /// Uses `client`, which must not follow redirects itself
    /// (`redirect::Policy::none()`), or the network policy could not see the hops.
    pub fn with_client(client: reqwest::Client) -> Self {
        Self {
            client: Ok(client),
            ..Self::new()
        }
    }

    /// Applies the host's address policy to every connection the tools make: literal hosts
    /// and each redirect hop are checked before the request, names as they resolve (with a
    /// client of its own whose resolver filters; an open policy keeps the shared client).
    pub fn with_egress(mut self, egress: EgressPolicy) -> Self {
        if !egress.is_open() {
            self.client = egress
                .client_builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(|e| format!("the HTTP client could not be set up: {}", describe(&e)));
        }
        self.egress = egress;
        self
    }

    /// Caps the response body a tool reads.
    pub fn with_max_response_bytes(mut self, bytes: usize) -> Self {
        self.max_response_bytes = bytes;
        self
    }

    /// Caps the redirect hops a call follows.
    pub fn with_max_redirects(mut self, hops: usize) -> Self {
        self.max_redirects = hops;
        self
    }

    /// Builds the call plan for one tool: everything that can be checked once is checked here.
    fn plan(&self, manifest: &ToolManifest, spec: &HttpToolSpec) -> Result<HttpCall, String> {
        let id = manifest.id.clone();
        let client = self.client.clone()?;
        check_url_template(&id, &spec.url_template)?;

        let mut headers = Vec::new();
        for (i, header) in spec.headers.iter().flatten().enumerate() {
            let name = HeaderName::from_bytes(header.name.as_bytes()).map_err(|_| {
                format!(
                    "Tool \"{id}\" spec.headers[{i}].name \"{}\" is not a valid HTTP header name",
                    header.name
                )
            })?;
            headers.push((header.name.clone(), name, Template::parse(&header.value)));
        }

        let auth = match &spec.authorization {
            None => None,
            Some(HttpAuthSpec::Bearer { secret_ref }) => Some(AuthPlan::Secret {
                header: AUTHORIZATION,
                bearer: true,
                env_name: secret_ref.env_name.clone(),
                name: secret_ref.name.clone(),
            }),
            Some(HttpAuthSpec::Header { header_name, secret_ref }) => Some(AuthPlan::Secret {
                header: HeaderName::from_bytes(header_name.as_bytes()).map_err(|_| {
                    format!(
                        "Tool \"{id}\" spec.authorization.headerName \"{header_name}\" is not a valid HTTP header name"
                    )
                })?,
                bearer: false,
                env_name: secret_ref.env_name.clone(),
                name: secret_ref.name.clone(),
            }),
            Some(HttpAuthSpec::Connection { connection }) => {
                let declared = manifest
                    .needs_spec
                    .as_ref()
                    .and_then(|n| n.connections.as_ref())
                    .is_some_and(|c| c.contains_key(connection));
                if !declared {
                    return Err(format!(
                        "Tool \"{id}\" spec.authorization uses connection \"{connection}\", which needsSpec.connections doesn't declare: declare it there (app, permissions, as)"
                    ));
                }
                Some(AuthPlan::Connection(connection.clone()))
            }
        };

        let body = match (&spec.request_body, spec.method) {
            (None, HttpMethod::Get) => BodyPlan::None,
            // The reference defaults every other method, DELETE included, to json-input.
            (None, _) | (Some(HttpRequestBodySpec::JsonInput), _) => BodyPlan::JsonInput,
            (Some(HttpRequestBodySpec::InputPassthrough), _) => BodyPlan::Passthrough,
            (Some(HttpRequestBodySpec::Text { template }), _) => {
                BodyPlan::Text(Template::parse(template))
            }
        };
        let body_on_get = spec.method == HttpMethod::Get && spec.request_body.is_some();

        let timeout_ms = spec.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
        if timeout_ms == 0 {
            return Err(format!("Tool \"{id}\" spec.timeoutMs must be at least 1"));
        }
        let (min, max) = spec
            .success_status
            .map(|s| (s.min, s.max))
            .unwrap_or((200, 299));
        if min > max {
            return Err(format!(
                "Tool \"{id}\" spec.successStatus has min {min} above max {max}, so no response could succeed"
            ));
        }

        Ok(HttpCall {
            method: method_of(spec.method),
            url: Template::parse(&spec.url_template),
            headers,
            auth,
            body,
            body_on_get,
            timeout_ms,
            parse_json: spec.parse_json.unwrap_or(true),
            success: (min, max),
            network: Network::from_policy(manifest.network.as_ref()),
            egress: self.egress.clone(),
            client,
            max_response_bytes: self.max_response_bytes,
            max_redirects: self.max_redirects,
            tool_id: id,
        })
    }
}

impl SpecSynthesizer for HttpSynthesizer {
    fn synthesize(&self, manifest: &ToolManifest, spec: &ToolSpec) -> Result<Handler, String> {
        let parsed;
        let http = match spec {
            ToolSpec::Http(http) => http,
            // An `http` spec that did not parse as one lands in `Other`: say what is wrong.
            ToolSpec::Other(raw) if spec.kind() == "http" => {
                parsed = serde_json::from_value::<HttpToolSpec>(Value::Object(raw.clone()))
                    .map_err(|e| {
                        format!(
                            "Tool \"{}\" spec is not a valid http spec: {e}",
                            manifest.id
                        )
                    })?;
                &parsed
            }
            ToolSpec::Other(_) => {
                return Err(format!(
                    "Tool \"{}\": the http synthesizer cannot build a spec of kind \"{}\"",
                    manifest.id,
                    spec.kind()
                ));
            }
        };
        let call = Arc::new(self.plan(manifest, http)?);
        Ok(Arc::new(move |input: Value, ctx: ToolContext| {
            let call = call.clone();
            Box::pin(async move { call.run(input, ctx).await.map_err(HandlerError::Failed) })
        }))
    }
}

/// `urlTemplate` may fill placeholders in its path and query only.
fn check_url_template(id: &str, template: &str) -> Result<(), String> {
    let scheme_len = ["https://", "http://"]
        .iter()
        // `get`, not slicing: a multi-byte character across the prefix length must not panic.
        .find(|prefix| {
            template
                .get(..prefix.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
        })
        .map(|prefix| prefix.len());
    let Some(scheme_len) = scheme_len else {
        return Err(format!(
            "Tool \"{id}\" spec.urlTemplate must start with http:// or https:// and a host"
        ));
    };
    let rest = &template[scheme_len..];
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    if Template::parse(authority).params().next().is_some() {
        return Err(format!(
            "Tool \"{id}\" spec.urlTemplate fills {{placeholders}} in its path and query only, never in its host or port"
        ));
    }
    if authority.is_empty() {
        return Err(format!("Tool \"{id}\" spec.urlTemplate must name a host"));
    }
    Ok(())
}

fn method_of(method: HttpMethod) -> Method {
    match method {
        HttpMethod::Get => Method::GET,
        HttpMethod::Post => Method::POST,
        HttpMethod::Put => Method::PUT,
        HttpMethod::Patch => Method::PATCH,
        HttpMethod::Delete => Method::DELETE,
    }
}

/// An error and its causes on one line (reqwest's own message omits the cause).
fn describe(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    text
}

#[derive(Debug)]
enum AuthPlan {
    Secret {
        header: HeaderName,
        bearer: bool,
        env_name: String,
        name: String,
    },
    Connection(String),
}

impl AuthPlan {
    fn header(&self) -> HeaderName {
        match self {
            AuthPlan::Secret { header, .. } => header.clone(),
            AuthPlan::Connection(_) => AUTHORIZATION,
        }
    }
}

#[derive(Debug)]
enum BodyPlan {
    None,
    JsonInput,
    Passthrough,
    Text(Template),
}

/// A request body and the content type it implies.
struct Body {
    bytes: Vec<u8>,
    content_type: Option<&'static str>,
}

/// One tool's request plan, built at definition time and shared by its calls.
#[derive(Debug)]
struct HttpCall {
    tool_id: String,
    method: Method,
    url: Template,
    /// Spec name (for exact-name overwrites), parsed name, value template.
    headers: Vec<(String, HeaderName, Template)>,
    auth: Option<AuthPlan>,
    body: BodyPlan,
    body_on_get: bool,
    timeout_ms: u64,
    parse_json: bool,
    success: (u16, u16),
    network: Network,
    egress: EgressPolicy,
    client: reqwest::Client,
    max_response_bytes: usize,
    max_redirects: usize,
}

impl HttpCall {
    async fn run(&self, input: Value, ctx: ToolContext) -> Result<Value, String> {
        let id = &self.tool_id;
        if ctx.signal.is_cancelled() {
            return Err("aborted".to_owned());
        }
        let Value::Object(input) = &input else {
            return Err(format!(
                "http-tool \"{id}\" requires an object input for URL substitution; got {}",
                js_typeof(&input)
            ));
        };
        let (url_text, consumed) = self.url.render_url(id, input)?;
        let url = Url::parse(&url_text).map_err(|e| {
            format!(
                "http-tool \"{id}\" built the URL \"{url_text}\", which is not a valid URL: {e}"
            )
        })?;

        // Static headers: later entries with the identical name replace earlier ones.
        let mut headers: Vec<(&str, &HeaderName, String)> = Vec::new();
        for (spec_name, name, value) in &self.headers {
            let value = value.render_raw(input);
            match headers.iter_mut().find(|(n, _, _)| *n == spec_name) {
                Some(slot) => slot.2 = value,
                None => headers.push((spec_name, name, value)),
            }
        }
        let mut map = HeaderMap::new();
        for (spec_name, name, value) in headers {
            let value = HeaderValue::from_str(&value).map_err(|_| {
                format!("http-tool \"{id}\" header \"{spec_name}\" has a value that is not a valid HTTP header value (control characters or line breaks)")
            })?;
            map.insert(name.clone(), value);
        }
        // The credential this call sends, masked in what it quotes of a failed answer.
        let mask = SecretMask::default();
        if let Some(auth) = &self.auth {
            let value = self.authorize(auth, &ctx, &mask).await?;
            map.insert(auth.header(), value);
        }

        let body = self.body(input, &consumed)?;
        if let Some(Body {
            content_type: Some(ct),
            ..
        }) = &body
        {
            if !map.contains_key(CONTENT_TYPE) {
                map.insert(CONTENT_TYPE, HeaderValue::from_static(ct));
            }
        }

        let exchange = self.exchange(url, map, body.map(|b| b.bytes), &mask);
        tokio::select! {
            biased;
            () = ctx.signal.cancelled() => Err("aborted".to_owned()),
            outcome = tokio::time::timeout(Duration::from_millis(self.timeout_ms), exchange) => match outcome {
                Ok(result) => result,
                Err(_) => Err(format!("http-tool \"{id}\" timed out after {}ms", self.timeout_ms)),
            },
        }
    }

    /// The auth header's value; `mask` learns the secret or token in it.
    async fn authorize(
        &self,
        auth: &AuthPlan,
        ctx: &ToolContext,
        mask: &SecretMask,
    ) -> Result<HeaderValue, String> {
        let id = &self.tool_id;
        let (text, what) = match auth {
            AuthPlan::Secret {
                bearer,
                env_name,
                name,
                ..
            } => {
                let Some(resolver) = &ctx.secrets else {
                    return Err(format!(
                        "http-tool \"{id}\" declares authorization but ToolContext.resolveSecret is not wired. Give the tool context a secret resolver (ToolContext.secrets) that can resolve \"{name}\" in env \"{env_name}\"."
                    ));
                };
                let secret = resolver.resolve(env_name, name).await.map_err(|e| {
                    format!("http-tool \"{id}\" could not resolve secret \"{name}\" in env \"{env_name}\": {e}")
                })?;
                mask.add(&secret);
                let text = if *bearer {
                    format!("Bearer {secret}")
                } else {
                    secret
                };
                (text, format!("secret \"{name}\""))
            }
            AuthPlan::Connection(connection) => {
                let token = ctx.connections.as_ref().and_then(|c| c.get(connection)).ok_or_else(|| {
                    format!(
                        "http-tool \"{id}\" authorizes with connection \"{connection}\", but the tool context carries no access token for it (ToolContext.connections)"
                    )
                })?;
                mask.add(token);
                (
                    format!("Bearer {token}"),
                    format!("connection \"{connection}\"'s access token"),
                )
            }
        };
        let mut value = HeaderValue::from_str(&text).map_err(|_| {
            format!("http-tool \"{id}\": the {what} is not a valid HTTP header value")
        })?;
        value.set_sensitive(true);
        Ok(value)
    }

    fn body(&self, input: &Map<String, Value>, consumed: &[&str]) -> Result<Option<Body>, String> {
        if self.body_on_get {
            return Err(format!(
                "http-tool \"{}\" declares a requestBody on a GET request, which cannot carry a body: drop requestBody or use POST, PUT or PATCH",
                self.tool_id
            ));
        }
        Ok(match &self.body {
            BodyPlan::None => None,
            BodyPlan::JsonInput => {
                let rest = Remaining { input, consumed };
                if input.keys().all(|k| consumed.contains(&k.as_str())) {
                    Some(Body {
                        bytes: Vec::new(),
                        content_type: None,
                    })
                } else {
                    Some(Body {
                        bytes: self.encode(&rest)?,
                        content_type: Some("application/json"),
                    })
                }
            }
            BodyPlan::Passthrough => Some(Body {
                bytes: self.encode(input)?,
                content_type: Some("application/json"),
            }),
            BodyPlan::Text(template) => Some(Body {
                bytes: template.render_raw(input).into_bytes(),
                content_type: Some("text/plain"),
            }),
        })
    }

    fn encode<T: serde::Serialize>(&self, value: &T) -> Result<Vec<u8>, String> {
        serde_json::to_vec(value).map_err(|e| {
            format!(
                "http-tool \"{}\" could not encode the request body: {e}",
                self.tool_id
            )
        })
    }

    /// Sends the request and follows redirects by hand, checking each hop's host.
    async fn exchange(
        &self,
        mut url: Url,
        mut headers: HeaderMap,
        mut body: Option<Vec<u8>>,
        mask: &SecretMask,
    ) -> Result<Value, String> {
        let id = &self.tool_id;
        let mut method = self.method.clone();
        for hop in 0..=self.max_redirects {
            self.network.check(id, &url, hop > 0)?;
            if !matches!(url.scheme(), "http" | "https") {
                return Err(format!(
                    "http-tool \"{id}\" was redirected to {url}, which is not an http(s) URL"
                ));
            }
            self.egress
                .check_url(&url)
                .map_err(|e| self.refused(&url, hop > 0, &e))?;
            let mut request = self
                .client
                .request(method.clone(), url.clone())
                .headers(headers.clone());
            if let Some(bytes) = &body {
                request = request.body(bytes.clone());
            }
            let response = request
                .send()
                .await
                .map_err(|e| match EgressError::find_in(&e) {
                    Some(refused) => self.refused(&url, hop > 0, refused),
                    None => format!(
                        "http-tool \"{id}\" request to {url} failed: {}",
                        describe(&e)
                    ),
                })?;
            let status = response.status();
            let location = match status {
                StatusCode::MOVED_PERMANENTLY
                | StatusCode::FOUND
                | StatusCode::SEE_OTHER
                | StatusCode::TEMPORARY_REDIRECT
                | StatusCode::PERMANENT_REDIRECT => response.headers().get(LOCATION).cloned(),
                _ => None,
            };
            // A redirect without Location is an ordinary response (as with fetch).
            let Some(location) = location else {
                return self.finish(response, mask).await;
            };
            let next = location
                .to_str()
                .ok()
                .and_then(|l| url.join(l).ok())
                .ok_or_else(|| format!("http-tool \"{id}\" got a {status} redirect with an unusable Location header"))?;
            // fetch's method rules: 303 turns anything but HEAD into GET; 301/302 turn POST into GET.
            if (status == StatusCode::SEE_OTHER && method != Method::HEAD)
                || (matches!(status, StatusCode::MOVED_PERMANENTLY | StatusCode::FOUND)
                    && method == Method::POST)
            {
                method = Method::GET;
                body = None;
                headers.remove(CONTENT_TYPE);
                headers.remove(CONTENT_LENGTH);
            }
            if next.origin() != url.origin() {
                if let Some(auth) = &self.auth {
                    headers.remove(auth.header());
                }
            }
            url = next;
        }
        Err(format!(
            "http-tool \"{id}\" followed more than {} redirects",
            self.max_redirects
        ))
    }

    /// The failure of a request the host's address policy refused (`redirected`: a hop).
    fn refused(&self, url: &Url, redirected: bool, why: &EgressError) -> String {
        let id = &self.tool_id;
        let what = if redirected {
            "was redirected to"
        } else {
            "may not reach"
        };
        format!("http-tool \"{id}\" {what} {url}: {why}")
    }

    async fn finish(
        &self,
        response: reqwest::Response,
        mask: &SecretMask,
    ) -> Result<Value, String> {
        let id = &self.tool_id;
        let status = response.status();
        let code = status.as_u16();
        if code < self.success.0 || code > self.success.1 {
            let reason = status.canonical_reason().unwrap_or("");
            // Up to 4 bytes a character: enough bytes for the quoted prefix, and for the
            // longest masked form past it, so a credential the server echoes across the cut
            // is masked whole before the cut.
            let limit = (ERROR_BODY_CHARS + mask.longest_form()) * 4;
            let text = match read_body(response, limit, false).await {
                Ok(bytes) => {
                    let cut = bytes.len() >= limit;
                    mask.mask_prefix(&utf8_prefix(&bytes, cut), ERROR_BODY_CHARS, cut)
                }
                Err(_) => "<no body>".to_owned(),
            };
            return Err(format!(
                "http-tool \"{id}\" got status {code} {reason} — {text}"
            ));
        }
        let bytes = read_body(response, self.max_response_bytes, true)
            .await
            .map_err(|e| match e {
                ReadError::TooLarge => format!(
                    "http-tool \"{id}\" response body is larger than the {} byte limit",
                    self.max_response_bytes
                ),
                ReadError::Failed(e) => {
                    format!("http-tool \"{id}\" could not read the response body: {e}")
                }
            })?;
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
        let text = String::from_utf8_lossy(bytes);
        if !self.parse_json {
            return Ok(Value::String(text.into_owned()));
        }
        if text.is_empty() {
            return Ok(Value::Null);
        }
        serde_json::from_str(&text)
            .map_err(|e| format!("http-tool \"{id}\" response was not valid JSON: {e}"))
    }
}

enum ReadError {
    TooLarge,
    Failed(String),
}

/// Reads at most `limit` bytes; with `strict`, more is an error, otherwise the rest is dropped.
async fn read_body(
    mut response: reqwest::Response,
    limit: usize,
    strict: bool,
) -> Result<Vec<u8>, ReadError> {
    if strict && response.content_length().is_some_and(|n| n > limit as u64) {
        return Err(ReadError::TooLarge);
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| ReadError::Failed(describe(&e)))?
    {
        if bytes.len() + chunk.len() > limit {
            if strict {
                return Err(ReadError::TooLarge);
            }
            bytes.extend_from_slice(&chunk[..limit - bytes.len()]);
            break;
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

/// `bytes` as text; with `cut`, a character cut short at the end is dropped, not replaced.
fn utf8_prefix(bytes: &[u8], cut: bool) -> std::borrow::Cow<'_, str> {
    let whole = match std::str::from_utf8(bytes) {
        Err(e) if cut && e.error_len().is_none() => &bytes[..e.valid_up_to()],
        _ => bytes,
    };
    String::from_utf8_lossy(whole)
}

/// The input minus the keys the URL consumed, serialised in input order without copying.
struct Remaining<'a> {
    input: &'a Map<String, Value>,
    consumed: &'a [&'a str],
}

impl serde::Serialize for Remaining<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(
            self.input
                .iter()
                .filter(|(k, _)| !self.consumed.contains(&k.as_str())),
        )
    }
}
