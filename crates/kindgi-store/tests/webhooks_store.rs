//! Webhook triggers and fires (`WebhookTriggerStore`) on SQLite and PostgreSQL, against the
//! in-memory implementation's rules: register/read/list/update, pause and resume (resume
//! clears the auto-pause count), tombstones, delivery dedupe (`UNIQUE (trigger_id,
//! dedupe_key)`) holding across two handles on one database taking the same delivery at
//! once, the auto-pause after 5 counted failed starts in a row (refusals never count), the
//! suppressed-refusal counter and the fire history's pages.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use kindgi_core::memory::MemoryWebhookStore;
use kindgi_core::ports::{FireQuery, WebhookQuery, WebhookStore};
use kindgi_core::trigger::{FireOutcome, OwnerKind, TriggerOwner, TriggerStatus};
use kindgi_core::webhook::{
    FireFinish, FireRecorded, SecretScope, SignatureConfig, WebhookFire, WebhookTrigger, dedupe_key,
};
use kindgi_store::DatabaseKind;
use kindgi_store::testing::TestDatabase;
use kindgi_store::webhooks::WebhookTriggerStore;

fn trigger(tenant: &str, created_at: i64) -> WebhookTrigger {
    WebhookTrigger {
        trigger_id: uuid::Uuid::new_v4().to_string(),
        webhook_id: uuid::Uuid::new_v4().to_string(),
        tenant: tenant.into(),
        project_id: "p1".into(),
        flow_id: "shop.order".into(),
        flow_version: "1.0.0".into(),
        owner: TriggerOwner {
            kind: OwnerKind::User,
            id: "u1".into(),
            display_name: None,
        },
        owner_key_id: Some("k1".into()),
        input: Some(serde_json::json!({"fixed": true})),
        hmac_secret_name: "WOO".into(),
        hmac_secret_scope: Some(SecretScope::Project {
            project_id: "p1".into(),
        }),
        signature: SignatureConfig::default(),
        delivery_id_header: Some("X-Id".into()),
        body_limit_bytes: 262_144,
        rate_limit_per_minute: 600,
        label: None,
        status: TriggerStatus::Active,
        status_reason: None,
        tools_allowed_unattended: vec!["shop.refund".into()],
        failures_in_row: 0,
        suppressed: None,
        last_fired_at: None,
        created_at,
        updated_at: created_at,
        unregistered_at: None,
    }
}

fn finish(outcome: FireOutcome, counts: bool, now: i64) -> FireFinish {
    FireFinish {
        outcome,
        run_id: (outcome == FireOutcome::Started).then(|| "r1".to_owned()),
        detail: (outcome != FireOutcome::Started).then(|| "flow-not-found".to_owned()),
        counts_toward_pause: counts,
        now,
    }
}

