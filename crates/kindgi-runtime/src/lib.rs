//! Kindgi runtime: flows, durable runs and their journal, tool dispatch with dry runs, agent
//! steps and model providers.
//!
//! # Design
//!
//! A [`Runtime`] holds three in-memory catalogues, per tenant — tools ([`ToolCatalogue`],
//! every transport behind [`ToolDispatcher`]), flows ([`FlowCatalogue`], several versions
//! per id, checked and schema-compiled at load) and agents ([`AgentCatalogue`]) — a
//! [`RunStore`] (in memory, or the `runs`/`run_journal` tables of a SQLite or PostgreSQL
//! database: kindgi-store implements the port, and the host's `Runtime::over(db.ports())`
//! plugs it in — this crate knows only core's ports) and a [`ModelProvider`].
//!
//! Every lookup a run makes carries its tenant and goes through two seams: flows and agents
//! through [`Definitions`] (the catalogues, then a [`DefinitionSource`] the host plugs in),
//! tools through the [`ToolResolver`] (the catalogue by exact id, then the tool registry by
//! npm semver range, at each call). Env values and secrets reach a call through the host's
//! [`CallValues`].
//!
//! A run is a durable record plus an append-only journal (runtime.md §1.4). Its executor
//! journals each decision before acting on it and, when resumed after a crash
//! ([`Runtime::recover`]), rebuilds what finished from the journal, so no step journaled as
//! completed runs twice. The scheduler is pure ([`scheduler`]), the expression evaluator is
//! total ([`expr`]), and dry runs follow seed 004 ([`dispatch::dry_run_refusal`]).
//!
//! ```no_run
//! # async fn demo(tool: kindgi_tools::Tool, flow_json: &str) -> Result<(), Box<dyn std::error::Error>> {
//! use kindgi_runtime::{Runtime, RunOptions};
//! // In memory here; a host builds over its database with `Runtime::over(db.ports())`.
//! let rt = Runtime::in_memory().build();
//! rt.tools().insert_tool(tool);
//! rt.flows().insert_json(flow_json)?;
//! rt.recover().await?;
//! let run = rt
//!     .start_run("my-pack.check-order", None, serde_json::json!({"orderId": "o1"}),
//!         RunOptions { dry_run: true, wait: true, ..Default::default() })
//!     .await?;
//! println!("{}", serde_json::to_string_pretty(&run)?);
//! # Ok(()) }
//! ```

pub mod call_values;
pub mod catalogue;
pub mod connections;
pub mod conversation;
pub mod definitions;
pub mod dispatch;
mod engine;
mod fault;
pub mod left_out;
pub mod model;
pub mod model_router;
mod nodes;
pub mod record;
pub mod resolve;
mod service;
mod steps;
pub mod store;
pub mod triggers;
pub mod unattended;
pub mod wait_store;

// The crate's public paths from before the engine/nodes/steps/service floors: the modules
// other crates import keep their names.
pub use engine::{expr, scheduler};
pub use service::approvals as approval;
pub use service::conversation_turn;
pub use service::waits as wait;
pub use steps::{agent, guardrail};

/// The runtime façade and its settings (the old `runtime` module's path).
pub mod runtime {
    pub use crate::service::{
        DEFAULT_TENANT, LookupError, RunOptions, Runtime, RuntimeBuilder, RuntimeConfig,
        RuntimeError, agent_turn_flow, run_id_for_key,
    };
}

pub use agent::hitl::{
    HitlMode, HitlSpec, TenantApprovalPolicy, TenantHitlPolicy, TenantPolicyError, ToolHitlRule,
};
pub use approval::{
    Approval, ApprovalCompletion, ApprovalDecision, ApprovalError, ApprovalQuery, ApprovalStatus,
    DecisionInput, DecisionKind, NewApproval, ResumeOutcome, ReviewerRole,
};
pub use call_values::CallValues;
pub use catalogue::{
    ALL_TENANTS, AgentCatalogue, AgentSpec, AgentTool, FlowCatalogue, FlowError, LoadedFlow,
};
pub use conversation::{ConversationLog, ConversationLogError};
pub use definitions::{
    DefinitionError, DefinitionSource, Definitions, LayeredDefinitions, MemoryDefinitions,
};
pub use dispatch::{
    InProcessTool, PackCallError, PackCaller, PackTool, ToolCallError, ToolCatalogue,
    ToolDispatcher, ToolTransport, dry_run_refusal,
};
pub use guardrail::{
    CheckError, CheckRequest, GuardrailCatalogue, GuardrailChecks, GuardrailSpec, Stage,
};
pub use kindgi_core::StorageError;
pub use model::{ModelError, ModelProvider};
pub use record::{
    AGENT_TURN_FLOW_ID, JournalEntry, JournalKind, RunAgent, RunFailure, RunMeta, RunRecord,
    RunStatus, Segment,
};
pub use resolve::{RegistryToolError, RegistryToolFactory, ResolveError, ToolResolver};
pub use runtime::{RunOptions, Runtime, RuntimeBuilder, RuntimeConfig, RuntimeError};
pub use store::{MemoryRunStore, ReplayFilter, RunQuery, RunStore, RunStoreError};
pub use wait::{WaitAnswered, WaitError, WaitingFor};
pub use wait_store::{
    MemoryWaitStore, PauseRecord, PauseStatus, WaitJournal, WaitStore, WaitStoreError,
};
