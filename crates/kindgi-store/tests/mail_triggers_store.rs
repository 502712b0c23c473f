//! Mail triggers (`MailTriggerSql`) on SQLite and PostgreSQL, and the in-memory port, with one
//! body: an address is unique among live triggers (free again once unregistered), lookups by id
//! and address see live triggers only, pages by `(createdAt, id)` with status and project
//! filters, tenant isolation, fires deduplicated per trigger on their key (a repeat counts on
//! the first), fires without a key never deduplicated, newest-first fire pages, and five
//! failed starts in a row pausing the trigger with its reason (a start that starts resets).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_core::StorageError;
use kindgi_core::mail_trigger::{
    FireEnd, FireRecorded, MailFire, MailFireQuery, MailSender, MailTarget, MailTrigger,
    MailTriggerConfig, MailTriggerQuery, MailboxConnection,
};
use kindgi_core::memory::MemoryMailTriggers;
use kindgi_core::ports::MailTriggerStore;
use kindgi_core::trigger::{FireOutcome, OwnerKind, TriggerOwner, TriggerStatus};
use kindgi_spec::tool::ConnectionOwner;
use kindgi_store::DatabaseKind;
use kindgi_store::mail_triggers::MailTriggerSql;
use kindgi_store::testing::TestDatabase;

fn trigger(tenant: &str, id: &str, address: &str, at: i64) -> MailTrigger {
    MailTrigger {
        trigger_id: id.into(),
        tenant: tenant.into(),
        address: address.into(),
        project_id: "p1".into(),
        config: MailTriggerConfig {
            target: MailTarget::Flow {
                flow_id: "pack.answer".into(),
                flow_version: "1.0.0".into(),
            },
            owner: TriggerOwner {
                kind: OwnerKind::User,
                id: "admin".into(),
                display_name: None,
            },
            owner_key_id: None,
            senders: vec![MailSender {
                address: "ada@example.test".into(),
                user_id: "ada".into(),
            }],
            mailbox: MailboxConnection {
                app: "google".into(),
                whose: ConnectionOwner::Company,
            },
            input: None,
            tools_allowed_unattended: vec!["pack.reply".into()],
            label: Some("support".into()),
            rate_limit_per_minute: 600,
        },
        status: TriggerStatus::Active,
        status_reason: None,
        consecutive_failures: 0,
        last_fired_at: None,
        created_at: at,
        updated_at: at,
    }
}

fn fire(tenant: &str, trigger: &str, id: &str, key: Option<&str>, at: i64) -> MailFire {
    MailFire {
        fire_id: id.into(),
        tenant: tenant.into(),
        trigger_id: trigger.into(),
        fired_at: at,
        outcome: FireOutcome::Pending,
        run_id: None,
        detail: None,
        from: Some("ada@example.test".into()),
        message_id: Some("<m@example.test>".into()),
        dedupe_key: key.map(str::to_owned),
        duplicates: 0,
        last_duplicate_at: None,
    }
}

async fn triggers(store: &dyn MailTriggerStore) {
    let a = trigger("acme", "t1", "support@acme.test", 10);
    store.create(&a).await.unwrap();
    assert_eq!(store.get("acme", "t1").await.unwrap(), Some(a.clone()));
    assert_eq!(store.get("other", "t1").await.unwrap(), None);
    assert_eq!(
        store.by_address("support@acme.test").await.unwrap(),
        Some(a.clone())
    );
    let taken = store
        .create(&trigger("other", "t2", "support@acme.test", 20))
        .await;
    assert!(
        matches!(taken, Err(StorageError::Conflict { .. })),
        "{taken:?}"
    );
    store
        .create(&trigger("acme", "t3", "sales@acme.test", 30))
        .await
        .unwrap();
    store
        .create(&trigger("other", "t4", "hi@other.test", 5))
        .await
        .unwrap();

    // Pages, oldest first, the tenant's own.
    let page = |after: Option<(i64, String)>, status| MailTriggerQuery {
        tenant: "acme".into(),
        status,
        project_id: None,
        after,
        limit: 1,
    };
    let first = store.list(&page(None, None)).await.unwrap();
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].trigger_id, "t1");
    let second = store
        .list(&page(Some((10, "t1".into())), None))
        .await
        .unwrap();
    assert_eq!(second[0].trigger_id, "t3");

    // Update: pause, then an address another live trigger has.
    let mut paused = a.clone();
    paused.status = TriggerStatus::Paused;
    paused.updated_at = 40;
    assert!(store.update(&paused).await.unwrap());
    let only_paused = store
        .list(&MailTriggerQuery {
            limit: 10,
            ..page(None, Some(TriggerStatus::Paused))
        })
        .await
        .unwrap();
    assert_eq!(
        only_paused
            .iter()
            .map(|t| t.trigger_id.as_str())
            .collect::<Vec<_>>(),
        ["t1"]
    );
    let mut clash = paused.clone();
    clash.address = "sales@acme.test".into();
    assert!(matches!(
        store.update(&clash).await,
        Err(StorageError::Conflict { .. })
    ));
    let mut ghost = paused.clone();
    ghost.trigger_id = "nope".into();
    ghost.address = "ghost@acme.test".into();
    assert!(!store.update(&ghost).await.unwrap());

    // Unregistering frees the address; reads then miss it.
    assert!(store.unregister("acme", "t3", 50).await.unwrap());
    assert!(!store.unregister("acme", "t3", 51).await.unwrap());
    assert_eq!(store.get("acme", "t3").await.unwrap(), None);
    assert_eq!(store.by_address("sales@acme.test").await.unwrap(), None);
    store
        .create(&trigger("acme", "t5", "sales@acme.test", 60))
        .await
        .unwrap();
}

