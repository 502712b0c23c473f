//! The host's egress policy ([`EgressPolicy`]) on MCP's HTTP transports: the endpoint is
//! checked before anything connects (its literal address, or what its name resolves to, so a
//! refusal is a clear [`McpError::Egress`]), and the clients connect through the policy's
//! filtering resolver (no DNS-rebinding window) with every redirect hop checked. Streamable
//! HTTP goes through rmcp, which is built on reqwest 0.13: its resolver is adapted here.

use std::sync::Arc;

use kindgi_tools::egress::{EgressError, EgressPolicy};
use url::Url;

use crate::endpoint::Endpoint;
use crate::error::McpError;

/// Redirect hops the policed clients follow (rmcp's own default client follows 10).
const MAX_REDIRECTS: usize = 10;

/// Refuses `url` when the policy refuses its host (resolving a name once to say so clearly;
/// the connection itself is checked again by the resolver).
pub(crate) async fn check(
    policy: &EgressPolicy,
    endpoint: &str,
    url: &Url,
) -> Result<(), McpError> {
    if policy.is_open() {
        return Ok(());
    }
    let refused = |refused: EgressError| McpError::Egress {
        endpoint: endpoint.to_owned(),
        refused,
    };
    policy.check_url(url).map_err(refused)?;
    if let (Some(url::Host::Domain(name)), Some(port)) = (url.host(), url.port_or_known_default())
    {
        policy.resolve(name, port).await.map_err(refused)?;
    }
    Ok(())
}

/// The streamable-HTTP client under `policy` (`None`: rmcp's default client). Like rmcp's
/// default: no idle pooling, same-origin 307/308 redirects only.
pub(crate) fn streamable_client(
    policy: &EgressPolicy,
) -> Result<Option<reqwest013::Client>, String> {
    if policy.is_open() {
        return Ok(None);
    }
    let resolver: Arc<dyn reqwest013::dns::Resolve> = Arc::new(Resolver013(policy.clone()));
    let checked = policy.clone();
    reqwest013::Client::builder()
        .pool_max_idle_per_host(0)
        .no_proxy()
        .dns_resolver(resolver)
        .redirect(reqwest013::redirect::Policy::custom(move |attempt| {
            let same_origin = attempt
                .previous()
                .first()
                .is_some_and(|first| first.origin() == attempt.url().origin());
            let keeps_body = matches!(attempt.status().as_u16(), 307 | 308);
            if !same_origin || !keeps_body {
                attempt.stop()
            } else if attempt.previous().len() > MAX_REDIRECTS {
                attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
            } else if let Err(e) = checked.check_url(attempt.url()) {
                attempt.error(e)
            } else {
                attempt.follow()
            }
        }))
        .build()
        .map(Some)
        .map_err(|e| format!("the HTTP client could not be set up: {e}"))
}

/// The legacy-SSE client under `policy` (`None`: the shared one).
pub(crate) fn sse_client(policy: &EgressPolicy) -> Result<Option<reqwest::Client>, String> {
    if policy.is_open() {
        return Ok(None);
    }
    policy
        .client_builder()
        .redirect(policy.redirect_policy(MAX_REDIRECTS))
        .build()
        .map(Some)
        .map_err(|e| format!("the HTTP client could not be set up: {e}"))
}

/// [`EgressPolicy::resolve`] as a reqwest 0.13 resolver.
struct Resolver013(EgressPolicy);

impl reqwest013::dns::Resolve for Resolver013 {
    fn resolve(&self, name: reqwest013::dns::Name) -> reqwest013::dns::Resolving {
        let policy = self.0.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs = policy.resolve(&host, 0).await?;
            let addrs: reqwest013::dns::Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

/// Whether `policy` lets this host connect to `endpoint` (a stdio endpoint connects to
/// nothing): the check [`McpClient::connect_to`](crate::McpClient::connect_to) makes first,
/// for a caller that must refuse before it stores anything (registering an endpoint).
pub async fn check_endpoint(policy: &EgressPolicy, endpoint: &Endpoint) -> Result<(), McpError> {
    match endpoint {
        Endpoint::Stdio { .. } => Ok(()),
        Endpoint::StreamableHttp { url } | Endpoint::Sse { url } => {
            check(policy, &endpoint.to_string(), url).await
        }
    }
}
