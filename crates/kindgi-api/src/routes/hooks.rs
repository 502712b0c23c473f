//! The webhook receiver `POST /v1/hooks/{tenantId}/{webhookId}` (platform-api.md §9.2,
//! `OA hooks.receive`): no bearer — a delivery proves its sender by its signature. The body
//! is read as raw bytes (the signature is over them), and the steps run in the reference's
//! order:
//!
//! 1. the body, read up to 1 MiB (more: `413 webhook-body-too-large`);
//! 2. a WooCommerce ping (`webhook_id=<digits>`, unsigned) → `200 {"received":"ping"}`
//!    before any lookup;
//! 3. an unknown tenant or webhook (or non-UUIDs) → `401 webhook-refused`;
//! 4. the signature, under the trigger's secret at its recorded scope (read at most every
//!    10 s; [`super::hooks_verify`]) → `401 webhook-refused` and a `refused` fire; a client
//!    past 60 refusals a minute (nearest `X-Forwarded-For` hop) gets `429`, unrecorded;
//! 5. a suspended tenant → `202 {"skipped":"tenant-suspended"}`, a closing one →
//!    `409 tenant-closing`, a suspended project → `202 {"skipped":"project-suspended"}`
//!    (nothing recorded; [`crate::tenant_state`]); unregistered → `410 webhook-gone` (only a
//!    signed request learns it); paused → `202 {"skipped":"paused"}` and a `skipped` fire;
//! 6. the trigger's `bodyLimitBytes` (413), its `rateLimitPerMinute` and the tenant's
//!    receive limit (`429 rate-limit-exceeded` + `Retry-After`);
//! 7. the event: JSON for `application/json` / `*+json` (bad: `400 webhook-body-not-json`;
//!    deeper than 128: `400 bad-input`), else the text;
//! 8. the fire, deduped on `delivery:<sha256(id + "\n" + body)>` → `202 {"fireId"}`, a
//!    repeat `200 {"fireId": <first>, "duplicate": true}`.
//!
//! The run then starts on its own task as the trigger's owner — re-checked first
//! ([`super::schedule_owners`]: a revoked or expired key, an unregistered service account →
//! a `refused` fire, counted) — under the run idempotency key `fire:<fireId>`
//! (`startedBy: webhook`, `trigger {kind: webhook, triggerId, fireId}`, the trigger's
//! `toolsAllowedUnattended`), with the event (data from outside) or `config.input` as its
//! input; the fire records `started` with the run id, or `failed` (5 refused or failed in a
//! row pause the trigger). Past 20 refusals a
//! minute per trigger, refusals only count (`suppressedRefusals`). Refusals never count
//! toward the auto-pause. Every refusal's body is the same, whatever was wrong.

use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use http_body_util::BodyExt as _;
use kindgi_core::ports::{Standing, TenantStates};
use kindgi_core::trigger::{
    FireOutcome, RunTrigger, StartedBy, TriggerKind, TriggerStatus, Unattended,
};
use kindgi_core::webhook::{
    FireFinish, FireRecorded, SecretScope, SignatureConfig, WebhookFire, WebhookTrigger, dedupe_key,
};
use kindgi_runtime::{RunMeta, RunOptions};
use kindgi_store::seal::SecretValue;
use serde_json::{Value, json};

use super::hooks_state::{CLIENT_REFUSALS_PER_MINUTE, RECORDED_REFUSALS_PER_MINUTE, minute_of};
use super::hooks_verify::{Refusal, verify};
use super::schedule_owners::{Needs, StoreOwners, refused_detail};
use super::values::store_for;
use super::webhooks::{Triggers, tenant_id_of};
use crate::error::ApiError;
use crate::json_body::{MAX_DEPTH, nesting_depth};
use crate::state::AppState;

/// The most body a delivery may have, before anything else is looked at.
pub const MAX_RECEIVE_BYTES: usize = 1_048_576;
/// The longest WooCommerce ping body.
const PING_MAX: usize = 32;
/// The longest run-start failure kept in a fire's `detail`.
const MAX_DETAIL: usize = 500;

/// The receiver's route. Its body is read here, raw; nothing before it parses it.
pub fn routes() -> Router<AppState> {
    Router::new().route("/v1/hooks/{tenant_id}/{webhook_id}", post(receive))
}

fn now() -> i64 {
    kindgi_runtime::record::now_millis()
}

/// `401 webhook-refused`: one body for every refusal, so a sender learns nothing of why.
fn refused() -> ApiError {
    ApiError::new(
        StatusCode::UNAUTHORIZED,
        "webhook-refused",
        "This request doesn't prove its sender",
    )
}

