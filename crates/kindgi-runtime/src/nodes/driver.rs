//! The graph driver: drives one graph (the flow's, or a loop body) from its journal to its
//! output, and each node with its edge policy (journal, lease, timeout, retries).
//!
//! Every state change is journaled before it is acted on, and a resumed run first rebuilds
//! what finished from the journal ([`crate::engine::journal::Replay`]): a node with
//! `step.completed` is not run again, a decided edge is not re-evaluated, a finished loop
//! iteration or fanout branch is reused, a recorded value (`value.recorded`, e.g. an agent's
//! model answer or tool result) is returned instead of being recomputed. A step that had
//! started but not finished when the process died runs again (at-least-once for in-flight
//! work, exactly-once for completed work).
//!
//! Nodes run concurrently within a run up to `maxParallelism`; loop bodies and fanout
//! branches are sub-graphs driven by the same code with their own journal scope
//! (`<loopId>#<iteration>`, nested with `/`).
//!
//! The work of each node kind is in its own file beside this one ([`super::leaf`],
//! [`super::loop_node`], [`super::fanout`], [`super::subflow`]), which the driver calls. A
//! node kind that needs a sub-graph or a child run driven asks through [`Drive`], the port
//! this file implements, so no node kind imports the driver. A run's start and end are
//! [`super::run`]'s.

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use kindgi_spec::flow::{EdgePolicy, LeafKind, Node};
use kindgi_tools::BoxFuture;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::engine::ctx::{RunCtx, issues_text, journal_failure};
use crate::engine::expr::{NodeOutputs, eval, resolve_mapping};
use crate::engine::failure::{Failure, FailureKind};
use crate::engine::graph::{Drive, EdgeRef, GraphRef, GraphResult};
use crate::engine::scheduler::{SchedEdge, SchedGraph, SchedState};
use crate::nodes::leaf::tool_ref;
use crate::nodes::run::execute_run;
use crate::record::{JournalKind, RunRecord};
use crate::store::payload;

/// How stale the stored journal may get while only read-only steps run.
const READ_ONLY_FLUSH_INTERVAL: Duration = Duration::from_millis(100);

/// How long a stopping graph waits for its in-flight nodes to journal how they ended. Each
/// leaf step gives up its work at once when the run stops, so this only bounds a journal
/// write that hangs.
const STOP_SETTLE: Duration = Duration::from_secs(5);

/// A node that finished: its id and output (or why not).
type NodeDone = (String, Result<Arc<Value>, Failure>);

impl RunCtx {
    /// Drives the flow's own graph; its output is the `output` mapping (checked against
    /// `output.schema`) or, without one, what the end sentinel received.
    pub(super) async fn run_top(&self) -> Result<Value, Failure> {
        let flow = &self.flow.flow;
        let input = Arc::new(self.run.input.clone());
        let result = self
            .drive_graph(
                GraphRef::Top(flow),
                String::new(),
                input,
                NodeOutputs::new(),
            )
            .await?;
        match &flow.output {
            None => Ok(Arc::unwrap_or_clone(result.output)),
            Some(out) => {
                let value = resolve_mapping(&out.mapping, &self.env(&result.local));
                if let Some(v) = self.flow.schema("output.schema")
                    && let Err(issues) = v.validate(&value)
                {
                    return Err(Failure::fatal(format!(
                        "output-validation-failed: the run's output does not match flow \"{}\" output.schema: {}",
                        flow.id,
                        issues_text(&issues)
                    )));
                }
                Ok(value)
            }
        }
    }

