//! The wire of `/v1/webhooks` (platform-api.md §9.1): a trigger's `OA:WebhookTriggerRecord`
//! and a fire's `OA:WebhookFire` ([`trigger_json`], [`fire_json`]), and the checks of the
//! register and PATCH bodies' settings, each refusal naming its field and the range it takes.

use axum::http::StatusCode;
use kindgi_core::webhook::{
    DEFAULT_BODY_LIMIT, DEFAULT_RATE_LIMIT, MAX_BODY_LIMIT, MAX_RATE_LIMIT, MIN_BODY_LIMIT,
    SignatureConfig, SignatureEncoding, WebhookFire, WebhookTrigger,
};
use serde_json::{Map, Value, json};

use super::key_holder::iso;
use super::unattended;
use crate::error::ApiError;
use crate::projects::tenant_uuid;

/// The longest `label`.
pub const MAX_LABEL: usize = 200;
/// The longest signature / delivery id header name.
pub const MAX_HEADER: usize = 100;
/// The longest signature prefix.
pub const MAX_PREFIX: usize = 32;
/// The most and fewest seconds of a Standard Webhooks tolerance.
pub const MAX_TOLERANCE: u64 = 3600;

/// The receive URL of `t` under `public_url`.
pub fn receive_url(public_url: &str, t: &WebhookTrigger) -> String {
    format!(
        "{public_url}/v1/hooks/{}/{}",
        tenant_uuid(&t.tenant),
        t.webhook_id
    )
}

/// `OA:WebhookTriggerRecord` of `t` (`signingSecret` only in a register's answer).
pub fn trigger_json(t: &WebhookTrigger, public_url: Option<&str>) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert("triggerId".into(), json!(t.trigger_id));
    o.insert("webhookId".into(), json!(t.webhook_id));
    if let Some(url) = public_url {
        o.insert("receiveUrl".into(), json!(receive_url(url, t)));
    }
    o.insert("flowId".into(), json!(t.flow_id));
    o.insert("flowVersion".into(), json!(t.flow_version));
    o.insert("projectId".into(), json!(t.project_id));
    o.insert("owner".into(), json!(t.owner));
    if let Some(input) = &t.input {
        o.insert("input".into(), input.clone());
    }
    o.insert("hmacSecretName".into(), json!(t.hmac_secret_name));
    o.insert("hmacSecretScope".into(), json!(t.hmac_secret_scope));
    o.insert("signature".into(), json!(t.signature));
    if let Some(h) = &t.delivery_id_header {
        o.insert("deliveryIdHeader".into(), json!(h));
    }
    o.insert("bodyLimitBytes".into(), json!(t.body_limit_bytes));
    o.insert("rateLimitPerMinute".into(), json!(t.rate_limit_per_minute));
    o.insert("label".into(), json!(t.label));
    o.insert("status".into(), json!(t.status.as_str()));
    if let Some(r) = &t.status_reason {
        o.insert("statusReason".into(), json!(r));
    }
    if let Some((since, count)) = t.suppressed.filter(|(_, n)| *n > 0) {
        o.insert(
            "suppressedRefusals".into(),
            json!({"since": iso(since), "count": count}),
        );
    }
    if !t.tools_allowed_unattended.is_empty() {
        o.insert(unattended::FIELD.into(), json!(t.tools_allowed_unattended));
    }
    o.insert("lastFiredAt".into(), json!(t.last_fired_at.map(iso)));
    o.insert("createdAt".into(), json!(iso(t.created_at)));
    o.insert("updatedAt".into(), json!(iso(t.updated_at)));
    o
}

/// `OA:WebhookFire` of `f`.
pub fn fire_json(f: &WebhookFire) -> Value {
    let mut o = Map::new();
    o.insert("fireId".into(), json!(f.fire_id));
    o.insert("triggerId".into(), json!(f.trigger_id));
    o.insert("firedAt".into(), json!(iso(f.fired_at)));
    o.insert("outcome".into(), json!(f.outcome.as_str()));
    if let Some(r) = &f.run_id {
        o.insert("runId".into(), json!(r));
    }
    if let Some(d) = &f.detail {
        o.insert("detail".into(), json!(d));
    }
    if let Some(c) = f.counts_toward_pause {
        o.insert("countsTowardPause".into(), json!(c));
    }
    if f.duplicates > 0 {
        o.insert("duplicates".into(), json!(f.duplicates));
    }
    if let Some(at) = f.last_duplicate_at {
        o.insert("lastDuplicateAt".into(), json!(iso(at)));
    }
    Value::Object(o)
}

