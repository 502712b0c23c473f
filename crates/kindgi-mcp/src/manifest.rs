//! An MCP server's tool (`tools/list` entry) as a Kindgi [`ToolManifest`].
//!
//! - `id`: `<prefix>.<tool>` so it is a valid pack tool id: `<tool>` is the MCP tool name in
//!   kebab-case (`get_weather`, `getWeather` → `get-weather`), `<prefix>` is
//!   [`ManifestOptions::id_prefix`] or else the server's name in kebab-case
//!   (`mcp-servers/everything` → `mcp-servers-everything`), or `mcp` when it has none.
//!   The name the server knows is kept in `metadata.mcp.toolName`.
//! - `version`: the server's `serverInfo.version` when it is a plain `X.Y.Z`, else `0.0.0`.
//! - `input`/`output`: the tool's `inputSchema`/`outputSchema` untouched, in whatever dialect
//!   their `$schema` declares (`output` is `{}` when the tool declares none); the engine
//!   validates them in MCP mode.
//! - `transport: "mcp"`, `mcpEndpoint` set, and `mutating: true` whatever the server's
//!   annotations claim (`readOnlyHint` is a hint from a party we do not control); the
//!   annotations, title and `_meta` are kept in `metadata.mcp`.

use kindgi_spec::{ToolManifest, Transport};
use serde_json::{Map, Value, json};

/// How listed tools are named.
#[derive(Debug, Clone, Default)]
pub struct ManifestOptions {
    /// The pack-like prefix of every tool id (used as given); by default the server's name
    /// in kebab-case.
    pub id_prefix: Option<String>,
}

/// The server's identity from its `initialize` answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerIdentity {
    pub name: Option<String>,
    pub version: Option<String>,
}

/// `X.Y.Z` with no leading zeros: what a tool version may be.
fn is_plain_semver(v: &str) -> bool {
    let parts: Vec<&str> = v.split('.').collect();
    parts.len() == 3
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.bytes().all(|b| b.is_ascii_digit())
                && (p.len() == 1 || !p.starts_with('0'))
        })
}

/// Builds the manifest of one `tools/list` entry (given as JSON, as the server sent it).
pub fn manifest_from_mcp_tool(
    tool: &Value,
    endpoint: &str,
    server: &ServerIdentity,
    options: &ManifestOptions,
) -> ToolManifest {
    let name = tool
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let title = tool
        .get("title")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty());
    let annotations = tool.get("annotations").filter(|a| !a.is_null());
    let description = tool
        .get("description")
        .and_then(Value::as_str)
        .filter(|d| !d.trim().is_empty())
        .or(title)
        .or_else(|| {
            annotations
                .and_then(|a| a.get("title"))
                .and_then(Value::as_str)
        })
        .map(str::to_owned)
        .unwrap_or_else(|| format!("MCP tool \"{name}\" at {endpoint}"));

    let mut mcp = Map::new();
    mcp.insert("toolName".into(), Value::String(name.clone()));
    if let Some(t) = title {
        mcp.insert("title".into(), Value::String(t.to_owned()));
    }
    if let Some(a) = annotations {
        mcp.insert("annotations".into(), a.clone());
    }
    for key in ["_meta", "icons"] {
        if let Some(v) = tool.get(key).filter(|v| !v.is_null()) {
            mcp.insert(key.trim_start_matches('_').into(), v.clone());
        }
    }
    if server.name.is_some() || server.version.is_some() {
        mcp.insert(
            "server".into(),
            json!({"name": server.name, "version": server.version}),
        );
    }
    let mut metadata = Map::new();
    metadata.insert("mcp".into(), Value::Object(mcp));

    let version = server
        .version
        .as_deref()
        .filter(|v| is_plain_semver(v))
        .unwrap_or("0.0.0")
        .to_owned();
    let prefix = match (&options.id_prefix, &server.name) {
        (Some(prefix), _) => prefix.clone(),
        (None, Some(server_name)) => kebab_case(server_name).unwrap_or_else(|| "mcp".to_owned()),
        (None, None) => "mcp".to_owned(),
    };
    let id = format!(
        "{prefix}.{}",
        kebab_case(&name).unwrap_or_else(|| "tool".to_owned())
    );
    ToolManifest {
        id,
        description,
        version,
        input: tool
            .get("inputSchema")
            .cloned()
            .unwrap_or_else(|| json!({"type": "object"})),
        output: tool
            .get("outputSchema")
            .filter(|s| !s.is_null())
            .cloned()
            .unwrap_or_else(|| json!({})),
        needs: None,
        effects: None,
        transport: Some(Transport::Mcp),
        mcp_endpoint: Some(endpoint.to_owned()),
        metadata: Some(metadata),
        sandbox: None,
        mutating: Some(true),
        needs_approval_when_unattended: None,
        pauses: None,
        result_is_outside_data: None,
        limits: None,
        network: None,
        needs_spec: None,
        code_artifact_ref: None,
        spec: None,
    }
}

