//! What every tool call a run makes needs, whoever makes it (a tool step, a fanout branch,
//! an agent's model, a pausing call): the tool as the run's tenant sees it now, and the
//! call's context (the run's ids, a stable idempotency key, env values, secrets and
//! connections).

use std::sync::Arc;

use kindgi_tools::ToolContext;

use crate::dispatch::{ToolCallError, ToolDispatcher};
use crate::engine::ctx::RunCtx;
use crate::resolve::ResolveError;

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
    /// A tool context for a call of `tool_id` made by this run at `site`: its
    /// `idempotencyKey` is the pack protocol's UUIDv5 over `[runId, stepScope, toolId]` (+ the
    /// model's call id), the same for every attempt of the call (a retry, a resume, a re-run
    /// after a crash) and different for every other call.
    pub(crate) fn tool_context(&self, tool_id: &str, site: CallSite<'_>) -> ToolContext {
        let mut ctx = ToolContext::new(self.run.tenant_id.clone()).with_run_id(self.run.id.clone());
        ctx.request_id = Some(format!("{}:{}", self.run.id, site.key));
        // The run's project: its env values and secrets beat the tenant's.
        ctx.project_id = self.run.meta.project_id.clone();
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
        let mut ctx = crate::call_values::prepare_context(
            self.shared.call_values.as_ref(),
            tool,
            self.tool_context(&tool.manifest().id, site),
            self.journal.mask(),
        )
        .await?;
        let manifest = tool.manifest();
        let call = crate::connections::CallFor {
            tenant: &self.run.tenant_id,
            actor: self.run.meta.started_by_actor.as_deref(),
            now: crate::record::now_millis(),
        };
        crate::connections::prepare(
            self.shared.connections.as_ref(),
            self.shared.call_values.as_ref(),
            manifest,
            call,
            &mut ctx,
            self.journal.mask(),
        )
        .await
        .map_err(|e| e.into_call_error(&manifest.id))?;
        Ok(ctx)
    }
}
