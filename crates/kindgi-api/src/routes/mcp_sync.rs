//! How a registered MCP endpoint becomes a tool source (platform-api.md §6): connect with
//! `kindgi-mcp`, `tools/list`, and register each tool into the tenant's tool registry as
//! `<endpointId>.<tool>` at `1.0.0`, `transport: "mcp"`, `mcpEndpoint` the endpoint's
//! `mcp+…://` URI (what `kindgi_mcp::McpClient::connect` takes) and `metadata.mcp.endpointId`
//! naming the endpoint. `<tool>` is the MCP name in kebab-case (`order_status` →
//! `order-status`; the MCP name stays in `metadata.mcp.toolName`), because tool ids here
//! are kebab-case segments; likewise an endpoint id that is not one is kebab-cased.
//!
//! A failed sync registers no tools and says why (the endpoint stays registered, as in the
//! reference): an unreachable server, a `secretRef` whose secret is not set
//! ([`super::mcp_auth`]), an `auth`, `config.headers` or a stdio `config.env` (the MCP
//! client cannot send them yet). Unregistering retires the tools; registering again brings them
//! back (a tombstoned `1.0.0` of this endpoint is reinstated).

use std::time::Duration;

use kindgi_mcp::{ConnectOptions, Endpoint, ManifestOptions, McpClient, kebab_case};
use kindgi_spec::ToolManifest;
use kindgi_spec::tool_id::ToolId;
use kindgi_store::mcp_endpoints::McpEndpointRecord;
use kindgi_store::values::ValuesStore;
use kindgi_tools::egress::EgressPolicy;
use kindgi_tools::registry::{RegisterOptions, RegistryError, ToolRegistry};
use serde_json::{Value, json};

use super::mcp_auth::EndpointAuth;

/// The version every MCP tool is registered at.
pub const MCP_TOOL_VERSION: &str = "1.0.0";

/// The bound on connecting plus `tools/list` during a register.
pub const SYNC_TIMEOUT: Duration = Duration::from_secs(20);

/// The most tools one endpoint may bring (a sync listing more fails, registering none).
pub const MAX_TOOLS_PER_ENDPOINT: usize = 512;

/// Schema dialects an MCP tool's schemas may declare (others are skipped).
const DIALECTS: [&str; 4] = [
    "http://json-schema.org/draft-06/schema",
    "http://json-schema.org/draft-07/schema",
    "https://json-schema.org/draft/2019-09/schema",
    "https://json-schema.org/draft/2020-12/schema",
];

/// The `mcp+…://` URI of a stored endpoint body, or why it cannot be reached yet.
pub fn endpoint_uri(body: &Value) -> Result<String, String> {
    let config = body.get("config").cloned().unwrap_or(Value::Null);
    let text = |key: &str| config.get(key).and_then(Value::as_str).map(str::to_owned);
    if config
        .get("headers")
        .and_then(Value::as_object)
        .is_some_and(|h| !h.is_empty())
    {
        return Err("config.headers are not sent by this runtime's MCP client yet".into());
    }
    match config.get("transport").and_then(Value::as_str) {
        Some("stdio") => {
            if config
                .get("env")
                .and_then(Value::as_object)
                .is_some_and(|e| !e.is_empty())
            {
                return Err("config.env is not passed to stdio servers by this runtime yet".into());
            }
            let args: Vec<String> = config
                .get("args")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            Ok(Endpoint::stdio(text("command").unwrap_or_default(), args).to_string())
        }
        Some(t @ ("streamable-http" | "http-sse")) => {
            let url = if t == "http-sse" {
                text("sseUrl").or_else(|| text("url"))
            } else {
                text("url")
            }
            .unwrap_or_default();
            let lower = url.to_ascii_lowercase();
            let secure = lower.starts_with("https://");
            if !secure && !lower.starts_with("http://") {
                return Err("config.url is not an http(s) URL".into());
            }
            let rest = &url[if secure { 8 } else { 7 }..];
            // Never echoed: a user:password@ in the URL is a credential.
            if rest
                .split(['/', '?', '#'])
                .next()
                .unwrap_or_default()
                .contains('@')
            {
                return Err("config.url carries credentials (user:password@host); send them by reference with `auth` instead".into());
            }
            let scheme = match (t, secure) {
                ("streamable-http", false) => "mcp+http",
                ("streamable-http", true) => "mcp+https",
                (_, false) => "mcp+sse",
                (_, true) => "mcp+sses",
            };
            let uri = format!("{scheme}://{rest}");
            Endpoint::parse(&uri).map_err(|e| e.to_string())?;
            Ok(uri)
        }
        _ => Err("the endpoint's config names no known transport".into()),
    }
}

