//! The in-memory implementations of the storage ports behave as the ports say: a duplicate
//! run or journal sequence is refused with its typed error, lists follow the query's order
//! and cursor, a wait's compare-and-set lets one answer win, and a journal that refuses the
//! entries puts the wait's row back.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_core::pause::{PauseRecord, PauseStatus};
use kindgi_core::ports::{RunQuery, RunStore, WaitJournal, WaitStore};
use kindgi_core::run::{JournalEntry, JournalKind, RunMeta, RunRecord, RunStatus};
use kindgi_core::{MemoryRunStore, MemoryWaitStore, StorageError, format_millis};
use serde_json::json;

fn run(id: &str, created_ms: i64) -> RunRecord {
    RunRecord {
        id: id.into(),
        tenant_id: "acme".into(),
        flow_id: "f".into(),
        flow_version: "1.0.0".into(),
        status: RunStatus::Running,
        input: json!({}),
        output: None,
        failure_message: None,
        dry_run: false,
        created_at: format_millis(created_ms),
        updated_at: format_millis(created_ms),
        completed_at: None,
        parent_run_id: None,
        parent_node_id: None,
        meta: RunMeta::default(),
    }
}

fn entry(sequence: u64) -> JournalEntry {
    JournalEntry {
        sequence,
        kind: JournalKind::StepStarted,
        node_id: Some("n".into()),
        scope: None,
        payload: None,
        timestamp: format_millis(0),
    }
}

#[tokio::test]
async fn runs_refuse_duplicates_with_typed_errors() {
    let store = MemoryRunStore::new();
    store.insert_run(&run("r1", 1)).await.unwrap();
    let again = store.insert_run(&run("r1", 1)).await.unwrap_err();
    assert!(matches!(again, StorageError::Conflict { ref what, .. } if what == "run r1"));
    let missing = store.update_run(&run("r9", 1)).await.unwrap_err();
    assert!(matches!(missing, StorageError::NotFound { .. }));

    store.append("r1", &[entry(1), entry(2)]).await.unwrap();
    let dup = store.append("r1", &[entry(2)]).await.unwrap_err();
    assert!(matches!(
        dup,
        StorageError::DuplicateSequence { ref run_id, sequence: 2 } if run_id == "r1"
    ));
    let after_one = store.journal("r1", Some(1), None).await.unwrap();
    assert_eq!(
        after_one.iter().map(|e| e.sequence).collect::<Vec<_>>(),
        [2]
    );
    let first = store.journal("r1", None, Some(1)).await.unwrap();
    assert_eq!(first.iter().map(|e| e.sequence).collect::<Vec<_>>(), [1]);
}

#[tokio::test]
async fn runs_list_newest_first_after_the_cursor() {
    let store = MemoryRunStore::new();
    for (id, at) in [("a", 10), ("b", 20), ("c", 20), ("d", 30)] {
        store.insert_run(&run(id, at)).await.unwrap();
    }
    let ids = |runs: Vec<RunRecord>| runs.into_iter().map(|r| r.id).collect::<Vec<_>>();
    let all = store.list_runs(&RunQuery::default()).await.unwrap();
    assert_eq!(ids(all), ["d", "c", "b", "a"]);
    let page = RunQuery {
        after: Some((20, "c".into())),
        limit: Some(1),
        ..RunQuery::default()
    };
    assert_eq!(ids(store.list_runs(&page).await.unwrap()), ["b"]);
    let other_tenant = RunQuery {
        tenant_id: Some("other".into()),
        ..RunQuery::default()
    };
    assert!(store.list_runs(&other_tenant).await.unwrap().is_empty());
}

fn pause(token_id: &str, call_id: &str) -> PauseRecord {
    PauseRecord {
        token_id: token_id.into(),
        tenant_id: "acme".into(),
        run_id: "r1".into(),
        scope: "".into(),
        node_id: Some("n".into()),
        call_id: call_id.into(),
        tool_id: "t".into(),
        tool_version: "1.0.0".into(),
        status: PauseStatus::Open,
        created_at: format_millis(5),
        expires_at: format_millis(1_000),
        updated_at: format_millis(5),
    }
}

