//! Schedules and their fire ledger (`ScheduleSqlStore`) on SQLite and PostgreSQL: rows
//! round-trip, pages and filters, tombstones; the LEDGER — one fire per occurrence, however
//! many claim it at once (two stores on one database stand for two replicas) and after a
//! reopen; `overlap: skip` decided in the claim against an unfinished run of the schedule
//! (pending, running, suspended) and a pending fire; five refused/failed fires in a row pause
//! it with a reason while skips don't count and a start resets; manual fires outside the
//! ledger; pruning the history; claims and outcomes in batches. The in-memory store passes
//! the same checks.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use kindgi_core::format_millis;
use kindgi_core::memory::{MemoryRunStore, MemoryScheduleStore};
use kindgi_core::ports::{RunStore, ScheduleQuery, ScheduleStore};
use kindgi_core::run::{RunMeta, RunRecord, RunStatus};
use kindgi_core::schedule::{
    CatchUp, FireClaim, FireResult, Overlap, ScheduleFire, ScheduleRecord, ScheduleTarget,
};
use kindgi_core::trigger::{
    FireOutcome, OwnerKind, RunTrigger, TriggerKind, TriggerOwner, TriggerStatus,
};
use kindgi_store::DatabaseKind;
use kindgi_store::runs::RunsStore;
use kindgi_store::schedules::ScheduleSqlStore;
use kindgi_store::testing::TestDatabase;
use serde_json::json;

fn schedule(id: &str, tenant: &str, created_at: i64) -> ScheduleRecord {
    ScheduleRecord {
        id: id.into(),
        tenant: tenant.into(),
        project_id: "p1".into(),
        target: ScheduleTarget::Flow {
            flow_id: "acme.nightly".into(),
            flow_version: "1.0.0".into(),
        },
        owner: TriggerOwner {
            kind: OwnerKind::User,
            id: "u1".into(),
            display_name: None,
        },
        owner_key_id: Some("k1".into()),
        cron_expression: "0 3 * * *".into(),
        timezone: Some("Europe/Berlin".into()),
        input: Some(json!({"deep": true})),
        catch_up: CatchUp::Latest,
        overlap: Overlap::Skip,
        starting_deadline_seconds: 600,
        label: Some("nightly".into()),
        status: TriggerStatus::Active,
        status_reason: None,
        next_fire_at: Some(1_000),
        last_fired_at: None,
        failures_in_row: 0,
        tools_allowed_unattended: vec!["acme.refund".into()],
        created_at,
        updated_at: created_at,
    }
}

fn claim(schedule_id: &str, at: i64, skip: bool) -> FireClaim {
    FireClaim {
        schedule_id: schedule_id.into(),
        fire_id: uuid::Uuid::new_v4().to_string(),
        scheduled_for: at,
        fired_at: at + 5,
        missed_count: None,
        skip_if_unfinished: skip,
        next_fire_at: Some(at + 1_000),
    }
}

fn result(fire: &ScheduleFire, outcome: FireOutcome, now: i64) -> FireResult {
    FireResult {
        fire_id: fire.id.clone(),
        outcome,
        run_id: None,
        detail: Some(format!("{} for a test", outcome.as_str())),
        counts_toward_pause: None,
        now,
    }
}

fn run_of(schedule_id: &str, status: RunStatus) -> RunRecord {
    RunRecord {
        id: uuid::Uuid::new_v4().to_string(),
        tenant_id: "acme".into(),
        flow_id: "acme.nightly".into(),
        flow_version: "1.0.0".into(),
        status,
        input: json!({}),
        output: None,
        failure_message: None,
        dry_run: false,
        created_at: format_millis(10),
        updated_at: format_millis(10),
        completed_at: None,
        parent_run_id: None,
        parent_node_id: None,
        meta: RunMeta {
            trigger: Some(RunTrigger {
                trigger_id: schedule_id.into(),
                kind: TriggerKind::Schedule,
                fire_id: "f".into(),
                scheduled_for: None,
            }),
            ..Default::default()
        },
    }
}

