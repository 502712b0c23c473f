//! The `POST /v1/mcp/endpoints` body check (platform-api.md §6), in the reference's order
//! and words: every refusal is `400 invalid-mcp-endpoint` with a `details.reason` (unknown
//! field, endpoint id, name, transport, config per transport, `secretRef`, `auth` and its
//! conflicts, credential-looking headers, instructions, metadata, `sendTraceparent`).
//! The result is the endpoint as stored and answered (the scope fields left out).

use axum::http::StatusCode;
use serde_json::{Map, Value, json};

use crate::error::ApiError;

/// The transports, in the reference's order.
pub const TRANSPORTS: [&str; 3] = ["stdio", "http-sse", "streamable-http"];

/// What a registered credential header's value reads back as.
pub const REDACTED: &str = "[redacted]";

const BODY_FIELDS: [&str; 11] = [
    "endpointId",
    "name",
    "transport",
    "config",
    "secretRef",
    "auth",
    "instructions",
    "metadata",
    "sendTraceparent",
    "scopeKind",
    "scopeId",
];

const CREDENTIAL_HEADERS: [&str; 3] = ["authorization", "proxy-authorization", "cookie"];
const CREDENTIAL_PARTS: [&str; 12] = [
    "token",
    "secret",
    "password",
    "passwd",
    "apikey",
    "credential",
    "credentials",
    "signature",
    "session",
    "auth",
    "authorization",
    "authentication",
];
const CREDENTIAL_PAIR_FIRSTS: [&str; 11] = [
    "api",
    "access",
    "private",
    "auth",
    "subscription",
    "functions",
    "application",
    "app",
    "master",
    "client",
    "partner",
];

/// Headers the MCP transport or HTTP itself sets, which `auth` cannot.
const TRANSPORT_HEADERS: [&str; 16] = [
    "host",
    "content-length",
    "content-type",
    "accept",
    "connection",
    "keep-alive",
    "transfer-encoding",
    "te",
    "upgrade",
    "trailer",
    "expect",
    "last-event-id",
    "mcp-session-id",
    "mcp-protocol-version",
    "traceparent",
    "tracestate",
];

/// Whether a header's name says it carries a credential (`Authorization`, `Cookie`,
/// `X-Api-Key`, `X-Auth-Token`, …; a lone `key` part does not: `X-Idempotency-Key`).
pub fn is_credential_header(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    if CREDENTIAL_HEADERS.contains(&lower.as_str()) {
        return true;
    }
    let parts: Vec<&str> = lower.split(['-', '_']).collect();
    if parts.iter().any(|p| CREDENTIAL_PARTS.contains(p)) {
        return true;
    }
    parts
        .windows(2)
        .any(|w| w[1] == "key" && CREDENTIAL_PAIR_FIRSTS.contains(&w[0]))
}

/// A refusal: message and `details.reason`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    pub message: String,
    pub reason: &'static str,
}

impl Invalid {
    fn new(message: impl Into<String>, reason: &'static str) -> Invalid {
        Invalid {
            message: message.into(),
            reason,
        }
    }

    /// `400 invalid-mcp-endpoint`, `details.reason`.
    pub fn into_api_error(self) -> ApiError {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid-mcp-endpoint",
            self.message,
        )
        .with_details(json!({ "reason": self.reason }))
    }
}

type Checked<T> = Result<T, Invalid>;

fn echo(s: &str) -> String {
    s.chars().take(200).collect()
}

