//! The reviewer roster and what it decides, over a loopback socket, on SQLite and PostgreSQL
//! (platform-api.md §4, cases 42–47, 52, 57): `/v1/approvals/reviewers` (register, re-register,
//! get, list, unregister), the gate's tiers (a standard reviewer sees and decides only standard
//! approvals; an escalation's successor is out of its sight), a tenant admin without a row
//! reads but cannot decide, an unregistered reviewer is `409 reviewer-deactivated`, four eyes
//! (`hitl.separateApprover`: the person who started the run is refused, another reviewer
//! approves, the run completes), and the signed audit bundle, its Ed25519 signature checked
//! with the public key the answer carries.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use kindgi_store::DatabaseKind;
use kindgi_store::tokens::KeyRole;
use serde_json::{Value, json};
use support::gated::{FOUR_EYES_AGENT, SENIOR_AGENT, Server, server};

const STD_USER: &str = "0b6f7c3e-5d1a-4f0e-9a43-1c2d3e4f5a61";
const BOSS_USER: &str = "5c1d2e3f-6a7b-4c8d-9e0f-a1b2c3d4e5f6";

fn code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or_default()
}

async fn register(s: &Server, user: &str, role: &str) -> Value {
    let (status, r) = s
        .post(
            "/v1/approvals/reviewers",
            json!({"userId": user, "role": role}),
        )
        .await;
    assert_eq!(status, 201, "{r}");
    r
}

async fn the_roster(kind: DatabaseKind) {
    let s = server(kind).await;
    let tenant = kindgi_api::projects::tenant_uuid("acme");
    // The operator's person was put on the roster as admin when their key was made.
    let (status, page) = s.get("/v1/approvals/reviewers").await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["data"].as_array().unwrap().len(), 1, "{page}");
    // A UUID, as the official `Reviewer.userId` is.
    assert_eq!(
        page["data"][0]["userId"],
        json!(kindgi_store::tokens::operator_user_id("acme"))
    );
    assert_eq!(page["data"][0]["role"], "admin");

    // Case 57: a bad role names the three; valid → 201; again → same id, new role.
    let (status, e) = s
        .post(
            "/v1/approvals/reviewers",
            json!({"userId": STD_USER, "role": "boss"}),
        )
        .await;
    assert_eq!(status, 400, "{e}");
    assert_eq!(
        e["error"]["message"],
        "Field `role` must be one of: standard, senior, admin"
    );
    let (status, e) = s
        .post("/v1/approvals/reviewers", json!({"role": "senior"}))
        .await;
    assert_eq!((status, code(&e)), (400, "bad-input"), "{e}");
    let first = register(&s, STD_USER, "senior").await;
    assert_eq!(first["tenantId"], json!(tenant));
    assert_eq!(first["userId"], STD_USER);
    assert!(first.get("deactivatedAt").is_none());
    let (status, again) = s
        .post(
            "/v1/approvals/reviewers",
            json!({"userId": STD_USER, "role": "standard", "displayName": "Sam"}),
        )
        .await;
    assert_eq!(status, 201);
    assert_eq!(again["id"], first["id"]);
    assert_eq!(again["role"], "standard");
    assert_eq!(again["displayName"], "Sam");
    let id = again["id"].as_str().unwrap().to_owned();
    let (status, got) = s.get(&format!("/v1/approvals/reviewers/{id}")).await;
    assert_eq!((status, &got), (200, &again));

    // Lists: a role filter, pages.
    let (_, page) = s.get("/v1/approvals/reviewers?role=standard").await;
    assert_eq!(page["data"].as_array().unwrap().len(), 1, "{page}");
    assert_eq!(page["data"][0]["id"], id.as_str());
    let (status, e) = s.get("/v1/approvals/reviewers?role=boss").await;
    assert_eq!(status, 400);
    assert_eq!(e["error"]["message"], "Unknown `role` value: boss");
    let (_, p1) = s.get("/v1/approvals/reviewers?limit=1").await;
    assert_eq!(p1["hasMore"], true, "{p1}");
    let cursor = p1["nextCursor"].as_str().unwrap();
    let (_, p2) = s
        .get(&format!("/v1/approvals/reviewers?limit=1&cursor={cursor}"))
        .await;
    assert_eq!(p2["hasMore"], false, "{p2}");
    assert_ne!(p1["data"][0]["id"], p2["data"][0]["id"]);

    // Unknown ids; who may.
    let unknown = uuid::Uuid::new_v4();
    let (status, e) = s.get(&format!("/v1/approvals/reviewers/{unknown}")).await;
    assert_eq!((status, code(&e)), (404, "reviewer-not-found"), "{e}");
    assert_eq!(e["error"]["details"]["reviewerId"], unknown.to_string());
    let (status, e) = s
        .post(
            &format!("/v1/approvals/reviewers/{unknown}/unregister"),
            json!({}),
        )
        .await;
    assert_eq!((status, code(&e)), (404, "reviewer-not-found"), "{e}");
    let (status, e) = s
        .call(&s.member, "GET", "/v1/approvals/reviewers", None)
        .await;
    assert_eq!((status, code(&e)), (403, "permission-denied"), "{e}");
    let (status, e) = s
        .call(
            &s.member,
            "POST",
            "/v1/approvals/reviewers",
            Some(json!({"userId": "u2", "role": "admin"})),
        )
        .await;
    assert_eq!((status, code(&e)), (403, "permission-denied"), "{e}");
    // Another tenant sees none of it.
    let (_, other) = s
        .call(
            &s.other,
            "GET",
            &format!("/v1/approvals/reviewers/{id}"),
            None,
        )
        .await;
    assert_eq!(code(&other), "reviewer-not-found");

    // Unregistering is soft; a second time says the same.
    let (status, done) = s
        .post(
            &format!("/v1/approvals/reviewers/{id}/unregister"),
            json!({}),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(done, json!({"reviewerId": id, "unregistered": true}));
    let (_, got) = s.get(&format!("/v1/approvals/reviewers/{id}")).await;
    assert!(got["deactivatedAt"].is_string(), "{got}");
}