/// Rows, pages, filters, updates and tombstones.
async fn records(store: &dyn ScheduleStore) {
    let a = schedule("00000000-0000-4000-8000-00000000000a", "acme", 10);
    let mut b = schedule("00000000-0000-4000-8000-00000000000b", "acme", 20);
    b.target = ScheduleTarget::Agent {
        agent_id: "acme.digest".into(),
        agent_version: None,
    };
    b.status = TriggerStatus::Paused;
    b.timezone = None;
    b.input = None;
    b.label = None;
    b.tools_allowed_unattended = vec![];
    let other = schedule("00000000-0000-4000-8000-00000000000c", "other", 30);
    for s in [&a, &b, &other] {
        store.create(s).await.unwrap();
    }
    assert_eq!(store.get("acme", &a.id).await.unwrap().as_ref(), Some(&a));
    assert_eq!(store.get("acme", &b.id).await.unwrap().as_ref(), Some(&b));
    assert_eq!(store.get("acme", &other.id).await.unwrap(), None);
    let q = |status, after, limit| ScheduleQuery {
        tenant: "acme".into(),
        status,
        project_id: None,
        after,
        limit,
    };
    let all = store.list(&q(None, None, 10)).await.unwrap();
    assert_eq!(all, vec![a.clone(), b.clone()]);
    let page2 = store
        .list(&q(None, Some((a.created_at, a.id.clone())), 10))
        .await
        .unwrap();
    assert_eq!(page2, vec![b.clone()]);
    let paused = store
        .list(&q(Some(TriggerStatus::Paused), None, 10))
        .await
        .unwrap();
    assert_eq!(paused, vec![b.clone()]);
    // Due: active ones only, across tenants.
    let due = store.due(1_000, 10).await.unwrap();
    let ids: Vec<&str> = due.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, [a.id.as_str(), other.id.as_str()]);
    assert!(store.due(999, 10).await.unwrap().is_empty());
    assert_eq!(store.next_due().await.unwrap(), Some(1_000));
    let mut changed = a.clone();
    changed.label = None;
    changed.cron_expression = "*/5 * * * *".into();
    changed.next_fire_at = Some(5_000);
    changed.updated_at = 40;
    assert!(store.update(&changed).await.unwrap());
    assert_eq!(
        store.get("acme", &a.id).await.unwrap(),
        Some(changed.clone())
    );
    // Compare-and-set of the next fire time.
    assert!(!store.advance(&a.id, 1_000, Some(9_000)).await.unwrap());
    assert!(store.advance(&a.id, 5_000, Some(9_000)).await.unwrap());
    assert!(store.unregister("acme", &a.id, 50).await.unwrap());
    assert!(!store.unregister("acme", &a.id, 60).await.unwrap());
    assert_eq!(store.get("acme", &a.id).await.unwrap(), None);
    assert!(!store.update(&changed).await.unwrap());
}