fn too_large(limit: usize) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "webhook-body-too-large",
        format!("The body is larger than {limit} bytes"),
    )
    .with_details(json!({"maxBytes": limit}))
}

/// `429 rate-limit-exceeded` with `Retry-After`.
fn rate_limited(message: &str, retry_after: u64, details: Value) -> Response {
    let mut r = ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        "rate-limit-exceeded",
        message,
    )
    .with_details(details)
    .into_response();
    if let Ok(v) = HeaderValue::from_str(&retry_after.max(1).to_string()) {
        r.headers_mut().insert(header::RETRY_AFTER, v);
    }
    r
}

/// Who sent it, for the refusal limit: the nearest `X-Forwarded-For` hop (the one the
/// closest proxy added), else the direct connection.
fn client_of(headers: &HeaderMap) -> String {
    headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|hop| !hop.is_empty())
        .fold(None, |_, hop| Some(hop))
        .map_or_else(|| "direct".to_owned(), |hop| format!("xff:{hop}"))
}

/// A WooCommerce ping: `webhook_id=<1–20 digits>`, at most 32 bytes, unsigned.
fn is_ping(headers: &HeaderMap, body: &[u8]) -> bool {
    if body.len() > PING_MAX
        || headers.contains_key("x-wc-webhook-signature")
        || headers.contains_key("x-wc-webhook-topic")
    {
        return false;
    }
    let Some(digits) = body.strip_prefix(b"webhook_id=") else {
        return false;
    };
    (1..=20).contains(&digits.len()) && digits.iter().all(u8::is_ascii_digit)
}

/// Step 1: the body, at most [`MAX_RECEIVE_BYTES`].
async fn read_body(headers: &HeaderMap, body: Body) -> Result<Bytes, ApiError> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_RECEIVE_BYTES as u64) {
        return Err(too_large(MAX_RECEIVE_BYTES));
    }
    match http_body_util::Limited::new(body, MAX_RECEIVE_BYTES)
        .collect()
        .await
    {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(too_large(MAX_RECEIVE_BYTES)),
        Err(e) => Err(ApiError::bad_input(format!(
            "The body could not be read: {e}"
        ))),
    }
}

async fn receive(
    State(state): State<AppState>,
    Path((tenant_id, webhook_id)): Path<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let body = match read_body(&headers, body).await {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    if is_ping(&headers, &body) {
        return (StatusCode::OK, Json(json!({"received": "ping"}))).into_response();
    }
    let delivery = Delivery {
        state: &state,
        triggers: axum::extract::FromRef::from_ref(&state),
        headers: &headers,
        body: &body,
        client: client_of(&headers),
    };
    let trigger = match delivery.lookup(&tenant_id, &webhook_id).await {
        Ok(Some(t)) => t,
        Ok(None) => {
            return delivery
                .refuse(None, Refusal::SignatureInvalid.detail())
                .await;
        }
        Err(e) => return e.into_response(),
    };
    delivery.take(trigger).await
}

/// One delivery being received.
struct Delivery<'a> {
    state: &'a AppState,
    triggers: Triggers,
    headers: &'a HeaderMap,
    body: &'a Bytes,
    client: String,
}

