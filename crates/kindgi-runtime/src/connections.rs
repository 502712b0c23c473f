//! A tool call's connections (seed 000, `needsSpec.connections`; docs/connections.md): before
//! each call the runtime resolves every connection the tool declares into the context's
//! `connections` (the tool's name for it → the access token), in the same place it resolves
//! env values and secrets ([`crate::call_values`]).
//!
//! - **Whose.** `as: person` is the run's person: the user who started it or owns its trigger
//!   (`RunMeta.started_by_actor`, `user:<id>`); a run without one (a service account's key)
//!   cannot use a person's connection. `as: company` is the tenant's.
//! - **Checks.** A connection that is missing, revoked, expired and not refreshable, or that
//!   does not grant every permission key the tool declares fails the call before the handler
//!   runs: `precondition-failed`, its reason (`connection-missing`, `connection-revoked`,
//!   `connection-expired`, `connection-permission-missing`, `connection-refresh-failed`) and
//!   a message naming the app and what to do.
//! - **Refresh.** An access token that has expired (or expires within [`REFRESH_SKEW_MS`]) is
//!   refreshed with the `oauth2` crate (RFC 6749 §6, `grant_type=refresh_token`) at the
//!   connection's token endpoint, through the host's egress policy, with a capped answer and
//!   a timeout; the new tokens are stored before the call.
//! - **Masking.** Every token resolved or brought by a refresh is taught to the run's
//!   [`SecretMask`] first, so no journal entry, output or error shows it.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use kindgi_core::connection::{
    ConnectionHolder, ConnectionRecord, ConnectionTokens, RefreshClient,
};
use kindgi_core::ports::{CallValues, ConnectionStore};
use kindgi_spec::ToolManifest;
use kindgi_spec::tool::{ConnectionNeed, ConnectionOwner};
use kindgi_tools::ToolContext;
use kindgi_tools::dispatch::ToolCallError;
use kindgi_tools::egress::EgressPolicy;
use kindgi_tools::secret_mask::SecretMask;

/// A token expiring this close to now is refreshed first (milliseconds).
pub const REFRESH_SKEW_MS: i64 = 30_000;
/// The longest answer read from a token endpoint.
pub const MAX_TOKEN_ANSWER_BYTES: usize = 64 * 1024;
/// How long a refresh may take, connecting included.
pub const REFRESH_TIMEOUT: Duration = Duration::from_secs(15);

/// Resolves connections for calls: the tenants' connections and how to reach token
/// endpoints.
#[derive(Debug, Clone)]
pub struct Connector {
    store: Arc<dyn ConnectionStore>,
    http: Result<reqwest::Client, String>,
    egress: EgressPolicy,
}

impl Connector {
    /// Over `store`, refreshing at token endpoints `egress` admits.
    pub fn new(store: Arc<dyn ConnectionStore>, egress: EgressPolicy) -> Connector {
        let http = egress
            .client_builder()
            .connect_timeout(REFRESH_TIMEOUT)
            .timeout(REFRESH_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"));
        Connector {
            store,
            http,
            egress,
        }
    }

    pub fn store(&self) -> &Arc<dyn ConnectionStore> {
        &self.store
    }
}

/// Why a call's connection cannot be used. Each names the tool's name for it and the app.
#[derive(Debug, thiserror::Error)]
pub enum ConnectionError {
    #[error(
        "connection-missing: tool \"{tool}\" acts with {whose} connection to \"{app}\" (its connection \"{name}\"), and {who} has not connected \"{app}\": {howto}"
    )]
    Missing {
        tool: String,
        name: String,
        app: String,
        whose: &'static str,
        who: String,
        howto: String,
    },
    #[error(
        "connection-missing: tool \"{tool}\" acts with the run's person's connection to \"{app}\" (its connection \"{name}\"), but no person started this run or owns its trigger, so it has none: start the run with a person's key, or declare the connection `as: company`"
    )]
    NoPerson {
        tool: String,
        name: String,
        app: String,
    },
    #[error(
        "connection-revoked: tool \"{tool}\" acts with {whose} connection to \"{app}\" (its connection \"{name}\"), which was revoked: {howto}"
    )]
    Revoked {
        tool: String,
        name: String,
        app: String,
        whose: &'static str,
        howto: String,
    },
    #[error(
        "connection-expired: tool \"{tool}\" acts with {whose} connection to \"{app}\" (its connection \"{name}\"), whose access token has expired and cannot be refreshed (it has no refresh token or token endpoint): {howto}"
    )]
    Expired {
        tool: String,
        name: String,
        app: String,
        whose: &'static str,
        howto: String,
    },
    #[error(
        "connection-refresh-failed: tool \"{tool}\" acts with {whose} connection to \"{app}\" (its connection \"{name}\"), whose access token has expired, and refreshing it failed: {why}; {howto}"
    )]
    RefreshFailed {
        tool: String,
        name: String,
        app: String,
        whose: &'static str,
        why: String,
        howto: String,
    },
    #[error(
        "connection-permission-missing: tool \"{tool}\" needs {permissions} of \"{app}\" (its connection \"{name}\"), which {whose} connection does not grant: {howto}"
    )]
    PermissionMissing {
        tool: String,
        name: String,
        app: String,
        whose: &'static str,
        permissions: String,
        howto: String,
    },
    #[error("connection-unavailable: tool \"{tool}\"'s connections could not be read: {why}")]
    Unavailable { tool: String, why: String },
    /// An agent's call waited for the run's person to connect the app, and nobody did in
    /// time (`steps::connect`).
    #[error(
        "connection-missing: tool \"{tool}\" timed out after {waited_ms} ms waiting for {who} to connect \"{app}\" (its connection \"{name}\"): {howto}"
    )]
    TimedOut {
        tool: String,
        name: String,
        app: String,
        who: String,
        waited_ms: u64,
        howto: String,
    },
}