/// Checks a register body; returns the endpoint to store.
pub fn validate(body: &Map<String, Value>) -> Checked<Value> {
    if let Some(unknown) = body.keys().find(|k| !BODY_FIELDS.contains(&k.as_str())) {
        return Err(Invalid::new(
            format!("Unknown field `{}`", echo(unknown)),
            "unknown-field",
        ));
    }
    let id = match body.get("endpointId") {
        Some(Value::String(s)) if !s.is_empty() => s.as_str(),
        _ => {
            return Err(Invalid::new(
                "endpointId required (non-empty string)",
                "empty-endpoint-id",
            ));
        }
    };
    if id.contains('.') {
        return Err(Invalid::new(
            format!(
                "endpointId \"{}\" contains \".\": an MCP tool's id is \"<endpointId>.<tool name>\", so an endpoint id can't. Use \"-\" or \"_\" instead.",
                echo(id)
            ),
            "dot-in-endpoint-id",
        ));
    }
    let id = echo(id);
    if !matches!(body.get("name"), Some(Value::String(s)) if !s.is_empty()) {
        return Err(Invalid::new(
            format!("endpoint \"{id}\" missing name"),
            "empty-name",
        ));
    }
    let transport = match body.get("transport").and_then(Value::as_str) {
        Some(t) if TRANSPORTS.contains(&t) => t,
        other => {
            let got = other.map_or_else(
                || {
                    body.get("transport")
                        .map_or("undefined".into(), |v| echo(&v.to_string()))
                },
                echo,
            );
            return Err(Invalid::new(
                format!(
                    "endpoint \"{id}\" transport must be one of {} — got \"{got}\"",
                    TRANSPORTS.join(" / ")
                ),
                "unknown-transport",
            ));
        }
    };
    let Some(Value::Object(config)) = body.get("config") else {
        return Err(Invalid::new(
            format!("endpoint \"{id}\" config required (object)"),
            "missing-config",
        ));
    };
    if config.get("transport").and_then(Value::as_str) != Some(transport) {
        let got = config
            .get("transport")
            .map_or("undefined".into(), |v| match v {
                Value::String(s) => echo(s),
                other => echo(&other.to_string()),
            });
        return Err(Invalid::new(
            format!(
                "endpoint \"{id}\" config.transport must match top-level transport (got \"{got}\" vs \"{transport}\")"
            ),
            "config-transport-mismatch",
        ));
    }
    let config = validate_config(&id, transport, config)?;
    if let Some(raw) = body.get("secretRef") {
        secret_ref(raw, "secretRef")
            .map_err(|m| Invalid::new(format!("endpoint \"{id}\": {m}"), "invalid-secret-ref"))?;
    }
    if let Some(auth) = body.get("auth") {
        check_auth(
            &id,
            transport,
            body.contains_key("secretRef"),
            auth,
            &config,
        )?;
    }
    credential_in_headers(&id, &config)?;
    if body.get("instructions").is_some_and(|v| !v.is_string()) {
        return Err(Invalid::new(
            format!("endpoint \"{id}\" instructions must be a string"),
            "invalid-instructions",
        ));
    }
    if body.get("metadata").is_some_and(|v| !v.is_object()) {
        return Err(Invalid::new(
            format!("endpoint \"{id}\" metadata must be an object"),
            "invalid-metadata",
        ));
    }
    match body.get("sendTraceparent") {
        None | Some(Value::Bool(false)) => {}
        Some(Value::Bool(true)) if transport == "stdio" => {
            return Err(Invalid::new(
                format!(
                    "endpoint \"{id}\" sendTraceparent needs an HTTP transport: a stdio server gets no headers"
                ),
                "invalid-send-traceparent",
            ));
        }
        Some(Value::Bool(true)) => {}
        Some(_) => {
            return Err(Invalid::new(
                format!("endpoint \"{id}\" sendTraceparent must be true or false"),
                "invalid-send-traceparent",
            ));
        }
    }
    let mut out = Map::new();
    for key in BODY_FIELDS.iter().filter(|k| !k.starts_with("scope")) {
        if let Some(v) = body.get(*key) {
            out.insert((*key).to_owned(), v.clone());
        }
    }
    out.insert("config".into(), Value::Object(config));
    Ok(Value::Object(out))
}

/// A `Record<string, string>`.
fn string_map(v: &Value) -> bool {
    v.as_object()
        .is_some_and(|m| m.values().all(Value::is_string))
}

