//! Webhook triggers (platform-api.md §9): a signed request to a trigger's receive URL starts a
//! run of its flow as its owner. The records here are what the admin routes show
//! ([`WebhookTrigger`]), how a sender signs ([`SignatureConfig`]) and one delivery and what
//! came of it ([`WebhookFire`]); the port that keeps them is
//! [`crate::ports::WebhookStore`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::trigger::{FireOutcome, TriggerOwner, TriggerStatus};

/// The default signature header.
pub const DEFAULT_SIGNATURE_HEADER: &str = "X-Kindgi-Signature";
/// The default and limits of `bodyLimitBytes`.
pub const DEFAULT_BODY_LIMIT: u32 = 262_144;
pub const MIN_BODY_LIMIT: u32 = 1024;
pub const MAX_BODY_LIMIT: u32 = 1_048_576;
/// The default and limits of `rateLimitPerMinute`.
pub const DEFAULT_RATE_LIMIT: u32 = 600;
pub const MAX_RATE_LIMIT: u32 = 6000;
/// The default Standard Webhooks timestamp tolerance (seconds).
pub const DEFAULT_TOLERANCE_SECONDS: u32 = 300;

/// How an `hmac-sha256` signature is written in its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SignatureEncoding {
    Hex,
    Base64,
}

/// How a trigger's sender signs (`OA:WebhookSignature`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum SignatureConfig {
    /// An HMAC-SHA256 of the raw body under the secret's UTF-8 bytes, in `header` after an
    /// optional `prefix`.
    #[serde(rename = "hmac-sha256")]
    HmacSha256 {
        encoding: SignatureEncoding,
        header: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prefix: Option<String>,
    },
    /// Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature`.
    #[serde(rename = "standard-webhooks", rename_all = "camelCase")]
    StandardWebhooks {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tolerance_seconds: Option<u32>,
    },
}

impl Default for SignatureConfig {
    fn default() -> Self {
        SignatureConfig::HmacSha256 {
            encoding: SignatureEncoding::Hex,
            header: DEFAULT_SIGNATURE_HEADER.to_owned(),
            prefix: None,
        }
    }
}

/// Where a trigger's signing secret is read (`OA:RecordedSecretScope`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum SecretScope {
    Tenant,
    #[serde(rename_all = "camelCase")]
    Project {
        project_id: String,
    },
}

/// A webhook trigger as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct WebhookTrigger {
    /// The trigger's id (a UUID): the admin routes' `{triggerId}`.
    pub trigger_id: String,
    /// The routable id of the receive URL (a UUID, not a secret).
    pub webhook_id: String,
    /// The tenant's name (as keys carry it).
    pub tenant: String,
    pub project_id: String,
    pub flow_id: String,
    pub flow_version: String,
    pub owner: TriggerOwner,
    /// The key (`tokenId`) the owner registered or took the trigger over with, re-checked at
    /// every fire (revoked, expired: `refused`); `None` for a service account named as the
    /// owner (its registration is checked instead) and for triggers stored before.
    pub owner_key_id: Option<String>,
    /// The flow's input on every delivery, in place of the event.
    pub input: Option<Value>,
    pub hmac_secret_name: String,
    /// `None`: nothing will verify until the secret is named again.
    pub hmac_secret_scope: Option<SecretScope>,
    pub signature: SignatureConfig,
    pub delivery_id_header: Option<String>,
    pub body_limit_bytes: u32,
    pub rate_limit_per_minute: u32,
    pub label: Option<String>,
    pub status: TriggerStatus,
    pub status_reason: Option<String>,
    /// `toolsAllowedUnattended` (our extension), lent to the trigger's runs.
    pub tools_allowed_unattended: Vec<String>,
    /// Refused or failed starts in a row (reset by a started one and by resume).
    pub failures_in_row: u32,
    /// Refusals this minute past those recorded: `(minute start ms, count)`.
    pub suppressed: Option<(i64, u64)>,
    /// Unix milliseconds.
    pub last_fired_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
    pub unregistered_at: Option<i64>,
}

/// One delivery to a trigger and what came of it (`OA:WebhookFire`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookFire {
    pub fire_id: String,
    pub trigger_id: String,
    pub tenant: String,
    /// Unix milliseconds.
    pub fired_at: i64,
    pub outcome: FireOutcome,
    pub run_id: Option<String>,
    pub detail: Option<String>,
    pub counts_toward_pause: Option<bool>,
    /// `delivery:<sha256 hex>`, when the delivery is deduped.
    pub dedupe_key: Option<String>,
    /// Later deliveries with the same key.
    pub duplicates: u32,
    pub last_duplicate_at: Option<i64>,
}

impl WebhookFire {
    /// A new fire of `trigger` at `now` (a fresh UUID id).
    pub fn new(trigger: &WebhookTrigger, outcome: FireOutcome, now: i64) -> WebhookFire {
        WebhookFire {
            fire_id: uuid::Uuid::new_v4().to_string(),
            trigger_id: trigger.trigger_id.clone(),
            tenant: trigger.tenant.clone(),
            fired_at: now,
            outcome,
            run_id: None,
            detail: None,
            counts_toward_pause: None,
            dedupe_key: None,
            duplicates: 0,
            last_duplicate_at: None,
        }
    }
}

/// What recording a deduped fire came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FireRecorded {
    /// A new fire.
    New,
    /// The same delivery again: the first fire's id (its `duplicates` was bumped).
    Duplicate { first_fire_id: String },
}

/// What a fire's start came to, for the trigger's auto-pause count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FireFinish {
    pub outcome: FireOutcome,
    pub run_id: Option<String>,
    pub detail: Option<String>,
    /// Whether a refused/failed start counts toward auto-pause.
    pub counts_toward_pause: bool,
    pub now: i64,
}

/// The `statusReason` of a trigger the runtime paused.
pub fn auto_pause_reason(detail: &str) -> String {
    format!(
        "Paused after {} refused or failed starts in a row; the last: {detail}. Fix the cause, then resume it",
        crate::trigger::AUTO_PAUSE_AFTER
    )
}

/// The dedupe key of a delivery: `delivery:<sha256(id + "\n" + body)>` (hex).
pub fn dedupe_key(id: &str, body: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(id.as_bytes());
    h.update(b"\n");
    h.update(body);
    format!("delivery:{}", hex::encode(h.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_are_the_official_shape() {
        assert_eq!(
            serde_json::to_value(SignatureConfig::default()).ok(),
            Some(
                serde_json::json!({"kind": "hmac-sha256", "encoding": "hex", "header": "X-Kindgi-Signature"})
            )
        );
        let sw = SignatureConfig::StandardWebhooks {
            tolerance_seconds: Some(60),
        };
        assert_eq!(
            serde_json::to_value(&sw).ok(),
            Some(serde_json::json!({"kind": "standard-webhooks", "toleranceSeconds": 60}))
        );
        assert_eq!(
            serde_json::to_value(SecretScope::Project {
                project_id: "p".into()
            })
            .ok(),
            Some(serde_json::json!({"kind": "project", "projectId": "p"}))
        );
    }

    #[test]
    fn dedupe_keys_bind_id_and_body() {
        assert_ne!(dedupe_key("a", b"b"), dedupe_key("a\nb", b""));
        assert!(dedupe_key("", b"x").starts_with("delivery:"));
        assert_eq!(dedupe_key("", b"x").len(), "delivery:".len() + 64);
    }
}