/// One fire per occurrence; fires page newest first; manual fires are outside the ledger.
async fn ledger(store: Arc<dyn ScheduleStore>, replica: Arc<dyn ScheduleStore>) {
    let s = schedule("00000000-0000-4000-8000-0000000000d1", "acme", 10);
    store.create(&s).await.unwrap();
    // Eight claims of one occurrence at once, over two "replicas": one wins.
    let mut tasks = Vec::new();
    for i in 0..8 {
        let st = if i % 2 == 0 {
            store.clone()
        } else {
            replica.clone()
        };
        let c = claim(&s.id, 1_000, false);
        tasks.push(tokio::spawn(async move { st.claim(&c).await.unwrap() }));
    }
    let mut won = Vec::new();
    for t in tasks {
        if let Some(f) = t.await.unwrap() {
            won.push(f);
        }
    }
    assert_eq!(won.len(), 1, "{won:?}");
    assert_eq!(won[0].outcome, FireOutcome::Pending);
    let now = store.get("acme", &s.id).await.unwrap().unwrap();
    assert_eq!(now.next_fire_at, Some(2_000));
    assert_eq!(now.last_fired_at, Some(1_005));
    assert!(
        replica
            .claim(&claim(&s.id, 1_000, false))
            .await
            .unwrap()
            .is_none()
    );
    store
        .finish(&s.id, &result(&won[0], FireOutcome::Started, 1_010))
        .await
        .unwrap();
    let next = replica.claim(&claim(&s.id, 2_000, false)).await.unwrap();
    assert!(next.is_some());
    let manual = ScheduleFire {
        id: uuid::Uuid::new_v4().to_string(),
        schedule_id: s.id.clone(),
        scheduled_for: None,
        fired_at: 3_000,
        outcome: FireOutcome::Pending,
        run_id: None,
        detail: None,
        counts_toward_pause: None,
        missed_count: None,
        manual: true,
    };
    store.insert_manual(&manual).await.unwrap();
    let mut second = manual.clone();
    second.id = uuid::Uuid::new_v4().to_string();
    second.fired_at = 3_001;
    store.insert_manual(&second).await.unwrap();
    let fires = store.fires(&s.id, None, 10).await.unwrap();
    let at: Vec<i64> = fires.iter().map(|f| f.fired_at).collect();
    assert_eq!(at, [3_001, 3_000, 2_005, 1_005]);
    assert!(fires[0].manual && fires[0].scheduled_for.is_none());
    assert_eq!(fires[3].outcome, FireOutcome::Started);
    let after = store
        .fires(&s.id, Some((fires[1].fired_at, fires[1].id.clone())), 10)
        .await
        .unwrap();
    assert_eq!(after.len(), 2);
    // The history is pruned by age (pending fires are kept).
    store
        .finish(&s.id, &result(&fires[3], FireOutcome::Started, 5_000))
        .await
        .unwrap();
    assert_eq!(store.prune(2_000).await.unwrap(), 1);
    assert_eq!(store.fires(&s.id, None, 10).await.unwrap().len(), 3);
}

/// `overlap: skip` against an unfinished run (read in the claim) and a pending fire.
async fn overlap(store: &dyn ScheduleStore, runs: &dyn RunStore) {
    let s = schedule("00000000-0000-4000-8000-0000000000e1", "acme", 10);
    store.create(&s).await.unwrap();
    let first = store
        .claim(&claim(&s.id, 1_000, true))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(first.outcome, FireOutcome::Pending);
    // The first fire is still pending (its run not yet created): the next skips.
    let second = store
        .claim(&claim(&s.id, 2_000, true))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(second.outcome, FireOutcome::SkippedOverlap);
    assert!(second.detail.is_some());
    // Its run exists and waits (suspended): still unfinished.
    let mut run = run_of(&s.id, RunStatus::Suspended);
    runs.insert_run(&run).await.unwrap();
    let mut started = result(&first, FireOutcome::Started, 2_100);
    started.run_id = Some(run.id.clone());
    store.finish(&s.id, &started).await.unwrap();
    let third = store
        .claim(&claim(&s.id, 3_000, true))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(third.outcome, FireOutcome::SkippedOverlap);
    // `allow` starts another anyway.
    let allowed = store
        .claim(&claim(&s.id, 4_000, false))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(allowed.outcome, FireOutcome::Pending);
    store
        .finish(&s.id, &result(&allowed, FireOutcome::Failed, 4_100))
        .await
        .unwrap();
    // Once it completes, the next fires.
    run.status = RunStatus::Completed;
    runs.update_run(&run).await.unwrap();
    let fifth = store
        .claim(&claim(&s.id, 5_000, true))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(fifth.outcome, FireOutcome::Pending);
}

