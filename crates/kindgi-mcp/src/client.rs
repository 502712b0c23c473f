//! A connected MCP server (any transport), built on the official Rust SDK `rmcp`.

use kindgi_spec::ToolManifest;
use kindgi_tools::BoxFuture;
use kindgi_tools::egress::EgressPolicy;
use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, PaginatedRequestParams,
};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::Value;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

use crate::auth::AuthHeaders;
use crate::diag::Diagnostics;
use crate::endpoint::Endpoint;
use crate::error::McpError;
use crate::manifest::{ManifestOptions, ServerIdentity, manifest_from_mcp_tool};
use crate::source::{CallOutcome, McpSource};
use crate::{egress, sse, stdio};

/// The default bound on connecting (spawn or HTTP handshake plus `initialize`) and on listing.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The most `tools/list` pages read before the listing is taken for a loop.
pub const MAX_LIST_PAGES: usize = 10_000;

/// Why paging through `tools/list` stopped.
enum ListError {
    Service(ServiceError),
    Pagination(String),
}

/// How to connect.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// Bounds connecting and each `tools/list`.
    pub timeout: Duration,
    pub manifest: ManifestOptions,
    /// The addresses the HTTP transports may reach (default: any). A stdio endpoint is not
    /// a connection; whether one may run is the host's decision.
    pub egress: EgressPolicy,
    /// Sent on every HTTP request of both HTTP transports (a registered endpoint's
    /// `secretRef` or `auth`, see [`crate::auth`]); unused for stdio. A connection that
    /// sends any follows no redirect.
    pub auth: AuthHeaders,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        Self {
            timeout: DEFAULT_TIMEOUT,
            manifest: ManifestOptions::default(),
            egress: EgressPolicy::open(),
            auth: AuthHeaders::default(),
        }
    }
}

/// The endpoint's sign-in headers as rmcp's streamable HTTP transport takes them (marked
/// sensitive).
fn custom_headers(
    auth: &AuthHeaders,
) -> Result<
    std::collections::HashMap<reqwest013::header::HeaderName, reqwest013::header::HeaderValue>,
    String,
> {
    auth.iter()
        .map(|(name, value)| {
            let bad =
                || format!("the endpoint's auth header \"{name}\" is not a valid HTTP header");
            let name =
                reqwest013::header::HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad())?;
            let mut value = reqwest013::header::HeaderValue::from_str(value).map_err(|_| bad())?;
            value.set_sensitive(true);
            Ok((name, value))
        })
        .collect()
}

/// A live connection to one MCP server. Calls may run concurrently. Dropping it ends
/// the session (and kills a stdio server).
pub struct McpClient {
    endpoint: String,
    service: RunningService<RoleClient, ClientConfig>,
    server: ServerIdentity,
    options: ConnectOptions,
    diagnostics: Arc<Diagnostics>,
    /// Process-backed transports: whether to wait for an exit status in errors.
    has_process: bool,
    kill: CancellationToken,
    sse_reader: Option<tokio::task::JoinHandle<()>>,
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient")
            .field("endpoint", &self.endpoint)
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        self.kill.cancel();
        if let Some(reader) = &self.sse_reader {
            reader.abort();
        }
    }
}

fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("kindgi", env!("CARGO_PKG_VERSION")),
    )
}

impl McpClient {
    /// Parses `endpoint` and connects.
    pub async fn connect(endpoint: &str, options: ConnectOptions) -> Result<Self, McpError> {
        Self::connect_to(Endpoint::parse(endpoint)?, options).await
    }