impl Delivery<'_> {
    /// Step 3: the trigger the URL names, when both ids are UUIDs and the tenant is its own.
    async fn lookup(
        &self,
        tenant_id: &str,
        webhook_id: &str,
    ) -> Result<Option<WebhookTrigger>, ApiError> {
        let (Ok(tenant), Ok(webhook)) = (
            uuid::Uuid::parse_str(tenant_id),
            uuid::Uuid::parse_str(webhook_id),
        ) else {
            return Ok(None);
        };
        let found = self
            .triggers
            .0
            .by_webhook_id(&webhook.hyphenated().to_string())
            .await
            .map_err(|e| ApiError::internal(&e))?;
        Ok(found.filter(|t| tenant_id_of(t) == tenant.hyphenated().to_string()))
    }

    /// A refusal: `401` (with a `refused` fire of `trigger` when there is one, up to the
    /// per-minute record cap), or `429` unrecorded for a client past its refusal limit.
    async fn refuse(&self, trigger: Option<&WebhookTrigger>, detail: &str) -> Response {
        let at = now();
        let count = self
            .state
            .webhooks
            .refusals_by_client
            .bump(&self.client, at);
        if count > CLIENT_REFUSALS_PER_MINUTE {
            return rate_limited(
                "Too many refused deliveries from this client this minute; sign them with the trigger's secret, or retry later",
                minute_of(at).1,
                json!({"limit": "webhook-refusals"}),
            );
        }
        if let Some(t) = trigger {
            tracing::info!(trigger_id = %t.trigger_id, detail, "webhook delivery refused");
            self.note(t, FireOutcome::Refused, detail).await;
        }
        refused().into_response()
    }

    /// Records a refused or skipped fire of `t`, or past the per-minute cap only counts it.
    async fn note(&self, t: &WebhookTrigger, outcome: FireOutcome, detail: &str) {
        let at = now();
        let store = &self.triggers.0;
        let n = self
            .state
            .webhooks
            .refusals_by_trigger
            .bump(&t.trigger_id, at);
        let result = if n > RECORDED_REFUSALS_PER_MINUTE {
            store
                .count_suppressed(&t.tenant, &t.trigger_id, minute_of(at).0)
                .await
        } else {
            let mut fire = WebhookFire::new(t, outcome, at);
            fire.detail = Some(detail.to_owned());
            fire.counts_toward_pause = Some(false);
            store.record_fire(&fire).await.map(drop)
        };
        if let Err(e) = result {
            tracing::error!(trigger_id = %t.trigger_id, error = %e, "cannot record a refused webhook delivery");
        }
    }

    /// The trigger's signing secret, read at its recorded scope (cached 10 s). `None`:
    /// unreadable (no scope, missing, revoked, no key).
    async fn secret(&self, t: &WebhookTrigger) -> Option<SecretValue> {
        let scope = t.hmac_secret_scope.as_ref()?;
        let cache_key = format!("{}|{:?}|{}", t.tenant, scope, t.hmac_secret_name);
        let cache = &self.state.webhooks.secrets;
        if let Some(hit) = cache.get(&cache_key) {
            return hit;
        }
        let store = store_for(&self.state.db, &self.state.values);
        let env = &self.state.values.served_env;
        let names = [t.hmac_secret_name.as_str()];
        let read = match scope {
            SecretScope::Tenant => store.resolve_secrets(&t.tenant, env, &names).await,
            SecretScope::Project { project_id } => {
                store
                    .resolve_secrets_in(&t.tenant, Some(project_id), env, &names)
                    .await
            }
        };
        let value = match read {
            Ok(mut found) => found.remove(&t.hmac_secret_name),
            Err(e) => {
                tracing::warn!(trigger_id = %t.trigger_id, error = %e, "a webhook trigger's signing secret cannot be read");
                None
            }
        };
        cache.put(&cache_key, value.clone());
        value
    }

    /// Step 5's first half: a suspended tenant or project is answered `202 {"skipped"}`, a
    /// closing tenant `409 tenant-closing`; nothing is recorded (`None`: active).
    async fn standing(&self, t: &WebhookTrigger) -> Option<Response> {
        let standing = crate::tenant_state::states(self.state)
            .standing(&t.tenant, Some(&t.project_id))
            .await;
        match standing {
            Ok(Standing::Active) => None,
            Ok(Standing::TenantClosing) => {
                Some(crate::tenant_state::refusal(Standing::TenantClosing, None).into_response())
            }
            Ok(s) => {
                let code = s.code().unwrap_or_default();
                Some((StatusCode::ACCEPTED, Json(json!({"skipped": code}))).into_response())
            }
            Err(e) => Some(ApiError::internal(&e).into_response()),
        }
    }

    /// Steps 4–8 for a trigger the URL named.
    async fn take(&self, t: WebhookTrigger) -> Response {
        let Some(secret) = self.secret(&t).await else {
            return self.refuse(Some(&t), "secret-unavailable").await;
        };
        let now_secs = now().div_euclid(1000);
        if let Err(r) = verify(
            &t.signature,
            secret.expose(),
            self.headers,
            self.body,
            now_secs,
        ) {
            return self.refuse(Some(&t), r.detail()).await;
        }
        if let Some(answer) = self.standing(&t).await {
            return answer;
        }
        if t.unregistered_at.is_some() {
            return ApiError::new(
                StatusCode::GONE,
                "webhook-gone",
                "This trigger was unregistered",
            )
            .into_response();
        }
        if t.status == TriggerStatus::Paused {
            self.note(&t, FireOutcome::Skipped, "paused").await;
            return (StatusCode::ACCEPTED, Json(json!({"skipped": "paused"}))).into_response();
        }
        if let Err(r) = self.admit(&t).await {
            return r;
        }
        let event = match self.event().await {
            Ok(e) => e,
            Err((e, detail)) => {
                self.note(&t, FireOutcome::Refused, detail).await;
                return e.into_response();
            }
        };
        self.fire(t, event).await
    }

    /// Step 6: the trigger's body limit and rate, and the tenant's receive limit.
    async fn admit(&self, t: &WebhookTrigger) -> Result<(), Response> {
        let limit = t.body_limit_bytes as usize;
        if self.body.len() > limit {
            self.note(t, FireOutcome::Refused, "body-too-large").await;
            return Err(too_large(limit).into_response());
        }
        let hooks = &self.state.webhooks;
        let at = now();
        if let Err(retry) =
            hooks
                .per_trigger
                .take(&t.trigger_id, u64::from(t.rate_limit_per_minute), at)
        {
            self.note(t, FireOutcome::Refused, "rate-limited").await;
            return Err(rate_limited(
                &format!(
                    "This trigger takes {} deliveries a minute; retry after {retry} s",
                    t.rate_limit_per_minute
                ),
                retry,
                json!({"limit": "trigger-receives", "rateLimitPerMinute": t.rate_limit_per_minute}),
            ));
        }
        let tenant_limit = hooks.settings.tenant_receives_per_minute;
        if let Err(retry) = hooks.per_tenant.take(&t.tenant, tenant_limit, at) {
            self.note(t, FireOutcome::Refused, "rate-limited").await;
            return Err(rate_limited(
                &format!(
                    "This tenant's webhooks take {tenant_limit} deliveries a minute; retry after {retry} s"
                ),
                retry,
                json!({"limit": "webhook-receives"}),
            ));
        }
        Ok(())
    }

    /// Step 7: the event — parsed JSON for a JSON content type, else the text.
    async fn event(&self) -> Result<Value, (ApiError, &'static str)> {
        let essence = self
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| {
                v.split(';')
                    .next()
                    .unwrap_or_default()
                    .trim()
                    .to_ascii_lowercase()
            })
            .unwrap_or_default();
        let json = essence == "application/json" || essence.ends_with("+json");
        if !json {
            return Ok(Value::String(
                String::from_utf8_lossy(self.body).into_owned(),
            ));
        }
        if nesting_depth(self.body, MAX_DEPTH) > MAX_DEPTH {
            return Err((
                ApiError::bad_input(format!("The body is nested deeper than {MAX_DEPTH} levels"))
                    .with_details(json!({"maxDepth": MAX_DEPTH})),
                "body-too-deep",
            ));
        }
        // Parsing a large body is CPU work: off the async workers.
        let bytes = self.body.clone();
        let parsed = crate::cpu::run(move || serde_json::from_slice::<Value>(&bytes)).await;
        match parsed {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(_)) => Err((
                ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "webhook-body-not-json",
                    "The body says it is JSON, but it is not",
                ),
                "body-not-json",
            )),
            Err(e) => Err((e, "body-not-json")),
        }
    }

    /// The id a delivery is deduped under: Standard Webhooks' `webhook-id`, else the
    /// trigger's delivery id header ('' when the request lacks it); `None`: not deduped.
    fn dedupe_id(&self, t: &WebhookTrigger) -> Option<String> {
        let value = |name: &str| {
            self.headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned()
        };
        match (&t.signature, &t.delivery_id_header) {
            (SignatureConfig::StandardWebhooks { .. }, _) => {
                Some(value(super::hooks_verify::SW_ID))
            }
            (_, Some(h)) => Some(value(h)),
            (_, None) => None,
        }
    }

    /// Step 8: the fire, deduped; a new one starts its run on its own task.
    async fn fire(&self, t: WebhookTrigger, event: Value) -> Response {
        let mut fire = WebhookFire::new(&t, FireOutcome::Pending, now());
        fire.dedupe_key = self.dedupe_id(&t).map(|id| dedupe_key(&id, self.body));
        match self.triggers.0.record_fire(&fire).await {
            Ok(FireRecorded::New) => {}
            Ok(FireRecorded::Duplicate { first_fire_id }) => {
                return (
                    StatusCode::OK,
                    Json(json!({"fireId": first_fire_id, "duplicate": true})),
                )
                    .into_response();
            }
            Err(e) => return ApiError::internal(&e).into_response(),
        }
        let fire_id = fire.fire_id.clone();
        let input = t.input.clone().unwrap_or(event);
        tokio::spawn(start_run(
            self.state.runtime.clone(),
            self.triggers.clone(),
            StoreOwners::new(self.state.db.clone()),
            t,
            fire_id.clone(),
            input,
        ));
        (StatusCode::ACCEPTED, Json(json!({"fireId": fire_id}))).into_response()
    }
}