/// Five counted fires in a row pause it; skips and uncounted refusals don't count; a start
/// resets the count.
async fn auto_pause(store: &dyn ScheduleStore) {
    let s = schedule("00000000-0000-4000-8000-0000000000f1", "acme", 10);
    store.create(&s).await.unwrap();
    let mut at = 1_000;
    let mut next = || {
        at += 1_000;
        claim(&s.id, at, false)
    };
    async fn fire_one(store: &dyn ScheduleStore, c: FireClaim) -> ScheduleFire {
        store.claim(&c).await.unwrap().unwrap()
    }
    for _ in 0..4 {
        let f = fire_one(store, next()).await;
        store
            .finish(&s.id, &result(&f, FireOutcome::Refused, 1))
            .await
            .unwrap();
    }
    // A start resets the count.
    let f = fire_one(store, next()).await;
    store
        .finish(&s.id, &result(&f, FireOutcome::Started, 1))
        .await
        .unwrap();
    for outcome in [
        FireOutcome::Refused,
        FireOutcome::Failed,
        FireOutcome::Refused,
    ] {
        let f = fire_one(store, next()).await;
        store.finish(&s.id, &result(&f, outcome, 1)).await.unwrap();
    }
    // Neither a rate-limit refusal nor a skip counts (nor resets).
    let f = fire_one(store, next()).await;
    let mut limited = result(&f, FireOutcome::Refused, 1);
    limited.counts_toward_pause = Some(false);
    store.finish(&s.id, &limited).await.unwrap();
    let f = fire_one(store, next()).await;
    store
        .finish(&s.id, &result(&f, FireOutcome::SkippedOverlap, 1))
        .await
        .unwrap();
    let f = fire_one(store, next()).await;
    let now = store
        .finish(&s.id, &result(&f, FireOutcome::Failed, 1))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(now.status, TriggerStatus::Active, "four in a row");
    let f = fire_one(store, next()).await;
    let now = store
        .finish(&s.id, &result(&f, FireOutcome::Refused, 77))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(now.status, TriggerStatus::Paused);
    assert_eq!(now.next_fire_at, None);
    assert_eq!(now.updated_at, 77);
    let reason = now.status_reason.unwrap();
    assert!(
        reason.contains("5 refused or failed fires in a row"),
        "{reason}"
    );
    assert!(reason.contains("refused for a test"), "{reason}");
}