async fn tiers(kind: DatabaseKind) {
    let s = server(kind).await;
    let std_key = s.person_key(STD_USER, KeyRole::Member).await;
    let std = |method: &'static str, path: String, body: Option<Value>| {
        let key = std_key.clone();
        let s = &s;
        async move { s.call(&key, method, &path, body).await }
    };
    // Case 42: no role, no row.
    let (status, e) = std("GET", "/v1/approvals".into(), None).await;
    assert_eq!((status, code(&e)), (403, "permission-denied"), "{e}");
    assert_eq!(e["error"]["details"]["action"], "read");
    assert_eq!(
        e["error"]["details"]["resource"],
        format!("tenant:{}", kindgi_api::projects::tenant_uuid("acme"))
    );
    let row = register(&s, STD_USER, "standard").await;

    let (_, standard) = s.gated_turn().await;
    let (_, senior) = s.turn_of(SENIOR_AGENT).await;
    // Case 43: only the standard row; the admin sees both.
    let (status, page) = std("GET", "/v1/approvals".into(), None).await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["order"], "desc");
    let ids: Vec<&str> = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec![standard.as_str()]);
    let (_, all) = s.get("/v1/approvals").await;
    assert_eq!(all["data"].as_array().unwrap().len(), 2, "{all}");
    // Case 44.
    let (status, e) = std("GET", "/v1/approvals?requiredRole=admin".into(), None).await;
    assert_eq!((status, code(&e)), (403, "permission-denied"));
    assert_eq!(
        e["error"]["message"],
        "Role standard cannot query approvals scoped to admin."
    );
    // Case 47: above the caller's tier is invisible, to read and to decide.
    let (status, e) = std("GET", format!("/v1/approvals/{senior}"), None).await;
    assert_eq!((status, code(&e)), (404, "approval-not-found"), "{e}");
    assert_eq!(e["error"]["details"]["approvalId"], senior.as_str());
    let approve = json!({"decision": "approve"});
    let (status, e) = std(
        "POST",
        format!("/v1/approvals/{senior}/complete"),
        Some(approve.clone()),
    )
    .await;
    assert_eq!((status, code(&e)), (404, "approval-not-found"), "{e}");

    // A tenant admin without a row reads every tier but decides nothing; with a lower row,
    // a higher tier is `insufficient-role`.
    let boss = s.person_key(BOSS_USER, KeyRole::Admin).await;
    let (status, _) = s
        .call(&boss, "GET", &format!("/v1/approvals/{senior}"), None)
        .await;
    assert_eq!(status, 200);
    let path = format!("/v1/approvals/{senior}/complete");
    let (status, e) = s.call(&boss, "POST", &path, Some(approve.clone())).await;
    assert_eq!((status, code(&e)), (403, "permission-denied"), "{e}");
    assert_eq!(
        e["error"]["message"],
        "No reviewer row registered for this user under this tenant."
    );
    register(&s, BOSS_USER, "standard").await;
    let (status, e) = s.call(&boss, "POST", &path, Some(approve.clone())).await;
    assert_eq!((status, code(&e)), (403, "insufficient-role"), "{e}");
    let (_, still) = s.get(&format!("/v1/approvals/{senior}")).await;
    assert_eq!(still["status"], "pending");

    // Case 52: the standard reviewer escalates; the successor is out of its sight.
    let (status, done) = std(
        "POST",
        format!("/v1/approvals/{standard}/complete"),
        Some(json!({"decision": "escalate"})),
    )
    .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["kind"], "escalated");
    assert_eq!(done["decision"]["reviewerId"], row["id"]);
    assert_eq!(done["decision"]["reviewerRoleAtDecision"], "standard");
    assert_eq!(done["waitpointResolved"], false);
    let next = done["nextApproval"]["id"].as_str().unwrap().to_owned();
    assert_eq!(done["nextApproval"]["requiredRole"], "senior");
    let (status, _) = std("GET", format!("/v1/approvals/{next}"), None).await;
    assert_eq!(status, 404);
    let (status, _) = s.get(&format!("/v1/approvals/{next}")).await;
    assert_eq!(status, 200);

    // Unregistered: `409 reviewer-deactivated`, nothing decided.
    let (_, third) = s.gated_turn().await;
    let id = row["id"].as_str().unwrap();
    s.post(
        &format!("/v1/approvals/reviewers/{id}/unregister"),
        json!({}),
    )
    .await;
    let (status, e) = std(
        "POST",
        format!("/v1/approvals/{third}/complete"),
        Some(approve),
    )
    .await;
    assert_eq!((status, code(&e)), (409, "reviewer-deactivated"), "{e}");
    let (_, still) = s.get(&format!("/v1/approvals/{third}")).await;
    assert_eq!(still["status"], "pending");
}