/// Starts the fire's run as the trigger's owner — re-checked first: lost access is a
/// `refused` fire that counts toward the auto-pause — and records what came of it.
async fn start_run(
    rt: kindgi_runtime::Runtime,
    triggers: Triggers,
    owners: StoreOwners,
    t: WebhookTrigger,
    fire_id: String,
    input: Value,
) {
    let finish = match owner_refusal(&owners, &t).await {
        Some(finish) => finish,
        None => run_fire(rt, &t, &fire_id, input).await,
    };
    if let Some(d) = &finish.detail {
        tracing::warn!(trigger_id = %t.trigger_id, fire_id = %fire_id, detail = %d, "a webhook fire's run did not start");
    }
    match triggers
        .0
        .finish_fire(&t.tenant, &t.trigger_id, &fire_id, &finish)
        .await
    {
        Ok(true) => {
            tracing::warn!(trigger_id = %t.trigger_id, "webhook trigger paused after repeated failed starts")
        }
        Ok(false) => {}
        Err(e) => {
            tracing::error!(trigger_id = %t.trigger_id, fire_id = %fire_id, error = %e, "cannot record a webhook fire's outcome")
        }
    }
}

/// The refused finish of a fire whose owner lost access, if it did (a failed check fails
/// the fire).
async fn owner_refusal(owners: &StoreOwners, t: &WebhookTrigger) -> Option<FireFinish> {
    let why = owners
        .lost_access(
            &t.tenant,
            &t.owner,
            t.owner_key_id.as_deref(),
            Needs::Access,
            "webhook trigger",
        )
        .await;
    let detail = match why {
        Ok(None) => return None,
        Ok(Some(why)) => refused_detail(
            &why,
            &format!(
                "An admin can take the trigger over (POST /v1/webhooks/{}/owner)",
                t.trigger_id
            ),
        ),
        Err(e) => return Some(failed_start(format!("owner check failed: {e}"))),
    };
    Some(FireFinish {
        outcome: FireOutcome::Refused,
        run_id: None,
        detail: Some(detail.chars().take(MAX_DETAIL).collect()),
        counts_toward_pause: true,
        now: now(),
    })
}

