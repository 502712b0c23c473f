//! Starting runs: a flow's run or an agent turn, checked before it exists, stored, then
//! spawned on its own task.

use serde_json::Value;
use tokio::sync::watch;

use super::{Runtime, RuntimeError};
use crate::engine::ctx::issues_text;
use crate::engine::shared::{ActiveRun, agent_turn_flow};
use crate::engine::stop::RunStop;
use crate::left_out::LeftOutKind;
use crate::nodes::execute_run;
use crate::record::{
    AGENT_TURN_FLOW_ID, RunAgent, RunMeta, RunRecord, RunStatus, format_millis, now_millis,
};

/// How to start a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunOptions {
    /// Run only read-only tools; skip model calls (seed 004).
    pub dry_run: bool,
    /// Return when the run has ended (or is suspended) instead of right away.
    pub wait: bool,
    /// Overrides the flow's `maxParallelism`.
    pub max_parallelism: Option<u32>,
    /// Default [`crate::runtime::DEFAULT_TENANT`].
    pub tenant_id: Option<String>,
    /// Recorded on the run as given (project, segments, trace, `startedBy`, trigger…);
    /// `agent` is set by [`Runtime::start_agent_turn`].
    pub meta: RunMeta,
    /// The run idempotency key (platform-api.md §1.5: `fire:<fireId>` for a trigger's fire;
    /// the reference allows 255 characters): a second start under the same key in the
    /// tenant starts nothing and answers the first run. The key fixes the run's id
    /// ([`run_id_for_key`]), so the run store's primary key is what makes it one run, across
    /// replicas and retries.
    pub idempotency_key: Option<String>,
}

/// The namespace of [`run_id_for_key`]'s UUIDv5s.
const RUN_KEY_NAMESPACE: uuid::Uuid =
    uuid::Uuid::from_u128(0x6b1d_4f0e_93a2_4c57_8e1b_2f64_d0c3_a915);

/// The id of the run `tenant` starts under idempotency key `key`: a UUIDv5 of both, so
/// every start under the key names the same run.
pub fn run_id_for_key(tenant: &str, key: &str) -> String {
    uuid::Uuid::new_v5(&RUN_KEY_NAMESPACE, format!("{tenant}\n{key}").as_bytes()).to_string()
}

impl Runtime {
    /// The flow or agent `id` a run names is not registered: why, when its source left it
    /// out (issue 21: a run that needs a left-out entry names the real reason).
    fn not_found(
        &self,
        tenant: &str,
        kind: LeftOutKind,
        id: &str,
        version: Option<&str>,
    ) -> RuntimeError {
        let version = version.map(str::to_owned);
        if let Some(why) = self.shared.left_out.why(tenant, kind, id) {
            return RuntimeError::LeftOut {
                kind,
                id: id.to_owned(),
                version,
                why,
            };
        }
        match kind {
            LeftOutKind::Agent => RuntimeError::AgentNotFound {
                agent_id: id.to_owned(),
                version,
            },
            _ => RuntimeError::FlowNotFound {
                flow_id: id.to_owned(),
                version,
            },
        }
    }

    /// Starts a run of `flow_id` (the highest version when `version` is `None`).
    pub async fn start_run(
        &self,
        flow_id: &str,
        version: Option<&str>,
        mut input: Value,
        options: RunOptions,
    ) -> Result<RunRecord, RuntimeError> {
        let tenant = options
            .tenant_id
            .clone()
            .unwrap_or_else(|| self.shared.config.default_tenant.clone());
        let flow = self
            .shared
            .definitions
            .flow(&tenant, flow_id, version)
            .await?
            .ok_or_else(|| self.not_found(&tenant, LeftOutKind::Flow, flow_id, version))?;
        self.check_bindings(&tenant, &flow).await?;
        if let Some(v) = flow.schema("input")
            && let Err(issues) = v.validate_in_place(&mut input)
        {
            return Err(RuntimeError::InvalidInput {
                flow_id: flow_id.to_owned(),
                details: issues_text(&issues),
                issues: issues.into(),
            });
        }
        let run = self.new_run(&flow.flow.id, &flow.flow.version, input, &options);
        self.launch(run, &options).await
    }

