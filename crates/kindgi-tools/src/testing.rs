//! Test kits for other crates' tests (feature `testing`, off by default): the pausing tool,
//! written once. (The registry suite every `ToolRegistry` must pass is
//! [`crate::registry::conformance`], behind the same feature.)

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use kindgi_spec::ToolManifest;
use serde_json::Value;

use crate::dispatch::{CallOutcome, ToolCallError, ToolDispatcher, ToolTransport};
use crate::{ToolContext, WaitTicket};

/// The wait tickets a [`PausingTool`] was handed, in call order: the test plays "the other
/// system" and answers them.
pub type Tickets = Arc<Mutex<Vec<WaitTicket>>>;

/// A pack tool that pauses every call: it keeps the call's wait ticket (`ctx.wait`) in its
/// [`Tickets`] and answers *pause* for `timeout_ms` (`None`: the ticket's timeout). Its
/// manifest should declare `pauses: true`, as the runtime sends tickets only to such tools.
#[derive(Debug)]
pub struct PausingTool {
    manifest: ToolManifest,
    tickets: Tickets,
    timeout_ms: Option<u64>,
}

impl PausingTool {
    /// A pausing tool that keeps its tickets in `tickets`.
    pub fn new(manifest: ToolManifest, tickets: Tickets, timeout_ms: Option<u64>) -> Self {
        Self {
            manifest,
            tickets,
            timeout_ms,
        }
    }

    /// The tickets it was handed so far.
    pub fn tickets(&self) -> &Tickets {
        &self.tickets
    }
}

#[async_trait]
impl ToolDispatcher for PausingTool {
    fn manifest(&self) -> &ToolManifest {
        &self.manifest
    }

    fn transport(&self) -> ToolTransport {
        ToolTransport::Pack
    }

    #[allow(clippy::panic)]
    async fn call(&self, _input: Value, _ctx: ToolContext) -> Result<Value, ToolCallError> {
        panic!("a pausing tool is called with call_or_pause")
    }

    #[allow(clippy::panic)]
    async fn call_or_pause(
        &self,
        _input: Value,
        ctx: ToolContext,
    ) -> Result<CallOutcome, ToolCallError> {
        let Some(ticket) = ctx.wait else {
            panic!("a pausing tool was called without a wait ticket (ctx.wait)")
        };
        if let Ok(mut tickets) = self.tickets.lock() {
            tickets.push(ticket);
        }
        Ok(CallOutcome::Paused {
            timeout_ms: self.timeout_ms,
        })
    }
}
