//! The `POST /v1/providers` body check (`RegisterProviderBody`, `ProviderMetadata`,
//! `ModelInfo`): the shape, with every refusal `400 invalid-provider` naming the field
//! (`details.reason`, `details.path` a JSON pointer into the body); then what the adapter
//! and this runtime refuse, `422 provider-config-invalid` with `details.issues`
//! ([`ConfigProblem`]s): a `send_traceparent` that isn't a boolean, a credential-looking key
//! in `adapter_config` (credentials go in `secret_ref`), and [`adapters::check`]'s problems.

use axum::http::StatusCode;
use kindgi_core::ports::SecretRef;
use kindgi_runtime::model::adapters::{self, ConfigProblem};
use serde_json::{Map, Value, json};

use super::mcp_validate::is_credential_header;
use crate::error::ApiError;

const BODY_FIELDS: [&str; 5] = [
    "metadata",
    "adapter_id",
    "secret_ref",
    "adapter_config",
    "send_traceparent",
];
const METADATA_FIELDS: [&str; 9] = [
    "id",
    "region",
    "models",
    "defaultModel",
    "attributes",
    "description",
    "capabilityKind",
    "fallback",
    "labels",
];
const MODEL_FIELDS: [&str; 9] = [
    "name",
    "contextWindow",
    "features",
    "cost",
    "p95LatencyMs",
    "maxOutputTokens",
    "sampling",
    "thinking",
    "description",
];

/// The closed `Feature` enum.
pub const FEATURES: [&str; 13] = [
    "structured-output",
    "vision",
    "audio-input",
    "audio-output",
    "tool-use",
    "parallel-tool-use",
    "thinking",
    "long-context",
    "code-execution",
    "web-search",
    "file-search",
    "streaming",
    "batch",
];

/// A registration that passed the shape check.
#[derive(Debug, Clone)]
pub struct Registration {
    pub metadata: Value,
    pub id: String,
    pub adapter_id: String,
    pub secret_ref: Option<SecretRef>,
    pub adapter_config: Map<String, Value>,
    pub send_traceparent: bool,
}

fn echo(s: &str) -> String {
    s.chars().take(200).collect()
}

/// `400 invalid-provider`: `message`, `details.reason`, `details.path`.
pub fn invalid(path: &str, reason: &str, message: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, "invalid-provider", message)
        .with_details(json!({ "reason": reason, "path": path }))
}

/// `422 provider-config-invalid` for `provider` on `adapter`, listing `issues`.
pub fn config_invalid(provider: &str, adapter: &str, issues: &[ConfigProblem]) -> ApiError {
    let first = issues
        .first()
        .map(|p| format!(": {}", p.message))
        .unwrap_or_default();
    ApiError::new(
        StatusCode::UNPROCESSABLE_ENTITY,
        "provider-config-invalid",
        format!(
            "Model provider \"{}\" (adapter {}) can't be registered{first}",
            echo(provider),
            echo(adapter)
        ),
    )
    .with_details(
        json!({ "providerId": echo(provider), "adapterId": echo(adapter), "issues": issues }),
    )
}

type Checked<T> = Result<T, ApiError>;

fn unknown_field(obj: &Map<String, Value>, known: &[&str], at: &str) -> Checked<()> {
    match obj.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) => Err(invalid(
            &format!("{at}/{}", echo(k)),
            "unknown-field",
            format!("Unknown field `{}{}`", field_name(at), echo(k)),
        )),
        None => Ok(()),
    }
}

/// `/metadata/models/0` → `metadata.models[0].`
fn field_name(pointer: &str) -> String {
    let mut out = String::new();
    for part in pointer.split('/').filter(|p| !p.is_empty()) {
        if part.chars().all(|c| c.is_ascii_digit()) {
            out.push_str(&format!("[{part}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(part);
        }
    }
    if out.is_empty() {
        out
    } else {
        format!("{out}.")
    }
}

fn non_empty_string<'a>(v: Option<&'a Value>, path: &str, what: &str) -> Checked<&'a str> {
    match v {
        Some(Value::String(s)) if !s.is_empty() => Ok(s),
        None => Err(invalid(
            path,
            "missing-field",
            format!("{what} is required (a non-empty string)"),
        )),
        Some(_) => Err(invalid(
            path,
            "invalid-field",
            format!("{what} must be a non-empty string"),
        )),
    }
}