fn validate_config(
    id: &str,
    transport: &str,
    cfg: &Map<String, Value>,
) -> Checked<Map<String, Value>> {
    let bad = |what: &str, reason: &'static str| {
        Err(Invalid::new(
            format!("endpoint \"{id}\" {transport} {what}"),
            reason,
        ))
    };
    let mut out = Map::new();
    out.insert("transport".into(), Value::String(transport.to_owned()));
    let keep = |out: &mut Map<String, Value>, key: &str| {
        if let Some(v) = cfg.get(key) {
            out.insert(key.to_owned(), v.clone());
        }
    };
    match transport {
        "stdio" => {
            if !matches!(cfg.get("command"), Some(Value::String(s)) if !s.is_empty()) {
                return bad(
                    "config.command required (non-empty string)",
                    "invalid-stdio-command",
                );
            }
            if cfg
                .get("args")
                .is_some_and(|a| !a.as_array().is_some_and(|a| a.iter().all(Value::is_string)))
            {
                return bad(
                    "config.args must be an array of strings",
                    "invalid-stdio-args",
                );
            }
            if cfg.get("env").is_some_and(|e| !string_map(e)) {
                return bad(
                    "config.env must be a Record<string, string>",
                    "invalid-stdio-env",
                );
            }
            for key in ["command", "args", "env"] {
                keep(&mut out, key);
            }
        }
        _ => {
            let (url_reason, headers_reason) = if transport == "http-sse" {
                ("invalid-http-sse-url", "invalid-http-sse-headers")
            } else {
                (
                    "invalid-streamable-http-url",
                    "invalid-streamable-http-headers",
                )
            };
            if !matches!(cfg.get("url"), Some(Value::String(s)) if !s.is_empty()) {
                return bad("config.url required (non-empty string)", url_reason);
            }
            if transport == "http-sse" && cfg.get("sseUrl").is_some_and(|v| !v.is_string()) {
                return bad("config.sseUrl must be a string", "invalid-http-sse-sse-url");
            }
            if cfg.get("headers").is_some_and(|h| !string_map(h)) {
                return bad(
                    "config.headers must be a Record<string, string>",
                    headers_reason,
                );
            }
            for key in ["url", "sseUrl", "headers"] {
                if key != "sseUrl" || transport == "http-sse" {
                    keep(&mut out, key);
                }
            }
        }
    }
    Ok(out)
}