    /// Connects to a parsed endpoint: starts the process or opens the HTTP session, then
    /// runs the MCP `initialize` handshake, all within `options.timeout`.
    pub async fn connect_to(endpoint: Endpoint, options: ConnectOptions) -> Result<Self, McpError> {
        let text = endpoint.to_string();
        let ms = options.timeout.as_millis() as u64;
        let connect_error = |reason: String| McpError::Connect {
            endpoint: text.clone(),
            reason,
        };
        let kill = CancellationToken::new();
        let (service, diagnostics, has_process, sse_reader) = match &endpoint {
            Endpoint::Stdio { command, args } => {
                let child = stdio::spawn(command, args).map_err(|reason| McpError::Spawn {
                    endpoint: text.clone(),
                    reason,
                })?;
                let diag = child.diagnostics.clone();
                let child_kill = child.kill.clone();
                let served = tokio::time::timeout(
                    options.timeout,
                    client_config().serve((child.sink, child.stream)),
                )
                .await;
                let service = match served {
                    Ok(Ok(service)) => service,
                    Ok(Err(e)) => {
                        let detail = diag.detail(true).await;
                        child_kill.cancel();
                        return Err(connect_error(format!(
                            "the MCP handshake failed: {e}{detail}"
                        )));
                    }
                    Err(_) => {
                        child_kill.cancel();
                        let detail = diag.detail(false).await;
                        return Err(McpError::Timeout {
                            endpoint: text,
                            what: format!("initialize{detail}"),
                            ms,
                        });
                    }
                };
                // Killing the client kills the process.
                let k = kill.clone();
                tokio::spawn(async move {
                    k.cancelled().await;
                    child_kill.cancel();
                });
                (service, diag, true, None)
            }
            Endpoint::StreamableHttp { url } => {
                egress::ensure_crypto_provider();
                let served = tokio::time::timeout(options.timeout, async {
                    egress::check(&options.egress, &text, url).await?;
                    let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                    config = config
                        .custom_headers(custom_headers(&options.auth).map_err(&connect_error)?);
                    let transport = match egress::streamable_client(&options.egress, &options.auth)
                        .map_err(&connect_error)?
                    {
                        None => StreamableHttpClientTransport::from_config(config),
                        Some(client) => StreamableHttpClientTransport::with_client(client, config),
                    };
                    client_config()
                        .serve(transport)
                        .await
                        .map_err(|e| connect_error(format!("the MCP handshake failed: {e}")))
                })
                .await;
                let service = match served {
                    Ok(Ok(service)) => service,
                    Ok(Err(e)) => return Err(e),
                    Err(_) => {
                        return Err(McpError::Timeout {
                            endpoint: text,
                            what: "initialize".into(),
                            ms,
                        });
                    }
                };
                (service, Arc::new(Diagnostics::new()), false, None)
            }
            Endpoint::Sse { url } => {
                let opened = tokio::time::timeout(options.timeout, async {
                    egress::check(&options.egress, &text, url).await?;
                    let client = egress::sse_client(&options.egress, &options.auth)
                        .map_err(&connect_error)?;
                    let transport = sse::connect(url, client).await.map_err(&connect_error)?;
                    let diag = transport.diagnostics.clone();
                    let reader = transport.reader;
                    match client_config()
                        .serve((transport.sink, transport.stream))
                        .await
                    {
                        Ok(service) => Ok((service, diag, reader)),
                        Err(e) => {
                            reader.abort();
                            Err(connect_error(format!(
                                "the MCP handshake failed: {e}{}",
                                diag.detail(false).await
                            )))
                        }
                    }
                })
                .await;
                match opened {
                    Ok(Ok((service, diag, reader))) => (service, diag, false, Some(reader)),
                    Ok(Err(e)) => return Err(e),
                    Err(_) => {
                        return Err(McpError::Timeout {
                            endpoint: text,
                            what: "initialize".into(),
                            ms,
                        });
                    }
                }
            }
        };
        let server = service
            .peer_info()
            .and_then(|info| info.server_info.clone())
            .map(|i| ServerIdentity {
                name: Some(i.name),
                version: Some(i.version),
            })
            .unwrap_or_default();
        Ok(Self {
            endpoint: text,
            service,
            server,
            options,
            diagnostics,
            has_process,
            kill,
            sse_reader,
        })
    }

    /// The server's name and version from `initialize`.
    pub fn server(&self) -> &ServerIdentity {
        &self.server
    }

    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    async fn service_error(&self, what: String, error: ServiceError) -> McpError {
        let endpoint = self.endpoint.clone();
        match error {
            ServiceError::McpError(data) => McpError::Protocol {
                endpoint,
                what,
                message: format!("{} (JSON-RPC error {})", data.message, data.code.0),
            },
            ServiceError::TransportClosed
            | ServiceError::TransportSend(_)
            | ServiceError::Cancelled { .. } => {
                let detail = self.diagnostics.detail(self.has_process).await;
                McpError::Closed {
                    endpoint,
                    what,
                    detail,
                }
            }
            ServiceError::Timeout { timeout } => McpError::Timeout {
                endpoint,
                what,
                ms: timeout.as_millis() as u64,
            },
            other => McpError::Protocol {
                endpoint,
                what,
                message: other.to_string(),
            },
        }
    }