async fn four_eyes(kind: DatabaseKind) {
    let s = server(kind).await;
    // An ordinary approval says it has no four eyes, and who asked.
    let (_, plain) = s.gated_turn().await;
    let (_, a) = s.get(&format!("/v1/approvals/{plain}")).await;
    assert_eq!(a["separateApprover"], false, "{a}");
    assert_eq!(
        a["requestedBy"],
        format!("user:{}", kindgi_store::tokens::operator_user_id("acme"))
    );

    let (run, approval) = s.turn_of(FOUR_EYES_AGENT).await;
    let (_, a) = s.get(&format!("/v1/approvals/{approval}")).await;
    assert_eq!(a["separateApprover"], true, "{a}");
    assert_eq!(
        a["requestedBy"],
        format!("user:{}", kindgi_store::tokens::operator_user_id("acme"))
    );
    let path = format!("/v1/approvals/{approval}/complete");
    // The person who started the run may not approve it.
    let (status, e) = s.post(&path, json!({"decision": "approve"})).await;
    assert_eq!(
        (status, code(&e)),
        (403, "separate-approver-required"),
        "{e}"
    );
    assert!(
        e["error"]["message"].as_str().unwrap().contains(&format!(
            "user:{} asked for it, so another reviewer must decide it",
            kindgi_store::tokens::operator_user_id("acme")
        )),
        "{e}"
    );
    let (_, still) = s.get(&format!("/v1/approvals/{approval}")).await;
    assert_eq!(still["status"], "pending");
    assert_eq!(s.writes(), 0);
    // Another reviewer does; the run completes.
    let other = s.person_key(BOSS_USER, KeyRole::Member).await;
    register(&s, BOSS_USER, "admin").await;
    let (status, done) = s
        .call(&other, "POST", &path, Some(json!({"decision": "approve"})))
        .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(
        done["approval"]["decision"]["decidedBy"],
        format!("user:{BOSS_USER}")
    );
    assert_eq!(done["resume"]["kind"], "ok", "{done}");
    let (_, got) = s.get(&format!("/v1/runs/{run}")).await;
    assert_eq!(got["status"], "completed", "{got}");
    assert_eq!(s.writes(), 1);
}

