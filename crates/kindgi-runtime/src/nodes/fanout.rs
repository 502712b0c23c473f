//! Fanout nodes: branches run as sub-graphs, converged by the node's policy, finished
//! branches reused on resume.

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use kindgi_spec::flow::{FanoutConvergence, FanoutNode};
use serde_json::{Map, Value, json};

use crate::engine::ctx::{RunCtx, child_scope, issues_text, journal_failure};
use crate::engine::failure::Failure;
use crate::record::JournalKind;
use crate::store::payload;

/// How a fanout branch ended without an output: it waits (the run parks), or it failed.
enum BranchEnd {
    Suspended(Failure),
    Failed(String),
}

impl From<String> for BranchEnd {
    fn from(m: String) -> Self {
        BranchEnd::Failed(m)
    }
}

impl RunCtx {
    async fn run_branch(
        &self,
        node: &FanoutNode,
        scope: &str,
        branch: usize,
        input: Value,
    ) -> Result<Result<Value, String>, Failure> {
        let b = &node.branches[branch];
        let key = (scope.to_owned(), node.id.clone(), b.branch_id.clone());
        if let Some(done) = self.replay.branches.get(&key) {
            return Ok(done.clone());
        }
        match self.branch_work(node, scope, branch, input).await {
            Err(BranchEnd::Suspended(f)) => Err(f),
            Err(BranchEnd::Failed(m)) => Ok(Err(m)),
            Ok(v) => Ok(Ok(v)),
        }
    }

    async fn branch_work(
        &self,
        node: &FanoutNode,
        scope: &str,
        branch: usize,
        input: Value,
    ) -> Result<Value, BranchEnd> {
        let b = &node.branches[branch];
        let key = (scope.to_owned(), node.id.clone(), b.branch_id.clone());
        let write = |kind, p| self.journal.write(kind, Some(&node.id), scope, Some(p));
        if !self.replay.fanout_dispatched.contains(&key) {
            write(
                JournalKind::FanoutDispatched,
                payload([
                    ("branchId", json!(b.branch_id)),
                    ("handler", json!(b.handler)),
                ]),
            )
            .await
            .map_err(|e| journal_failure(e).message)?;
        }
        self.journal
            .flush()
            .await
            .map_err(|e| journal_failure(e).message)?;
        let branch_scope = child_scope(scope, &format!("{}@{}", node.id, b.branch_id));
        let (tool_id, range) = kindgi_core::ids::split_tool_ref(&b.handler);
        let tenant = &self.run.tenant_id;
        let is_tool = self
            .shared
            .resolver
            .exists(tenant, tool_id)
            .await
            .map_err(|e| e.to_string())?;
        let is_agent = !is_tool
            && self
                .shared
                .definitions
                .agent(tenant, &b.handler, None)
                .await
                .map_err(|e| e.to_string())?
                .is_some();
        let result = if is_agent {
            crate::agent::run_agent_step(self, &b.handler, None, &node.id, &branch_scope, input)
                .await
        } else {
            self.call_tool(tool_id, range, &node.id, &branch_scope, input)
                .await
        };
        let result = match result {
            Err(f) if f.is_suspended() => return Err(BranchEnd::Suspended(f)),
            r => r,
        };
        let result = result.map_err(|f| f.message).and_then(|out| {
            match self.flow.schema(&format!("node:{}.branch:{}", node.id, b.branch_id)) {
                Some(v) => v.validate(&out).map(|_| out).map_err(|issues| {
                    format!(
                        "output-validation-failed: branch \"{}\" output does not match its outputSchema: {}",
                        b.branch_id,
                        issues_text(&issues)
                    )
                }),
                None => Ok(out),
            }
        });
        let entry = match &result {
            Ok(out) => (
                JournalKind::FanoutBranchCompleted,
                payload([("branchId", json!(b.branch_id)), ("output", out.clone())]),
            ),
            Err(m) => (
                JournalKind::FanoutBranchFailed,
                payload([("branchId", json!(b.branch_id)), ("message", json!(m))]),
            ),
        };
        write(entry.0, entry.1)
            .await
            .map_err(|e| journal_failure(e).message)?;
        result.map_err(BranchEnd::Failed)
    }