    /// Lists every tool (following pagination) as manifests.
    pub async fn list_tools(&self) -> Result<Vec<ToolManifest>, McpError> {
        let what = "tools/list".to_owned();
        let listed = tokio::time::timeout(self.options.timeout, self.list_all_pages()).await;
        let tools = match listed {
            Ok(Ok(tools)) => tools,
            Ok(Err(ListError::Service(e))) => return Err(self.service_error(what, e).await),
            Ok(Err(ListError::Pagination(message))) => {
                return Err(McpError::Protocol {
                    endpoint: self.endpoint.clone(),
                    what,
                    message,
                });
            }
            Err(_) => {
                return Err(McpError::Timeout {
                    endpoint: self.endpoint.clone(),
                    what,
                    ms: self.options.timeout.as_millis() as u64,
                });
            }
        };
        let mut manifests = Vec::with_capacity(tools.len());
        for tool in tools {
            let json = serde_json::to_value(&tool).map_err(|e| McpError::Protocol {
                endpoint: self.endpoint.clone(),
                what: "tools/list".into(),
                message: format!("a tool could not be read: {e}"),
            })?;
            manifests.push(manifest_from_mcp_tool(
                &json,
                &self.endpoint,
                &self.server,
                &self.options.manifest,
            ));
        }
        Ok(manifests)
    }

    /// Every `tools/list` page. A cursor the server already sent, or more than
    /// [`MAX_LIST_PAGES`] pages, ends the listing with an error: a server whose cursors go
    /// round in circles would otherwise be asked forever (rmcp's own `list_all_tools` has
    /// no such guard, and its response cache can make the loop spin without I/O).
    async fn list_all_pages(&self) -> Result<Vec<rmcp::model::Tool>, ListError> {
        let peer = self.service.peer();
        let mut tools = Vec::new();
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_LIST_PAGES {
            let params = cursor
                .take()
                .map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
            let page = peer.list_tools(params).await.map_err(ListError::Service)?;
            tools.extend(page.tools);
            match page.next_cursor {
                None => return Ok(tools),
                Some(next) if !seen.insert(next.clone()) => {
                    return Err(ListError::Pagination(format!(
                        "the server sent the page cursor \"{next}\" twice, so its tool list would never end; fix the server's pagination"
                    )));
                }
                Some(next) => cursor = Some(next),
            }
        }
        Err(ListError::Pagination(format!(
            "the server's tool list runs past {MAX_LIST_PAGES} pages; fix the server's pagination"
        )))
    }

    /// Calls tool `name` with `input` (a JSON object, or null for none), within `timeout`.
    pub async fn call_tool(
        &self,
        name: &str,
        input: Value,
        timeout: Duration,
    ) -> Result<CallOutcome, McpError> {
        let what = format!("tools/call \"{name}\"");
        let mut params = CallToolRequestParams::new(name.to_owned());
        match input {
            Value::Object(arguments) => params = params.with_arguments(arguments),
            Value::Null => {}
            other => {
                return Err(McpError::Protocol {
                    endpoint: self.endpoint.clone(),
                    what,
                    message: format!(
                        "the input must be a JSON object (MCP tool arguments are an object), not {other}"
                    ),
                });
            }
        }
        let called = tokio::time::timeout(timeout, self.service.peer().call_tool(params)).await;
        let result = match called {
            Ok(Ok(result)) => result,
            Ok(Err(e)) => return Err(self.service_error(what, e).await),
            Err(_) => {
                return Err(McpError::Timeout {
                    endpoint: self.endpoint.clone(),
                    what,
                    ms: timeout.as_millis() as u64,
                });
            }
        };
        let raw = serde_json::to_value(&result).map_err(|e| McpError::Protocol {
            endpoint: self.endpoint.clone(),
            what: what.clone(),
            message: format!("the result could not be read: {e}"),
        })?;
        let is_error = raw.get("isError").and_then(Value::as_bool).unwrap_or(false);
        let value = match raw.get("structuredContent") {
            Some(structured) => structured.clone(),
            None => raw
                .get("content")
                .cloned()
                .unwrap_or_else(|| Value::Array(Vec::new())),
        };
        Ok(CallOutcome {
            value,
            is_error,
            raw,
        })
    }

    /// Ends the session politely (and the process, for stdio).
    pub async fn close(mut self) {
        let _ = tokio::time::timeout(Duration::from_secs(5), self.service.close()).await;
        self.kill.cancel();
    }
}

impl McpSource for McpClient {
    fn endpoint(&self) -> &str {
        &self.endpoint
    }

    fn list_tools(&self) -> BoxFuture<'_, Result<Vec<ToolManifest>, McpError>> {
        Box::pin(McpClient::list_tools(self))
    }

    fn call_tool<'a>(
        &'a self,
        name: &'a str,
        input: Value,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<CallOutcome, McpError>> {
        Box::pin(McpClient::call_tool(self, name, input, timeout))
    }
}

#[path = "sync.rs"]
mod sync;
