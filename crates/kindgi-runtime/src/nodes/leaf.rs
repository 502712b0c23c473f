//! Leaf nodes: a tool step (the dry-run rule, the unattended rule, env values and secrets,
//! pausing tools) and an agent step (handed to [`crate::agent`]).

use kindgi_core::run::RunMeta;
use kindgi_spec::flow::{LeafKind, LeafNode};
use kindgi_tools::dispatch::ToolCallError;
use serde_json::{Map, Value, json};

use crate::dispatch::dry_run_refusal;
use crate::engine::ctx::{RunCtx, child_scope};
use crate::engine::failure::Failure;
use crate::engine::tool_call::CallSite;
use crate::left_out::LeftOutKind;
use crate::resolve::ResolveError;
use crate::unattended::{self, UnattendedReason};

impl RunCtx {
    pub(crate) async fn run_leaf(
        &self,
        leaf: &LeafNode,
        scope: &str,
        input: Value,
    ) -> Result<Value, Failure> {
        match leaf.kind {
            LeafKind::Tool => {
                let (id, range) = tool_ref(leaf);
                self.call_tool(id, range, &leaf.id, scope, input).await
            }
            LeafKind::Agent => {
                let version = agent_version(leaf);
                crate::agent::run_agent_step(self, &leaf.ref_, version, &leaf.id, scope, input)
                    .await
            }
        }
    }

    /// Calls a tool as a flow step (or fanout branch), applying the dry-run rule and the
    /// unattended rule (a call it covers fails the step: only an agent step asks). The
    /// version is resolved now, for this call (`range`: npm semver, `None`: the highest).
    pub(crate) async fn call_tool(
        &self,
        tool_id: &str,
        range: Option<&str>,
        node_id: &str,
        scope: &str,
        input: Value,
    ) -> Result<Value, Failure> {
        let tool = match self.resolve_tool(tool_id, range).await {
            Ok(t) => t,
            Err(ResolveError::NotFound { .. }) => {
                return Err(Failure::fatal(self.shared.left_out.explain(
                    &self.run.tenant_id,
                    LeftOutKind::Tool,
                    tool_id,
                    format!(
                        "flow-unbound: node \"{node_id}\" calls tool \"{tool_id}\", which is not registered"
                    ),
                )));
            }
            Err(e @ ResolveError::Registry { .. }) => return Err(Failure::new(e.to_string())),
            Err(e) => return Err(Failure::fatal(e.to_string())),
        };
        if self.run.dry_run && !tool.runs_in_dry_run() {
            return Err(Failure::fatal(dry_run_refusal(tool_id)));
        }
        if let Some(reason) = unattended::approval_required(&self.run.meta, tool.manifest()) {
            return Err(unattended_refusal(tool_id, &reason, &self.run.meta));
        }
        let key = child_scope(scope, node_id);
        let site = CallSite {
            key: &key,
            step_scope: &key,
            model_call_id: None,
        };
        if tool.manifest().pauses() {
            return self
                .call_pausing(&tool, input, site, scope, Some(node_id), node_id)
                .await;
        }
        let ctx = match self.call_context(tool.as_ref(), site).await {
            Ok(ctx) => ctx,
            Err(e) => return Err(Failure::new(e.to_string())),
        };
        tool.call(input, ctx)
            .await
            .map_err(|e| call_failure(e, node_id))
    }
}

/// A tool step the unattended rule refuses: it fails for good (no retry brings a person),
/// its `step.failed` carrying the code and the rule as data.
fn unattended_refusal(tool_id: &str, reason: &UnattendedReason, meta: &RunMeta) -> Failure {
    let mut extra = Map::new();
    extra.insert("code".into(), json!(unattended::APPROVAL_REQUIRED_CODE));
    extra.insert("rule".into(), json!(reason.rule()));
    extra.insert("toolId".into(), json!(tool_id));
    if let Some(by) = meta.started_by {
        extra.insert("startedBy".into(), json!(by.as_str()));
    }
    Failure::fatal(unattended::refusal(tool_id, reason, meta)).with_extra(extra)
}

/// A failed call as the step's failure. Validation issues are kept (`step.failed`'s
/// `issues`, Ajv-shaped as the API answers them), so a caller can see which field was wrong
/// and not only that the input or output failed validation.
fn call_failure(e: ToolCallError, node_id: &str) -> Failure {
    let failure = if e.transport {
        Failure::new(format!("{e} (node \"{node_id}\")"))
    } else {
        Failure::new(e.to_string())
    };
    if e.issues.is_empty() {
        return failure;
    }
    let mut extra = Map::new();
    extra.insert(
        "issues".into(),
        serde_json::to_value(&e.issues).unwrap_or(Value::Null),
    );
    failure.with_extra(extra)
}

/// A tool node's tool id and version range: `ref: "<id>@<range>"`, else `ref: "<id>"` with
/// the range in `config.version` (or none: the highest version).
pub(crate) fn tool_ref(leaf: &LeafNode) -> (&str, Option<&str>) {
    let (id, range) = kindgi_core::ids::split_tool_ref(&leaf.ref_);
    (id, range.or_else(|| config_version(leaf)))
}

/// An agent node's pinned agent version (`config.version`), if any.
pub(crate) fn agent_version(leaf: &LeafNode) -> Option<&str> {
    config_version(leaf)
}

fn config_version(leaf: &LeafNode) -> Option<&str> {
    leaf.config
        .as_ref()
        .and_then(|c| c.get("version"))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|v| !v.is_empty())
}