fn header_names(config: &Map<String, Value>) -> Vec<&str> {
    config
        .get("headers")
        .and_then(Value::as_object)
        .map(|h| h.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

fn credential_in_headers(id: &str, config: &Map<String, Value>) -> Checked<()> {
    let names: Vec<&str> = header_names(config)
        .into_iter()
        .filter(|n| is_credential_header(n))
        .collect();
    if names.is_empty() {
        return Ok(());
    }
    let listed: Vec<String> = names.iter().map(|n| format!("\"{}\"", echo(n))).collect();
    let by_reference: Vec<String> = names
        .iter()
        .map(|n| {
            format!(
                "{{ name: \"{}\", secretRef: {{ envName, name }} }}",
                echo(n)
            )
        })
        .collect();
    let bearer = if names
        .iter()
        .any(|n| n.eq_ignore_ascii_case("authorization"))
    {
        " For `Authorization: Bearer <token>`, secretRef sends it."
    } else {
        ""
    };
    Err(Invalid::new(
        format!(
            "endpoint \"{id}\" puts a credential in config.headers ({}), where it's stored and shown as given. Store each value as a secret and send it by reference: auth: {{ scheme: \"header\", headers: [{}] }}.{bearer}",
            listed.join(", "),
            by_reference.join(", ")
        ),
        "credential-in-headers",
    ))
}

/// `{envName, name}`: the reference's `parseSecretRef`; `Err` is the message.
pub fn secret_ref(raw: &Value, field: &str) -> Result<(), String> {
    let Some(obj) = raw.as_object() else {
        return Err(format!("`{field}` must be an object `{{ envName, name }}`"));
    };
    if let Some(k) = obj.keys().find(|k| *k != "envName" && *k != "name") {
        return Err(format!("Unknown field `{field}.{}`", echo(k)));
    }
    let env_ok = obj.get("envName").and_then(Value::as_str).is_some_and(|e| {
        let b = e.as_bytes();
        !b.is_empty()
            && b.len() <= 63
            && b[0].is_ascii_lowercase()
            && b.iter()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
    });
    if !env_ok {
        return Err(format!(
            "`{field}.envName` must be a lowercase name (letters, digits, hyphens)"
        ));
    }
    let name_ok = obj
        .get("name")
        .and_then(Value::as_str)
        .is_some_and(|n| !n.is_empty() && n.chars().count() <= 256);
    if !name_ok {
        return Err(format!(
            "`{field}.name` must be a non-empty string of at most 256 characters"
        ));
    }
    Ok(())
}

fn bounded(v: Option<&Value>, max: usize) -> bool {
    v.and_then(Value::as_str)
        .is_some_and(|s| !s.is_empty() && s.chars().count() <= max)
}

fn check_auth(
    id: &str,
    transport: &str,
    has_secret_ref: bool,
    raw: &Value,
    config: &Map<String, Value>,
) -> Checked<()> {
    if has_secret_ref {
        return Err(Invalid::new(
            format!(
                "endpoint \"{id}\" sets both secretRef and auth: secretRef is the bearer form, auth the others. Set one."
            ),
            "auth-with-secret-ref",
        ));
    }
    if transport == "stdio" {
        return Err(Invalid::new(
            format!(
                "endpoint \"{id}\" auth needs an HTTP transport: a stdio server gets no headers"
            ),
            "auth-on-stdio",
        ));
    }
    let sent = parse_auth(id, raw)?;
    let twice = header_names(config)
        .into_iter()
        .find(|n| sent.contains(&n.to_ascii_lowercase()));
    match (twice, sent.as_slice()) {
        (None, _) => Ok(()),
        (Some(_), [only]) if only == "authorization" && !is_header_scheme(raw) => {
            Err(Invalid::new(
                format!(
                    "endpoint \"{id}\" sets auth and an Authorization header in config.headers: auth sends that header. Drop the header."
                ),
                "auth-with-authorization-header",
            ))
        }
        (Some(name), _) => Err(Invalid::new(
            format!(
                "endpoint \"{id}\" sets the header \"{}\" in both auth.headers and config.headers: auth sends it. Drop it from config.headers.",
                echo(name)
            ),
            "auth-header-in-config",
        )),
    }
}

fn is_header_scheme(raw: &Value) -> bool {
    raw.get("scheme").and_then(Value::as_str) == Some("header")
}

/// Checks `auth`; returns the header names (lower-case) it sends.
fn parse_auth(id: &str, raw: &Value) -> Checked<Vec<String>> {
    let bad = |m: String| Invalid::new(format!("endpoint \"{id}\" {m}"), "invalid-auth");
    let Some(a) = raw.as_object() else {
        return Err(bad("auth must be an object with a `scheme`".into()));
    };
    let scheme = a.get("scheme").and_then(Value::as_str).unwrap_or_default();
    let fields: &[&str] = match scheme {
        "basic" => &["scheme", "username", "secretRef"],
        "oauth2-client-credentials" => &[
            "scheme",
            "tokenUrl",
            "clientId",
            "secretRef",
            "scope",
            "audience",
            "clientAuth",
        ],
        "header" => &["scheme", "headers"],
        _ => {
            return Err(bad(
                "auth.scheme must be one of basic / oauth2-client-credentials / header".into(),
            ));
        }
    };
    if let Some(k) = a.keys().find(|k| !fields.contains(&k.as_str())) {
        return Err(bad(format!(
            "auth: unknown field `auth.{}` for scheme {scheme}",
            echo(k)
        )));
    }
    if scheme == "header" {
        return parse_header_auth(id, a.get("headers"));
    }
    secret_ref(a.get("secretRef").unwrap_or(&Value::Null), "auth.secretRef")
        .map_err(|m| Invalid::new(format!("endpoint \"{id}\" auth: {m}"), "invalid-secret-ref"))?;
    if scheme == "basic" {
        let ok = bounded(a.get("username"), 256)
            && !a
                .get("username")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .contains(':');
        if !ok {
            return Err(bad(
                "auth.username must be 1 to 256 characters, without `:`".into(),
            ));
        }
    } else {
        check_oauth2(id, a)?;
    }
    Ok(vec!["authorization".to_owned()])
}

fn check_oauth2(id: &str, a: &Map<String, Value>) -> Checked<()> {
    let bad = |m: &str| Invalid::new(format!("endpoint \"{id}\" {m}"), "invalid-auth");
    let url_ok = a
        .get("tokenUrl")
        .and_then(Value::as_str)
        .filter(|u| !u.is_empty() && u.len() <= 2048)
        .is_some_and(token_url_allowed);
    if !url_ok {
        return Err(Invalid::new(
            format!(
                "endpoint \"{id}\" auth.tokenUrl must be an https URL (or http to localhost, 127.0.0.1 or [::1]), without credentials or a fragment"
            ),
            "invalid-token-url",
        ));
    }
    if !bounded(a.get("clientId"), 512) {
        return Err(bad("auth.clientId must be 1 to 512 characters"));
    }
    for field in ["scope", "audience"] {
        if a.get(field).is_some() && !bounded(a.get(field), 1024) {
            return Err(bad(&format!("auth.{field} must be 1 to 1024 characters")));
        }
    }
    if let Some(v) = a.get("clientAuth") {
        if !matches!(
            v.as_str(),
            Some("client_secret_basic" | "client_secret_post")
        ) {
            return Err(bad(
                "auth.clientAuth must be one of client_secret_basic / client_secret_post",
            ));
        }
    }
    Ok(())
}

/// https, or http to this machine; no userinfo, no fragment.
fn token_url_allowed(url: &str) -> bool {
    let Some((scheme, rest)) = url.split_once("://") else {
        return false;
    };
    if rest.contains('#') {
        return false;
    }
    let authority = rest.split(['/', '?']).next().unwrap_or_default();
    if authority.is_empty() || authority.contains('@') {
        return false;
    }
    let host = if authority.starts_with('[') {
        authority.split_inclusive(']').next().unwrap_or_default()
    } else {
        authority.split(':').next().unwrap_or_default()
    };
    match scheme.to_ascii_lowercase().as_str() {
        "https" => !host.is_empty(),
        "http" => matches!(
            host.to_ascii_lowercase().as_str(),
            "localhost" | "127.0.0.1" | "[::1]"
        ),
        _ => false,
    }
}

fn parse_header_auth(id: &str, raw: Option<&Value>) -> Checked<Vec<String>> {
    let bad = |m: String| Invalid::new(format!("endpoint \"{id}\" {m}"), "invalid-auth");
    let list = raw
        .and_then(Value::as_array)
        .filter(|l| (1..=4).contains(&l.len()));
    let Some(list) = list else {
        return Err(bad("auth.headers must be a list of 1 to 4 headers".into()));
    };
    let mut seen: Vec<String> = Vec::new();
    for (i, item) in list.iter().enumerate() {
        let at = format!("auth.headers[{i}]");
        let Some(h) = item.as_object() else {
            return Err(bad(format!(
                "{at} must be an object `{{ name, secretRef, prefix? }}`"
            )));
        };
        if let Some(k) = h
            .keys()
            .find(|k| !["name", "secretRef", "prefix"].contains(&k.as_str()))
        {
            return Err(bad(format!("auth: unknown field `{at}.{}`", echo(k))));
        }
        let name = h.get("name").and_then(Value::as_str).unwrap_or_default();
        let token = !name.is_empty()
            && name.len() <= 256
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+.^_`|~-".contains(&b));
        if !token {
            return Err(bad(format!(
                "{at}.name must be an HTTP header name of 1 to 256 characters"
            )));
        }
        let lower = name.to_ascii_lowercase();
        if TRANSPORT_HEADERS.contains(&lower.as_str()) {
            return Err(bad(format!(
                "{at}.name \"{name}\" is a header the MCP transport sets itself"
            )));
        }
        if let Some(p) = h.get("prefix") {
            let ok = bounded(Some(p), 64)
                && p.as_str()
                    .is_some_and(|s| !s.chars().any(|c| (c as u32) < 0x20 || c == '\u{7f}'));
            if !ok {
                return Err(bad(format!(
                    "{at}.prefix must be 1 to 64 characters, without control characters"
                )));
            }
        }
        secret_ref(
            h.get("secretRef").unwrap_or(&Value::Null),
            &format!("{at}.secretRef"),
        )
        .map_err(|m| Invalid::new(format!("endpoint \"{id}\" auth: {m}"), "invalid-secret-ref"))?;
        if seen.contains(&lower) {
            return Err(bad(format!(
                "auth.headers names \"{name}\" twice: each header once"
            )));
        }
        seen.push(lower);
    }
    Ok(seen)
}

/// The endpoint as answered: credential headers' values read `[redacted]`.
pub fn redacted(endpoint: &Value) -> Value {
    let mut out = endpoint.clone();
    if let Some(headers) = out
        .pointer_mut("/config/headers")
        .and_then(Value::as_object_mut)
    {
        for (name, value) in headers.iter_mut() {
            if is_credential_header(name) {
                *value = Value::String(REDACTED.to_owned());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_header_names() {
        for yes in [
            "Authorization",
            "cookie",
            "X-Api-Key",
            "X-Auth-Token",
            "x_session_id",
            "Ocp-Apim-Subscription-Key",
            "x-functions-key",
            "Proxy-Authorization",
        ] {
            assert!(is_credential_header(yes), "{yes}");
        }
        for no in [
            "X-Idempotency-Key",
            "X-Cache-Key",
            "Accept-Language",
            "X-Tenant",
        ] {
            assert!(!is_credential_header(no), "{no}");
        }
    }

    #[test]
    fn token_urls() {
        assert!(token_url_allowed("https://id.example.com/token"));
        assert!(token_url_allowed("http://127.0.0.1:9000/token"));
        assert!(token_url_allowed("http://[::1]:9000/token"));
        assert!(!token_url_allowed("http://id.example.com/token"));
        assert!(!token_url_allowed("https://u:p@id.example.com/token"));
        assert!(!token_url_allowed("https://id.example.com/token#x"));
    }
}