    /// Starts one agent turn as a run: `flowId` [`AGENT_TURN_FLOW_ID`], `flowVersion` the
    /// agent's version, `agent {id, version, via}` on the run; the turn itself is a one-node
    /// flow (see [`agent_turn_flow`]) so it executes, journals, cancels and recovers as any
    /// run does. `version` must be the agent's version when given (`via: "explicit"`); absent,
    /// the agent as registered serves (`via: "latest"`).
    pub async fn start_agent_turn(
        &self,
        agent_id: &str,
        version: Option<&str>,
        input: Value,
        options: RunOptions,
    ) -> Result<RunRecord, RuntimeError> {
        let tenant = options
            .tenant_id
            .clone()
            .unwrap_or_else(|| self.shared.config.default_tenant.clone());
        let not_found = || self.not_found(&tenant, LeftOutKind::Agent, agent_id, version);
        let agent = self
            .shared
            .definitions
            .agent(&tenant, agent_id, version)
            .await?
            .ok_or_else(not_found)?;
        let flow = agent_turn_flow(agent_id, &agent.version).map_err(|_| not_found())?;
        self.check_bindings(&tenant, &flow).await?;
        let mut run = self.new_run(AGENT_TURN_FLOW_ID, &agent.version, input, &options);
        run.meta.agent = Some(RunAgent {
            id: agent.id.clone(),
            version: agent.version.clone(),
            // The turn's conversation: the one the input names, else a new one of its own
            // (`OA:Run.agent.conversationId` is always there).
            conversation_id: Some(
                run.input
                    .get("conversationId")
                    .and_then(Value::as_str)
                    .map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_owned),
            ),
            via: Some(
                if version.is_some() {
                    "explicit"
                } else {
                    "latest"
                }
                .into(),
            ),
        });
        self.launch(run, &options).await
    }

    /// A new `pending` run record of `flow_id@flow_version`.
    fn new_run(
        &self,
        flow_id: &str,
        flow_version: &str,
        input: Value,
        options: &RunOptions,
    ) -> RunRecord {
        let now = format_millis(now_millis());
        let tenant = options
            .tenant_id
            .clone()
            .unwrap_or_else(|| self.shared.config.default_tenant.clone());
        let id = match &options.idempotency_key {
            Some(key) => run_id_for_key(&tenant, key),
            None => uuid::Uuid::new_v4().to_string(),
        };
        RunRecord {
            id,
            tenant_id: tenant,
            flow_id: flow_id.to_owned(),
            flow_version: flow_version.to_owned(),
            status: RunStatus::Pending,
            input,
            output: None,
            failure_message: None,
            dry_run: options.dry_run,
            created_at: now.clone(),
            updated_at: now,
            completed_at: None,
            parent_run_id: None,
            parent_node_id: None,
            meta: RunMeta {
                agent: None,
                ..options.meta.clone()
            },
        }
    }

    /// Stores a new run and starts executing it (waiting for it when `options.wait`). Under
    /// an idempotency key, a run already stored under it is answered instead, started by
    /// nobody again.
    async fn launch(
        &self,
        run: RunRecord,
        options: &RunOptions,
    ) -> Result<RunRecord, RuntimeError> {
        let id = run.id.clone();
        if let Err(e) = self.shared.store.insert_run(&run).await {
            // Under a key the run's id is the key's: a refused insert is an earlier (or a
            // racing) start under it, and its run is the answer. Inserting first keeps the
            // usual start, the first, to one write.
            if options.idempotency_key.is_some()
                && let Some(first) = self.keyed_run(&run).await?
            {
                return self.answer_existing(first, options).await;
            }
            return Err(e.into());
        }
        self.spawn(run.clone(), options.max_parallelism);
        if options.wait {
            return self.wait_for_run(&id).await;
        }
        Ok(run)
    }

    /// The run already stored with `run`'s (key-derived) id in its tenant.
    async fn keyed_run(&self, run: &RunRecord) -> Result<Option<RunRecord>, RuntimeError> {
        Ok(self
            .shared
            .store
            .get_run(&run.id)
            .await?
            .filter(|r| r.tenant_id == run.tenant_id))
    }

    /// The first run of an idempotency key, as a start answers it.
    async fn answer_existing(
        &self,
        first: RunRecord,
        options: &RunOptions,
    ) -> Result<RunRecord, RuntimeError> {
        tracing::info!(run_id = %first.id, "run start deduplicated by its idempotency key");
        if options.wait {
            return self.wait_for_run(&first.id).await;
        }
        Ok(first)
    }

    pub(crate) fn spawn(&self, run: RunRecord, max_parallelism: Option<u32>) {
        // A run started after `shutdown` stops at once, left `pending` for the next start.
        let stop = RunStop::new(&self.shared.shutdown);
        let (tx, rx) = watch::channel(false);
        let shared = self.shared.clone();
        let id = run.id.clone();
        // Registered before the task starts so `wait_for_run` never misses it.
        let mut active = match self.shared.active.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        let run_stop = stop.clone();
        let task_id = id.clone();
        let handle = tokio::spawn(async move {
            execute_run(shared.clone(), run, 0, run_stop, max_parallelism).await;
            if let Ok(mut g) = shared.active.lock() {
                g.remove(&task_id);
            }
            let _ = tx.send(true);
        });
        active.insert(
            id,
            ActiveRun {
                stop,
                done: rx,
                handle: handle.abort_handle(),
            },
        );
    }
}
