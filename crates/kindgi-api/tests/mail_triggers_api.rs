//! Mail triggers end to end over a loopback socket, on SQLite and PostgreSQL: the admin routes
//! (`/v1/mail-triggers`: create and its refusals, get, list, patch, pause/resume, unregister,
//! fires) and the inbound receiver (`/v1/mail/inbound/{tenantId}`). A mail DKIM-signed in the
//! test (a generated Ed25519 key, its record preloaded into the offline resolver with SPF and
//! DMARC, so no lookup leaves the machine) starts a run `startedBy: mail` acting for the mapped
//! person, with the address as its own mailbox; the same `Message-ID` again is a duplicate; a
//! forged `From` (another key's signature, an SPF-failing client) starts nothing and records a
//! `refused` fire (`dmarc-fail`); a proven but unmapped sender is `sender-unknown`; a request
//! without the tenant's secret is `401 mail-inbound-refused`; a raw `message/rfc822` body works
//! too; an over-limit body is `413`; a paused trigger records `skipped`. A trigger may run an
//! agent (its `userMessage` made from the mail, said to be data from outside); past its
//! `rateLimitPerMinute` a mail is `429` with `Retry-After` and a `refused` fire; a revoked
//! owner key refuses the fire; each run's id is its run idempotency key `fire:<fireId>`'s.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use kindgi_api::routes::mail_sender::SenderCheck;
use kindgi_api::values_config::ValuesConfig;
use kindgi_api::{AppState, router};
use kindgi_core::trigger::{StartedBy, TriggerKind};
use kindgi_runtime::Runtime;
use kindgi_spec::tool::ConnectionOwner;
use kindgi_store::DatabaseKind;
use kindgi_store::seal::SealKey;
use kindgi_store::testing::TestDatabase;
use kindgi_store::tokens::{KeyRole, NewToken, Principal};
use kindgi_tools::{HandlerError, Tool};
use mail_auth::common::crypto::Ed25519Key;
use mail_auth::common::headers::HeaderWriter;
use mail_auth::dkim::DkimSigner;
use serde_json::{Value, json};

const SECRET: &str = "inbound-secret-0123456789";
const FLOW: &str = "acme.answer";
const AGENT: &str = "acme.helper";

struct Server {
    url: String,
    http: reqwest::Client,
    rt: Runtime,
    admin: String,
    member: String,
    tenant: String,
    good_key: Vec<u8>,
    db: TestDatabase,
}

fn runtime(db: &kindgi_store::Database) -> Runtime {
    let rt = Runtime::over(db.ports()).build();
    let echo = Tool::define("acme.echo")
        .version("1.0.0")
        .description("echoes")
        .input(json!({"type": "object"}))
        .output(json!({"type": "object"}))
        .handler(
            |input: Value, _ctx| async move { Ok::<Value, HandlerError>(json!({"got": input})) },
        )
        .build()
        .unwrap();
    rt.tools().insert_tool(echo);
    let flow = json!({"id": FLOW, "version": "1.0.0",
        "nodes": [{"id": "echo", "kind": "tool", "ref": "acme.echo"}],
        "edges": [{"id": "e1", "from": "$start", "to": "echo"}, {"id": "e2", "from": "echo", "to": "$end"}]});
    rt.flows().insert_json(&flow.to_string()).unwrap();
    let mut helper = kindgi_runtime::AgentSpec::new(AGENT);
    helper.version = "1.0.0".into();
    rt.agents().insert(helper);
    rt
}

fn offline_check(public_key: &[u8]) -> SenderCheck {
    let check = SenderCheck::offline("mx.kindgi.test").unwrap();
    check
        .preload_txt(
            "sel._domainkey.example.test",
            &format!("v=DKIM1; k=ed25519; p={}", STANDARD.encode(public_key)),
        )
        .unwrap();
    check
        .preload_txt("example.test", "v=spf1 ip4:127.0.0.1 -all")
        .unwrap();
    check
        .preload_txt("_dmarc.example.test", "v=DMARC1; p=reject")
        .unwrap();
    check
}