impl ConnectionError {
    /// The reason word (the message's first word).
    pub fn reason(&self) -> &'static str {
        match self {
            ConnectionError::Missing { .. }
            | ConnectionError::NoPerson { .. }
            | ConnectionError::TimedOut { .. } => "connection-missing",
            ConnectionError::Revoked { .. } => "connection-revoked",
            ConnectionError::Expired { .. } => "connection-expired",
            ConnectionError::RefreshFailed { .. } => "connection-refresh-failed",
            ConnectionError::PermissionMissing { .. } => "connection-permission-missing",
            ConnectionError::Unavailable { .. } => "connection-unavailable",
        }
    }

    /// The app of a connection the run's person has not made yet (what an agent's call waits
    /// for them to connect), with the permissions it needs.
    pub fn not_connected(&self) -> Option<&str> {
        match self {
            ConnectionError::Missing { app, whose, .. } if *whose == PERSONS => Some(app),
            _ => None,
        }
    }

    /// What the run's person can fix by connecting (again): the tool's name for the
    /// connection, when it is the person's and is missing or lacks a declared permission.
    /// An agent's call waits for that (`steps::connect`); anything else fails the call.
    pub fn person_can_connect(&self) -> Option<&str> {
        match self {
            ConnectionError::Missing { name, whose, .. }
            | ConnectionError::PermissionMissing { name, whose, .. }
                if *whose == PERSONS =>
            {
                Some(name)
            }
            _ => None,
        }
    }

    /// The call's failure: `precondition-failed`, the tool not run.
    pub fn into_call_error(self, tool_id: &str) -> ToolCallError {
        ToolCallError {
            code: "precondition-failed".into(),
            message: format!("Tool \"{tool_id}\" was not run: {self}"),
            tool_id: tool_id.to_owned(),
            transport: false,
            issues: Vec::new(),
        }
    }
}

const PERSONS: &str = "the run's person's";
const COMPANYS: &str = "the company's";

/// What the person (or an admin, for the company) runs to connect `need`.
pub fn howto(need: &ConnectionNeed) -> String {
    let perms: String = need
        .permissions
        .iter()
        .map(|p| format!(" --permission={p}"))
        .collect();
    let whose = match need.as_ {
        ConnectionOwner::Person => "person",
        ConnectionOwner::Company => "company",
    };
    let who = match need.as_ {
        ConnectionOwner::Person => "the run's person connects it",
        ConnectionOwner::Company => "a tenant admin connects it",
    };
    format!(
        "{who} with `kindgi connections add --app={} --as={whose}{perms} --access-token-stdin` (POST /v1/connections)",
        need.app
    )
}

/// The link a call waiting for its person to connect `app` reports (`waitingFor.other[]
/// .connectUrl`): `GET /v1/connections/connect?app=…&as=person&permissions=…` under
/// `public_url` (relative when it is empty), the permissions comma-separated.
pub fn connect_url(public_url: &str, app: &str, permissions: &[String]) -> String {
    let permissions: Vec<String> = permissions.iter().map(|p| query_value(p)).collect();
    format!(
        "{}/v1/connections/connect?app={}&as=person&permissions={}",
        public_url.trim_end_matches('/'),
        query_value(app),
        permissions.join(",")
    )
}