fn is_region(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && s.len() <= 63
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

fn non_negative(v: Option<&Value>) -> bool {
    v.and_then(Value::as_f64).is_some_and(|n| n >= 0.0)
}

fn positive_int(v: &Value) -> bool {
    v.as_u64().is_some_and(|n| n >= 1)
}

fn check_model(m: &Value, i: usize) -> Checked<String> {
    let at = format!("/metadata/models/{i}");
    let Value::Object(obj) = m else {
        return Err(invalid(
            &at,
            "invalid-field",
            format!("metadata.models[{i}] must be an object"),
        ));
    };
    unknown_field(obj, &MODEL_FIELDS, &at)?;
    let name = non_empty_string(
        obj.get("name"),
        &format!("{at}/name"),
        &format!("metadata.models[{i}].name"),
    )?;
    if !obj.get("contextWindow").is_some_and(positive_int) {
        return Err(invalid(
            &format!("{at}/contextWindow"),
            "invalid-field",
            format!("metadata.models[{i}].contextWindow must be a positive integer"),
        ));
    }
    match obj.get("features") {
        Some(Value::Array(fs)) => {
            for (j, f) in fs.iter().enumerate() {
                if !f.as_str().is_some_and(|f| FEATURES.contains(&f)) {
                    return Err(invalid(
                        &format!("{at}/features/{j}"),
                        "unknown-feature",
                        format!(
                            "metadata.models[{i}].features[{j}] must be one of {}",
                            FEATURES.join(", ")
                        ),
                    ));
                }
            }
        }
        _ => {
            return Err(invalid(
                &format!("{at}/features"),
                "invalid-field",
                format!("metadata.models[{i}].features must be an array of features"),
            ));
        }
    }
    let cost_ok = obj.get("cost").and_then(Value::as_object).is_some_and(|c| {
        non_negative(c.get("promptUsdPer1kTokens"))
            && non_negative(c.get("completionUsdPer1kTokens"))
    });
    if !cost_ok {
        return Err(invalid(
            &format!("{at}/cost"),
            "invalid-cost",
            format!(
                "metadata.models[{i}].cost must be {{promptUsdPer1kTokens, completionUsdPer1kTokens}}, non-negative numbers"
            ),
        ));
    }
    if obj
        .get("p95LatencyMs")
        .is_some_and(|v| !non_negative(Some(v)))
    {
        return Err(invalid(
            &format!("{at}/p95LatencyMs"),
            "invalid-field",
            format!("metadata.models[{i}].p95LatencyMs must be a non-negative number"),
        ));
    }
    if obj.get("maxOutputTokens").is_some_and(|v| !positive_int(v)) {
        return Err(invalid(
            &format!("{at}/maxOutputTokens"),
            "invalid-field",
            format!("metadata.models[{i}].maxOutputTokens must be a positive integer"),
        ));
    }
    if obj.get("sampling").is_some_and(|v| !v.is_boolean()) {
        return Err(invalid(
            &format!("{at}/sampling"),
            "invalid-field",
            format!("metadata.models[{i}].sampling must be a boolean"),
        ));
    }
    if obj.get("description").is_some_and(|v| !v.is_string()) {
        return Err(invalid(
            &format!("{at}/description"),
            "invalid-field",
            format!("metadata.models[{i}].description must be a string"),
        ));
    }
    if let Some(t) = obj.get("thinking") {
        let ok = t.as_object().is_some_and(|t| {
            t.keys().all(|k| k == "mode" || k == "lowest")
                && matches!(
                    t.get("mode").and_then(Value::as_str),
                    Some("adaptive" | "always")
                )
                && t.get("lowest")
                    .and_then(Value::as_str)
                    .is_some_and(|s| !s.is_empty())
        });
        if !ok {
            return Err(invalid(
                &format!("{at}/thinking"),
                "invalid-field",
                format!("metadata.models[{i}].thinking must be {{mode: adaptive|always, lowest}}"),
            ));
        }
    }
    Ok(name.to_owned())
}

fn check_labels(v: &Value) -> Checked<()> {
    let bad = |m: String| invalid("/metadata/labels", "invalid-labels", m);
    let Value::Object(labels) = v else {
        return Err(bad("metadata.labels must be an object of strings".into()));
    };
    if labels.len() > 32 {
        return Err(bad(format!(
            "metadata.labels has {} keys; at most 32",
            labels.len()
        )));
    }
    for (k, v) in labels {
        let chars: Vec<char> = k.chars().collect();
        let edge = |c: &char| c.is_ascii_lowercase() || c.is_ascii_digit();
        let ok = !chars.is_empty()
            && chars.len() <= 63
            && chars.first().is_some_and(edge)
            && chars.last().is_some_and(edge)
            && chars
                .iter()
                .all(|c| edge(c) || matches!(c, '.' | '_' | '/' | '-'));
        if !ok {
            return Err(bad(format!(
                "metadata.labels key \"{}\" must be 1-63 lowercase letters and digits, with `.`, `-`, `_` or `/` inside",
                echo(k)
            )));
        }
        if v.as_str().is_none_or(|s| s.chars().count() > 256) {
            return Err(bad(format!(
                "metadata.labels[\"{}\"] must be a string of at most 256 characters",
                echo(k)
            )));
        }
    }
    Ok(())
}

fn check_metadata(v: Option<&Value>) -> Checked<String> {
    let Some(Value::Object(obj)) = v else {
        return Err(invalid(
            "/metadata",
            if v.is_none() {
                "missing-field"
            } else {
                "invalid-field"
            },
            "metadata is required (a ProviderMetadata object)",
        ));
    };
    unknown_field(obj, &METADATA_FIELDS, "/metadata")?;
    let id = non_empty_string(obj.get("id"), "/metadata/id", "metadata.id")?;
    let region = non_empty_string(obj.get("region"), "/metadata/region", "metadata.region")?;
    if !is_region(region) {
        return Err(invalid(
            "/metadata/region",
            "invalid-region",
            format!(
                "metadata.region \"{}\" must match ^[a-z][a-z0-9-]{{0,62}}$ (`unspecified` when not region-scoped)",
                echo(region)
            ),
        ));
    }
    let models = match obj.get("models") {
        Some(Value::Array(a)) if !a.is_empty() => a,
        _ => {
            return Err(invalid(
                "/metadata/models",
                "empty-models",
                "metadata.models must be a non-empty array of models",
            ));
        }
    };
    let mut names: Vec<String> = Vec::new();
    for (i, m) in models.iter().enumerate() {
        let name = check_model(m, i)?;
        if names.contains(&name) {
            return Err(invalid(
                &format!("/metadata/models/{i}/name"),
                "duplicate-model-name",
                format!(
                    "metadata.models[{i}].name \"{}\" is already the name of another model",
                    echo(&name)
                ),
            ));
        }
        names.push(name);
    }
    if let Some(d) = obj.get("defaultModel") {
        let d = non_empty_string(Some(d), "/metadata/defaultModel", "metadata.defaultModel")?;
        if !names.iter().any(|n| n == d) {
            return Err(invalid(
                "/metadata/defaultModel",
                "unknown-default-model",
                format!(
                    "metadata.defaultModel \"{}\" is not one of metadata.models[].name",
                    echo(d)
                ),
            ));
        }
    }
    if let Some(a) = obj.get("attributes")
        && !a.as_array().is_some_and(|a| a.iter().all(Value::is_string))
    {
        return Err(invalid(
            "/metadata/attributes",
            "invalid-field",
            "metadata.attributes must be an array of strings",
        ));
    }
    for field in ["description", "capabilityKind"] {
        if obj.get(field).is_some_and(|v| !v.is_string()) {
            return Err(invalid(
                &format!("/metadata/{field}"),
                "invalid-field",
                format!("metadata.{field} must be a string"),
            ));
        }
    }
    if obj.get("fallback").is_some_and(|v| !v.is_boolean()) {
        return Err(invalid(
            "/metadata/fallback",
            "invalid-field",
            "metadata.fallback must be a boolean",
        ));
    }
    if let Some(l) = obj.get("labels") {
        check_labels(l)?;
    }
    Ok(id.to_owned())
}

fn check_secret_ref(v: Option<&Value>) -> Checked<Option<SecretRef>> {
    let Some(v) = v else { return Ok(None) };
    let Value::Object(obj) = v else {
        return Err(invalid(
            "/secret_ref",
            "invalid-secret-ref",
            "secret_ref must be {envName, name}",
        ));
    };
    unknown_field(obj, &["envName", "name"], "/secret_ref")?;
    let env_name = non_empty_string(
        obj.get("envName"),
        "/secret_ref/envName",
        "secret_ref.envName",
    )?;
    let name = non_empty_string(obj.get("name"), "/secret_ref/name", "secret_ref.name")?;
    Ok(Some(SecretRef {
        env_name: env_name.to_owned(),
        name: name.to_owned(),
    }))
}

fn check_adapter_config(v: Option<&Value>) -> Checked<Map<String, Value>> {
    let Some(v) = v else { return Ok(Map::new()) };
    let Value::Object(obj) = v else {
        return Err(invalid(
            "/adapter_config",
            "invalid-field",
            "adapter_config must be an object of strings, numbers and booleans",
        ));
    };
    for (k, v) in obj {
        if !(v.is_string() || v.is_number() || v.is_boolean()) {
            return Err(invalid(
                &format!("/adapter_config/{}", echo(k)),
                "invalid-field",
                format!(
                    "adapter_config.{} must be a string, a number or a boolean (flat, non-secret settings)",
                    echo(k)
                ),
            ));
        }
    }
    Ok(obj.clone())
}

/// Checks the shape of a register body (`400 invalid-provider` on the first fault).
pub fn validate(body: &Map<String, Value>) -> Checked<Registration> {
    unknown_field(body, &BODY_FIELDS, "")?;
    let id = check_metadata(body.get("metadata"))?;
    let adapter_id =
        non_empty_string(body.get("adapter_id"), "/adapter_id", "adapter_id")?.to_owned();
    let secret_ref = check_secret_ref(body.get("secret_ref"))?;
    let adapter_config = check_adapter_config(body.get("adapter_config"))?;
    let send_traceparent = match body.get("send_traceparent") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(config_invalid(
                &id,
                &adapter_id,
                &[ConfigProblem::new(
                    "/send_traceparent",
                    "send_traceparent must be a boolean.",
                )],
            ));
        }
    };
    Ok(Registration {
        metadata: body.get("metadata").cloned().unwrap_or(Value::Null),
        id,
        adapter_id,
        secret_ref,
        adapter_config,
        send_traceparent,
    })
}