async fn server(kind: DatabaseKind) -> Server {
    let db = TestDatabase::new(kind).await.unwrap();
    let rt = runtime(&db.db);
    let good_key = Ed25519Key::generate_pkcs8().unwrap();
    let public = Ed25519Key::from_pkcs8_der(&good_key).unwrap().public_key();
    let (seal, _) = SealKey::generate();
    let state = AppState::new(db.db.clone())
        .with_runtime(rt.clone())
        .with_values(ValuesConfig::new("local", Some(seal)))
        .with_mail_sender_check(offline_check(&public));
    let admin = state.tokens.create("acme", None).await.unwrap().key;
    let member = state
        .tokens
        .mint(&NewToken {
            tenant: "acme".into(),
            principal: Some(Principal::user("u2")),
            role: KeyRole::Member,
            capabilities: vec![],
            label: None,
            project_id: None,
            created_by: None,
            expires_at: None,
        })
        .await
        .unwrap()
        .key;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(kindgi_api::serve(
        listener,
        router(state),
        kindgi_serve::Limits::default(),
        kindgi_serve::CancellationToken::new(),
    ));
    Server {
        url,
        http: reqwest::Client::new(),
        rt,
        admin,
        member,
        tenant: kindgi_api::projects::tenant_uuid("acme"),
        good_key,
        db,
    }
}

impl Server {
    async fn call(&self, key: &str, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let url = format!("{}{path}", self.url);
        let mut req = match method {
            "GET" => self.http.get(url),
            "PATCH" => self.http.patch(url),
            _ => self.http.post(url),
        }
        .bearer_auth(key);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r = req.send().await.unwrap();
        let status = r.status().as_u16();
        let text = r.text().await.unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    /// Posts `raw` as SendGrid Inbound Parse does (multipart, the raw message in `email`).
    async fn inbound(&self, raw: &str, to: &str, ip: &str, password: Option<&str>) -> (u16, Value) {
        let boundary = "xYzZY";
        let envelope = json!({"to": [to], "from": "bounce@example.test"}).to_string();
        let mut body = String::new();
        for (name, value) in [
            ("envelope", envelope.as_str()),
            ("sender_ip", ip),
            ("email", raw),
        ] {
            body.push_str(&format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            ));
        }
        body.push_str(&format!("--{boundary}--\r\n"));
        let mut req = self
            .http
            .post(format!("{}/v1/mail/inbound/{}", self.url, self.tenant))
            .header(
                "content-type",
                format!("multipart/form-data; boundary={boundary}"),
            )
            .body(body);
        if let Some(p) = password {
            req = req.basic_auth("sendgrid", Some(p));
        }
        let r = req.send().await.unwrap();
        let status = r.status().as_u16();
        let text = r.text().await.unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }
}

/// A message from `from` to `to`, DKIM-signed for example.test with `key`.
fn signed(key: &[u8], from: &str, to: &str, message_id: &str) -> String {
    let body = format!(
        "From: {from}\r\nTo: {to}\r\nSubject: Where is my order?\r\nMessage-ID: <{message_id}>\r\nDate: Thu, 03 Dec 2026 09:00:00 +0000\r\n\r\nHello, order 1001 please.\r\n"
    );
    let signature = DkimSigner::from_key(Ed25519Key::from_pkcs8_der(key).unwrap())
        .domain("example.test")
        .selector("sel")
        .headers(["From", "To", "Subject", "Message-ID", "Date"])
        .sign(body.as_bytes())
        .unwrap();
    format!("{}{body}", signature.to_header())
}

fn code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or_default()
}