/// The rules every implementation keeps.
async fn rules(store: &dyn WebhookStore) {
    let a = trigger("acme", 10);
    let b = trigger("acme", 20);
    store.register(&a).await.unwrap();
    store.register(&b).await.unwrap();
    store.register(&trigger("other", 30)).await.unwrap();
    assert!(store.register(&a).await.is_err(), "ids are unique");

    assert_eq!(
        store.trigger("acme", &a.trigger_id).await.unwrap(),
        Some(a.clone())
    );
    assert_eq!(store.trigger("other", &a.trigger_id).await.unwrap(), None);
    assert_eq!(
        store
            .by_webhook_id(&a.webhook_id)
            .await
            .unwrap()
            .map(|t| t.trigger_id),
        Some(a.trigger_id.clone())
    );

    // Newest first, paged.
    let q = |before| WebhookQuery {
        tenant: "acme".into(),
        limit: 1,
        before,
        ..WebhookQuery::default()
    };
    let first = store.triggers(&q(None)).await.unwrap();
    assert_eq!(first[0].trigger_id, b.trigger_id);
    let second = store
        .triggers(&q(Some((first[0].created_at, first[0].trigger_id.clone()))))
        .await
        .unwrap();
    assert_eq!(second[0].trigger_id, a.trigger_id);

    // Update writes settings, not the counters.
    let mut changed = a.clone();
    changed.label = Some("orders".into());
    changed.input = None;
    changed.failures_in_row = 99;
    assert!(store.update(&changed).await.unwrap());
    let read = store.trigger("acme", &a.trigger_id).await.unwrap().unwrap();
    assert_eq!(read.label.as_deref(), Some("orders"));
    assert_eq!(read.input, None);
    assert_eq!(read.failures_in_row, 0);

    // Pause / resume.
    assert!(
        store
            .set_status(
                "acme",
                &a.trigger_id,
                TriggerStatus::Active,
                TriggerStatus::Paused,
                40
            )
            .await
            .unwrap()
    );
    assert!(
        !store
            .set_status(
                "acme",
                &a.trigger_id,
                TriggerStatus::Active,
                TriggerStatus::Paused,
                41
            )
            .await
            .unwrap()
    );
    let paused = WebhookQuery {
        tenant: "acme".into(),
        status: Some(TriggerStatus::Paused),
        limit: 10,
        ..WebhookQuery::default()
    };
    assert_eq!(store.triggers(&paused).await.unwrap().len(), 1);
    assert!(
        store
            .set_status(
                "acme",
                &a.trigger_id,
                TriggerStatus::Paused,
                TriggerStatus::Active,
                42
            )
            .await
            .unwrap()
    );

    // Dedupe: the same key makes no new fire, and bumps the first one.
    let key = dedupe_key("d1", b"{}");
    let mut f1 = WebhookFire::new(&a, FireOutcome::Pending, 100);
    f1.dedupe_key = Some(key.clone());
    assert_eq!(store.record_fire(&f1).await.unwrap(), FireRecorded::New);
    let mut f2 = WebhookFire::new(&a, FireOutcome::Pending, 101);
    f2.dedupe_key = Some(key.clone());
    assert_eq!(
        store.record_fire(&f2).await.unwrap(),
        FireRecorded::Duplicate {
            first_fire_id: f1.fire_id.clone()
        }
    );
    let first_fire = store.fire("acme", &f1.fire_id).await.unwrap().unwrap();
    assert_eq!(
        (first_fire.duplicates, first_fire.last_duplicate_at),
        (1, Some(101))
    );
    assert_eq!(store.fire("acme", &f2.fire_id).await.unwrap(), None);
    // Another trigger may hold the same key; no key never collides.
    let mut other = WebhookFire::new(&b, FireOutcome::Pending, 102);
    other.dedupe_key = Some(key.clone());
    assert_eq!(store.record_fire(&other).await.unwrap(), FireRecorded::New);
    for at in [103, 104] {
        let f = WebhookFire::new(&b, FireOutcome::Pending, at);
        assert_eq!(store.record_fire(&f).await.unwrap(), FireRecorded::New);
    }
    assert_eq!(
        store
            .trigger("acme", &a.trigger_id)
            .await
            .unwrap()
            .unwrap()
            .last_fired_at,
        Some(100)
    );

    // Auto-pause: refusals (not counted) never pause; 5 counted failures in a row do; a
    // started fire resets the run.
    for i in 0..10 {
        let f = WebhookFire::new(&a, FireOutcome::Pending, 200 + i);
        store.record_fire(&f).await.unwrap();
        let paused = store
            .finish_fire(
                "acme",
                &a.trigger_id,
                &f.fire_id,
                &finish(FireOutcome::Refused, false, 200 + i),
            )
            .await
            .unwrap();
        assert!(!paused);
    }
    let mut paused_at = None;
    for i in 0..9 {
        let f = WebhookFire::new(&a, FireOutcome::Pending, 300 + i);
        store.record_fire(&f).await.unwrap();
        let outcome = if i == 3 {
            FireOutcome::Started
        } else {
            FireOutcome::Failed
        };
        if store
            .finish_fire(
                "acme",
                &a.trigger_id,
                &f.fire_id,
                &finish(outcome, outcome != FireOutcome::Started, 300 + i),
            )
            .await
            .unwrap()
        {
            paused_at.get_or_insert(i);
        }
    }
    assert_eq!(
        paused_at,
        Some(8),
        "3 failures, a start, then the fifth failure in a row"
    );
    let t = store.trigger("acme", &a.trigger_id).await.unwrap().unwrap();
    assert_eq!(t.status, TriggerStatus::Paused);
    assert!(t.status_reason.unwrap().contains("flow-not-found"));
    assert!(
        store
            .set_status(
                "acme",
                &a.trigger_id,
                TriggerStatus::Paused,
                TriggerStatus::Active,
                400
            )
            .await
            .unwrap()
    );
    let t = store.trigger("acme", &a.trigger_id).await.unwrap().unwrap();
    assert_eq!((t.failures_in_row, t.status_reason), (0, None));

    // Suppressed refusals count per minute.
    store
        .count_suppressed("acme", &a.trigger_id, 60_000)
        .await
        .unwrap();
    store
        .count_suppressed("acme", &a.trigger_id, 60_000)
        .await
        .unwrap();
    assert_eq!(
        store
            .trigger("acme", &a.trigger_id)
            .await
            .unwrap()
            .unwrap()
            .suppressed,
        Some((60_000, 2))
    );
    store
        .count_suppressed("acme", &a.trigger_id, 120_000)
        .await
        .unwrap();
    assert_eq!(
        store
            .trigger("acme", &a.trigger_id)
            .await
            .unwrap()
            .unwrap()
            .suppressed,
        Some((120_000, 1))
    );

    // Fires, newest first, paged.
    let page = store
        .fires(&FireQuery {
            tenant: "acme".into(),
            trigger_id: a.trigger_id.clone(),
            before: None,
            limit: 2,
        })
        .await
        .unwrap();
    assert_eq!(
        page.iter().map(|f| f.fired_at).collect::<Vec<_>>(),
        vec![308, 307]
    );
    assert_eq!(page[0].outcome, FireOutcome::Failed);
    assert_eq!(page[0].counts_toward_pause, Some(true));
    let next = store
        .fires(&FireQuery {
            tenant: "acme".into(),
            trigger_id: a.trigger_id.clone(),
            before: Some((page[1].fired_at, page[1].fire_id.clone())),
            limit: 100,
        })
        .await
        .unwrap();
    assert_eq!(next.len(), 1 + 10 + 7);
    assert_eq!(next.last().map(|f| f.fired_at), Some(100));

    // Tombstones.
    assert!(store.unregister("acme", &a.trigger_id, 500).await.unwrap());
    assert!(!store.unregister("acme", &a.trigger_id, 501).await.unwrap());
    let gone = store.trigger("acme", &a.trigger_id).await.unwrap().unwrap();
    assert_eq!(gone.unregistered_at, Some(500));
    let all = WebhookQuery {
        tenant: "acme".into(),
        limit: 10,
        ..WebhookQuery::default()
    };
    assert_eq!(store.triggers(&all).await.unwrap().len(), 1);
    assert!(!store.update(&gone).await.unwrap());
}