/// Whether an `adapter_config` key names a credential (`apiKey`, `api_key`, `key`, `token`,
/// `clientSecret`, `password`…).
pub fn is_credential_key(key: &str) -> bool {
    let mut kebab = String::new();
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            kebab.push('-');
        }
        kebab.push(c.to_ascii_lowercase());
    }
    kebab == "key" || is_credential_header(&kebab)
}

/// What keeps the registration from being stored, the registration's own fields first: a
/// credential in `adapter_config`, then the adapter's problems.
pub fn problems(r: &Registration) -> Vec<ConfigProblem> {
    let mut out: Vec<ConfigProblem> = r
        .adapter_config
        .keys()
        .filter(|k| is_credential_key(k))
        .map(|k| {
            ConfigProblem::new(
                format!("/adapter_config/{}", echo(k)),
                format!(
                    "adapter_config.{} looks like a credential: credentials go in secret_ref (a tenant secret, by name), never in adapter_config, which is stored and shown as given.",
                    echo(k)
                ),
            )
        })
        .collect();
    out.extend(adapters::check(&r.adapter_id, &r.adapter_config));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_keys() {
        for yes in [
            "apiKey",
            "api_key",
            "key",
            "token",
            "secret",
            "clientSecret",
            "accessToken",
            "password",
        ] {
            assert!(is_credential_key(yes), "{yes}");
        }
        for no in [
            "baseUrl",
            "project",
            "api",
            "organization",
            "region",
            "keyId",
        ] {
            assert!(!is_credential_key(no), "{no}");
        }
    }

    #[test]
    fn field_names() {
        assert_eq!(field_name(""), "");
        assert_eq!(field_name("/metadata/models/0"), "metadata.models[0].");
    }
}