/// `s` percent-encoded for a query value (everything but RFC 3986's unreserved characters).
fn query_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The user id of the run's person: `user:<id>` in `started_by_actor`.
pub fn run_person(started_by_actor: Option<&str>) -> Option<&str> {
    started_by_actor
        .and_then(|a| a.strip_prefix("user:"))
        .filter(|u| !u.is_empty())
}

/// The tool's declared connections, by its name for each, in declaration order.
pub fn declared(tool: &ToolManifest) -> Vec<(&str, &ConnectionNeed)> {
    tool.needs_spec
        .as_ref()
        .and_then(|n| n.connections.as_ref())
        .map(|c| c.iter().map(|(k, v)| (k.as_str(), v)).collect())
        .unwrap_or_default()
}

/// One call's inputs to resolution.
#[derive(Debug, Clone, Copy)]
pub struct CallFor<'a> {
    pub tenant: &'a str,
    /// The run's `started_by_actor`.
    pub actor: Option<&'a str>,
    pub now: i64,
}

/// Resolves every connection `tool` declares into `ctx.connections` (nothing when it declares
/// none). Every token is taught to `mask` before anything else sees it.
pub async fn prepare(
    connector: Option<&Connector>,
    values: Option<&Arc<dyn CallValues>>,
    tool: &ToolManifest,
    call: CallFor<'_>,
    ctx: &mut ToolContext,
    mask: &SecretMask,
) -> Result<(), ConnectionError> {
    let needs = declared(tool);
    if needs.is_empty() {
        return Ok(());
    }
    let mut tokens = BTreeMap::new();
    for (name, need) in needs {
        let token = resolve_one(connector, values, tool, call, name, need, mask).await?;
        tokens.insert(name.to_owned(), token);
    }
    ctx.connections = Some(Arc::new(tokens));
    Ok(())
}

/// The errors' shared words for one need.
struct Need<'a> {
    manifest: &'a ToolManifest,
    tool: &'a str,
    name: &'a str,
    need: &'a ConnectionNeed,
    whose: &'static str,
}

impl Need<'_> {
    fn missing(&self, who: String) -> ConnectionError {
        ConnectionError::Missing {
            tool: self.tool.to_owned(),
            name: self.name.to_owned(),
            app: self.need.app.clone(),
            whose: self.whose,
            who,
            howto: howto(self.need),
        }
    }
}

async fn resolve_one(
    connector: Option<&Connector>,
    values: Option<&Arc<dyn CallValues>>,
    tool: &ToolManifest,
    call: CallFor<'_>,
    name: &str,
    need: &ConnectionNeed,
    mask: &SecretMask,
) -> Result<String, ConnectionError> {
    let n = Need {
        manifest: tool,
        tool: &tool.id,
        name,
        need,
        whose: match need.as_ {
            ConnectionOwner::Person => PERSONS,
            ConnectionOwner::Company => COMPANYS,
        },
    };
    let (holder, who) = match need.as_ {
        ConnectionOwner::Company => (ConnectionHolder::Company, "the company".to_owned()),
        ConnectionOwner::Person => match run_person(call.actor) {
            Some(u) => (
                ConnectionHolder::Person(u.to_owned()),
                format!("the run's person (user \"{u}\")"),
            ),
            None => {
                return Err(ConnectionError::NoPerson {
                    tool: tool.id.clone(),
                    name: name.to_owned(),
                    app: need.app.clone(),
                });
            }
        },
    };
    let Some(connector) = connector else {
        return Err(n.missing(format!("{who} (this runtime keeps no connections)")));
    };
    let unavailable = |why: String| ConnectionError::Unavailable {
        tool: tool.id.clone(),
        why,
    };
    let found = connector
        .store
        .resolve(call.tenant, &need.app, &holder)
        .await
        .map_err(|e| unavailable(e.to_string()))?;
    let Some((record, tokens)) = found else {
        return Err(n.missing(who));
    };
    let tokens = match tokens {
        Some(t) if record.revoked_at.is_none() => t,
        _ => {
            return Err(ConnectionError::Revoked {
                tool: tool.id.clone(),
                name: name.to_owned(),
                app: need.app.clone(),
                whose: n.whose,
                howto: howto(need),
            });
        }
    };
    mask.add(&tokens.access_token);
    if let Some(r) = &tokens.refresh_token {
        mask.add(r);
    }
    let missing = record.missing_permissions(&need.permissions);
    if !missing.is_empty() {
        let permissions = missing
            .iter()
            .map(|p| format!("\"{p}\""))
            .collect::<Vec<_>>()
            .join(", ");
        let noun = if missing.len() == 1 {
            "permission"
        } else {
            "permissions"
        };
        return Err(ConnectionError::PermissionMissing {
            tool: tool.id.clone(),
            name: name.to_owned(),
            app: need.app.clone(),
            whose: n.whose,
            permissions: format!("{noun} {permissions}"),
            howto: format!("connect it again granting them: {}", howto(need)),
        });
    }
    if !record.expired_at(call.now + REFRESH_SKEW_MS) {
        return Ok(tokens.access_token);
    }
    fresh_token(connector, values, &n, &record, tokens, call, mask).await
}

