//! TEMPORARY: stand-ins for `RunCtx::call_pausing` and `RunCtx::approved_before`, which
//! the waits work provides (same signatures). Deleted when h/waits is merged.

use serde_json::Value;
use std::sync::Arc;

use crate::dispatch::ToolDispatcher;
use crate::executor::{Failure, RunCtx};

impl RunCtx {
    pub(crate) async fn call_pausing(
        &self,
        tool: &Arc<dyn ToolDispatcher>,
        input: Value,
        call_ctx_key: &str,
        _scope: &str,
        _node_id: Option<&str>,
        _call_id: &str,
    ) -> Result<Value, Failure> {
        let ctx = self
            .call_context(tool.as_ref(), call_ctx_key)
            .await
            .map_err(|e| Failure::new(e.to_string()))?;
        tool.call(input, ctx)
            .await
            .map_err(|e| Failure::new(e.to_string()))
    }

    pub(crate) async fn approved_before(
        &self,
        _tool_id: &str,
        _args_hash: &str,
    ) -> Result<bool, Failure> {
        Ok(false)
    }
}