async fn admin_routes(s: &Server) -> String {
    let good = json!({"address": "Support@Acme.test", "flowId": FLOW, "flowVersion": "1.0.0",
        "senders": [{"address": "ada@example.test", "userId": "ada"}],
        "mailbox": {"app": "google", "whose": "company"},
        "toolsAllowedUnattended": ["acme.echo"], "label": "support"});
    let (status, e) = s
        .call(&s.member, "POST", "/v1/mail-triggers", Some(good.clone()))
        .await;
    assert_eq!((status, code(&e)), (403, "permission-denied"), "{e}");
    let mut no_address = good.clone();
    no_address.as_object_mut().unwrap().remove("address");
    let (status, e) = s
        .call(&s.admin, "POST", "/v1/mail-triggers", Some(no_address))
        .await;
    assert_eq!((status, code(&e)), (400, "bad-input"), "{e}");
    assert_eq!(e["error"]["details"]["field"], "address");
    let mut no_senders = good.clone();
    no_senders["senders"] = json!([]);
    let (status, e) = s
        .call(&s.admin, "POST", "/v1/mail-triggers", Some(no_senders))
        .await;
    assert_eq!(e["error"]["details"]["field"], "senders", "{status} {e}");
    let mut no_flow = good.clone();
    no_flow["flowVersion"] = json!("9.9.9");
    let (status, e) = s
        .call(&s.admin, "POST", "/v1/mail-triggers", Some(no_flow))
        .await;
    assert_eq!((status, code(&e)), (404, "flow-not-found"), "{e}");

    let (status, t) = s
        .call(&s.admin, "POST", "/v1/mail-triggers", Some(good.clone()))
        .await;
    assert_eq!(status, 201, "{t}");
    assert_eq!(t["address"], "support@acme.test");
    assert_eq!(t["status"], "active");
    assert_eq!(t["owner"]["kind"], "user");
    assert_eq!(t["mailbox"], json!({"app": "google", "whose": "company"}));
    let id = t["triggerId"].as_str().unwrap().to_owned();
    let (status, e) = s
        .call(&s.admin, "POST", "/v1/mail-triggers", Some(good))
        .await;
    assert_eq!((status, code(&e)), (409, "trigger-address-taken"), "{e}");

    let (status, got) = s
        .call(&s.admin, "GET", &format!("/v1/mail-triggers/{id}"), None)
        .await;
    assert_eq!((status, &got["triggerId"]), (200, &json!(id)));
    let (status, e) = s
        .call(&s.admin, "GET", "/v1/mail-triggers/not-a-uuid", None)
        .await;
    assert_eq!((status, code(&e)), (404, "trigger-not-found"));
    let (status, page) = s.call(&s.admin, "GET", "/v1/mail-triggers", None).await;
    assert_eq!(status, 200);
    assert_eq!(page["data"].as_array().unwrap().len(), 1);
    assert_eq!(page["hasMore"], false);
    let (status, patched) = s
        .call(
            &s.admin,
            "PATCH",
            &format!("/v1/mail-triggers/{id}"),
            Some(json!({"label": null})),
        )
        .await;
    assert_eq!(
        (status, &patched["label"]),
        (200, &Value::Null),
        "{patched}"
    );
    id
}

