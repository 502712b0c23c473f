//! Sub-flow nodes: a child run per dispatch, its wait parking the parent, its end resuming it.

use kindgi_spec::flow::{SubflowNode, SubgraphConvergence};
use serde_json::{Map, Value, json};

use crate::engine::ctx::{RunCtx, issues_text, journal_failure};
use crate::engine::expr::{NodeOutputs, resolve_mapping};
use crate::engine::failure::Failure;
use crate::engine::graph::Drive;
use crate::record::{JournalKind, RunRecord, RunStatus, format_millis, now_millis};
use crate::store::payload;

impl RunCtx {
    pub(crate) async fn run_subgraph(
        &self,
        drive: &dyn Drive,
        node: &SubflowNode,
        scope: &str,
        visible: NodeOutputs,
    ) -> Result<Value, Failure> {
        let id = &node.id;
        let fref = &node.flow_ref;
        let max_depth = self.shared.config.max_subflow_depth;
        if self.depth + 1 > max_depth {
            return Err(Failure::fatal(format!(
                "subflow-depth-exceeded: subgraph \"{id}\" would nest flow \"{}\" deeper than {max_depth} levels",
                fref.flow_id
            )));
        }
        let child_input = resolve_mapping(&node.input_mapping, &self.env(&visible));
        let key = (scope.to_owned(), id.clone());
        let child = match self.replay.subgraphs.get(&key) {
            Some(child_id) => match self.shared.store.get_run(child_id).await {
                Ok(Some(r)) => Some(r),
                Ok(None) => None,
                Err(e) => return Err(Failure::fatal(format!("journal-unavailable: {e}"))),
            },
            None => None,
        };
        let child = match child {
            Some(c) => c,
            None => {
                let found = self
                    .shared
                    .definitions
                    .flow(&self.run.tenant_id, &fref.flow_id, Some(&fref.version))
                    .await
                    .map_err(|e| Failure::fatal(e.to_string()))?;
                if found.is_none() {
                    return Err(Failure::fatal(format!(
                        "flow-not-found: subgraph \"{id}\" references flow \"{}\" version {}, which is not registered",
                        fref.flow_id, fref.version
                    )));
                }
                let now = format_millis(now_millis());
                let rec = RunRecord {
                    id: uuid::Uuid::new_v4().to_string(),
                    tenant_id: self.run.tenant_id.clone(),
                    flow_id: fref.flow_id.clone(),
                    flow_version: fref.version.clone(),
                    status: RunStatus::Pending,
                    input: child_input,
                    output: None,
                    failure_message: None,
                    dry_run: self.run.dry_run,
                    created_at: now.clone(),
                    updated_at: now,
                    completed_at: None,
                    parent_run_id: Some(self.run.id.clone()),
                    parent_node_id: Some(id.clone()),
                    meta: self.run.meta.for_child(),
                };
                self.shared
                    .store
                    .insert_run(&rec)
                    .await
                    .map_err(|e| Failure::fatal(format!("journal-unavailable: {e}")))?;
                self.journal
                    .write(
                        JournalKind::SubgraphDispatched,
                        Some(id),
                        scope,
                        Some(payload([
                            ("childRunId", json!(rec.id)),
                            ("flowId", json!(fref.flow_id)),
                            ("version", json!(fref.version)),
                        ])),
                    )
                    .await
                    .map_err(journal_failure)?;
                self.journal.flush().await.map_err(journal_failure)?;
                rec
            }
        };
        let child_id = child.id.clone();
        let done = if child.status.is_terminal() {
            child
        } else {
            drive.run_child(child).await
        };
        self.journal_child_wait(id, scope, &done).await?;
        match done.status {
            RunStatus::Completed => {
                let output = done.output.unwrap_or(Value::Null);
                if let Some(v) = self.flow.schema(&format!("node:{id}.outputSchema"))
                    && let Err(issues) = v.validate(&output)
                {
                    let message = format!(
                        "subgraph-failed: subgraph \"{id}\": child run {child_id} output does not match outputSchema: {}",
                        issues_text(&issues)
                    );
                    return self.subgraph_failed(node, scope, &child_id, message).await;
                }
                self.journal
                    .write(
                        JournalKind::SubgraphCompleted,
                        Some(id),
                        scope,
                        Some(payload([
                            ("childRunId", json!(child_id)),
                            ("output", output.clone()),
                        ])),
                    )
                    .await
                    .map_err(journal_failure)?;
                Ok(match node.convergence {
                    SubgraphConvergence::SuccessOnly => output,
                    SubgraphConvergence::SettleAll => {
                        json!({"status": "succeeded", "output": output})
                    }
                })
            }
            RunStatus::Cancelled => {
                self.journal
                    .write(
                        JournalKind::SubgraphCancelled,
                        Some(id),
                        scope,
                        Some(payload([("childRunId", json!(child_id))])),
                    )
                    .await
                    .map_err(journal_failure)?;
                Err(Failure::cancelled())
            }
            // Interrupted with this run (the process is stopping): resumed with it.
            RunStatus::Pending | RunStatus::Running | RunStatus::Suspended
                if self.cancel.is_cancelled() =>
            {
                Err(self.stop_failure())
            }
            // The child waits: so does this run; an answer resumes the top-level run, which
            // drives the child on from its journal.
            RunStatus::Suspended => Err(Failure::suspended(&format!("child run {child_id}"))),
            _ => {
                let message = format!(
                    "subgraph-failed: subgraph \"{id}\": child run {child_id} of flow \"{}\" failed: {}",
                    fref.flow_id,
                    done.failure_message.unwrap_or_default()
                );
                self.subgraph_failed(node, scope, &child_id, message).await
            }
        }
    }

