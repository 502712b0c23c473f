//! Leaf nodes: a tool step (the dry-run rule, env values and secrets, pausing tools) and an
//! agent step (handed to [`crate::agent`]).

use super::*;

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

    /// A tool context for a call made by this run.
    pub(crate) fn tool_context(&self, call_key: &str) -> ToolContext {
        let mut ctx = ToolContext::new(self.run.tenant_id.clone()).with_run_id(self.run.id.clone());
        ctx.request_id = Some(format!("{}:{call_key}", self.run.id));
        ctx.idempotency_key = Some(format!("{}:{call_key}", self.run.id));
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
        call_key: &str,
    ) -> Result<ToolContext, ToolCallError> {
        crate::call_values::prepare_context(
            self.shared.call_values.as_ref(),
            tool,
            self.tool_context(call_key),
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
        if tool.manifest().pauses() {
            let key = child_scope(scope, node_id);
            return self
                .call_pausing(&tool, input, &key, scope, Some(node_id), node_id)
                .await;
        }
        let ctx = match self
            .call_context(tool.as_ref(), &child_scope(scope, node_id))
            .await
        {
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
