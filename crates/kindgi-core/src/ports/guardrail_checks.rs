//! The guardrail-checks port: checks the built-ins do not answer (a pack's check, pack
//! protocol `check-invoke`) run through what the host plugs in.

use async_trait::async_trait;
use kindgi_spec::pack_protocol::CheckResult;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

/// One check a built-in does not answer, to run elsewhere (a pack's check).
#[derive(Debug)]
pub struct CheckRequest<'a> {
    pub tenant: &'a str,
    pub run_id: &'a str,
    pub guardrail_id: &'a str,
    /// The check's id (`acme.checks.min-length`): its pack is the prefix before the first `.`.
    pub check_id: &'a str,
    pub config: &'a Map<String, Value>,
    /// The `RunTrace`.
    pub trace: &'a Value,
    /// Fired when the run stops: a check in flight stops waiting.
    pub cancel: CancellationToken,
}

/// Why a check could not run: `code` is `unknown-check`, `pack-unreachable`,
/// `check-failed`, …; `message` says what happened (never a secret).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct CheckError {
    pub code: String,
    pub message: String,
}

/// Runs the checks the built-ins do not: the host plugs one in
/// (the runtime builder's `guardrail_checks`); without it such a check is `unknown-check`
/// (and a `halt` guardrail blocks: it fails closed).
#[async_trait]
pub trait GuardrailChecks: Send + Sync + std::fmt::Debug {
    /// Runs `request.check_id` over `request.trace`. A check nobody serves is
    /// `unknown-check`.
    async fn run_check(&self, request: CheckRequest<'_>) -> Result<CheckResult, CheckError>;
}