/// `400 bad-input` naming `field`.
pub fn bad(field: &str, message: impl Into<String>) -> ApiError {
    ApiError::bad_input(message).with_details(json!({"field": field}))
}

/// `404 trigger-not-found` ``No webhook trigger with id "<id>"``.
pub fn trigger_not_found(id: &str) -> ApiError {
    let shown: String = id.chars().take(100).collect();
    ApiError::new(
        StatusCode::NOT_FOUND,
        "trigger-not-found",
        format!("No webhook trigger with id \"{shown}\""),
    )
    .with_details(json!({"triggerId": shown}))
}

/// A required non-empty string field: ``\`<field>\` is required``.
pub fn required_string(body: &Map<String, Value>, field: &str) -> Result<String, ApiError> {
    match body.get(field).and_then(Value::as_str) {
        Some(s) if !s.trim().is_empty() && s.len() <= 255 => Ok(s.to_owned()),
        Some(s) if !s.trim().is_empty() => Err(bad(
            field,
            format!("`{field}` is at most 255 characters long"),
        )),
        _ => Err(bad(field, format!("`{field}` is required"))),
    }
}

fn header_name(value: &Value, field: &str, max: usize) -> Result<String, ApiError> {
    match value.as_str() {
        Some(s)
            if !s.is_empty()
                && s.len() <= max
                && axum::http::HeaderName::from_bytes(s.as_bytes()).is_ok() =>
        {
            Ok(s.to_owned())
        }
        _ => Err(bad(
            field,
            format!("`{field}` must be a header name of 1 to {max} characters"),
        )),
    }
}

/// `signature`: `{kind: "hmac-sha256", encoding, header, prefix?}` or `{kind:
/// "standard-webhooks", toleranceSeconds?}`.
pub fn signature(value: &Value) -> Result<SignatureConfig, ApiError> {
    let Some(o) = value.as_object() else {
        return Err(bad("signature", "`signature` must be an object"));
    };
    match o.get("kind").and_then(Value::as_str) {
        Some("hmac-sha256") => {
            let encoding = match o.get("encoding").and_then(Value::as_str) {
                Some("hex") => SignatureEncoding::Hex,
                Some("base64") => SignatureEncoding::Base64,
                _ => {
                    return Err(bad(
                        "signature.encoding",
                        "`signature.encoding` must be `hex` or `base64`",
                    ));
                }
            };
            let header = header_name(
                o.get("header").unwrap_or(&Value::Null),
                "signature.header",
                MAX_HEADER,
            )?;
            let prefix = match o.get("prefix") {
                None => None,
                Some(Value::String(p)) if !p.is_empty() && p.len() <= MAX_PREFIX => Some(p.clone()),
                Some(_) => {
                    return Err(bad(
                        "signature.prefix",
                        format!("`signature.prefix` must be 1 to {MAX_PREFIX} characters"),
                    ));
                }
            };
            Ok(SignatureConfig::HmacSha256 {
                encoding,
                header,
                prefix,
            })
        }
        Some("standard-webhooks") => {
            let tolerance = match o.get("toleranceSeconds") {
                None => None,
                Some(v) => match v.as_u64().filter(|n| (1..=MAX_TOLERANCE).contains(n)) {
                    Some(n) => u32::try_from(n).ok(),
                    None => {
                        return Err(bad(
                            "signature.toleranceSeconds",
                            format!(
                                "`signature.toleranceSeconds` must be an integer from 1 to {MAX_TOLERANCE}"
                            ),
                        ));
                    }
                },
            };
            Ok(SignatureConfig::StandardWebhooks {
                tolerance_seconds: tolerance,
            })
        }
        _ => Err(bad(
            "signature.kind",
            "`signature.kind` must be `hmac-sha256` or `standard-webhooks`",
        )),
    }
}

/// An integer setting in `min..=max`; `null` (where `nullable`) is the default.
fn bounded(
    body: &Map<String, Value>,
    field: &str,
    min: u32,
    max: u32,
    default: u32,
    nullable: bool,
) -> Result<Option<u32>, ApiError> {
    match body.get(field) {
        None => Ok(None),
        Some(Value::Null) if nullable => Ok(Some(default)),
        Some(v) => match v
            .as_u64()
            .filter(|n| (u64::from(min)..=u64::from(max)).contains(n))
        {
            Some(n) => Ok(u32::try_from(n).ok()),
            None => Err(bad(
                field,
                format!("`{field}` must be an integer from {min} to {max}"),
            )),
        },
    }
}

