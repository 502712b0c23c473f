//! Leaf nodes: a tool step (the dry-run rule, env values and secrets, pausing tools) and an
//! agent step (handed to [`crate::agent`]).

use super::*;

/// Where a tool call is made.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CallSite<'a> {
    /// What names the call within the run (`ctx.requestId` is `<runId>:<key>`).
    pub key: &'a str,
    /// The step's own scope (its node, with its loop iteration or fanout branch).
    pub step_scope: &'a str,
    /// The model's id for a call a model asked for.
    pub model_call_id: Option<&'a str>,
}

impl RunCtx {
    pub(super) async fn run_leaf(
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

    /// A tool context for a call of `tool_id` made by this run at `site`: its
    /// `idempotencyKey` is the pack protocol's UUIDv5 over `[runId, stepScope, toolId]` (+ the
    /// model's call id), the same for every attempt of the call (a retry, a resume, a re-run
    /// after a crash) and different for every other call.
    pub(crate) fn tool_context(&self, tool_id: &str, site: CallSite<'_>) -> ToolContext {
        let mut ctx = ToolContext::new(self.run.tenant_id.clone()).with_run_id(self.run.id.clone());
        ctx.request_id = Some(format!("{}:{}", self.run.id, site.key));
        let key = kindgi_tools::tool_idempotency_key(
            &self.run.id,
            site.step_scope,
            tool_id,
            site.model_call_id,
        );
        ctx.idempotency_key = Some(key.to_string());
        ctx.signal = self.cancel.child_token();
        ctx
    }

    /// The tool `tool_id` within `range`, as this run's tenant sees it now.
    pub(crate) async fn resolve_tool(
        &self,
        tool_id: &str,
        range: Option<&str>,
    ) -> Result<Arc<dyn ToolDispatcher>, ResolveError> {
        self.shared
            .resolver
            .resolve(&self.run.tenant_id, tool_id, range)
            .await
    }

    /// A tool context for a call of `tool`: the run's ids plus the env values and secrets
    /// the host's [`crate::call_values::CallValues`] gives (checked before the call).
    pub(crate) async fn call_context(
        &self,
        tool: &dyn ToolDispatcher,
        site: CallSite<'_>,
    ) -> Result<ToolContext, ToolCallError> {
        crate::call_values::prepare_context(
            self.shared.call_values.as_ref(),
            tool,
            self.tool_context(&tool.manifest().id, site),
            self.journal.mask(),
        )
        .await
    }

    /// Calls a tool as a flow step (or fanout branch), applying the dry-run rule. The
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
                return Err(Failure::fatal(format!(
                    "flow-unbound: node \"{node_id}\" calls tool \"{tool_id}\", which is not registered"
                )));
            }
            Err(e @ ResolveError::Registry { .. }) => return Err(Failure::new(e.to_string())),
            Err(e) => return Err(Failure::fatal(e.to_string())),
        };
        if self.run.dry_run && !tool.runs_in_dry_run() {
            return Err(Failure::fatal(dry_run_refusal(tool_id)));
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
        tool.call(input, ctx).await.map_err(|e| {
            let mut f = Failure::new(e.to_string());
            if e.transport {
                f.message = format!("{e} (node \"{node_id}\")");
            }
            f
        })
    }
}