async fn inbound(s: &Server, id: &str) {
    let mail = signed(
        &s.good_key,
        "Ada <ada@example.test>",
        "support@acme.test",
        "m1@example.test",
    );
    // Without the tenant's secret nothing is looked at.
    let (status, e) = s
        .inbound(&mail, "support@acme.test", "127.0.0.1", None)
        .await;
    assert_eq!((status, code(&e)), (401, "mail-inbound-refused"), "{e}");
    let (status, e) = s
        .inbound(&mail, "support@acme.test", "127.0.0.1", Some(SECRET))
        .await;
    assert_eq!(status, 401, "no secret is set yet: {e}");
    let (status, r) = s
        .call(
            &s.admin,
            "POST",
            "/v1/secrets",
            Some(json!({"scope": {"kind": "tenant"},
            "envName": "local", "name": "MAIL_INBOUND_SECRET", "value": SECRET,
            "writeMode": "create-new"})),
        )
        .await;
    assert_eq!(status, 201, "{r}");
    let (status, e) = s
        .inbound(&mail, "support@acme.test", "127.0.0.1", Some("wrong"))
        .await;
    assert_eq!((status, code(&e)), (401, "mail-inbound-refused"), "{e}");
    let (status, e) = s
        .inbound(&mail, "nobody@acme.test", "127.0.0.1", Some(SECRET))
        .await;
    assert_eq!(status, 401, "no trigger of the tenant has the address: {e}");

    // A proven sender the trigger maps: a run acting for Ada, the address its mailbox.
    let (status, r) = s
        .inbound(&mail, "support@acme.test", "127.0.0.1", Some(SECRET))
        .await;
    assert_eq!(status, 202, "{r}");
    let fire = &r["fires"][0];
    assert_eq!(fire["outcome"], "started", "{r}");
    let run_id = fire["runId"].as_str().unwrap().to_owned();
    let run = s.rt.store().get_run(&run_id).await.unwrap().unwrap();
    assert_eq!(run.meta.started_by, Some(StartedBy::Mail));
    assert_eq!(run.meta.started_by_actor.as_deref(), Some("user:ada"));
    let trigger = run.meta.trigger.clone().unwrap();
    assert_eq!(
        (trigger.kind, trigger.trigger_id.as_str()),
        (TriggerKind::Mail, id)
    );
    assert_eq!(trigger.fire_id, fire["fireId"].as_str().unwrap());
    let mailbox = run.meta.unattended.mailbox.clone().unwrap();
    assert_eq!(
        (
            mailbox.address.as_str(),
            mailbox.app.as_str(),
            mailbox.whose
        ),
        ("support@acme.test", "google", ConnectionOwner::Company)
    );
    assert_eq!(run.meta.unattended.tools_allowed, ["acme.echo"]);
    assert_eq!(run.input["from"], "ada@example.test");
    assert_eq!(run.input["subject"], "Where is my order?");
    assert_eq!(run.input["messageId"], "m1@example.test");
    let (status, wire) = s
        .call(&s.admin, "GET", &format!("/v1/runs/{run_id}"), None)
        .await;
    assert_eq!(
        (status, &wire["startedBy"]),
        (200, &json!("mail")),
        "{wire}"
    );

    // The same message again: that fire, no second run.
    let (status, again) = s
        .inbound(&mail, "support@acme.test", "127.0.0.1", Some(SECRET))
        .await;
    assert_eq!(status, 202);
    assert_eq!(again["fires"][0]["duplicate"], true, "{again}");
    assert_eq!(again["fires"][0]["fireId"], fire["fireId"]);

    // A forged From: another key's signature, from a client SPF fails. Nothing starts.
    let forger = Ed25519Key::generate_pkcs8().unwrap();
    let forged = signed(
        &forger,
        "ada@example.test",
        "support@acme.test",
        "m2@example.test",
    );
    let (status, r) = s
        .inbound(&forged, "support@acme.test", "192.0.2.7", Some(SECRET))
        .await;
    assert_eq!(status, 202, "{r}");
    assert_eq!(r["fires"][0]["outcome"], "refused", "{r}");
    assert_eq!(r["fires"][0]["detail"], "dmarc-fail");
    assert!(r["fires"][0].get("runId").is_none());
    // Proven, but nobody the trigger acts for.
    let bob = signed(
        &s.good_key,
        "bob@example.test",
        "support@acme.test",
        "m3@example.test",
    );
    let (_, r) = s
        .inbound(&bob, "support@acme.test", "127.0.0.1", Some(SECRET))
        .await;
    assert_eq!(r["fires"][0]["detail"], "sender-unknown", "{r}");

    // A raw message/rfc822 body, the envelope in the query.
    let raw = signed(
        &s.good_key,
        "ada@example.test",
        "support@acme.test",
        "m4@example.test",
    );
    let r = s
        .http
        .post(format!(
            "{}/v1/mail/inbound/{}?senderIp=127.0.0.1&mailFrom=ada@example.test&rcptTo=support@acme.test",
            s.url, s.tenant
        ))
        .header("content-type", "message/rfc822")
        .basic_auth("any", Some(SECRET))
        .body(raw)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 202);
    let r: Value = r.json().await.unwrap();
    assert_eq!(r["fires"][0]["outcome"], "started", "{r}");

    // Over the limit: 413 before anything else.
    let big = "x".repeat(kindgi_api::routes::mail_inbound::MAX_MAIL_BYTES + 1);
    let (status, e) = s
        .inbound(&big, "support@acme.test", "127.0.0.1", Some(SECRET))
        .await;
    assert_eq!((status, code(&e)), (413, "request-too-large"), "{e}");

    // The fires, newest first.
    let (status, fires) = s
        .call(
            &s.admin,
            "GET",
            &format!("/v1/mail-triggers/{id}/fires"),
            None,
        )
        .await;
    assert_eq!(status, 200, "{fires}");
    let data = fires["data"].as_array().unwrap();
    let mut outcomes: Vec<&str> = data
        .iter()
        .map(|f| f["outcome"].as_str().unwrap())
        .collect();
    outcomes.sort_unstable();
    assert_eq!(
        outcomes,
        ["refused", "refused", "started", "started"],
        "{fires}"
    );
    let first = data.iter().find(|f| f["fireId"] == fire["fireId"]).unwrap();
    assert_eq!(first["duplicates"], 1, "{fires}");
    assert_eq!(first["messageId"], "m1@example.test");
}