async fn fires(store: &dyn MailTriggerStore) {
    store
        .create(&trigger("acme", "f1", "fires@acme.test", 10))
        .await
        .unwrap();
    let one = fire("acme", "f1", "a", Some("k1"), 100);
    assert_eq!(store.record_fire(&one).await.unwrap(), FireRecorded::New);
    match store
        .record_fire(&fire("acme", "f1", "b", Some("k1"), 200))
        .await
        .unwrap()
    {
        FireRecorded::Duplicate(first) => {
            assert_eq!(first.fire_id, "a");
            assert_eq!(first.duplicates, 1);
            assert_eq!(first.last_duplicate_at, Some(200));
        }
        other => panic!("{other:?}"),
    }
    // No key: never deduplicated; the same key on another trigger is another message.
    for id in ["c", "d"] {
        assert_eq!(
            store
                .record_fire(&fire("acme", "f1", id, None, 300))
                .await
                .unwrap(),
            FireRecorded::New
        );
    }
    assert_eq!(
        store
            .record_fire(&fire("acme", "other", "e", Some("k1"), 300))
            .await
            .unwrap(),
        FireRecorded::New
    );
    store
        .end_fire(
            "acme",
            "a",
            &FireEnd {
                outcome: FireOutcome::Started,
                run_id: Some("run-1".into()),
                detail: None,
            },
        )
        .await
        .unwrap();
    let q = |before, limit| MailFireQuery {
        tenant: "acme".into(),
        trigger_id: "f1".into(),
        before,
        limit,
    };
    let all = store.fires(&q(None, 10)).await.unwrap();
    assert_eq!(
        all.iter().map(|f| f.fire_id.as_str()).collect::<Vec<_>>(),
        ["d", "c", "a"]
    );
    let a = &all[2];
    assert_eq!(
        (a.outcome, a.run_id.as_deref(), a.duplicates),
        (FireOutcome::Started, Some("run-1"), 1)
    );
    let next = store.fires(&q(Some((300, "c".into())), 10)).await.unwrap();
    assert_eq!(next.len(), 1);
    assert_eq!(next[0].fire_id, "a");
    assert!(
        store
            .fires(&MailFireQuery {
                tenant: "other".into(),
                ..q(None, 10)
            })
            .await
            .unwrap()
            .is_empty()
    );

    // Five failed starts in a row pause it; a start that starts resets the count.
    for i in 0..4 {
        let t = store
            .count_start("acme", "f1", true, 5, "failed", 400 + i)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(t.status, TriggerStatus::Active);
    }
    let reset = store
        .count_start("acme", "f1", false, 5, "failed", 500)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (reset.consecutive_failures, reset.last_fired_at),
        (0, Some(500))
    );
    let mut last = None;
    for i in 0..5 {
        last = store
            .count_start("acme", "f1", true, 5, "5 failed starts in a row", 600 + i)
            .await
            .unwrap();
    }
    let paused = last.unwrap();
    assert_eq!(paused.status, TriggerStatus::Paused);
    assert_eq!(
        paused.status_reason.as_deref(),
        Some("5 failed starts in a row")
    );
    assert_eq!(
        store
            .count_start("acme", "gone", true, 5, "x", 700)
            .await
            .unwrap(),
        None
    );
}

async fn on(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let store = MailTriggerSql::new(t.db.clone());
    triggers(&store).await;
    fires(&store).await;
    t.cleanup().await.unwrap();
}

#[tokio::test]
async fn sqlite_mail_triggers() {
    on(DatabaseKind::Sqlite).await;
}

#[tokio::test]
async fn postgres_mail_triggers() {
    on(DatabaseKind::Postgres).await;
}

#[tokio::test]
async fn memory_mail_triggers() {
    let store = MemoryMailTriggers::new();
    triggers(&store).await;
    fires(&store).await;
}
