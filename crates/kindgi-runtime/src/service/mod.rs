//! The [`Runtime`]: catalogues of tools, flows and agents (looked up per tenant through
//! [`crate::definitions`] and [`crate::resolve`]), a run store, a model provider — and the
//! run API on top (`start_run`, `get_run`, `list_runs`, `journal`, `cancel_run`,
//! `wait_for_run`, `recover`).
//!
//! Each run executes on its own tokio task. `start_run` checks everything that can be checked
//! before a run exists (the flow, every tool/agent/sub-flow it names, the input against
//! `metadata.inputSchema` when the flow declares one) and answers an error without creating a
//! run; afterwards every problem is a failed run with a `failureMessage`.
//!
//! Every `impl Runtime` lives in this folder, one file per concern: [`builder`], [`start`]
//! (and [`bindings`]), [`runs`], [`lifecycle`] (recovery and shutdown), [`approvals`] and
//! [`decide`] (reviewers' decisions), [`waits`], [`pauses`] and [`connection_waits`] (answers
//! to waits), [`resume`],
//! [`reconcile`] and [`sweeper`] (timeouts). The executing side of a run is below: the driver
//! in [`crate::nodes`], the steps in [`crate::steps`], their vocabulary in [`crate::engine`].

pub mod approvals;
mod bindings;
mod builder;
mod connection_waits;
pub mod conversation_turn;
mod decide;
mod error;
mod lifecycle;
mod pauses;
mod reconcile;
mod resume;
mod runs;
mod start;
mod sweeper;
pub mod waits;

use std::sync::Arc;

use crate::catalogue::{AgentCatalogue, FlowCatalogue};
use crate::definitions::Definitions;
use crate::dispatch::ToolCatalogue;
use crate::engine::shared::Shared;
use crate::model::ModelProvider;
use crate::resolve::ToolResolver;
use crate::store::{MemoryRunStore, RunStore};
use crate::wait_store::WaitStore;

pub use crate::engine::shared::{DEFAULT_TENANT, RuntimeConfig, agent_turn_flow};
pub use builder::RuntimeBuilder;
pub use error::{LookupError, RuntimeError};
pub use start::{RunOptions, run_id_for_key};

/// The runtime. Cheap to clone; must be used inside a tokio runtime.
#[derive(Clone)]
pub struct Runtime {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("store", &self.shared.store)
            .finish_non_exhaustive()
    }
}

impl Runtime {
    /// A builder over one backend's storage ports — a database's are
    /// `kindgi_store::Database::ports()`: runs, waits and conversations kept there. The rest
    /// (tools, model, definition source, …) is the caller's to add.
    pub fn over(ports: kindgi_core::ports::StoragePorts) -> RuntimeBuilder {
        Runtime::builder(ports.runs)
            .wait_store(ports.waits)
            .conversations(ports.conversations)
            .providers(ports.providers)
            .connections(ports.connections)
    }

    /// A builder over an in-memory store.
    pub fn in_memory() -> RuntimeBuilder {
        Runtime::builder(Arc::new(MemoryRunStore::new()))
    }

    pub fn tools(&self) -> &ToolCatalogue {
        &self.shared.tools
    }
    pub fn flows(&self) -> &FlowCatalogue {
        &self.shared.flows
    }
    pub fn agents(&self) -> &AgentCatalogue {
        &self.shared.agents
    }
    /// What sources offered but were left out, and why.
    pub fn left_out(&self) -> &crate::left_out::LeftOutBook {
        &self.shared.left_out
    }
    pub fn store(&self) -> &Arc<dyn RunStore> {
        &self.shared.store
    }
    /// Every flow and agent lookup runs go through.
    pub fn definitions(&self) -> &Arc<dyn Definitions> {
        &self.shared.definitions
    }
    /// Every tool lookup runs go through.
    pub fn resolver(&self) -> &ToolResolver {
        &self.shared.resolver
    }
    pub fn model(&self) -> &Arc<dyn ModelProvider> {
        &self.shared.model
    }
    /// Where approvals and pauses are kept.
    pub fn wait_store(&self) -> &Arc<dyn WaitStore> {
        &self.shared.waits
    }
    pub fn config(&self) -> &RuntimeConfig {
        &self.shared.config
    }
}