/// Starts the run of fire `fire_id` of `t` (at most one per fire: its run idempotency key
/// is `fire:<fireId>`).
async fn run_fire(
    rt: kindgi_runtime::Runtime,
    t: &WebhookTrigger,
    fire_id: &str,
    input: Value,
) -> FireFinish {
    let options = RunOptions {
        tenant_id: Some(t.tenant.clone()),
        meta: RunMeta {
            project_id: Some(t.project_id.clone()),
            started_by: Some(StartedBy::for_trigger(TriggerKind::Webhook)),
            started_by_actor: Some(t.owner.actor()),
            trigger: Some(RunTrigger {
                trigger_id: t.trigger_id.clone(),
                kind: TriggerKind::Webhook,
                fire_id: fire_id.to_owned(),
                scheduled_for: None,
            }),
            unattended: Unattended {
                tools_allowed: t.tools_allowed_unattended.clone(),
                mailbox: None,
            },
            ..RunMeta::default()
        },
        idempotency_key: Some(format!("fire:{fire_id}")),
        ..RunOptions::default()
    };
    let (flow_id, version) = (t.flow_id.clone(), t.flow_version.clone());
    let started = crate::cpu::run_async(async move {
        rt.start_run(&flow_id, Some(&version), input, options).await
    })
    .await;
    match started {
        Ok(Ok(run)) => FireFinish {
            outcome: FireOutcome::Started,
            run_id: Some(run.id),
            detail: None,
            counts_toward_pause: false,
            now: now(),
        },
        Ok(Err(e)) => failed_start(e.to_string()),
        Err(e) => failed_start(e.message),
    }
}

fn failed_start(detail: String) -> FireFinish {
    FireFinish {
        outcome: FireOutcome::Failed,
        run_id: None,
        detail: Some(detail.chars().take(MAX_DETAIL).collect()),
        counts_toward_pause: true,
        now: now(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pings_and_clients() {
        let h = HeaderMap::new();
        assert!(is_ping(&h, b"webhook_id=42"));
        assert!(!is_ping(&h, b"webhook_id="));
        assert!(!is_ping(&h, b"webhook_id=4x"));
        let mut signed = HeaderMap::new();
        signed.insert("x-wc-webhook-signature", HeaderValue::from_static("x"));
        assert!(!is_ping(&signed, b"webhook_id=42"));
        let mut xff = HeaderMap::new();
        xff.insert(
            "x-forwarded-for",
            HeaderValue::from_static("1.1.1.1, 127.0.0.9"),
        );
        assert_eq!(client_of(&xff), "xff:127.0.0.9");
        assert_eq!(client_of(&h), "direct");
    }
}