    /// Drives one graph to completion.
    fn drive_graph<'a>(
        &'a self,
        graph: GraphRef<'a>,
        scope: String,
        input: Arc<Value>,
        outer: NodeOutputs,
    ) -> BoxFuture<'a, Result<GraphResult, Failure>> {
        Box::pin(async move {
            let nodes: HashMap<&str, &Node> = graph.nodes().iter().map(|n| (n.id(), n)).collect();
            let edges = graph.edges();
            let (start, end) = graph.sentinels();
            let mut incoming: HashMap<&str, Vec<EdgeRef<'a>>> = HashMap::new();
            for e in &edges {
                incoming.entry(e.to).or_default().push(*e);
            }
            // Policy and priority apply only to a node's sole incoming edge.
            let sole_policy = |id: &str| -> Option<&'a EdgePolicy> {
                match incoming.get(id).map(Vec::as_slice) {
                    Some([only]) => only.policy,
                    _ => None,
                }
            };
            let priority: HashMap<String, i32> = nodes
                .keys()
                .filter_map(|id| {
                    sole_policy(id)
                        .and_then(|p| p.priority)
                        .map(|p| ((*id).to_owned(), p))
                })
                .collect();
            let sched = SchedGraph::new(
                graph.nodes().iter().map(|n| n.id().to_owned()).collect(),
                edges
                    .iter()
                    .map(|e| SchedEdge {
                        id: e.id.to_owned(),
                        from: e.from.to_owned(),
                        to: e.to.to_owned(),
                        has_when: e.when.is_some(),
                    })
                    .collect(),
                start,
                end,
                priority,
            );
            let mut st = SchedState::default();
            let mut visible = outer;
            let mut local = NodeOutputs::new();
            for id in nodes.keys() {
                if let Some(out) = self.replay.steps.get(&(scope.clone(), (*id).to_owned())) {
                    st.completed.insert((*id).to_owned());
                    visible.insert((*id).to_owned(), out.clone());
                    local.insert((*id).to_owned(), out.clone());
                }
            }
            for e in &edges {
                if let Some(d) = self.replay.edges.get(&(scope.clone(), e.id.to_owned())) {
                    st.decisions.insert(e.id.to_owned(), *d);
                }
            }
            let mut running: FuturesUnordered<BoxFuture<'a, NodeDone>> = FuturesUnordered::new();
            loop {
                if self.cancel.is_cancelled() {
                    settle(&mut running).await;
                    return Err(self.stop_failure());
                }
                for i in sched.edges_to_evaluate(&st) {
                    let e = &edges[i];
                    let taken = match e.when {
                        None => true,
                        Some(w) => eval(w, &self.env(&visible)),
                    };
                    self.journal
                        .write(
                            JournalKind::EdgeEvaluated,
                            None,
                            &scope,
                            Some(payload([
                                ("edgeId", json!(e.id)),
                                ("decision", json!(if taken { "taken" } else { "not-taken" })),
                            ])),
                        )
                        .await
                        .map_err(journal_failure)?;
                    st.decisions.insert(e.id.to_owned(), taken);
                }
                let tick = sched.tick(&st);
                if tick.done {
                    break;
                }
                let room = self.max_parallelism.saturating_sub(st.in_flight.len());
                for id in tick.ready.into_iter().take(room) {
                    let Some(node) = nodes.get(id.as_str()).copied() else {
                        continue;
                    };
                    let node_input = self.node_input(node, &incoming, start, &input, &visible);
                    st.in_flight.insert(id.clone());
                    let policy = sole_policy(&id);
                    let scope = scope.clone();
                    let visible = visible.clone();
                    running.push(Box::pin(async move {
                        let r = self
                            .run_node(node, scope, node_input, policy, visible)
                            .await;
                        (id, r)
                    }));
                }
                if running.is_empty() {
                    return Err(Failure::fatal(format!(
                        "flow-stalled: flow \"{}\" cannot go on: no node is ready and none is running (scope \"{scope}\")",
                        self.flow.flow.id
                    )));
                }
                let next = tokio::select! {
                    _ = self.cancel.cancelled() => {
                        // Let the in-flight nodes journal that they were cancelled.
                        settle(&mut running).await;
                        return Err(self.stop_failure());
                    }
                    next = running.next() => next,
                };
                let Some((id, result)) = next else { continue };
                st.in_flight.remove(&id);
                let out = match result {
                    Ok(out) => out,
                    Err(f) if f.is_suspended() => {
                        return Err(self.drain_suspended(&mut running, f).await);
                    }
                    Err(f) => {
                        if f.is_stop() {
                            settle(&mut running).await;
                        }
                        return Err(f);
                    }
                };
                st.completed.insert(id.clone());
                visible.insert(id.clone(), out.clone());
                local.insert(id, out);
            }
            let output = match sched.taken_end_edges(&st).first() {
                Some(e) if e.from == start => input.clone(),
                Some(e) => local
                    .get(&e.from)
                    .cloned()
                    .unwrap_or_else(|| Arc::new(Value::Null)),
                None => Arc::new(Value::Null),
            };
            Ok(GraphResult { output, local })
        })
    }

    /// A graph one of whose nodes waits starts nothing more but lets its in-flight nodes
    /// finish (each journals how it ended, so a resumed run reuses them). The run parks
    /// unless one of them failed for real, which fails it.
    async fn drain_suspended<'a>(
        &self,
        running: &mut FuturesUnordered<BoxFuture<'a, NodeDone>>,
        suspended: Failure,
    ) -> Failure {
        let mut outcome = suspended;
        loop {
            let next = tokio::select! {
                _ = self.cancel.cancelled() => {
                    settle(running).await;
                    return self.stop_failure();
                }
                next = running.next() => next,
            };
            match next {
                None => return outcome,
                Some((_, Err(f))) if !f.is_suspended() && outcome.is_suspended() => outcome = f,
                Some(_) => {}
            }
        }
    }

    /// A node's input: its mapping, else the single upstream's output (or the graph input
    /// after the entry sentinel), else null for a fan-in.
    fn node_input(
        &self,
        node: &Node,
        incoming: &HashMap<&str, Vec<EdgeRef<'_>>>,
        start: &str,
        input: &Arc<Value>,
        visible: &NodeOutputs,
    ) -> Value {
        let mapping = match node {
            Node::Leaf(l) => l.input_mapping.as_ref(),
            _ => None,
        };
        if let Some(m) = mapping {
            return resolve_mapping(m, &self.env(visible));
        }
        match incoming.get(node.id()).map(Vec::as_slice) {
            Some([only]) if only.from == start => (**input).clone(),
            Some([only]) => visible
                .get(only.from)
                .map(|v| (**v).clone())
                .unwrap_or(Value::Null),
            _ => Value::Null,
        }
    }

    /// Runs one node with its edge policy: journal, lease, timeout, retries.
    async fn run_node(
        &self,
        node: &Node,
        scope: String,
        input: Value,
        policy: Option<&EdgePolicy>,
        visible: NodeOutputs,
    ) -> Result<Arc<Value>, Failure> {
        let id = node.id();
        let retry = policy.and_then(|p| p.retry.as_ref());
        let max_attempts = retry.map(|r| r.max_attempts.max(1)).unwrap_or(1);
        let mut attempt = 1 + self
            .replay
            .retries
            .get(&(scope.clone(), id.to_owned()))
            .copied()
            .unwrap_or(0);
        loop {
            let mut started = payload([("input", input.clone())]);
            if attempt > 1
                && let Value::Object(m) = &mut started
            {
                m.insert("attempt".into(), json!(attempt));
            }
            self.journal
                .write(JournalKind::StepStarted, Some(id), &scope, Some(started))
                .await
                .map_err(journal_failure)?;
            if self.is_read_only_step(node) {
                self.journal
                    .flush_if_older_than(READ_ONLY_FLUSH_INTERVAL)
                    .await
                    .map_err(journal_failure)?;
            } else {
                self.journal.flush().await.map_err(journal_failure)?;
            }
            let _lease = match policy.and_then(|p| p.concurrency_key.as_deref()) {
                Some(key) => Some(self.acquire_lease(key, id, &scope).await?),
                None => None,
            };
            let began = Instant::now();
            let work = self.node_work(node, &scope, input.clone(), visible.clone());
            let work = self.abandoned_on_stop(node, work);
            let result = match policy.and_then(|p| p.timeout_ms) {
                Some(limit) => match tokio::time::timeout(Duration::from_millis(limit), work).await
                {
                    Ok(r) => r,
                    Err(_) => {
                        let elapsed = began.elapsed().as_millis() as u64;
                        let mut extra = Map::new();
                        extra.insert("reason".into(), json!("timeout"));
                        extra.insert("limitMs".into(), json!(limit));
                        extra.insert("elapsedMs".into(), json!(elapsed));
                        Err(Failure::new(format!(
                            "step-timeout: node \"{id}\" did not finish within {limit} ms (edge policy timeoutMs)"
                        ))
                        .with_extra(extra))
                    }
                },
                None => work.await,
            };
            drop(_lease);
            match result {
                Ok(output) => {
                    self.journal
                        .write(
                            JournalKind::StepCompleted,
                            Some(id),
                            &scope,
                            Some(payload([("output", output.clone())])),
                        )
                        .await
                        .map_err(journal_failure)?;
                    return Ok(Arc::new(output));
                }
                Err(f) => match f.kind {
                    FailureKind::Cancelled => {
                        self.journal_cancelled_step(id, &scope).await?;
                        return Err(f);
                    }
                    // The process is stopping: the step runs again when the run is recovered.
                    FailureKind::Interrupted => return Err(f),
                    // Not a failure of the step: it runs again when the wait is answered.
                    FailureKind::Suspended { .. } => return Err(f),
                    FailureKind::Retryable if attempt < max_attempts => {
                        let delay = retry.map(|r| r.delay_before_retry(attempt)).unwrap_or(0);
                        self.journal
                            .write(
                                JournalKind::StepRetryScheduled,
                                Some(id),
                                &scope,
                                Some(payload([
                                    ("attempt", json!(attempt)),
                                    ("nextAttempt", json!(attempt + 1)),
                                    ("delayMs", json!(delay)),
                                    ("message", json!(f.message)),
                                ])),
                            )
                            .await
                            .map_err(journal_failure)?;
                        self.journal.flush().await.map_err(journal_failure)?;
                        tokio::select! {
                            _ = self.cancel.cancelled() => return Err(self.stop_failure()),
                            _ = tokio::time::sleep(Duration::from_millis(delay)) => {}
                        }
                        attempt += 1;
                        continue;
                    }
                    // Out of attempts, or no retry can help.
                    FailureKind::Retryable | FailureKind::Fatal | FailureKind::Lost => {
                        self.journal_failed_step(id, &scope, &f).await?;
                        return Err(f);
                    }
                },
            }
        }
    }

    /// `step.failed {message, …extra}` for a step that failed for good.
    async fn journal_failed_step(&self, id: &str, scope: &str, f: &Failure) -> Result<(), Failure> {
        let mut p = Map::new();
        p.insert("message".into(), json!(f.message));
        if let Some(extra) = &f.extra {
            p.extend(extra.clone());
        }
        self.journal
            .write(
                JournalKind::StepFailed,
                Some(id),
                scope,
                Some(Value::Object(p)),
            )
            .await
            .map_err(journal_failure)
    }

    /// A leaf step's work, given up the moment the run stops: an in-flight call is abandoned
    /// (its future dropped, so a pack call's connection closes and the service sees the
    /// caller go) and the step ends cancelled — not with whatever error the abandoned call
    /// would have reported. Loops, fanouts and sub-flows stop their own inner steps.
    fn abandoned_on_stop<'a>(
        &'a self,
        node: &Node,
        work: BoxFuture<'a, Result<Value, Failure>>,
    ) -> BoxFuture<'a, Result<Value, Failure>> {
        if !matches!(node, Node::Leaf(_)) {
            return work;
        }
        Box::pin(async move {
            tokio::select! {
                // Biased: when the stop and the call's own reaction to it are both ready,
                // the stop is what happened.
                biased;
                _ = self.cancel.cancelled() => Err(self.stop_failure()),
                r = work => match r {
                    Err(f) if self.cancel.is_cancelled() && !f.is_stop() => Err(self.stop_failure()),
                    r => r,
                },
            }
        })
    }

    /// `step.failed` for a step the run's cancellation stopped (`reason: "cancelled"`).
    async fn journal_cancelled_step(&self, id: &str, scope: &str) -> Result<(), Failure> {
        let mut p = Map::new();
        p.insert(
            "message".into(),
            json!(format!(
                "cancelled: the run was cancelled while node \"{id}\" was in flight; its work was abandoned"
            )),
        );
        p.insert("reason".into(), json!("cancelled"));
        self.journal
            .write(
                JournalKind::StepFailed,
                Some(id),
                scope,
                Some(Value::Object(p)),
            )
            .await
            .map_err(journal_failure)
    }

    /// A tool step whose tool may run in a dry run: re-running it is harmless, so its start
    /// does not force the journal to disk.
    fn is_read_only_step(&self, node: &Node) -> bool {
        match node {
            // Only the catalogue is asked (no waiting here); a registry tool counts as not
            // read-only, which only makes its start durable sooner.
            Node::Leaf(l) if l.kind == LeafKind::Tool => self
                .shared
                .resolver
                .memory_get(&self.run.tenant_id, tool_ref(l).0)
                .is_some_and(|t| t.runs_in_dry_run()),
            _ => false,
        }
    }

    async fn acquire_lease(
        &self,
        key: &str,
        node: &str,
        scope: &str,
    ) -> Result<tokio::sync::OwnedSemaphorePermit, Failure> {
        let sem = self.shared.leases.semaphore(&self.run.tenant_id, key);
        if let Ok(p) = sem.clone().try_acquire_owned() {
            return Ok(p);
        }
        self.journal
            .write(
                JournalKind::StepConcurrencyDeferred,
                Some(node),
                scope,
                Some(payload([("concurrencyKey", json!(key))])),
            )
            .await
            .map_err(journal_failure)?;
        tokio::select! {
            _ = self.cancel.cancelled() => Err(self.stop_failure()),
            p = sem.acquire_owned() => p.map_err(|_| Failure::fatal("concurrency lease closed")),
        }
    }

    /// The work of a node, by kind.
    fn node_work<'a>(
        &'a self,
        node: &'a Node,
        scope: &'a str,
        input: Value,
        visible: NodeOutputs,
    ) -> BoxFuture<'a, Result<Value, Failure>> {
        Box::pin(async move {
            match node {
                Node::Leaf(leaf) => self.run_leaf(leaf, scope, input).await,
                Node::Loop(l) => self.run_loop(self, l, scope, input, visible).await,
                Node::Fanout(f) => self.run_fanout(f, scope, input).await,
                Node::Subgraph(s) => self.run_subgraph(self, s, scope, visible).await,
            }
        })
    }
}

/// Waits (at most [`STOP_SETTLE`]) for a stopping graph's in-flight nodes to finish
/// journaling how they ended.
async fn settle<'a>(running: &mut FuturesUnordered<BoxFuture<'a, NodeDone>>) {
    let drain = async { while running.next().await.is_some() {} };
    if tokio::time::timeout(STOP_SETTLE, drain).await.is_err() {
        tracing::warn!("in-flight steps did not settle within {STOP_SETTLE:?} of the run's stop");
    }
}

/// The port node kinds drive sub-graphs and child runs through.
impl Drive for RunCtx {
    fn run_graph<'a>(
        &'a self,
        graph: GraphRef<'a>,
        scope: String,
        input: Arc<Value>,
        outer: NodeOutputs,
    ) -> BoxFuture<'a, Result<GraphResult, Failure>> {
        self.drive_graph(graph, scope, input, outer)
    }

    fn run_child(&self, child: RunRecord) -> BoxFuture<'_, RunRecord> {
        let shared = self.shared.clone();
        let stop = self.stop.child();
        Box::pin(execute_run(shared, child, self.depth + 1, stop, None))
    }
}