/// A fresh Ed25519 key, through the PEM file an operator would give.
fn signer(dir: &std::path::Path) -> Arc<kindgi_api::export_signing::ExportSigner> {
    let rng = ring::rand::SystemRandom::new();
    let der = ring::signature::Ed25519KeyPair::generate_pkcs8(&rng).unwrap();
    let pem = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        STANDARD.encode(der.as_ref())
    );
    let path = dir.join("export.pem");
    std::fs::write(&path, pem).unwrap();
    Arc::new(kindgi_api::export_signing::ExportSigner::from_file(path.to_str().unwrap()).unwrap())
}

async fn audit_bundles(kind: DatabaseKind) {
    let s = server(kind).await;
    let (_, approval) = s.gated_turn().await;
    let path = format!("/v1/approvals/{approval}/audit-bundle");
    let (status, e) = s.post(&path, json!({})).await;
    assert_eq!((status, code(&e)), (404, "signing-not-configured"), "{e}");

    let dir = tempfile::tempdir().unwrap();
    let key = signer(dir.path());
    let url = s.signed(key.clone()).await;
    let post = |body: Value| {
        let req = s
            .http
            .post(format!("{url}{path}"))
            .bearer_auth(&s.admin)
            .json(&body);
        async move {
            let r = req.send().await.unwrap();
            (r.status().as_u16(), r.json::<Value>().await.unwrap())
        }
    };
    let (status, e) = post(json!({})).await;
    assert_eq!((status, code(&e)), (409, "approval-not-decided"), "{e}");
    let (status, e) = post(json!({"includeMessages": "yes"})).await;
    assert_eq!((status, code(&e)), (400, "bad-input"), "{e}");
    let (status, _) = s
        .post(
            &format!("/v1/approvals/{approval}/complete"),
            json!({"decision": "approve", "rationale": "fine"}),
        )
        .await;
    assert_eq!(status, 200);
    let (status, e) = post(json!({"signingKeyId": "ex_nope"})).await;
    assert_eq!((status, code(&e)), (404, "signing-key-not-found"), "{e}");

    let (status, b) = post(json!({"includeMessages": true})).await;
    assert_eq!(status, 200, "{b}");
    assert_eq!(b["approvalId"], approval.as_str());
    assert_eq!(b["kind"], "audit-bundle");
    assert_eq!(b["algorithm"], "ed25519");
    assert_eq!(b["canonicalization"], "sorted-key-json");
    assert_eq!(b["signingKeyId"], key.key_id());
    // The signature over the exact bytes, checked with the embedded public key alone.
    let bytes = STANDARD.decode(b["bundle"].as_str().unwrap()).unwrap();
    let signature = STANDARD.decode(b["signature"].as_str().unwrap()).unwrap();
    assert_eq!(signature.len(), 64);
    let pem = b["publicKey"].as_str().unwrap();
    assert!(pem.starts_with("-----BEGIN PUBLIC KEY-----"));
    let spki: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    let spki = STANDARD.decode(spki).unwrap();
    let raw = &spki[spki.len() - 32..];
    ring::signature::UnparsedPublicKey::new(&ring::signature::ED25519, raw)
        .verify(&bytes, &signature)
        .expect("the signature verifies");
    let mut tampered = bytes.clone();
    tampered[10] ^= 1;
    assert!(
        ring::signature::UnparsedPublicKey::new(&ring::signature::ED25519, raw)
            .verify(&tampered, &signature)
            .is_err()
    );
    // The signed body, sorted-key JSON without whitespace.
    let body: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(
        serde_json::to_vec(&kindgi_spec::pack_index::canonicalize(&body)).unwrap(),
        bytes
    );
    assert_eq!(body["bundleSchemaVersion"], "2.0.0");
    assert_eq!(body["approvalId"], approval.as_str());
    assert_eq!(body["status"], "approved");
    assert_eq!(body["decision"]["kind"], "approve");
    assert_eq!(body["decision"]["rationale"], "fine");
    assert_eq!(body["exportedAt"], b["exportedAt"]);
    assert!(body["evidence"]["messages"].is_array(), "{body}");
    // The key is listed for verifiers to pin.
    let keys: Value = s
        .http
        .get(format!("{url}/v1/export-signing-keys"))
        .bearer_auth(&s.member)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(keys["data"][0]["keyId"], key.key_id());
    assert_eq!(keys["data"][0]["publicKeyPem"], pem);
    let (_, none) = s
        .call(&s.member, "GET", "/v1/export-signing-keys", None)
        .await;
    assert_eq!(none, json!({"data": []}));
}