#[tokio::test]
async fn one_answer_wins_a_pause_and_a_reissued_call_closes_the_old_ticket() {
    let waits = MemoryWaitStore::new();
    waits.insert_pause(&pause("t1", "c1")).await.unwrap();
    let answered = PauseRecord {
        status: PauseStatus::Answered,
        ..pause("t1", "c1")
    };
    assert!(
        waits
            .update_pause_if(&answered, PauseStatus::Open)
            .await
            .unwrap()
    );
    assert!(
        !waits
            .update_pause_if(&answered, PauseStatus::Open)
            .await
            .unwrap()
    );

    waits.insert_pause(&pause("t2", "c2")).await.unwrap();
    waits.insert_pause(&pause("t3", "c2")).await.unwrap();
    let old = waits.get_pause("t2").await.unwrap().unwrap();
    assert_eq!(old.status, PauseStatus::Closed);
    let open: Vec<String> = waits
        .open_pauses_of_run("r1")
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.token_id)
        .collect();
    assert_eq!(open, ["t3"]);
    assert_eq!(waits.next_deadline().await.unwrap(), Some(1_000));
}

/// A run store whose journal refuses every append.
#[derive(Debug)]
struct Refusing;

#[async_trait::async_trait]
impl RunStore for Refusing {
    async fn insert_run(&self, _: &RunRecord) -> Result<(), StorageError> {
        Ok(())
    }
    async fn update_run(&self, _: &RunRecord) -> Result<(), StorageError> {
        Ok(())
    }
    async fn get_run(&self, _: &str) -> Result<Option<RunRecord>, StorageError> {
        Ok(None)
    }
    async fn list_runs(&self, _: &RunQuery) -> Result<Vec<RunRecord>, StorageError> {
        Ok(Vec::new())
    }
    async fn append(&self, _: &str, _: &[JournalEntry]) -> Result<(), StorageError> {
        Err(StorageError::backend(
            "runs.append",
            std::io::Error::other("disk full"),
        ))
    }
    async fn journal(
        &self,
        _: &str,
        _: Option<u64>,
        _: Option<u32>,
    ) -> Result<Vec<JournalEntry>, StorageError> {
        Ok(Vec::new())
    }
}

#[tokio::test]
async fn a_journaled_answer_is_numbered_after_the_journal_or_undone() {
    let runs = MemoryRunStore::new();
    runs.insert_run(&run("r1", 1)).await.unwrap();
    runs.append("r1", &[entry(1), entry(2)]).await.unwrap();
    let waits = MemoryWaitStore::new();
    waits.insert_pause(&pause("t1", "c1")).await.unwrap();
    let answered = PauseRecord {
        status: PauseStatus::Answered,
        ..pause("t1", "c1")
    };
    let entries = [(JournalKind::WaitResumed, json!({"tokenId": "t1"}))];
    let journal = WaitJournal {
        runs: &runs,
        run_id: "r1",
        entries: &entries,
    };
    let moved = waits
        .update_pause_journaled(&answered, PauseStatus::Open, journal)
        .await
        .unwrap();
    assert!(moved);
    let last = runs.journal("r1", Some(2), None).await.unwrap();
    assert_eq!(last.len(), 1);
    assert_eq!(
        (last[0].sequence, last[0].kind),
        (3, JournalKind::WaitResumed)
    );

    // The journal refuses: the row is put back and the error comes out, source kept.
    waits.insert_pause(&pause("t2", "c2")).await.unwrap();
    let refused = WaitJournal {
        runs: &Refusing,
        run_id: "r1",
        entries: &entries,
    };
    let answered = PauseRecord {
        status: PauseStatus::Answered,
        ..pause("t2", "c2")
    };
    let e = waits
        .update_pause_journaled(&answered, PauseStatus::Open, refused)
        .await
        .unwrap_err();
    assert_eq!(e.to_string(), "runs.append failed: disk full");
    assert!(std::error::Error::source(&e).is_some());
    let back = waits.get_pause("t2").await.unwrap().unwrap();
    assert_eq!(back.status, PauseStatus::Open);
}