    pub(super) async fn run_fanout(
        &self,
        node: &FanoutNode,
        scope: &str,
        input: Value,
    ) -> Result<Value, Failure> {
        let n = node.branches.len();
        let concurrency = node
            .concurrency
            .map(|c| c as usize)
            .unwrap_or(n)
            .clamp(1, n.max(1));
        let mut results: Vec<Option<Result<Value, String>>> = vec![None; n];
        let mut next = 0;
        let mut running = FuturesUnordered::new();
        let mut early: Option<Result<Value, Failure>> = None;
        loop {
            while running.len() < concurrency && next < n {
                let i = next;
                next += 1;
                let input = input.clone();
                running.push(async move { (i, self.run_branch(node, scope, i, input).await) });
            }
            let done = tokio::select! {
                _ = self.cancel.cancelled() => return Err(self.stop_failure()),
                d = running.next() => d,
            };
            let Some((i, r)) = done else { break };
            // A waiting branch parks the run; the others are resumed from the journal.
            let r = r?;
            let bid = &node.branches[i].branch_id;
            match (node.convergence, &r) {
                (FanoutConvergence::AllSucceed, Err(m)) => {
                    early = Some(Err(Failure::new(format!(
                        "fanout-failed: fanout \"{}\": branch \"{bid}\" failed: {m}",
                        node.id
                    ))));
                }
                (FanoutConvergence::AnySucceed, Ok(out)) => {
                    early = Some(Ok(json!({ "winnerBranchId": bid, "output": out })));
                }
                _ => {}
            }
            results[i] = Some(r);
            if early.is_some() {
                break;
            }
        }
        if early.is_some() && (!running.is_empty() || next < n) {
            let mut cancelled: Vec<&str> = Vec::new();
            for (i, r) in results.iter().enumerate() {
                if r.is_none() {
                    cancelled.push(&node.branches[i].branch_id);
                }
            }
            drop(running);
            self.journal
                .write(
                    JournalKind::FanoutCancelledSiblings,
                    Some(&node.id),
                    scope,
                    Some(payload([("branchIds", json!(cancelled))])),
                )
                .await
                .map_err(journal_failure)?;
        }
        let result = match early {
            Some(r) => r,
            None => match node.convergence {
                FanoutConvergence::AllSucceed => {
                    let mut m = Map::new();
                    for (b, r) in node.branches.iter().zip(results) {
                        if let Some(Ok(v)) = r {
                            m.insert(b.branch_id.clone(), v);
                        }
                    }
                    Ok(Value::Object(m))
                }
                FanoutConvergence::AnySucceed => {
                    let why: Vec<String> = node
                        .branches
                        .iter()
                        .zip(&results)
                        .map(|(b, r)| match r {
                            Some(Err(m)) => format!("{}: {m}", b.branch_id),
                            _ => format!("{}: did not finish", b.branch_id),
                        })
                        .collect();
                    Err(Failure::new(format!(
                        "fanout-failed: fanout \"{}\": every branch failed: {}",
                        node.id,
                        why.join("; ")
                    )))
                }
                FanoutConvergence::SettleAll => {
                    let mut m = Map::new();
                    for (b, r) in node.branches.iter().zip(results) {
                        let v = match r {
                            Some(Ok(v)) => json!({"status": "succeeded", "output": v}),
                            Some(Err(msg)) => {
                                json!({"status": "failed", "error": {"message": msg}})
                            }
                            None => {
                                json!({"status": "failed", "error": {"message": "did not finish"}})
                            }
                        };
                        m.insert(b.branch_id.clone(), v);
                    }
                    Ok(Value::Object(m))
                }
            },
        };
        let convergence = serde_json::to_value(node.convergence).unwrap_or(Value::Null);
        self.journal
            .write(
                JournalKind::FanoutConverged,
                Some(&node.id),
                scope,
                Some(payload([
                    ("convergence", convergence),
                    ("succeeded", json!(result.is_ok())),
                ])),
            )
            .await
            .map_err(journal_failure)?;
        result
    }
}