fn echo(s: &str) -> String {
    s.chars().take(200).collect()
}

/// The tool-id prefix of an endpoint: its id when that is a kebab-case segment, else its
/// id in kebab-case.
pub fn tool_prefix(endpoint_id: &str) -> Option<String> {
    let candidate = format!("{endpoint_id}.x");
    if ToolId::parse(&candidate).is_ok() {
        return Some(endpoint_id.to_owned());
    }
    kebab_case(endpoint_id).filter(|p| ToolId::parse(&format!("{p}.x")).is_ok())
}

/// Connects (to an address `egress` admits) and lists the endpoint's tools as the manifests
/// to register.
pub async fn list_manifests(
    record: &McpEndpointRecord,
    timeout: Duration,
    egress: &EgressPolicy,
    auth: &EndpointAuth,
) -> Result<Vec<ToolManifest>, String> {
    let uri = endpoint_uri(&record.body)?;
    let prefix = tool_prefix(&record.endpoint_id).ok_or_else(|| {
        format!(
            "endpoint id \"{}\" gives no valid tool id prefix",
            echo(&record.endpoint_id)
        )
    })?;
    let options = ConnectOptions {
        timeout,
        manifest: ManifestOptions {
            id_prefix: Some(prefix),
        },
        egress: egress.clone(),
        auth: auth.headers.clone(),
    };
    let client = McpClient::connect(&uri, options)
        .await
        .map_err(|e| auth.masked(&e.to_string()))?;
    let listed = client.list_tools().await;
    client.close().await;
    let mut manifests = listed.map_err(|e| auth.masked(&e.to_string()))?;
    if manifests.len() > MAX_TOOLS_PER_ENDPOINT {
        return Err(format!(
            "the server lists {} tools, more than the {MAX_TOOLS_PER_ENDPOINT} one endpoint may bring",
            manifests.len()
        ));
    }
    manifests
        .retain(|m| ToolId::parse(&m.id).is_ok() && dialect_ok(&m.input) && dialect_ok(&m.output));
    for m in &mut manifests {
        m.version = MCP_TOOL_VERSION.to_owned();
        m.mutating = Some(true);
        let metadata = m.metadata.get_or_insert_with(Default::default);
        let mcp = metadata.entry("mcp").or_insert_with(|| json!({}));
        if let Some(obj) = mcp.as_object_mut() {
            obj.insert(
                "endpointId".into(),
                Value::String(record.endpoint_id.clone()),
            );
        }
    }
    Ok(manifests)
}

fn dialect_ok(schema: &Value) -> bool {
    match schema.get("$schema").and_then(Value::as_str) {
        None => true,
        Some(s) => DIALECTS.contains(&s.trim_end_matches('#')),
    }
}

/// Whether a stored tool version belongs to `endpoint_id`.
fn is_ours(manifest_json: &str, endpoint_id: &str) -> bool {
    serde_json::from_str::<Value>(manifest_json)
        .ok()
        .and_then(|m| {
            m.pointer("/metadata/mcp/endpointId")
                .and_then(Value::as_str)
                .map(|e| e == endpoint_id)
        })
        .unwrap_or(false)
}