/// The access token of an expired (or about to expire) connection: refreshed when it can be.
async fn fresh_token(
    connector: &Connector,
    values: Option<&Arc<dyn CallValues>>,
    n: &Need<'_>,
    record: &ConnectionRecord,
    tokens: ConnectionTokens,
    call: CallFor<'_>,
    mask: &SecretMask,
) -> Result<String, ConnectionError> {
    let expired = record.expired_at(call.now);
    let (Some(client), Some(refresh_token)) = (&record.refresh, &tokens.refresh_token) else {
        if !expired {
            return Ok(tokens.access_token);
        }
        return Err(ConnectionError::Expired {
            tool: n.tool.to_owned(),
            name: n.name.to_owned(),
            app: n.need.app.clone(),
            whose: n.whose,
            howto: format!("connect it again: {}", howto(n.need)),
        });
    };
    let refreshed = match refresh(
        connector,
        values,
        n.manifest,
        call.tenant,
        client,
        refresh_token,
        call.now,
    )
    .await
    {
        Ok(t) => t,
        Err(why) if !expired => {
            // Masked: an endpoint's error description could quote a token.
            let why = mask.mask_str(&why);
            tracing::warn!(tool = n.tool, app = %n.need.app, error = %why, "refreshing a connection's access token before it expires failed; the current one is used");
            return Ok(tokens.access_token);
        }
        Err(why) => {
            return Err(ConnectionError::RefreshFailed {
                tool: n.tool.to_owned(),
                name: n.name.to_owned(),
                app: n.need.app.clone(),
                whose: n.whose,
                why,
                howto: format!("connect it again: {}", howto(n.need)),
            });
        }
    };
    mask.add(&refreshed.access_token);
    if let Some(r) = &refreshed.refresh_token {
        mask.add(r);
    }
    let stored = connector
        .store
        .update_tokens(call.tenant, &record.id, &refreshed, call.now)
        .await
        .map_err(|e| ConnectionError::Unavailable {
            tool: n.tool.to_owned(),
            why: e.to_string(),
        })?;
    if !stored {
        // Revoked (or refreshed by another call) meanwhile: the new token still is the
        // endpoint's answer, but a revoked connection is not used.
        tracing::info!(tool = n.tool, app = %n.need.app, "a connection changed while its token was refreshed");
    }
    Ok(refreshed.access_token)
}

/// One refresh_token grant at `client.token_url`. The error says what failed, never a token.
async fn refresh(
    connector: &Connector,
    values: Option<&Arc<dyn CallValues>>,
    tool: &ToolManifest,
    tenant: &str,
    client: &RefreshClient,
    refresh_token: &str,
    now: i64,
) -> Result<ConnectionTokens, String> {
    use oauth2::{ClientId, ClientSecret, RefreshToken, TokenResponse as _, TokenUrl};
    let http = connector.http.clone()?;
    let url = reqwest::Url::parse(&client.token_url).map_err(|e| {
        format!(
            "its token endpoint {:?} is not a URL ({e})",
            clip(&client.token_url)
        )
    })?;
    connector
        .egress
        .check_url(&url)
        .map_err(|e| format!("its token endpoint may not be reached: {e}"))?;
    let secret = match &client.client_secret_name {
        None => None,
        Some(name) => Some(client_secret(values, tool, tenant, name).await?),
    };
    let mut oauth = oauth2::basic::BasicClient::new(ClientId::new(client.client_id.clone()))
        .set_token_uri(TokenUrl::from_url(url));
    if let Some(secret) = secret {
        oauth = oauth.set_client_secret(ClientSecret::new(secret));
    }
    let answer = oauth
        .exchange_refresh_token(&RefreshToken::new(refresh_token.to_owned()))
        .request_async(&CappedClient(http))
        .await
        .map_err(describe_refresh_error)?;
    let expires_at = answer
        .expires_in()
        .map(|d| now.saturating_add(i64::try_from(d.as_millis()).unwrap_or(i64::MAX)));
    Ok(ConnectionTokens {
        access_token: answer.access_token().secret().clone(),
        refresh_token: answer.refresh_token().map(|r| r.secret().clone()),
        expires_at,
    })
}