/// Batches: claims of many schedules in one call, answered in their order; two "replicas"
/// claiming overlapping sets in opposite orders at once never both win an occurrence (nor
/// deadlock); a gone schedule gets nothing; outcomes recorded together count and reset as
/// one at a time does, and the fifth counted fire in a row pauses and is reported.
async fn batches(store: Arc<dyn ScheduleStore>, replica: Arc<dyn ScheduleStore>) {
    let ids: Vec<String> = (0..40)
        .map(|i| format!("00000000-0000-4000-8000-0000000b{i:04}"))
        .collect();
    for id in &ids {
        store.create(&schedule(id, "acme", 10)).await.unwrap();
    }
    assert!(store.unregister("acme", &ids[39], 11).await.unwrap());
    let forward: Vec<FireClaim> = ids.iter().map(|id| claim(id, 1_000, false)).collect();
    let mut backward: Vec<FireClaim> = ids.iter().map(|id| claim(id, 1_000, false)).collect();
    backward.reverse();
    let (a, b) = {
        let (s, r) = (store.clone(), replica.clone());
        let (f, bw) = (forward.clone(), backward.clone());
        let a = tokio::spawn(async move { s.claim_many(&f).await.unwrap() });
        let b = tokio::spawn(async move { r.claim_many(&bw).await.unwrap() });
        (a.await.unwrap(), b.await.unwrap())
    };
    assert_eq!(a.len(), 40);
    assert_eq!(b.len(), 40);
    for (i, id) in ids.iter().enumerate() {
        let mine = a[i].as_ref();
        let theirs = b[39 - i].as_ref();
        if i == 39 {
            assert!(mine.is_none() && theirs.is_none(), "a gone schedule");
            continue;
        }
        assert!(
            mine.is_some() != theirs.is_some(),
            "exactly one claim of {id} wins"
        );
        let won = mine.or(theirs).unwrap();
        assert_eq!(&won.schedule_id, id, "answers in the claims' order");
        assert_eq!(won.outcome, FireOutcome::Pending);
        assert_eq!(
            store.get("acme", id).await.unwrap().unwrap().next_fire_at,
            Some(2_000)
        );
    }
    assert!(
        store
            .claim_many(&forward)
            .await
            .unwrap()
            .iter()
            .all(Option::is_none)
    );
    // Outcomes together: ids[0] refused four times, then a start resets it; ids[1] refused
    // five times pauses; ids[2] skips don't count.
    let won = |i: usize| a[i].clone().or_else(|| b[39 - i].clone()).unwrap();
    let mut results = vec![
        (ids[0].clone(), result(&won(0), FireOutcome::Refused, 1)),
        (ids[1].clone(), result(&won(1), FireOutcome::Refused, 1)),
        (
            ids[2].clone(),
            result(&won(2), FireOutcome::SkippedOverlap, 1),
        ),
    ];
    assert!(store.finish_many(&results).await.unwrap().is_empty());
    for round in 0..4 {
        let at = 2_000 + round * 1_000;
        let claims: Vec<FireClaim> = ids[..3].iter().map(|id| claim(id, at, false)).collect();
        let fires = store.claim_many(&claims).await.unwrap();
        let start = if round == 3 {
            FireOutcome::Started
        } else {
            FireOutcome::Refused
        };
        results = vec![
            (ids[0].clone(), result(fires[0].as_ref().unwrap(), start, 1)),
            (
                ids[1].clone(),
                result(fires[1].as_ref().unwrap(), FireOutcome::Failed, 99),
            ),
            (
                ids[2].clone(),
                result(fires[2].as_ref().unwrap(), FireOutcome::SkippedOverlap, 1),
            ),
        ];
        let paused = store.finish_many(&results).await.unwrap();
        if round == 3 {
            assert_eq!(paused, vec![ids[1].clone()], "the fifth in a row");
        } else {
            assert!(paused.is_empty(), "round {round}: {paused:?}");
        }
    }
    let zero = store.get("acme", &ids[0]).await.unwrap().unwrap();
    assert_eq!(
        (zero.status, zero.failures_in_row),
        (TriggerStatus::Active, 0)
    );
    let one = store.get("acme", &ids[1]).await.unwrap().unwrap();
    assert_eq!(one.status, TriggerStatus::Paused);
    assert_eq!(one.next_fire_at, None);
    assert_eq!(one.updated_at, 99);
    assert!(
        one.status_reason
            .unwrap()
            .contains("5 refused or failed fires in a row")
    );
    let two = store.get("acme", &ids[2]).await.unwrap().unwrap();
    assert_eq!(
        (two.status, two.failures_in_row),
        (TriggerStatus::Active, 0)
    );
    let fires = store.fires(&ids[1], None, 10).await.unwrap();
    assert_eq!(fires.len(), 5);
    assert!(fires.iter().all(|f| f.outcome != FireOutcome::Pending));
}

async fn all(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let store: Arc<dyn ScheduleStore> = Arc::new(ScheduleSqlStore::new(t.db.clone()));
    records(store.as_ref()).await;
    let replica: Arc<dyn ScheduleStore> =
        Arc::new(ScheduleSqlStore::new(t.reopen().await.unwrap()));
    ledger(store.clone(), replica).await;
    overlap(store.as_ref(), &RunsStore::new(t.db.clone())).await;
    auto_pause(store.as_ref()).await;
    let replica: Arc<dyn ScheduleStore> =
        Arc::new(ScheduleSqlStore::new(t.reopen().await.unwrap()));
    batches(store.clone(), replica).await;
    t.cleanup().await.unwrap();
}

#[tokio::test]
async fn sqlite_schedules() {
    all(DatabaseKind::Sqlite).await;
}

#[tokio::test]
async fn postgres_schedules() {
    all(DatabaseKind::Postgres).await;
}

#[tokio::test]
async fn memory_schedules() {
    let runs = Arc::new(MemoryRunStore::new());
    let store: Arc<dyn ScheduleStore> = Arc::new(MemoryScheduleStore::with_runs(runs.clone()));
    records(store.as_ref()).await;
    ledger(store.clone(), store.clone()).await;
    overlap(store.as_ref(), runs.as_ref()).await;
    auto_pause(store.as_ref()).await;
    batches(store.clone(), store.clone()).await;
}