/// The settings a register or PATCH body may carry (absent: unchanged / the default).
#[derive(Debug, Default)]
pub struct Settings {
    /// `Some(None)`: `config.input` removed (PATCH `config: {}`).
    pub input: Option<Option<Value>>,
    pub label: Option<Option<String>>,
    pub signature: Option<SignatureConfig>,
    pub delivery_id_header: Option<Option<String>>,
    pub body_limit_bytes: Option<u32>,
    pub rate_limit_per_minute: Option<u32>,
}

/// Reads [`Settings`] from `body` (`patch`: `null` clears where the reference allows it).
pub fn settings(body: &Map<String, Value>, patch: bool) -> Result<Settings, ApiError> {
    let input = match body.get("config") {
        None => None,
        Some(Value::Object(c)) => Some(c.get("input").cloned()),
        Some(_) => {
            return Err(bad(
                "config",
                "`config` must be an object (`{\"input\": …}`)",
            ));
        }
    };
    let label = match body.get("label") {
        None => None,
        Some(Value::Null) if patch => Some(None),
        Some(Value::String(s)) if s.chars().count() <= MAX_LABEL => Some(Some(s.clone())),
        Some(_) => {
            return Err(bad(
                "label",
                format!("`label` must be a string of at most {MAX_LABEL} characters"),
            ));
        }
    };
    let delivery_id_header = match body.get("deliveryIdHeader") {
        None => None,
        Some(Value::Null) if patch => Some(None),
        Some(v) => Some(Some(header_name(v, "deliveryIdHeader", MAX_HEADER)?)),
    };
    Ok(Settings {
        input,
        label,
        signature: body.get("signature").map(signature).transpose()?,
        delivery_id_header,
        body_limit_bytes: bounded(
            body,
            "bodyLimitBytes",
            MIN_BODY_LIMIT,
            MAX_BODY_LIMIT,
            DEFAULT_BODY_LIMIT,
            patch,
        )?,
        rate_limit_per_minute: bounded(
            body,
            "rateLimitPerMinute",
            1,
            MAX_RATE_LIMIT,
            DEFAULT_RATE_LIMIT,
            patch,
        )?,
    })
}

impl Settings {
    /// Puts these settings on `t`, then checks the pair the reference refuses: a
    /// `deliveryIdHeader` with `standard-webhooks`.
    pub fn apply(self, t: &mut WebhookTrigger) -> Result<(), ApiError> {
        if let Some(input) = self.input {
            t.input = input;
        }
        if let Some(label) = self.label {
            t.label = label;
        }
        if let Some(s) = self.signature {
            t.signature = s;
        }
        if let Some(h) = self.delivery_id_header {
            t.delivery_id_header = h;
        }
        if let Some(n) = self.body_limit_bytes {
            t.body_limit_bytes = n;
        }
        if let Some(n) = self.rate_limit_per_minute {
            t.rate_limit_per_minute = n;
        }
        if matches!(t.signature, SignatureConfig::StandardWebhooks { .. })
            && t.delivery_id_header.is_some()
        {
            return Err(bad(
                "deliveryIdHeader",
                "`deliveryIdHeader` is not used with `standard-webhooks`, which dedupes on its own `webhook-id`: leave it out",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_parse_and_refuse_with_their_field() {
        assert!(matches!(
            signature(
                &json!({"kind": "hmac-sha256", "encoding": "base64", "header": "X-WC-Webhook-Signature"})
            ),
            Ok(SignatureConfig::HmacSha256 { .. })
        ));
        let e = signature(&json!({"kind": "hmac-sha256", "encoding": "hex"})).unwrap_err();
        assert_eq!(e.code, "bad-input");
        assert!(e.message.contains("signature.header"));
        assert!(signature(&json!({"kind": "standard-webhooks", "toleranceSeconds": 0})).is_err());
        assert!(signature(&json!({"kind": "rsa"})).is_err());
    }

    #[test]
    fn limits_are_bounded() {
        let body = json!({"bodyLimitBytes": 10}).as_object().cloned().unwrap();
        assert!(settings(&body, false).is_err());
        let body = json!({"rateLimitPerMinute": null})
            .as_object()
            .cloned()
            .unwrap();
        assert_eq!(
            settings(&body, true).unwrap().rate_limit_per_minute,
            Some(DEFAULT_RATE_LIMIT)
        );
    }
}
