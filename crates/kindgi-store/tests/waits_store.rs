//! `kindgi_store::waits::WaitsStore` as core's `WaitStore` port, on SQLite and PostgreSQL:
//! taking a wait's row and journaling on its run is one transaction. The entries land after
//! the journal's last one, in this database (not through `WaitJournal::runs`); a second
//! taker — the same handle, or concurrent ones on two handles (two servers) — gets `false`
//! and writes nothing: no entry, no successor approval. Reads, lists, deadlines and the
//! pause and connection-wait lifecycles answer as the in-memory store does; a corrupt row is
//! a `Corrupt` error.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_core::approval::{
    Approval, ApprovalDecision, ApprovalQuery, ApprovalStatus, DecisionKind, ReviewerRole,
};
use kindgi_core::connection_wait::{ConnectionWait, ConnectionWaitQuery};
use kindgi_core::pause::{PauseRecord, PauseStatus};
use kindgi_core::run::{JournalEntry, JournalKind, RunMeta, RunRecord, RunStatus};
use kindgi_core::{
    MemoryRunStore, MemoryWaitStore, RunStore, StorageError, WaitJournal, WaitStore, format_millis,
};
use kindgi_store::runs::RunsStore;
use kindgi_store::testing::TestDatabase;
use kindgi_store::waits::WaitsStore;
use kindgi_store::{Backend, DatabaseKind};
use serde_json::{Value, json};

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

fn pause(token: &str, run: &str, status: PauseStatus) -> PauseRecord {
    PauseRecord {
        token_id: token.into(),
        tenant_id: "acme".into(),
        run_id: run.into(),
        scope: "".into(),
        node_id: None,
        call_id: "c1".into(),
        tool_id: "t".into(),
        tool_version: "1.0.0".into(),
        status,
        created_at: format_millis(1_000),
        expires_at: format_millis(i64::from(i32::MAX) * 1_000),
        updated_at: format_millis(1_000),
    }
}

fn approval(id: &str, run: &str, status: ApprovalStatus) -> Approval {
    Approval {
        id: id.into(),
        tenant_id: "acme".into(),
        project_id: None,
        subject_kind: "tool_call".into(),
        subject_ref: json!({"toolId": "t"}),
        required_role: ReviewerRole::Standard,
        status,
        title: None,
        description: None,
        wait_token_id: Some("tok".into()),
        run_id: Some(run.into()),
        created_at: format_millis(1_000),
        updated_at: format_millis(1_000),
        decided_at: None,
        expires_at: None,
        decision: None,
        requested_by: None,
        separate_approver: false,
        withdrawn_because: None,
        escalated_from: None,
        escalated_to: None,
    }
}

async fn kinds(runs: &RunsStore, run: &str) -> Vec<(u64, String)> {
    let journal = runs.journal(run, None, None).await.unwrap();
    journal
        .into_iter()
        .map(|e| (e.sequence, e.kind.as_str().to_owned()))
        .collect()
}

/// A journal whose `runs` is an empty memory store: the database store must not use it.
fn journal<'a>(
    runs: &'a MemoryRunStore,
    run_id: &'a str,
    entries: &'a [(JournalKind, Value)],
) -> WaitJournal<'a> {
    WaitJournal {
        runs,
        run_id,
        entries,
    }
}