#[tokio::test]
async fn memory_rules() {
    rules(&MemoryWebhookStore::new()).await;
}

async fn sql_rules(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    rules(&WebhookTriggerStore::new(t.db.clone())).await;
    t.cleanup().await.unwrap();
}

#[tokio::test]
async fn sqlite_rules() {
    sql_rules(DatabaseKind::Sqlite).await;
}

#[tokio::test]
async fn postgres_rules() {
    sql_rules(DatabaseKind::Postgres).await;
}

/// Two handles on one database (two servers) take the same delivery at once: one fire.
async fn dedupe_across_servers(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let one: Arc<dyn WebhookStore> = Arc::new(WebhookTriggerStore::new(t.db.clone()));
    let two: Arc<dyn WebhookStore> = Arc::new(WebhookTriggerStore::new(t.reopen().await.unwrap()));
    let a = trigger("acme", 1);
    one.register(&a).await.unwrap();
    let key = dedupe_key("same-delivery", b"{\"order\":1}");
    let mut tasks = Vec::new();
    for i in 0..16 {
        let store = if i % 2 == 0 { one.clone() } else { two.clone() };
        let mut f = WebhookFire::new(&a, FireOutcome::Pending, 10 + i);
        f.dedupe_key = Some(key.clone());
        tasks.push(tokio::spawn(
            async move { store.record_fire(&f).await.unwrap() },
        ));
    }
    let mut firsts = std::collections::BTreeSet::new();
    let mut new = 0;
    for task in tasks {
        match task.await.unwrap() {
            FireRecorded::New => new += 1,
            FireRecorded::Duplicate { first_fire_id } => {
                firsts.insert(first_fire_id);
            }
        }
    }
    assert_eq!(new, 1, "exactly one delivery made a fire");
    assert_eq!(firsts.len(), 1, "every repeat names the same first fire");
    let fires = two
        .fires(&FireQuery {
            tenant: "acme".into(),
            trigger_id: a.trigger_id.clone(),
            before: None,
            limit: 100,
        })
        .await
        .unwrap();
    assert_eq!(fires.len(), 1);
    assert_eq!(fires[0].duplicates, 15);
    t.cleanup().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_dedupe_across_servers() {
    dedupe_across_servers(DatabaseKind::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_dedupe_across_servers() {
    dedupe_across_servers(DatabaseKind::Postgres).await;
}
