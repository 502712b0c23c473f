//! The host's egress policy ([`EgressPolicy`]) on MCP's HTTP transports: the endpoint is
//! checked before anything connects (its literal address, or what its name resolves to, so a
//! refusal is a clear [`McpError::Egress`]), and the clients connect through the policy's
//! filtering resolver (no DNS-rebinding window) with every redirect hop checked. Streamable
//! HTTP goes through rmcp, which is built on reqwest 0.13: its resolver is adapted here.

use std::sync::Arc;

use kindgi_tools::egress::{EgressError, EgressPolicy};
use url::Url;

use crate::auth::AuthHeaders;
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
    if let (Some(url::Host::Domain(name)), Some(port)) = (url.host(), url.port_or_known_default()) {
        policy.resolve(name, port).await.map_err(refused)?;
    }
    Ok(())
}

/// rmcp's reqwest 0.13 is built without a bundled crypto provider; use ring (already used
/// by the rest of the workspace) as the process default. Harmless if one is installed. Here,
/// beside the reqwest 0.13 client this file builds, so the connecting client imports it.
pub(crate) fn ensure_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// The streamable-HTTP client under `policy` (`None`: rmcp's default client). Like rmcp's
/// default: no idle pooling, same-origin 307/308 redirects only.
pub(crate) fn streamable_client(
    policy: &EgressPolicy,
    auth: &AuthHeaders,
) -> Result<Option<reqwest013::Client>, String> {
    if policy.is_open() && auth.is_empty() {
        return Ok(None);
    }
    // Credentials are never sent on to where a redirect points.
    let signs_in = !auth.is_empty();
    // reqwest 0.13 without a crypto provider panics when a client is built.
    ensure_crypto_provider();
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
            if signs_in || !same_origin || !keeps_body {
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
pub(crate) fn sse_client(
    policy: &EgressPolicy,
    auth: &AuthHeaders,
) -> Result<Option<reqwest::Client>, String> {
    if policy.is_open() && auth.is_empty() {
        return Ok(None);
    }
    // Credentials are never sent on to where a redirect points.
    let redirect = if auth.is_empty() {
        policy.redirect_policy(MAX_REDIRECTS)
    } else {
        reqwest::redirect::Policy::none()
    };
    let headers = auth.header_map().map_err(|e| e.to_string())?;
    policy
        .client_builder()
        .default_headers(headers)
        .redirect(redirect)
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

#[cfg(test)]
mod tests {
    use super::*;
    use kindgi_tools::egress::AllowedRange;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn policy(allow: &str) -> EgressPolicy {
        EgressPolicy::public_only([allow.parse::<AllowedRange>().unwrap()])
    }

    /// A listener on `ip` answering `answer` to every connection; its port and accept count.
    async fn listener(ip: &str, answer: String) -> (u16, Arc<AtomicUsize>) {
        let l = tokio::net::TcpListener::bind((ip, 0)).await.unwrap();
        let port = l.local_addr().unwrap().port();
        let n = Arc::new(AtomicUsize::new(0));
        let count = n.clone();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = l.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                let answer = answer.clone();
                tokio::spawn(async move {
                    let _ = s.read(&mut [0u8; 4096]).await;
                    let _ = s.write_all(answer.as_bytes()).await;
                });
            }
        });
        (port, n)
    }

    #[tokio::test]
    async fn the_streamable_client_resolves_through_the_policy() {
        let (port, accepted) = listener("127.0.0.1", "HTTP/1.1 200 OK\r\n\r\n".into()).await;
        let client = streamable_client(&policy("127.0.0.3/32"), &AuthHeaders::default())
            .unwrap()
            .unwrap();
        let err = client
            .get(format!("http://localhost:{port}/mcp"))
            .send()
            .await
            .unwrap_err();
        let refused = EgressError::find_in(&err).expect("the refusal, typed");
        assert!(matches!(refused, EgressError::Refused { host, .. } if host == "localhost"));
        assert_eq!(accepted.load(Ordering::SeqCst), 0);
        assert!(
            streamable_client(&EgressPolicy::open(), &AuthHeaders::default())
                .unwrap()
                .is_none()
        );
    }

    #[tokio::test]
    async fn the_sse_client_checks_every_redirect_hop() {
        let (internal, accepted) = listener("127.0.0.2", "HTTP/1.1 200 OK\r\n\r\n".into()).await;
        let (allowed, _) = listener(
            "127.0.0.3",
            format!(
                "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.2:{internal}/sse\r\nContent-Length: 0\r\n\r\n"
            ),
        )
        .await;
        let client = sse_client(&policy("127.0.0.3/32"), &AuthHeaders::default())
            .unwrap()
            .unwrap();
        let err = client
            .get(format!("http://127.0.0.3:{allowed}/sse"))
            .send()
            .await
            .unwrap_err();
        let refused = EgressError::find_in(&err).expect("the refusal, typed");
        assert!(
            refused
                .to_string()
                .starts_with("127.0.0.2 is a loopback address")
        );
        assert_eq!(accepted.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn check_endpoint_refuses_literals_and_names_and_ignores_stdio() {
        let p = policy("127.0.0.3/32");
        let e = Endpoint::parse("mcp+sse://127.0.0.2:9/sse").unwrap();
        let err = check_endpoint(&p, &e).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            "the MCP server mcp+sse://127.0.0.2:9/sse may not be reached: 127.0.0.2 is a loopback address (127.0.0.0/8, ::1); this server does not connect to such addresses for a tenant's definitions. The operator allows it with `kindgi server --allow-private-egress 127.0.0.2/32` (or `egress.allowPrivate` in --config)"
        );
        let e = Endpoint::parse("mcp+http://localhost:9/mcp").unwrap();
        assert!(matches!(
            check_endpoint(&p, &e).await,
            Err(McpError::Egress { .. })
        ));
        assert!(
            check_endpoint(&p, &Endpoint::stdio("node", ["x"]))
                .await
                .is_ok()
        );
        assert!(
            check_endpoint(
                &policy("127.0.0.2/32"),
                &Endpoint::parse("mcp+sse://127.0.0.2:9/sse").unwrap()
            )
            .await
            .is_ok()
        );
    }
}
