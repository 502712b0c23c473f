//! `kindgi_store::waits` on SQLite and PostgreSQL: taking a wait's row and journaling on its
//! run is one transaction. The entries land after the journal's last one; a second taker —
//! the same handle, or concurrent ones on two handles (two servers) — gets `false` and
//! writes nothing: no entry, no successor approval.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_core::format_millis;
use kindgi_core::ports::RunStore;
use kindgi_core::run::{JournalEntry, JournalKind, RunMeta, RunRecord, RunStatus};
use kindgi_store::DatabaseKind;
use kindgi_store::runs::RunsStore;
use kindgi_store::testing::TestDatabase;
use kindgi_store::waits::{JournalTail, StoredApproval, StoredPause, WaitsStore};
use serde_json::json;

fn entry(sequence: u64, kind: JournalKind) -> JournalEntry {
    JournalEntry {
        sequence,
        kind,
        node_id: None,
        scope: None,
        payload: Some(json!({"n": sequence})),
        timestamp: format_millis(1),
    }
}

async fn suspended_run(runs: &RunsStore, id: &str) {
    runs.insert_run(&RunRecord {
        id: id.into(),
        tenant_id: "acme".into(),
        flow_id: "f".into(),
        flow_version: "1.0.0".into(),
        status: RunStatus::Suspended,
        input: json!({}),
        output: None,
        failure_message: None,
        dry_run: false,
        created_at: format_millis(1),
        updated_at: format_millis(1),
        completed_at: None,
        parent_run_id: None,
        parent_node_id: None,
        meta: RunMeta::default(),
    })
    .await
    .unwrap();
    let started = [
        entry(1, JournalKind::RunStarted),
        entry(2, JournalKind::WaitSuspended),
    ];
    runs.append(id, &started).await.unwrap();
}

fn pause(token: &str, run: &str, status: &str) -> StoredPause {
    StoredPause {
        token_id: token.into(),
        tenant_id: "acme".into(),
        run_id: run.into(),
        scope: "".into(),
        node_id: None,
        call_id: "c1".into(),
        tool_id: "t".into(),
        tool_version: "1.0.0".into(),
        status: status.into(),
        created_at: 1,
        expires_at: i64::MAX,
        updated_at: 1,
    }
}

fn approval(id: &str, run: &str, status: &str) -> StoredApproval {
    StoredApproval {
        id: id.into(),
        tenant_id: "acme".into(),
        status: status.into(),
        required_rank: 0,
        wait_token_id: Some("tok".into()),
        run_id: Some(run.into()),
        created_at: 1,
        expires_at: None,
        decided_by: None,
        conversation_id: None,
        tool_id: None,
        args_hash: None,
        body: "{}".into(),
    }
}

async fn kinds(runs: &RunsStore, run: &str) -> Vec<(u64, String)> {
    let journal = runs.journal(run, None, None).await.unwrap();
    journal
        .into_iter()
        .map(|e| (e.sequence, e.kind.as_str().to_owned()))
        .collect()
}

async fn a_pause_is_taken_once_with_its_journal(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let (runs, waits) = (RunsStore::new(t.db.clone()), WaitsStore::new(t.db.clone()));
    suspended_run(&runs, "r1").await;
    waits
        .insert_pause(&pause("p1", "r1", "open"))
        .await
        .unwrap();
    let resumed = [entry(0, JournalKind::WaitResumed)];
    let tail = JournalTail {
        run_id: "r1",
        entries: &resumed,
    };
    let answered = pause("p1", "r1", "answered");
    assert!(
        waits
            .update_pause_journaled(&answered, "open", tail)
            .await
            .unwrap()
    );
    let after = kinds(&runs, "r1").await;
    assert_eq!(after.last().unwrap(), &(3, "wait.resumed".to_owned()));
    assert!(
        !waits
            .update_pause_journaled(&answered, "open", tail)
            .await
            .unwrap()
    );
    assert_eq!(
        kinds(&runs, "r1").await,
        after,
        "the loser journals nothing"
    );
    let row = waits.get_pause("p1").await.unwrap().unwrap();
    assert_eq!(row.status, "answered");

    // Ten takers at once on two handles of the database: one wins.
    let second = WaitsStore::new(t.reopen().await.unwrap());
    waits
        .insert_pause(&pause("p2", "r1", "open"))
        .await
        .unwrap();
    let mut set = tokio::task::JoinSet::new();
    for i in 0..10 {
        let store = if i % 2 == 0 {
            waits.clone()
        } else {
            second.clone()
        };
        set.spawn(async move {
            let entries = [entry(0, JournalKind::WaitResumed)];
            let tail = JournalTail {
                run_id: "r1",
                entries: &entries,
            };
            let answered = pause("p2", "r1", "answered");
            store.update_pause_journaled(&answered, "open", tail).await
        });
    }
    let won: Vec<bool> = set
        .join_all()
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(won.iter().filter(|w| **w).count(), 1, "{won:?}");
    assert_eq!(kinds(&runs, "r1").await.len(), after.len() + 1);
}

async fn an_approval_is_decided_once_with_its_successor_and_journal(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let (runs, waits) = (RunsStore::new(t.db.clone()), WaitsStore::new(t.db.clone()));
    suspended_run(&runs, "r1").await;
    waits
        .insert_approval(&approval("a1", "r1", "pending"))
        .await
        .unwrap();
    let entries = [
        entry(0, JournalKind::ApprovalCompleted),
        entry(0, JournalKind::ApprovalRequested),
    ];
    let tail = JournalTail {
        run_id: "r1",
        entries: &entries,
    };
    let escalated = approval("a1", "r1", "escalated");
    let next = approval("a2", "r1", "pending");
    assert!(
        waits
            .update_approval_journaled(&escalated, "pending", Some(&next), Some(tail))
            .await
            .unwrap()
    );
    let after = kinds(&runs, "r1").await;
    assert_eq!(
        after[2..],
        [
            (3, "approval.completed".to_owned()),
            (4, "approval.requested".to_owned())
        ]
    );
    assert!(waits.get_approval("acme", "a2").await.unwrap().is_some());
    // A second decision of a1 loses: no entries, no successor.
    let other = approval("a3", "r1", "pending");
    assert!(
        !waits
            .update_approval_journaled(&escalated, "pending", Some(&other), Some(tail))
            .await
            .unwrap()
    );
    assert_eq!(kinds(&runs, "r1").await, after);
    assert!(waits.get_approval("acme", "a3").await.unwrap().is_none());
    // An approval without a waiting run moves without a journal.
    waits
        .insert_approval(&approval("a4", "r1", "pending"))
        .await
        .unwrap();
    let approved = approval("a4", "r1", "approved");
    assert!(
        waits
            .update_approval_journaled(&approved, "pending", None, None)
            .await
            .unwrap()
    );
    assert_eq!(kinds(&runs, "r1").await, after);
}

macro_rules! both_stores {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() { super::$name(kindgi_store::DatabaseKind::Sqlite).await })*
        }
        mod postgres {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() { super::$name(kindgi_store::DatabaseKind::Postgres).await })*
        }
    };
}

both_stores!(
    a_pause_is_taken_once_with_its_journal,
    an_approval_is_decided_once_with_its_successor_and_journal
);
