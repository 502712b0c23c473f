//! A run's journal as its executor sees it: the writer that numbers entries, and the replay
//! index built from what an earlier executor wrote (so a resumed run skips what completed).
//!
//! The writer is the run's one way to storage, so it is where secrets are masked: every
//! entry's payload and the run's record (output, failure message) pass through the run's
//! [`SecretMask`] before they are buffered. The journal is what `GET /v1/runs/{id}/journal`
//! and the SSE stream serve, and the record what `GET /v1/runs/{id}` does, so nothing a run
//! stores or sends carries a value it resolved.

use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use kindgi_tools::secret_mask::SecretMask;

use crate::record::{JournalEntry, JournalKind, RunRecord, format_millis, now_millis};
use crate::store::{RunStore, RunStoreError};

/// How a wait ended, as the journal says.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum WaitOutcome {
    /// Answered with this value (for an approval: `{decided, rationale?, decidedBy, approvalId}`).
    Resumed(Value),
    /// Cancelled: `timeout`, `withdrawn`, `run-cancelled`.
    Cancelled { reason: String },
}

/// Appends a run's entries in order, numbering them. One per executing run.
///
/// Entries are buffered and written in one transaction by [`JournalWriter::flush`], which the
/// executor calls at durability points: before the work of a step that may change something
/// starts (so its `step.started` and everything completed before it are stored), before a
/// retry pause, before a child run, before a recorded decision (a model call), and at the
/// run's end. Read-only steps do not force a flush (at most every 100 ms): a crash may lose
/// the completion of a read-only step, which then runs again — harmless by declaration —
/// while a completed step that changes the world is always stored before anything after it
/// starts.
#[derive(Debug)]
pub(crate) struct JournalWriter {
    store: Arc<dyn RunStore>,
    run_id: String,
    state: tokio::sync::Mutex<Pending>,
    /// The secret values this run's calls resolved.
    mask: Arc<SecretMask>,
}

#[derive(Debug)]
struct Pending {
    next: u64,
    buffer: Vec<JournalEntry>,
    last_flush: std::time::Instant,
    /// The run's record to store with the next flush.
    run: Option<crate::record::RunRecord>,
}

impl JournalWriter {
    pub(crate) fn new(store: Arc<dyn RunStore>, run_id: String, last_sequence: u64) -> Self {
        Self {
            store,
            run_id,
            state: tokio::sync::Mutex::new(Pending {
                next: last_sequence + 1,
                buffer: Vec::new(),
                last_flush: std::time::Instant::now(),
                run: None,
            }),
            mask: SecretMask::new(),
        }
    }

    /// The mask every secret value this run resolves is taught to.
    pub(crate) fn mask(&self) -> &Arc<SecretMask> {
        &self.mask
    }

    /// Masks the parts of `run` a call's values can reach: its output and failure message.
    pub(crate) fn mask_run(&self, run: &mut RunRecord) {
        if self.mask.is_empty() {
            return;
        }
        if let Some(output) = run.output.as_mut() {
            self.mask.mask_value(output);
        }
        if let Some(message) = run.failure_message.as_mut() {
            self.mask.mask_string(message);
        }
    }

    /// Buffers one entry. `scope` "" means the top level.
    pub(crate) async fn write(
        &self,
        kind: JournalKind,
        node_id: Option<&str>,
        scope: &str,
        mut payload: Option<Value>,
    ) -> Result<(), RunStoreError> {
        if let Some(p) = payload.as_mut() {
            self.mask.mask_value(p);
        }
        let mut st = self.state.lock().await;
        let entry = JournalEntry {
            sequence: st.next,
            kind,
            node_id: node_id.map(str::to_owned),
            scope: if scope.is_empty() {
                None
            } else {
                Some(scope.to_owned())
            },
            payload,
            timestamp: format_millis(now_millis()),
        };
        st.next += 1;
        st.buffer.push(entry);
        Ok(())
    }

    /// Stores every buffered entry (one transaction). The lock spans the store call, so
    /// flushes never interleave and the stored journal has no gaps.
    pub(crate) async fn flush(&self) -> Result<(), RunStoreError> {
        let mut st = self.state.lock().await;
        if st.buffer.is_empty() && st.run.is_none() {
            return Ok(());
        }
        self.store
            .append_and_update(&self.run_id, &st.buffer, st.run.as_ref())
            .await?;
        st.buffer.clear();
        st.run = None;
        st.last_flush = std::time::Instant::now();
        Ok(())
    }

    /// Stores `run` with the next flush (replacing any record queued before).
    pub(crate) async fn set_run(&self, mut run: RunRecord) {
        self.mask_run(&mut run);
        self.state.lock().await.run = Some(run);
    }

    /// Flushes when the oldest unflushed entry may be older than `max_age`, so a run made of
    /// read-only steps still shows its progress while it goes.
    pub(crate) async fn flush_if_older_than(
        &self,
        max_age: std::time::Duration,
    ) -> Result<(), RunStoreError> {
        let stale = self.state.lock().await.last_flush.elapsed() >= max_age;
        if stale { self.flush().await } else { Ok(()) }
    }
}

type Key = (String, String);

fn key(scope: &Option<String>, id: &str) -> Key {
    (scope.clone().unwrap_or_default(), id.to_owned())
}