    /// A child run that parks parks this run too, on token `child:<childRunId>:<sequence>`
    /// (`wait.suspended`, once); when the child ends after that, the wait is resumed with
    /// `{childRunId, status}`.
    async fn journal_child_wait(
        &self,
        node_id: &str,
        scope: &str,
        child: &RunRecord,
    ) -> Result<(), Failure> {
        let prefix = format!("child:{}:", child.id);
        let open = self
            .replay
            .waits_suspended
            .iter()
            .find(|t| t.starts_with(&prefix) && !self.replay.waits.contains_key(*t));
        if child.status == RunStatus::Suspended {
            if self.cancel.is_cancelled()
                || self
                    .replay
                    .waits_suspended
                    .iter()
                    .any(|t| t.starts_with(&prefix))
            {
                return Ok(());
            }
            let journal = self
                .shared
                .store
                .journal(&child.id, None, None)
                .await
                .map_err(journal_failure)?;
            let seq = journal.last().map_or(0, |e| e.sequence);
            let mut p = Map::new();
            p.insert("nodeId".into(), json!(node_id));
            p.insert("tokenId".into(), json!(format!("{prefix}{seq}")));
            return self
                .journal
                .write(
                    JournalKind::WaitSuspended,
                    Some(node_id),
                    scope,
                    Some(Value::Object(p)),
                )
                .await
                .map_err(journal_failure);
        }
        match open {
            Some(token) if child.status.is_terminal() => self
                .journal
                .write(
                    JournalKind::WaitResumed,
                    Some(node_id),
                    scope,
                    Some(payload([
                        ("tokenId", json!(token)),
                        (
                            "value",
                            json!({"childRunId": child.id, "status": child.status}),
                        ),
                    ])),
                )
                .await
                .map_err(journal_failure),
            _ => Ok(()),
        }
    }

    async fn subgraph_failed(
        &self,
        node: &SubflowNode,
        scope: &str,
        child_id: &str,
        message: String,
    ) -> Result<Value, Failure> {
        self.journal
            .write(
                JournalKind::SubgraphFailed,
                Some(&node.id),
                scope,
                Some(payload([
                    ("childRunId", json!(child_id)),
                    ("message", json!(message)),
                ])),
            )
            .await
            .map_err(journal_failure)?;
        match node.convergence {
            SubgraphConvergence::SuccessOnly => Err(Failure::fatal(message)),
            SubgraphConvergence::SettleAll => {
                Ok(json!({"status": "failed", "error": {"message": message}}))
            }
        }
    }
}
