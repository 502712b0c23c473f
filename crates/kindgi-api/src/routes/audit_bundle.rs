//! `POST /v1/approvals/{approvalId}/audit-bundle` (platform-api.md §4, `OA approvals.auditBundle`)
//! and `GET /v1/export-signing-keys` (`OA exportSigningKeys.list`): a decided approval, its
//! decision and its evidence, signed with the deployment's export key
//! ([`crate::export_signing`]).
//!
//! The signed body is `{bundleSchemaVersion: "2.0.0", approvalId, tenantId, subjectKind,
//! subjectRef, requiredRole, status, createdAt, decidedAt?, decision, evidence: {messages?},
//! exportedAt}` as sorted-key JSON without whitespace; the answer (`OA:ExportAuditBundleResult`)
//! carries those exact bytes (base64 `bundle`), the Ed25519 `signature` over them (base64), the
//! key's `publicKey` (PEM SPKI) and `signingKeyId`. Checked in the reference's order: the
//! reviewer gate (`403`), no key (`404 signing-not-configured`), the body (`400`), visibility
//! (`404 approval-not-found`), an open approval (`409 approval-not-decided`), another key id
//! (`404 signing-key-not-found`). `decision` is `{kind, reviewerId, reviewerRoleAtDecision,
//! decidedAt, rationale?}` or `null` (expired without one). `includeMessages: true` adds the
//! messages of the approval's conversation (`subjectRef.conversationId`: this runtime's agent
//! turns name it there; `[]` when it has none). Unlike the reference, the export is not
//! recorded as an `export-signed` audit event (this runtime has no audit-event log yet).

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use kindgi_runtime::Runtime;
use kindgi_runtime::approval::Approval;
use serde_json::{Map, Value, json};

use super::approvals::visible;
use super::key_holder::{KeyHolder, object_body};
use super::reviewer::{self, Roster};
use crate::error::ApiError;
use crate::projects::tenant_uuid;
use crate::state::AppState;

/// The signed body's version.
pub const BUNDLE_SCHEMA_VERSION: &str = "2.0.0";
/// The most conversation messages a bundle carries (the newest).
pub const MAX_MESSAGES: usize = 1000;

/// The export routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/v1/approvals/{approval_id}/audit-bundle",
            post(audit_bundle),
        )
        .route("/v1/export-signing-keys", get(signing_keys))
}

/// `{signingKeyId?, includeMessages?}`.
struct BundleRequest {
    signing_key_id: Option<String>,
    include_messages: bool,
}

fn parse_body(body: &Map<String, Value>) -> Result<BundleRequest, ApiError> {
    let signing_key_id = match body.get("signingKeyId") {
        None => None,
        Some(Value::String(s)) if !s.is_empty() && s.len() <= 200 => Some(s.clone()),
        Some(_) => {
            return Err(ApiError::bad_input(
                "Field `signingKeyId` must be a non-empty string when present; leave it out to sign with the active key.",
            ));
        }
    };
    let include_messages = match body.get("includeMessages") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(ApiError::bad_input(
                "Field `includeMessages` must be a boolean when present",
            ));
        }
    };
    Ok(BundleRequest {
        signing_key_id,
        include_messages,
    })
}

fn not_found(code: &'static str, message: String) -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, code, message)
}

/// Sorted keys at every level, no whitespace: the bytes that are signed.
pub fn canonical_bytes(v: &Value) -> Vec<u8> {
    serde_json::to_vec(&kindgi_spec::pack_index::canonicalize(v)).unwrap_or_default()
}

/// The body a bundle signs.
fn bundle_body(a: &Approval, messages: Option<Vec<Value>>, exported_at: &str) -> Value {
    let mut evidence = Map::new();
    if let Some(m) = messages {
        evidence.insert("messages".into(), Value::Array(m));
    }
    let mut o = Map::new();
    o.insert("bundleSchemaVersion".into(), json!(BUNDLE_SCHEMA_VERSION));
    o.insert("approvalId".into(), json!(a.id));
    o.insert("tenantId".into(), json!(tenant_uuid(&a.tenant_id)));
    o.insert("subjectKind".into(), json!(a.subject_kind));
    o.insert("subjectRef".into(), a.subject_ref.clone());
    o.insert("requiredRole".into(), json!(a.required_role.as_str()));
    o.insert("status".into(), json!(a.status.as_str()));
    o.insert("createdAt".into(), json!(a.created_at));
    if let Some(d) = &a.decided_at {
        o.insert("decidedAt".into(), json!(d));
    }
    o.insert(
        "decision".into(),
        a.decision.as_ref().map_or(Value::Null, |d| {
            let mut m = Map::new();
            m.insert("kind".into(), json!(d.decision.as_str()));
            m.insert("reviewerId".into(), json!(d.reviewer_id));
            m.insert(
                "reviewerRoleAtDecision".into(),
                json!(d.reviewer_role_at_decision.as_str()),
            );
            m.insert("decidedAt".into(), json!(d.decided_at));
            if let Some(r) = &d.rationale {
                m.insert("rationale".into(), json!(r));
            }
            Value::Object(m)
        }),
    );
    o.insert("evidence".into(), Value::Object(evidence));
    o.insert("exportedAt".into(), json!(exported_at));
    Value::Object(o)
}