/// What a previous executor of this run finished, by `(scope, id)`.
#[derive(Debug, Default)]
pub(crate) struct Replay {
    pub last_sequence: u64,
    pub run_started: bool,
    /// The terminal entry, if the run already ended (kind and payload).
    pub terminal: Option<(JournalKind, Option<Value>)>,
    pub steps: HashMap<Key, Arc<Value>>,
    pub edges: HashMap<Key, bool>,
    pub retries: HashMap<Key, u32>,
    pub iterations_started: HashSet<(String, String, u64)>,
    pub iterations_completed: HashSet<(String, String, u64)>,
    /// `(scope, node, branch)` → Ok(output) / Err(message).
    pub branches: HashMap<(String, String, String), Result<Value, String>>,
    pub fanout_dispatched: HashSet<(String, String, String)>,
    pub subgraphs: HashMap<Key, String>,
    /// `(value scope, key)` → value.
    pub values: HashMap<Key, Value>,
    /// Wait token ids the run parked on (`wait.suspended`).
    pub waits_suspended: HashSet<String>,
    /// How each answered or cancelled wait ended, by token id (the first entry wins).
    pub waits: HashMap<String, WaitOutcome>,
}

impl Replay {
    pub(crate) fn build(entries: &[JournalEntry]) -> Replay {
        let mut r = Replay::default();
        let s = |p: &Option<Value>, f: &str| -> Option<String> {
            p.as_ref()?.get(f)?.as_str().map(str::to_owned)
        };
        for e in entries {
            r.last_sequence = r.last_sequence.max(e.sequence);
            let node = e.node_id.clone().unwrap_or_default();
            match e.kind {
                JournalKind::RunStarted => r.run_started = true,
                JournalKind::RunCompleted | JournalKind::RunFailed | JournalKind::RunCancelled => {
                    r.terminal = Some((e.kind, e.payload.clone()));
                }
                JournalKind::StepCompleted => {
                    let out = e.payload.as_ref().and_then(|p| p.get("output")).cloned();
                    r.steps
                        .insert(key(&e.scope, &node), Arc::new(out.unwrap_or(Value::Null)));
                }
                JournalKind::EdgeEvaluated => {
                    if let (Some(edge), Some(d)) = (
                        s(&e.payload, "edgeId"),
                        e.payload.as_ref().and_then(|p| p.get("decision")),
                    ) {
                        let taken = d.as_str() == Some("taken") || d.as_bool() == Some(true);
                        r.edges.insert(key(&e.scope, &edge), taken);
                    }
                }
                JournalKind::StepRetryScheduled => {
                    *r.retries.entry(key(&e.scope, &node)).or_default() += 1;
                }
                JournalKind::IterationStarted | JournalKind::IterationCompleted => {
                    if let Some(i) = e
                        .payload
                        .as_ref()
                        .and_then(|p| p.get("iteration"))
                        .and_then(Value::as_u64)
                    {
                        let k = (e.scope.clone().unwrap_or_default(), node, i);
                        if e.kind == JournalKind::IterationStarted {
                            r.iterations_started.insert(k);
                        } else {
                            r.iterations_completed.insert(k);
                        }
                    }
                }
                JournalKind::FanoutDispatched => {
                    if let Some(b) = s(&e.payload, "branchId") {
                        r.fanout_dispatched
                            .insert((e.scope.clone().unwrap_or_default(), node, b));
                    }
                }
                JournalKind::FanoutBranchCompleted | JournalKind::FanoutBranchFailed => {
                    if let Some(b) = s(&e.payload, "branchId") {
                        let v = if e.kind == JournalKind::FanoutBranchCompleted {
                            Ok(e.payload
                                .as_ref()
                                .and_then(|p| p.get("output"))
                                .cloned()
                                .unwrap_or(Value::Null))
                        } else {
                            Err(s(&e.payload, "message").unwrap_or_default())
                        };
                        r.branches
                            .insert((e.scope.clone().unwrap_or_default(), node, b), v);
                    }
                }
                JournalKind::SubgraphDispatched => {
                    if let Some(child) = s(&e.payload, "childRunId") {
                        r.subgraphs.insert(key(&e.scope, &node), child);
                    }
                }
                JournalKind::ValueRecorded => {
                    if let (Some(scope), Some(k)) = (s(&e.payload, "scope"), s(&e.payload, "key")) {
                        let v = e.payload.as_ref().and_then(|p| p.get("value")).cloned();
                        r.values.insert((scope, k), v.unwrap_or(Value::Null));
                    }
                }
                JournalKind::WaitSuspended => {
                    if let Some(t) = s(&e.payload, "tokenId") {
                        r.waits_suspended.insert(t);
                    }
                }
                JournalKind::WaitResumed | JournalKind::WaitCancelled => {
                    if let Some(t) = s(&e.payload, "tokenId") {
                        let outcome = if e.kind == JournalKind::WaitResumed {
                            let v = e.payload.as_ref().and_then(|p| p.get("value")).cloned();
                            WaitOutcome::Resumed(v.unwrap_or(Value::Null))
                        } else {
                            WaitOutcome::Cancelled {
                                reason: s(&e.payload, "reason").unwrap_or_default(),
                            }
                        };
                        r.waits.entry(t).or_insert(outcome);
                    }
                }
                _ => {}
            }
        }
        r
    }
}