async fn lifecycle(s: &Server, id: &str) {
    let path = |what: &str| format!("/v1/mail-triggers/{id}/{what}");
    let (status, t) = s.call(&s.admin, "POST", &path("pause"), None).await;
    assert_eq!((status, &t["status"]), (200, &json!("paused")), "{t}");
    let (status, e) = s.call(&s.admin, "POST", &path("pause"), None).await;
    assert_eq!((status, code(&e)), (409, "trigger-already-in-state"));
    assert_eq!(e["error"]["message"], "The trigger is already paused");
    let mail = signed(
        &s.good_key,
        "ada@example.test",
        "support@acme.test",
        "m5@example.test",
    );
    let (_, r) = s
        .inbound(&mail, "support@acme.test", "127.0.0.1", Some(SECRET))
        .await;
    assert_eq!(
        (&r["fires"][0]["outcome"], &r["fires"][0]["detail"]),
        (&json!("skipped"), &json!("paused")),
        "{r}"
    );
    let (status, _) = s.call(&s.admin, "POST", &path("resume"), None).await;
    assert_eq!(status, 200);
    suspended_fires(s).await;
    let (status, r) = s.call(&s.admin, "POST", &path("unregister"), None).await;
    assert_eq!((status, &r["unregistered"]), (200, &json!(true)));
    let (status, _) = s.call(&s.admin, "POST", &path("unregister"), None).await;
    assert_eq!(status, 404);
    let (status, _) = s
        .inbound(&mail, "support@acme.test", "127.0.0.1", Some(SECRET))
        .await;
    assert_eq!(status, 401, "an unregistered address has no trigger");
}

/// A suspended project's, then tenant's, trigger records a `skipped` fire with the state's
/// code, and no run (docs/tenancy.md); restored, nothing of it stays.
async fn suspended_fires(s: &Server) {
    use kindgi_store::tenant_states::{Suspension, TenantStateStore, TenantStates};
    let states = TenantStateStore::new(s.db.db.clone());
    let project = kindgi_api::projects::default_project_id("acme");
    let hold = Suspension {
        at: 1,
        reason: None,
    };
    let deliver = |n: u32| {
        let mail = signed(
            &s.good_key,
            "ada@example.test",
            "support@acme.test",
            &format!("suspended-{n}@example.test"),
        );
        async move {
            s.inbound(&mail, "support@acme.test", "127.0.0.1", Some(SECRET))
                .await
        }
    };
    states
        .set_project_suspended("acme", &project, Some(&hold))
        .await
        .unwrap();
    let (status, r) = deliver(1).await;
    assert_eq!(status, 202, "{r}");
    assert_eq!(
        (&r["fires"][0]["outcome"], &r["fires"][0]["detail"]),
        (&json!("skipped"), &json!("project-suspended")),
        "{r}"
    );
    assert!(r["fires"][0].get("runId").is_none(), "{r}");
    states
        .set_tenant_suspended("acme", Some(&hold))
        .await
        .unwrap();
    let (_, r) = deliver(2).await;
    assert_eq!(r["fires"][0]["detail"], "tenant-suspended", "{r}");
    states.set_tenant_suspended("acme", None).await.unwrap();
    states
        .set_project_suspended("acme", &project, None)
        .await
        .unwrap();
}