both_stores!(the_roster, tiers, four_eyes, audit_bundles);

fn official_cli() -> Option<std::path::PathBuf> {
    let required = std::env::var("KINDGI_REQUIRE_REFERENCE").as_deref() == Ok("1")
        || std::env::var_os("CI").is_some();
    let path = std::env::var_os("KINDGI_OFFICIAL_CLI")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/kindgi")
        });
    if path.exists() {
        return Some(path);
    }
    assert!(
        !required,
        "KINDGI_REQUIRE_REFERENCE=1 but the official CLI is missing at {}",
        path.display()
    );
    eprintln!("skipped: the official CLI is not at {}", path.display());
    None
}

/// The official CLI registers its caller (userId from whoami) and lists the roster.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_cli_registers_and_lists_reviewers() {
    let Some(bin) = official_cli() else { return };
    let s = server(DatabaseKind::Sqlite).await;
    let boss = s.person_key(BOSS_USER, KeyRole::Admin).await;
    let home = tempfile::tempdir().unwrap();
    let run = |args: Vec<&'static str>| {
        let cmd = tokio::process::Command::new(&bin)
            .args(&args)
            .current_dir(home.path())
            .env("HOME", home.path())
            .env("KINDGI_API_URL", &s.url)
            .env("KINDGI_API_TOKEN", &boss)
            .output();
        async move {
            let out = cmd.await.unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            assert_eq!(out.status.code(), Some(0), "{args:?}: {stdout}\n{stderr}");
            serde_json::from_str::<Value>(&stdout)
                .unwrap_or_else(|e| panic!("{args:?}: {e}: {stdout}"))
        }
    };
    let created = run(vec![
        "reviewers",
        "register",
        r#"--spec={"role":"standard"}"#,
        "--json",
    ])
    .await;
    let created = created.get("reviewer").unwrap_or(&created).clone();
    assert_eq!(created["userId"], BOSS_USER, "{created}");
    assert_eq!(created["role"], "standard");
    let listed = run(vec!["reviewers", "list", "--json"]).await;
    let text = listed.to_string();
    assert!(
        text.contains(BOSS_USER) && text.contains("\"standard\""),
        "{listed}"
    );
    let id = created["id"].as_str().unwrap().to_owned();
    let (status, got) = s.get(&format!("/v1/approvals/reviewers/{id}")).await;
    assert_eq!(status, 200);
    assert_eq!(got["role"], "standard");
}