async fn a_pause_is_taken_once_with_its_journal(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let (runs, waits) = (RunsStore::new(t.db.clone()), WaitsStore::new(t.db.clone()));
    let elsewhere = MemoryRunStore::new();
    suspended_run(&runs, "r1").await;
    let open = pause("p1", "r1", PauseStatus::Open);
    waits.insert_pause(&open).await.unwrap();
    assert_eq!(waits.get_pause("p1").await.unwrap(), Some(open));
    let resumed = [(JournalKind::WaitResumed, json!({"n": 0}))];
    let answered = pause("p1", "r1", PauseStatus::Answered);
    let tail = journal(&elsewhere, "r1", &resumed);
    assert!(
        waits
            .update_pause_journaled(&answered, PauseStatus::Open, tail)
            .await
            .unwrap()
    );
    let after = kinds(&runs, "r1").await;
    assert_eq!(after.last().unwrap(), &(3, "wait.resumed".to_owned()));
    assert!(
        elsewhere
            .journal("r1", None, None)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        !waits
            .update_pause_journaled(&answered, PauseStatus::Open, tail)
            .await
            .unwrap()
    );
    assert_eq!(
        kinds(&runs, "r1").await,
        after,
        "the loser journals nothing"
    );
    let row = waits.get_pause("p1").await.unwrap().unwrap();
    assert_eq!(row.status, PauseStatus::Answered);

    // Ten takers at once on two handles of the database: one wins.
    let second = WaitsStore::new(t.reopen().await.unwrap());
    waits
        .insert_pause(&pause("p2", "r1", PauseStatus::Open))
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
            let elsewhere = MemoryRunStore::new();
            let entries = [(JournalKind::WaitResumed, json!({"n": 0}))];
            let answered = pause("p2", "r1", PauseStatus::Answered);
            let tail = journal(&elsewhere, "r1", &entries);
            store
                .update_pause_journaled(&answered, PauseStatus::Open, tail)
                .await
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
    let elsewhere = MemoryRunStore::new();
    suspended_run(&runs, "r1").await;
    waits
        .insert_approval(&approval("a1", "r1", ApprovalStatus::Pending))
        .await
        .unwrap();
    let entries = [
        (JournalKind::ApprovalCompleted, json!({})),
        (JournalKind::ApprovalRequested, json!({})),
    ];
    let tail = journal(&elsewhere, "r1", &entries);
    let escalated = approval("a1", "r1", ApprovalStatus::Escalated);
    let next = approval("a2", "r1", ApprovalStatus::Pending);
    assert!(
        waits
            .update_approval_journaled(&escalated, ApprovalStatus::Pending, Some(&next), Some(tail))
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
    assert_eq!(waits.get_approval("acme", "a2").await.unwrap(), Some(next));
    assert_eq!(
        waits.get_approval("acme", "a1").await.unwrap(),
        Some(escalated.clone())
    );
    // A second decision of a1 loses: no entries, no successor.
    let other = approval("a3", "r1", ApprovalStatus::Pending);
    assert!(
        !waits
            .update_approval_journaled(
                &escalated,
                ApprovalStatus::Pending,
                Some(&other),
                Some(tail)
            )
            .await
            .unwrap()
    );
    assert_eq!(kinds(&runs, "r1").await, after);
    assert!(waits.get_approval("acme", "a3").await.unwrap().is_none());
    // An approval without a waiting run moves without a journal.
    waits
        .insert_approval(&approval("a4", "r1", ApprovalStatus::Pending))
        .await
        .unwrap();
    let approved = approval("a4", "r1", ApprovalStatus::Approved);
    assert!(
        waits
            .update_approval_journaled(&approved, ApprovalStatus::Pending, None, None)
            .await
            .unwrap()
    );
    assert_eq!(kinds(&runs, "r1").await, after);
    assert!(
        elsewhere
            .journal("r1", None, None)
            .await
            .unwrap()
            .is_empty()
    );
}

/// Approvals covering every filtered column: tiers, statuses, tokens, runs, times, a
/// decision, a conversation subject, deadlines.
fn approvals() -> Vec<Approval> {
    let mut out = Vec::new();
    for i in 0..8_i64 {
        let status = [
            ApprovalStatus::Pending,
            ApprovalStatus::Approved,
            ApprovalStatus::InReview,
            ApprovalStatus::Expired,
        ][usize::try_from(i % 4).unwrap()];
        let mut a = approval(&format!("a{i}"), &format!("r{}", i % 2), status);
        a.required_role = [
            ReviewerRole::Standard,
            ReviewerRole::Senior,
            ReviewerRole::Admin,
        ][usize::try_from(i % 3).unwrap()];
        // Two share a creation time, so the cursor's tie-break on the id counts.
        a.created_at = format_millis(1_000 * (i / 2 * 2 + 1));
        a.wait_token_id = Some(format!("tok{}", i % 3));
        a.expires_at = Some(format_millis(10_000 + 1_000 * i));
        a.subject_ref = json!({"conversationId": "c1", "toolId": "t", "argsHash": format!("h{i}")});
        if status == ApprovalStatus::Approved {
            a.decision = Some(ApprovalDecision {
                id: format!("d{i}"),
                approval_id: a.id.clone(),
                decision: DecisionKind::Approve,
                decided_by: Some("user:ann".into()),
                reviewer_id: "ann".into(),
                reviewer_role_at_decision: ReviewerRole::Admin,
                decided_at: format_millis(2_000 * i),
                rationale: None,
            });
        }
        out.push(a);
    }
    let mut other = approval("b0", "r0", ApprovalStatus::Pending);
    other.tenant_id = "other".into();
    out.push(other);
    out
}

fn queries() -> Vec<ApprovalQuery> {
    let q = ApprovalQuery {
        tenant_id: "acme".into(),
        limit: 3,
        ..ApprovalQuery::default()
    };
    vec![
        q.clone(),
        ApprovalQuery {
            ascending: true,
            limit: 100,
            ..q.clone()
        },
        ApprovalQuery {
            statuses: vec![ApprovalStatus::Pending, ApprovalStatus::InReview],
            ..q.clone()
        },
        ApprovalQuery {
            run_id: Some("r1".into()),
            wait_token_ids: vec!["tok0".into(), "tok2".into()],
            limit: 100,
            ..q.clone()
        },
        ApprovalQuery {
            required_role: Some(ReviewerRole::Senior),
            limit: 100,
            ..q.clone()
        },
        ApprovalQuery {
            max_role: Some(ReviewerRole::Senior),
            created_after: Some(format_millis(1_000)),
            limit: 100,
            ..q.clone()
        },
        ApprovalQuery {
            decided_by: Some("user:ann".into()),
            ..q.clone()
        },
        ApprovalQuery {
            after: Some((format_millis(5_000), "a5".into())),
            ..q.clone()
        },
        ApprovalQuery {
            after: Some((format_millis(3_000), "a2".into())),
            ascending: true,
            ..q.clone()
        },
        ApprovalQuery {
            tenant_id: "nobody".into(),
            ..q
        },
    ]
}

fn ids(approvals: &[Approval]) -> Vec<&str> {
    approvals.iter().map(|a| a.id.as_str()).collect()
}

fn sorted<T: Clone>(mut v: Vec<T>, key: impl Fn(&T) -> String) -> Vec<T> {
    v.sort_by_key(key);
    v
}

async fn approvals_answer_as_in_memory(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let db = WaitsStore::new(t.db.clone());
    let memory = MemoryWaitStore::new();
    let stores: [&dyn WaitStore; 2] = [&db, &memory];
    for store in stores {
        for a in approvals() {
            store.insert_approval(&a).await.unwrap();
        }
    }
    for a in approvals() {
        let got = db.get_approval(&a.tenant_id, &a.id).await.unwrap();
        assert_eq!(got.as_ref(), Some(&a), "the record round-trips");
    }
    assert!(db.get_approval("other", "a0").await.unwrap().is_none());
    for q in queries() {
        let (d, m) = (db.list_approvals(&q).await, memory.list_approvals(&q).await);
        let (d, m) = (d.unwrap(), m.unwrap());
        assert_eq!(ids(&d), ids(&m), "{q:?}");
        assert_eq!(d, m, "{q:?}");
    }
    let full = ApprovalQuery {
        tenant_id: "acme".into(),
        limit: 3,
        ..ApprovalQuery::default()
    };
    assert_eq!(
        db.list_approvals(&full).await.unwrap().len(),
        4,
        "limit + 1"
    );
    for at in [0, 12_000, 20_000] {
        let by_id = |a: &Approval| a.id.clone();
        let d = sorted(db.approvals_due(at).await.unwrap(), by_id);
        let m = sorted(memory.approvals_due(at).await.unwrap(), by_id);
        assert_eq!(ids(&d), ids(&m), "due at {at}");
    }
    assert_eq!(ids(&db.approvals_due(12_000).await.unwrap()), ["a0", "a2"]);
    assert_eq!(db.next_deadline().await.unwrap(), Some(10_000));
    assert_eq!(
        db.next_deadline().await.unwrap(),
        memory.next_deadline().await.unwrap()
    );
    for (hash, approved) in [("h1", true), ("h5", true), ("h0", false), ("hx", false)] {
        for store in stores {
            let got = store
                .approved_in_conversation("acme", "c1", "t", hash)
                .await
                .unwrap();
            assert_eq!(got, approved, "{hash}");
        }
    }
    // Compare-and-set: the stored status decides.
    let mut a0 = approvals().remove(0);
    a0.status = ApprovalStatus::Withdrawn;
    for store in stores {
        assert!(
            !store
                .update_approval_if(&a0, ApprovalStatus::Approved)
                .await
                .unwrap()
        );
        assert!(
            store
                .update_approval_if(&a0, ApprovalStatus::Pending)
                .await
                .unwrap()
        );
        let got = store.get_approval("acme", "a0").await.unwrap();
        assert_eq!(got.as_ref(), Some(&a0));
    }
    assert_eq!(db.next_deadline().await.unwrap(), Some(12_000));
    let again = db.insert_approval(&a0).await.unwrap_err();
    assert!(matches!(again, StorageError::Conflict { .. }), "{again}");
}

async fn pauses_answer_as_in_memory(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let db = WaitsStore::new(t.db.clone());
    let memory = MemoryWaitStore::new();
    let mut first = pause("p1", "r1", PauseStatus::Open);
    first.node_id = Some("n1".into());
    first.expires_at = format_millis(5_000);
    let mut reissued = pause("p2", "r1", PauseStatus::Open);
    reissued.created_at = format_millis(3_000);
    reissued.expires_at = format_millis(7_000);
    let mut other_call = pause("p3", "r2", PauseStatus::Open);
    other_call.call_id = "c2".into();
    other_call.expires_at = format_millis(6_000);
    for store in [&db as &dyn WaitStore, &memory] {
        for p in [&first, &reissued, &other_call] {
            store.insert_pause(p).await.unwrap();
        }
    }
    // The re-issued call closed the first pause of the same call, at its creation time.
    let closed = db.get_pause("p1").await.unwrap().unwrap();
    assert_eq!(closed.status, PauseStatus::Closed);
    assert_eq!(closed.updated_at, format_millis(3_000));
    assert_eq!(Some(closed), memory.get_pause("p1").await.unwrap());
    assert_eq!(db.get_pause("p3").await.unwrap(), Some(other_call.clone()));
    assert!(db.get_pause("nope").await.unwrap().is_none());
    let by_token = |p: &PauseRecord| p.token_id.clone();
    for at in [0, 6_500, 10_000] {
        let d = sorted(db.pauses_due(at).await.unwrap(), by_token);
        let m = sorted(memory.pauses_due(at).await.unwrap(), by_token);
        assert_eq!(d, m, "due at {at}");
    }
    assert_eq!(db.pauses_due(10_000).await.unwrap().len(), 2);
    for run in ["r1", "r2", "r3"] {
        let d = sorted(db.open_pauses_of_run(run).await.unwrap(), by_token);
        let m = sorted(memory.open_pauses_of_run(run).await.unwrap(), by_token);
        assert_eq!(d, m, "{run}");
    }
    assert_eq!(db.next_deadline().await.unwrap(), Some(6_000));
    let mut expired = other_call.clone();
    expired.status = PauseStatus::Expired;
    expired.updated_at = format_millis(6_000);
    assert!(
        !db.update_pause_if(&expired, PauseStatus::Answered)
            .await
            .unwrap()
    );
    assert!(
        db.update_pause_if(&expired, PauseStatus::Open)
            .await
            .unwrap()
    );
    assert_eq!(db.get_pause("p3").await.unwrap(), Some(expired));
    assert_eq!(db.next_deadline().await.unwrap(), Some(7_000));
}

fn connection_wait(token: &str, run: &str, person: &str, expires_at: i64) -> ConnectionWait {
    ConnectionWait {
        token_id: token.into(),
        tenant_id: "acme".into(),
        run_id: run.into(),
        person: person.into(),
        app: "google".into(),
        permissions: vec!["gmail.read".into(), "gmail.labels".into()],
        tool_id: "t.inbox".into(),
        call_id: "c1".into(),
        status: PauseStatus::Open,
        created_at: format_millis(1_000),
        expires_at: format_millis(expires_at),
        updated_at: format_millis(1_000),
    }
}

async fn connection_waits_answer_as_in_memory(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let (runs, db) = (RunsStore::new(t.db.clone()), WaitsStore::new(t.db.clone()));
    let memory = MemoryWaitStore::new();
    suspended_run(&runs, "r1").await;
    let w1 = connection_wait("w1", "r1", "u1", 9_000);
    let w2 = connection_wait("w2", "r2", "u1", 8_000);
    let mut w3 = connection_wait("w3", "r3", "u2", 7_000);
    w3.app = "slack".into();
    for store in [&db as &dyn WaitStore, &memory] {
        for w in [&w1, &w2, &w3] {
            store.insert_connection_wait(w).await.unwrap();
        }
        // Again under the same token: the stored one stays.
        let mut again = w1.clone();
        again.person = "someone-else".into();
        store.insert_connection_wait(&again).await.unwrap();
    }
    assert_eq!(
        db.get_connection_wait("w1").await.unwrap(),
        Some(w1.clone())
    );
    assert!(db.get_connection_wait("nope").await.unwrap().is_none());
    let q = |tenant: Option<&str>,
             person: Option<&str>,
             app: Option<&str>,
             run: Option<&str>,
             due: Option<i64>| ConnectionWaitQuery {
        tenant_id: tenant.map(str::to_owned),
        person: person.map(str::to_owned),
        app: app.map(str::to_owned),
        run_id: run.map(str::to_owned),
        due_at: due,
    };
    let queries = [
        (q(None, None, None, None, None), vec!["w3", "w2", "w1"]),
        (
            q(Some("acme"), Some("u1"), Some("google"), None, None),
            vec!["w2", "w1"],
        ),
        (
            q(Some("other"), Some("u1"), Some("google"), None, None),
            vec![],
        ),
        (
            q(Some("acme"), Some("u2"), Some("google"), None, None),
            vec![],
        ),
        (q(None, None, Some("slack"), None, None), vec!["w3"]),
        (q(None, None, None, Some("r1"), None), vec!["w1"]),
        (q(None, None, None, None, Some(8_000)), vec!["w3", "w2"]),
    ];
    for (query, expected) in &queries {
        let d = db.open_connection_waits(query).await.unwrap();
        let m = memory.open_connection_waits(query).await.unwrap();
        let tokens: Vec<&str> = d.iter().map(|w| w.token_id.as_str()).collect();
        assert_eq!(&tokens, expected, "{query:?}");
        assert_eq!(d, m, "{query:?}");
    }
    assert_eq!(db.next_deadline().await.unwrap(), Some(7_000));
    // Closed (its run ended): no longer open, no longer a deadline.
    let mut closed = w3.clone();
    closed.status = PauseStatus::Closed;
    assert!(
        !db.update_connection_wait_if(&closed, PauseStatus::Answered)
            .await
            .unwrap()
    );
    assert!(
        db.update_connection_wait_if(&closed, PauseStatus::Open)
            .await
            .unwrap()
    );
    assert_eq!(db.next_deadline().await.unwrap(), Some(8_000));
    // Answered with its journal in one step, once.
    let elsewhere = MemoryRunStore::new();
    let resumed = [(JournalKind::WaitResumed, json!({"tokenId": "w1"}))];
    let mut answered = w1.clone();
    answered.status = PauseStatus::Answered;
    let tail = journal(&elsewhere, "r1", &resumed);
    assert!(
        db.update_connection_wait_journaled(&answered, PauseStatus::Open, tail)
            .await
            .unwrap()
    );
    assert!(
        !db.update_connection_wait_journaled(&answered, PauseStatus::Open, tail)
            .await
            .unwrap()
    );
    let after = kinds(&runs, "r1").await;
    assert_eq!(after.len(), 3, "one wait.resumed: {after:?}");
    assert_eq!(after.last().unwrap(), &(3, "wait.resumed".to_owned()));
    assert!(
        elsewhere
            .journal("r1", None, None)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(db.get_connection_wait("w1").await.unwrap(), Some(answered));
    // A corrupt row is a corrupt error.
    write(
        &t,
        "UPDATE wait_connections SET permissions = 'nope' WHERE token_id = 'w2'",
    )
    .await;
    let e = db.get_connection_wait("w2").await.unwrap_err();
    assert!(
        e.to_string().starts_with("stored data for connection wait w2 is corrupt: its permissions are not a list of strings"),
        "{e}"
    );
}

/// Writes `sql` on the database's writer.
async fn write(t: &TestDatabase, sql: &str) {
    match t.db.backend() {
        Backend::Sqlite(p) => sqlx::query(sql).execute(&p.writer).await.map(drop),
        Backend::Postgres(p) => sqlx::query(sql).execute(p).await.map(drop),
    }
    .unwrap();
}

async fn corrupt_rows_are_corrupt_errors(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let db = WaitsStore::new(t.db.clone());
    db.insert_approval(&approval("a1", "r1", ApprovalStatus::Pending))
        .await
        .unwrap();
    db.insert_pause(&pause("p1", "r1", PauseStatus::Open))
        .await
        .unwrap();
    write(&t, "UPDATE approvals SET body = 'not json' WHERE id = 'a1'").await;
    write(
        &t,
        "UPDATE wait_pauses SET status = 'lost' WHERE token_id = 'p1'",
    )
    .await;
    let e = db.get_approval("acme", "a1").await.unwrap_err();
    assert!(
        matches!(&e, StorageError::Corrupt { what, source: Some(_), .. } if what == "approval a1"),
        "{e:?}"
    );
    let e = db.get_pause("p1").await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "stored data for pause p1 is corrupt: unknown status \"lost\""
    );
    let e = db.open_pauses_of_run("r1").await;
    assert!(e.unwrap().is_empty(), "only open pauses are read");
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
    connection_waits_answer_as_in_memory,
    an_approval_is_decided_once_with_its_successor_and_journal,
    approvals_answer_as_in_memory,
    pauses_answer_as_in_memory,
    corrupt_rows_are_corrupt_errors,
);
