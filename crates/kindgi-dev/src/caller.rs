//! The runtime's way into the supervised pack service: a [`kindgi_runtime::PackCaller`] that
//! sends each call through `kindgi_pack::client` to whichever child serves now.
//!
//! The relay rule (pack-protocol reference §10): no child serving, or a connection refused,
//! means the call provably did not run (*unavailable*); a call delivered without an answer
//! may have run (*failed*) and is never sent again. Both end the step with
//! `pack-unreachable: …` naming which it was.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use kindgi_pack::client::CallOptions;
use kindgi_runtime::PackCallError;
use kindgi_spec::ToolManifest;
use kindgi_spec::pack_protocol::{CallContext, Response, ToolInvoke, ToolRef};
use kindgi_tools::ToolContext;
use serde_json::Value;

use crate::supervisor::ServiceSlot;

/// Calls the pack's tools in its current service.
#[derive(Debug)]
pub struct DevPackCaller {
    slot: Arc<ServiceSlot>,
    /// Tool id → the version its index entry names (`None`: the entry has none, so the call
    /// names none either, as the service resolves it).
    versions: RwLock<HashMap<String, Option<String>>>,
}

impl DevPackCaller {
    pub fn new(slot: Arc<ServiceSlot>) -> Arc<DevPackCaller> {
        Arc::new(DevPackCaller {
            slot,
            versions: RwLock::new(HashMap::new()),
        })
    }

    /// Replaces what the index says about tool versions (on every (re)load).
    pub fn set_versions(&self, versions: HashMap<String, Option<String>>) {
        if let Ok(mut g) = self.versions.write() {
            *g = versions;
        }
    }
}

#[async_trait]
impl kindgi_runtime::PackCaller for DevPackCaller {
    async fn call_tool(
        &self,
        manifest: &ToolManifest,
        input: Value,
        ctx: &ToolContext,
    ) -> Result<Value, PackCallError> {
        let service = self.slot.get().map_err(|why| PackCallError::Transport {
            message: format!("unavailable: {why}; the call did not run"),
        })?;
        let version = self
            .versions
            .read()
            .ok()
            .and_then(|g| g.get(&manifest.id).cloned())
            .unwrap_or_else(|| Some(manifest.version.clone()));
        let mut call_ctx = CallContext::new(
            ctx.tenant_id.clone(),
            ctx.run_id.clone().unwrap_or_default(),
        );
        call_ctx.project_id = ctx.project_id.clone();
        call_ctx.org_id = ctx.org_id.clone();
        call_ctx.request_id = ctx.request_id.clone();
        call_ctx.idempotency_key = ctx.idempotency_key.clone();
        call_ctx.env = ctx.env.as_ref().map(|e| (**e).clone());
        let invoke = ToolInvoke::new(
            ToolRef {
                id: manifest.id.clone(),
                version,
                extra: Default::default(),
            },
            input,
            call_ctx,
        );
        let options = CallOptions::default();
        let call = service.client.invoke_tool(&invoke, &options);
        let answer = tokio::select! {
            a = call => a,
            () = ctx.signal.cancelled() => {
                return Err(PackCallError::Transport {
                    message: "the run was cancelled while the call was in flight; the call may have run".into(),
                });
            }
        };
        let answer = answer.map_err(|e| PackCallError::Transport {
            message: if e.may_have_run() {
                format!("failed: {e}")
            } else {
                format!("unavailable: {e}")
            },
        })?;
        match answer.response {
            Response::Result(r) => Ok(r.output),
            Response::Error(e) => Err(PackCallError::Tool {
                code: e.code.as_str().to_owned(),
                message: e.message,
                issues: e
                    .issues
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|i| serde_json::to_value(i).ok())
                    .filter_map(|v| serde_json::from_value(v).ok())
                    .collect(),
            }),
            Response::CheckResult(_) => Err(PackCallError::Transport {
                message: "failed: the pack service answered a tool call with a check result".into(),
            }),
        }
    }
}