/// The value of the tenant's secret `name` (the refresh client's secret), in the served env.
async fn client_secret(
    values: Option<&Arc<dyn CallValues>>,
    tool: &ToolManifest,
    tenant: &str,
    name: &str,
) -> Result<String, String> {
    let Some(values) = values else {
        return Err(format!(
            "its client secret \"{name}\" cannot be read: this runtime keeps no secrets"
        ));
    };
    // The runtime's own use of a tenant secret, as a model provider's `secretRef` is.
    let Some(resolver) = values
        .provider_secrets(tenant)
        .or_else(|| values.secrets(tenant, None, tool))
    else {
        return Err(format!(
            "its client secret \"{name}\" cannot be read: this runtime keeps no secrets"
        ));
    };
    resolver
        .resolve(values.served_env(), name)
        .await
        .map_err(|why| format!("its client secret \"{name}\" cannot be read: {why}"))
}

/// Why a refresh failed, in words: the endpoint's OAuth error code and description, a status,
/// or the transport's failure.
fn describe_refresh_error<E: std::error::Error>(
    e: oauth2::RequestTokenError<E, oauth2::basic::BasicErrorResponse>,
) -> String {
    match e {
        oauth2::RequestTokenError::ServerResponse(r) => {
            let mut s = format!("the token endpoint answered `{}`", r.error().as_ref());
            if let Some(d) = r.error_description() {
                s.push_str(&format!(" ({})", clip(d)));
            }
            s
        }
        oauth2::RequestTokenError::Request(e) => {
            format!("the token endpoint could not be reached: {e}")
        }
        oauth2::RequestTokenError::Parse(e, _) => {
            format!(
                "the token endpoint's answer is not an OAuth 2 token response: {}",
                clip(&e.to_string())
            )
        }
        oauth2::RequestTokenError::Other(s) => {
            format!("the token endpoint's answer was refused: {}", clip(&s))
        }
    }
}

/// Why sending a token request failed.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SendError(String);

/// The HTTP client token requests go through: egress-checked, no redirects, a timeout, a
/// capped answer ([`send_capped`]).
struct CappedClient(reqwest::Client);

impl<'c> oauth2::AsyncHttpClient<'c> for CappedClient {
    type Error = SendError;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<oauth2::HttpResponse, SendError>> + Send + 'c>,
    >;

    fn call(&'c self, request: oauth2::HttpRequest) -> Self::Future {
        Box::pin(send_capped(&self.0, request))
    }
}

/// Sends `request` with `http` and reads at most [`MAX_TOKEN_ANSWER_BYTES`] of the answer.
async fn send_capped(
    http: &reqwest::Client,
    request: oauth2::HttpRequest,
) -> Result<oauth2::HttpResponse, SendError> {
    let (parts, body) = request.into_parts();
    let url = parts.uri.to_string();
    let mut req = http.request(parts.method, &url).body(body);
    for (name, value) in &parts.headers {
        req = req.header(name, value);
    }
    let mut resp = req
        .send()
        .await
        .map_err(|e| SendError(format!("{}", e.without_url())))?;
    let status = resp.status();
    let headers = resp.headers().clone();
    let mut bytes = Vec::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| SendError(format!("{}", e.without_url())))?
    {
        if bytes.len() + chunk.len() > MAX_TOKEN_ANSWER_BYTES {
            return Err(SendError(format!(
                "its answer is over {MAX_TOKEN_ANSWER_BYTES} bytes"
            )));
        }
        bytes.extend_from_slice(&chunk);
    }
    let mut out = oauth2::HttpResponse::new(bytes);
    *out.status_mut() = status;
    *out.headers_mut() = headers;
    Ok(out)
}

fn clip(s: &str) -> String {
    s.chars().take(200).collect()
}