/// The messages of the approval's conversation, oldest first (`[]` without one).
async fn messages(state: &AppState, a: &Approval) -> Result<Vec<Value>, ApiError> {
    let Some(id) = a.subject_ref.get("conversationId").and_then(Value::as_str) else {
        return Ok(Vec::new());
    };
    let log = kindgi_store::conversations::ConversationStore::new(state.db.clone());
    let history = match log.history(&a.tenant_id, id).await {
        Ok(h) => h,
        Err(kindgi_core::conversation::ConversationError::NotFound { .. }) => Vec::new(),
        Err(e) => return Err(ApiError::from(e)),
    };
    let skip = history.len().saturating_sub(MAX_MESSAGES);
    Ok(history
        .iter()
        .skip(skip)
        .map(super::conversations::serialize_message)
        .collect())
}

async fn audit_bundle(
    State(state): State<AppState>,
    State(rt): State<Runtime>,
    State(roster): State<Roster>,
    caller: KeyHolder,
    Path(approval_id): Path<String>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let reviewer = reviewer::gate(&caller, &roster, "read").await?;
    let Some(signer) = state.export_signer.clone() else {
        return Err(not_found(
            "signing-not-configured",
            "This deployment doesn't sign exports, so signed audit bundles are unavailable: it has no export signing key. On this runtime, set KINDGI_EXPORT_SIGNING_KEY_PATH or KINDGI_EXPORT_SIGNING_KEY.".into(),
        ));
    };
    let req = parse_body(&object_body(&body, true)?)?;
    let approval = visible(&rt, &reviewer, &approval_id).await?;
    if approval.status.is_open() {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "approval-not-decided",
            format!(
                "Approval {} is still {}; audit bundles are only exportable after a terminal decision.",
                approval.id,
                approval.status.as_str()
            ),
        )
        .with_details(json!({"approvalId": approval.id, "status": approval.status.as_str()})));
    }
    if let Some(k) = req
        .signing_key_id
        .as_deref()
        .filter(|k| *k != signer.key_id())
    {
        return Err(not_found(
            "signing-key-not-found",
            format!(
                "This deployment doesn't sign exports with key \"{k}\". It signs with \"{}\"; leave signingKeyId out to use the active one.",
                signer.key_id()
            ),
        )
        .with_details(json!({"signingKeyId": k})));
    }
    let messages = match req.include_messages {
        true => Some(messages(&state, &approval).await?),
        false => None,
    };
    let exported_at = kindgi_runtime::record::format_millis(kindgi_runtime::record::now_millis());
    let bytes = canonical_bytes(&bundle_body(&approval, messages, &exported_at));
    let signature = signer.sign(&bytes);
    Ok(Json(json!({
        "approvalId": approval.id,
        "kind": "audit-bundle",
        "bundle": STANDARD.encode(&bytes),
        "bundleSchemaVersion": BUNDLE_SCHEMA_VERSION,
        "algorithm": "ed25519",
        "signingKeyId": signer.key_id(),
        "signature": STANDARD.encode(signature),
        "publicKey": signer.public_key_pem(),
        "canonicalization": "sorted-key-json",
        "exportedAt": exported_at,
    })))
}

/// `OA:ExportSigningKeyList`: the one configured key, or none. Any authenticated caller.
async fn signing_keys(State(state): State<AppState>, _caller: KeyHolder) -> Json<Value> {
    let data: Vec<Value> = state
        .export_signer
        .iter()
        .map(|s| {
            json!({
                "keyId": s.key_id(),
                "algorithm": "ed25519",
                "publicKeyPem": s.public_key_pem(),
                "fingerprint": s.fingerprint(),
                "active": true,
            })
        })
        .collect();
    Json(json!({"data": data}))
}