/// An agent trigger, registered with an admin key of its own: the run it starts, its rate
/// limit, and its owner's key revoked.
async fn agents_limits_and_owners(s: &Server) {
    let (status, k) = s
        .call(
            &s.admin,
            "POST",
            "/v1/tokens",
            Some(json!({"role": "admin"})),
        )
        .await;
    assert_eq!(status, 201, "{k}");
    let owner = k["token"].as_str().unwrap().to_owned();
    let owner_token = k["tokenId"].as_str().unwrap().to_owned();
    let body = json!({"address": "helper@acme.test", "agentId": AGENT,
        "config": {"input": {"userMessage": "Answer the customer politely."}},
        "senders": [{"address": "ada@example.test", "userId": "ada"}],
        "mailbox": {"app": "google"}, "rateLimitPerMinute": 1});
    let mut both = body.clone();
    both["flowId"] = json!(FLOW);
    let (status, e) = s
        .call(&owner, "POST", "/v1/mail-triggers", Some(both))
        .await;
    assert_eq!((status, code(&e)), (400, "bad-input"), "{e}");
    let mut unknown = body.clone();
    unknown["agentId"] = json!("acme.nobody");
    let (status, e) = s
        .call(&owner, "POST", "/v1/mail-triggers", Some(unknown))
        .await;
    assert_eq!((status, code(&e)), (404, "agent-not-found"), "{e}");
    let mut fast = body.clone();
    fast["rateLimitPerMinute"] = json!(0);
    let (status, e) = s
        .call(&owner, "POST", "/v1/mail-triggers", Some(fast))
        .await;
    assert_eq!(
        e["error"]["details"]["field"], "rateLimitPerMinute",
        "{status} {e}"
    );
    let (status, t) = s
        .call(&owner, "POST", "/v1/mail-triggers", Some(body))
        .await;
    assert_eq!(status, 201, "{t}");
    assert_eq!(
        (&t["agentId"], &t["rateLimitPerMinute"]),
        (&json!(AGENT), &json!(1))
    );
    assert!(t.get("flowId").is_none(), "{t}");
    let id = t["triggerId"].as_str().unwrap().to_owned();

    // The first mail of the minute starts an agent turn; one more than the limit is 429.
    let mail = |n: u32| {
        signed(
            &s.good_key,
            "ada@example.test",
            "helper@acme.test",
            &format!("a{n}@example.test"),
        )
    };
    let (status, r) = s
        .inbound(&mail(1), "helper@acme.test", "127.0.0.1", Some(SECRET))
        .await;
    assert_eq!(status, 202, "{r}");
    let fire = &r["fires"][0];
    assert_eq!(fire["outcome"], "started", "{r}");
    let run_id = fire["runId"].as_str().unwrap();
    assert_eq!(
        run_id,
        kindgi_runtime::runtime::run_id_for_key(
            "acme",
            &format!("fire:{}", fire["fireId"].as_str().unwrap())
        )
    );
    let run = s.rt.store().get_run(run_id).await.unwrap().unwrap();
    assert_eq!(run.meta.agent.as_ref().map(|a| a.id.as_str()), Some(AGENT));
    let message = run.input["userMessage"].as_str().unwrap();
    assert!(
        message.starts_with("Answer the customer politely."),
        "{message}"
    );
    assert!(message.contains("data from outside"), "{message}");
    assert!(
        message.contains("From: ada@example.test") && message.contains("order 1001"),
        "{message}"
    );
    assert_eq!(run.input["mail"]["messageId"], "a1@example.test");
    // A minute's turn between two mails would take one more: the third is surely over.
    let mut limited = None;
    for n in 2..=3 {
        let (status, r) = s
            .inbound(&mail(n), "helper@acme.test", "127.0.0.1", Some(SECRET))
            .await;
        if status == 429 {
            limited = Some(r);
            break;
        }
        assert_eq!(status, 202, "{r}");
    }
    let e = limited.expect("the trigger's limit refused a mail");
    assert_eq!(code(&e), "rate-limit-exceeded", "{e}");
    assert_eq!(e["error"]["details"]["limit"], "trigger-receives");
    assert_eq!(e["error"]["details"]["fires"][0]["outcome"], "refused");
    assert_eq!(e["error"]["details"]["fires"][0]["detail"], "rate-limited");

    // The owner's key revoked: the next mail's fire is refused, saying why.
    let (status, _) = s
        .call(
            &s.admin,
            "PATCH",
            &format!("/v1/mail-triggers/{id}"),
            Some(json!({"rateLimitPerMinute": null})),
        )
        .await;
    assert_eq!(status, 200);
    let (status, r) = s
        .call(
            &s.admin,
            "POST",
            &format!("/v1/tokens/{owner_token}/revoke"),
            Some(json!({})),
        )
        .await;
    assert_eq!(status, 200, "{r}");
    let (status, r) = s
        .inbound(&mail(9), "helper@acme.test", "127.0.0.1", Some(SECRET))
        .await;
    assert_eq!(status, 202, "{r}");
    assert_eq!(r["fires"][0]["outcome"], "refused", "{r}");
    assert!(r["fires"][0].get("runId").is_none());
    let detail = r["fires"][0]["detail"].as_str().unwrap();
    assert!(
        detail.contains("the key that owns this mail trigger was revoked"),
        "{detail}"
    );
}

async fn on(kind: DatabaseKind) {
    let s = server(kind).await;
    let id = admin_routes(&s).await;
    inbound(&s, &id).await;
    lifecycle(&s, &id).await;
    agents_limits_and_owners(&s).await;
    let Server { db, .. } = s;
    db.cleanup().await.unwrap();
}

#[tokio::test]
async fn sqlite_mail_triggers_end_to_end() {
    on(DatabaseKind::Sqlite).await;
}

#[tokio::test]
async fn postgres_mail_triggers_end_to_end() {
    on(DatabaseKind::Postgres).await;
}

#[tokio::test]
async fn the_offline_resolver_refuses_what_it_cannot_parse() {
    let check = SenderCheck::offline("mx").unwrap();
    assert!(check.preload_txt("x.test", "not a record").is_err());
    let _ = Arc::new(check);
}