/// `text` as one kebab-case id segment: lower-case ASCII words joined by single hyphens
/// (a lower-to-upper case change starts a new word); `None` when nothing usable is left.
pub fn kebab_case(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut previous_lower = false;
    for ch in text.chars() {
        if ch.is_ascii_alphanumeric() {
            if ch.is_ascii_uppercase() && previous_lower && !out.ends_with('-') {
                out.push('-');
            }
            out.push(ch.to_ascii_lowercase());
            previous_lower = ch.is_ascii_lowercase() || ch.is_ascii_digit();
        } else {
            if !out.is_empty() && !out.ends_with('-') {
                out.push('-');
            }
            previous_lower = false;
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    (!out.is_empty()).then_some(out)
}

/// The MCP tool name a manifest built here calls (falls back to the id).
pub fn mcp_tool_name(manifest: &ToolManifest) -> &str {
    manifest
        .metadata
        .as_ref()
        .and_then(|m| m.get("mcp"))
        .and_then(|m| m.get("toolName"))
        .and_then(Value::as_str)
        .unwrap_or(&manifest.id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_hints_never_make_a_tool_read_only() {
        let tool = json!({
            "name": "get-sum",
            "inputSchema": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"},
            "annotations": {"readOnlyHint": true, "title": "Sum"}
        });
        let server = ServerIdentity {
            name: Some("srv".into()),
            version: Some("2.1.0".into()),
        };
        let m = manifest_from_mcp_tool(
            &tool,
            "mcp+stdio://srv",
            &server,
            &ManifestOptions {
                id_prefix: Some("srv".into()),
            },
        );
        assert_eq!(m.id, "srv.get-sum");
        assert_eq!(m.version, "2.1.0");
        assert_eq!(m.description, "Sum");
        assert_eq!(m.mutating, Some(true));
        assert!(m.is_mcp() && !m.is_read_only());
        assert_eq!(
            m.input["$schema"],
            "http://json-schema.org/draft-07/schema#"
        );
        assert_eq!(m.output, json!({}));
        assert_eq!(mcp_tool_name(&m), "get-sum");
        let meta = &m.metadata.as_ref().unwrap()["mcp"];
        assert_eq!(meta["annotations"]["readOnlyHint"], true);
        assert_eq!(meta["server"], json!({"name": "srv", "version": "2.1.0"}));
    }

    #[test]
    fn ids_are_kebab_case_and_prefixed() {
        assert_eq!(kebab_case("get_weather").as_deref(), Some("get-weather"));
        assert_eq!(
            kebab_case("getWeatherNow").as_deref(),
            Some("get-weather-now")
        );
        assert_eq!(
            kebab_case("mcp-servers/everything").as_deref(),
            Some("mcp-servers-everything")
        );
        assert_eq!(kebab_case("  Ünï__x--Y2 ").as_deref(), Some("n-x-y2"));
        assert_eq!(kebab_case("__"), None);
        let server = ServerIdentity {
            name: Some("My Server".into()),
            version: None,
        };
        let m = manifest_from_mcp_tool(
            &json!({"name": "do_it"}),
            "e",
            &server,
            &ManifestOptions::default(),
        );
        assert_eq!(m.id, "my-server.do-it");
        assert_eq!(mcp_tool_name(&m), "do_it");
        let m = manifest_from_mcp_tool(
            &json!({"name": "x"}),
            "e",
            &ServerIdentity::default(),
            &ManifestOptions::default(),
        );
        assert_eq!(m.id, "mcp.x");
    }

    #[test]
    fn odd_server_versions_become_0_0_0() {
        for v in ["2026.8.31-beta", "1.0", "01.2.3", "v1.2.3"] {
            let server = ServerIdentity {
                name: None,
                version: Some(v.into()),
            };
            let m = manifest_from_mcp_tool(
                &json!({"name": "x"}),
                "e",
                &server,
                &ManifestOptions::default(),
            );
            assert_eq!(m.version, "0.0.0", "{v}");
        }
        let server = ServerIdentity {
            name: None,
            version: Some("2026.8.31".into()),
        };
        let m = manifest_from_mcp_tool(
            &json!({"name": "x"}),
            "e",
            &server,
            &ManifestOptions::default(),
        );
        assert_eq!(m.version, "2026.8.31");
    }
}