/// Registers `manifests` for `record`; all or nothing. Returns the tool ids.
pub async fn register_tools(
    registry: &dyn ToolRegistry,
    record: &McpEndpointRecord,
    manifests: &[ToolManifest],
    project_id: &str,
) -> Result<Vec<String>, String> {
    let tenant = record.tenant_id.as_str();
    let mut done: Vec<String> = Vec::new();
    let mut failure = None;
    for m in manifests {
        let options = RegisterOptions {
            project_id: Some(project_id.to_owned()),
            retired: false,
        };
        let outcome = match registry.register(tenant, m, options).await {
            Ok(_) => Ok(()),
            Err(RegistryError::DuplicateVersion { .. }) => {
                match registry.get_version(tenant, &m.id, MCP_TOOL_VERSION).await {
                    Ok(existing) if is_ours(&existing.manifest_json, &record.endpoint_id) => {
                        registry
                            .reinstate(tenant, &m.id, MCP_TOOL_VERSION)
                            .await
                            .map(drop)
                            .map_err(|e| e.to_string())
                    }
                    Ok(_) => Err(format!(
                        "tool \"{}\" {MCP_TOOL_VERSION} is already registered by something other than this endpoint",
                        m.id
                    )),
                    Err(e) => Err(e.to_string()),
                }
            }
            Err(e) => Err(e.to_string()),
        };
        match outcome {
            Ok(()) => done.push(m.id.clone()),
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    if let Some(e) = failure {
        retire_tools(registry, tenant, &done).await;
        return Err(e);
    }
    Ok(done)
}

/// Retires an endpoint's tools (tombstones their `1.0.0`); unknown ones are skipped.
pub async fn retire_tools(registry: &dyn ToolRegistry, tenant: &str, tool_ids: &[String]) {
    for id in tool_ids {
        if let Err(e) = registry.unregister(tenant, id, MCP_TOOL_VERSION).await {
            if !matches!(
                e,
                RegistryError::VersionNotFound { .. } | RegistryError::ToolNotFound { .. }
            ) {
                tracing::warn!(tool = %id, error = %e, "could not retire an MCP endpoint's tool");
            }
        }
    }
}

/// Resolves the endpoint's credential, lists and registers; `Ok(tool ids)` or
/// `Err(why no tools were registered)` (masked with the credential).
pub async fn sync(
    registry: &dyn ToolRegistry,
    values: &ValuesStore,
    record: &McpEndpointRecord,
    project_id: &str,
    timeout: Duration,
    egress: &EgressPolicy,
) -> Result<Vec<String>, String> {
    let auth = super::mcp_auth::resolve(values, record, project_id, egress).await?;
    let manifests = list_manifests(record, timeout, egress, &auth).await?;
    register_tools(registry, record, &manifests, project_id).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_from_configs() {
        let stdio =
            json!({"config": {"transport": "stdio", "command": "node", "args": ["my server.js"]}});
        assert_eq!(
            endpoint_uri(&stdio).ok().as_deref(),
            Some("mcp+stdio://node my%20server.js")
        );
        let http =
            json!({"config": {"transport": "streamable-http", "url": "https://h.example/mcp"}});
        assert_eq!(
            endpoint_uri(&http).ok().as_deref(),
            Some("mcp+https://h.example/mcp")
        );
        let sse = json!({"config": {"transport": "http-sse", "url": "http://h/messages", "sseUrl": "http://h/sse"}});
        assert_eq!(endpoint_uri(&sse).ok().as_deref(), Some("mcp+sse://h/sse"));
        let secret = json!({"secretRef": {"envName": "dev", "name": "T"}, "config": {"transport": "streamable-http", "url": "http://h/mcp"}});
        assert_eq!(
            endpoint_uri(&secret).ok().as_deref(),
            Some("mcp+http://h/mcp")
        );
        let ftp = json!({"config": {"transport": "streamable-http", "url": "ftp://h/mcp"}});
        assert!(endpoint_uri(&ftp).is_err());
        let userinfo =
            json!({"config": {"transport": "streamable-http", "url": "http://u:hunter2@h/mcp"}});
        let why = endpoint_uri(&userinfo).err().unwrap_or_default();
        assert!(
            why.contains("credentials") && !why.contains("hunter2"),
            "{why}"
        );
    }

    #[test]
    fn prefixes() {
        assert_eq!(tool_prefix("inventory").as_deref(), Some("inventory"));
        assert_eq!(tool_prefix("stock_db").as_deref(), Some("stock-db"));
        assert_eq!(tool_prefix("___"), None);
    }
}
