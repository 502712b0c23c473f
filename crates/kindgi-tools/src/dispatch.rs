//! The dispatch trait every transport implements, [`ToolDispatcher`], and what transports
//! share: how a tool is reached ([`ToolTransport`]), why a call produced no output
//! ([`ToolCallError`]), the in-process dispatcher ([`InProcessTool`]: native, declarative
//! http, MCP-sourced) and the pack seam ([`PackCaller`], [`PackTool`]).
//!
//! It lives here, below the runtime and the transports, so that a transport crate
//! (`kindgi-pack`, `kindgi-mcp`) implements dispatch without knowing the runtime, and the
//! runtime calls tools without knowing any transport.
//!
//! Seed 004's dry-run rule lives here too: [`ToolDispatcher::runs_in_dry_run`].

use std::sync::Arc;

use async_trait::async_trait;
use kindgi_spec::ToolManifest;
use serde_json::Value;

use crate::{InvokeError, Tool, ToolContext};

/// How a tool is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolTransport {
    /// An in-process `kindgi_tools::Tool`.
    Native,
    /// A declarative `spec.kind: http` tool (in-process, synthesized handler).
    Http,
    /// A tool from an MCP server: never read-only.
    Mcp,
    /// A tool in a pack service, called through a [`PackCaller`].
    Pack,
}

impl ToolTransport {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolTransport::Native => "native",
            ToolTransport::Http => "http",
            ToolTransport::Mcp => "mcp",
            ToolTransport::Pack => "pack",
        }
    }
}

/// Why a tool call produced no output. `Display` is `<code>: <message>`, the form a run's
/// `failureMessage` takes (e.g. `handler-error: Tool "acme.get-order" handler threw: boom`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ToolCallError {
    /// `handler-error`, `input-validation-failed`, `output-validation-failed`,
    /// `precondition-failed`, `pack-unreachable`, or a pack's own code.
    pub code: String,
    pub message: String,
    pub tool_id: String,
    /// True when the tool was not reached at all (the transport failed).
    pub transport: bool,
    /// Validation issues, when there are any.
    pub issues: Vec<kindgi_schema::Issue>,
}

impl From<InvokeError> for ToolCallError {
    fn from(e: InvokeError) -> Self {
        ToolCallError {
            code: e.code.as_str().to_owned(),
            message: e.message,
            tool_id: e.tool_id,
            transport: false,
            issues: e.errors,
        }
    }
}

/// One callable tool, whatever its transport.
#[async_trait]
pub trait ToolDispatcher: Send + Sync + std::fmt::Debug {
    fn manifest(&self) -> &ToolManifest;
    fn transport(&self) -> ToolTransport;

    /// Seed 004: a tool runs in a dry run only when it is declared read-only (`mutating:
    /// false`, no writes/deletes/spawns-run/emits-event/external-side-effect effect); an MCP
    /// tool never does.
    fn runs_in_dry_run(&self) -> bool {
        self.transport() != ToolTransport::Mcp && self.manifest().is_read_only()
    }

    /// Whether an agent may run this tool's calls alongside other read-only calls: read-only,
    /// and not a tool that may wait (`pauses`) or act with a person's connection.
    fn runs_concurrently(&self) -> bool {
        let m = self.manifest();
        self.runs_in_dry_run()
            && !m.pauses()
            && m.needs_spec
                .as_ref()
                .and_then(|n| n.connections.as_ref())
                .is_none_or(|c| c.is_empty())
    }

    async fn call(&self, input: Value, ctx: ToolContext) -> Result<Value, ToolCallError>;

    /// Calls a tool that may pause (`pauses: true`, with `ctx.wait` set): it either answers
    /// or says the run should wait for the other system's answer. Only a pack tool can
    /// pause; every other transport answers through [`ToolDispatcher::call`].
    async fn call_or_pause(
        &self,
        input: Value,
        ctx: ToolContext,
    ) -> Result<CallOutcome, ToolCallError> {
        self.call(input, ctx).await.map(CallOutcome::Done)
    }
}

/// What a call of a tool that may pause answered.
#[derive(Debug, Clone, PartialEq)]
pub enum CallOutcome {
    /// The call's result.
    Done(Value),
    /// The tool handed `ctx.wait.link` to another system: the run waits for its answer,
    /// `timeout_ms` at most (`None`: the ticket's timeout, 24 h by default).
    Paused { timeout_ms: Option<u64> },
}

/// The exact refusal of seed 004.
pub fn dry_run_refusal(tool_id: &str) -> String {
    format!(
        "dry-run-effectful-tool: tool \"{tool_id}\" is not declared read-only (mutating: false), so it does not run in a dry run"
    )
}

/// An in-process tool (native, declarative http, or MCP-sourced).
#[derive(Debug, Clone)]
pub struct InProcessTool {
    tool: Tool,
    transport: ToolTransport,
}

impl InProcessTool {
    /// `transport` is taken from the manifest: `transport: mcp` → MCP, a `spec` of kind
    /// `http` → Http, else Native.
    pub fn new(tool: Tool) -> Self {
        let m = tool.manifest();
        let transport = if m.is_mcp() {
            ToolTransport::Mcp
        } else if m.spec.as_ref().is_some_and(|s| s.kind() == "http") {
            ToolTransport::Http
        } else {
            ToolTransport::Native
        };
        Self { tool, transport }
    }

    /// A tool that came from an MCP server, whatever its manifest says.
    pub fn mcp(tool: Tool) -> Self {
        Self {
            tool,
            transport: ToolTransport::Mcp,
        }
    }

    pub fn tool(&self) -> &Tool {
        &self.tool
    }
}

#[async_trait]
impl ToolDispatcher for InProcessTool {
    fn manifest(&self) -> &ToolManifest {
        self.tool.manifest()
    }

    fn transport(&self) -> ToolTransport {
        self.transport
    }

    async fn call(&self, input: Value, ctx: ToolContext) -> Result<Value, ToolCallError> {
        crate::invoke_owned(&self.tool, input, ctx)
            .await
            .map_err(ToolCallError::from)
    }
}

/// Why a pack call failed: one type for the whole pack seam, in its own file.
pub use crate::pack_call::{PackCallError, Relay};

/// Calls a tool in a pack service. The pack client implements it.
#[async_trait]
pub trait PackCaller: Send + Sync + std::fmt::Debug {
    /// Invokes `manifest.id` at `manifest.version` with `input`; `ctx` carries the run's
    /// ids, deadline and cancellation.
    async fn call_tool(
        &self,
        manifest: &ToolManifest,
        input: Value,
        ctx: &ToolContext,
    ) -> Result<Value, PackCallError>;

    /// Invokes a tool that may pause (`manifest.pauses()`, with `ctx.wait` set): the pack
    /// answers with the call's result or says it paused (docs/pauses.md). A caller that
    /// does not know pausing answers through [`PackCaller::call_tool`].
    async fn call_tool_or_pause(
        &self,
        manifest: &ToolManifest,
        input: Value,
        ctx: &ToolContext,
    ) -> Result<CallOutcome, PackCallError> {
        self.call_tool(manifest, input, ctx)
            .await
            .map(CallOutcome::Done)
    }
}

/// A tool in a pack service.
#[derive(Debug, Clone)]
pub struct PackTool {
    manifest: Arc<ToolManifest>,
    pack: String,
    caller: Arc<dyn PackCaller>,
}

impl PackTool {
    /// `pack` names the pack (for messages).
    pub fn new(
        manifest: ToolManifest,
        pack: impl Into<String>,
        caller: Arc<dyn PackCaller>,
    ) -> Self {
        Self {
            manifest: Arc::new(manifest),
            pack: pack.into(),
            caller,
        }
    }
}

#[async_trait]
impl ToolDispatcher for PackTool {
    fn manifest(&self) -> &ToolManifest {
        &self.manifest
    }

    fn transport(&self) -> ToolTransport {
        ToolTransport::Pack
    }

    async fn call(&self, input: Value, ctx: ToolContext) -> Result<Value, ToolCallError> {
        self.caller
            .call_tool(&self.manifest, input, &ctx)
            .await
            .map_err(|e| self.call_error(e))
    }

    /// A tool that declares `pauses` goes through [`PackCaller::call_tool_or_pause`]; any
    /// other through [`PackCaller::call_tool`], so it can never come back paused.
    async fn call_or_pause(
        &self,
        input: Value,
        ctx: ToolContext,
    ) -> Result<CallOutcome, ToolCallError> {
        if !self.manifest.pauses() {
            return self.call(input, ctx).await.map(CallOutcome::Done);
        }
        self.caller
            .call_tool_or_pause(&self.manifest, input, &ctx)
            .await
            .map_err(|e| self.call_error(e))
    }
}

impl PackTool {
    fn call_error(&self, error: PackCallError) -> ToolCallError {
        let id = self.manifest.id.clone();
        match error {
            PackCallError::Tool {
                code,
                message,
                issues,
            } => ToolCallError {
                code,
                message,
                tool_id: id,
                transport: false,
                issues,
            },
            // Every other way: the pack did not answer, and the relay rule says whether it
            // may have run.
            other => ToolCallError {
                code: "pack-unreachable".into(),
                message: format!(
                    "tool \"{id}\" in pack \"{}\" could not be called: {}",
                    self.pack,
                    other.relay_message()
                ),
                tool_id: id,
                transport: true,
                issues: Vec::new(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Mutex;

    /// A pack caller that says which way it was called and answers `pause` when asked
    /// through `call_tool_or_pause`.
    #[derive(Debug, Default)]
    struct Recorder {
        calls: Mutex<Vec<&'static str>>,
    }

    #[async_trait]
    impl PackCaller for Recorder {
        async fn call_tool(
            &self,
            _manifest: &ToolManifest,
            input: Value,
            _ctx: &ToolContext,
        ) -> Result<Value, PackCallError> {
            self.calls.lock().unwrap().push("call_tool");
            Ok(input)
        }

        async fn call_tool_or_pause(
            &self,
            _manifest: &ToolManifest,
            _input: Value,
            _ctx: &ToolContext,
        ) -> Result<CallOutcome, PackCallError> {
            self.calls.lock().unwrap().push("call_tool_or_pause");
            Ok(CallOutcome::Paused {
                timeout_ms: Some(5),
            })
        }
    }

    /// Only `call_tool`: the default `call_tool_or_pause` answers through it.
    #[derive(Debug)]
    struct Plain;

    #[async_trait]
    impl PackCaller for Plain {
        async fn call_tool(
            &self,
            _manifest: &ToolManifest,
            _input: Value,
            _ctx: &ToolContext,
        ) -> Result<Value, PackCallError> {
            Err(PackCallError::Transport {
                message: "unavailable: down".into(),
            })
        }
    }

    fn manifest(pauses: bool) -> ToolManifest {
        serde_json::from_value(json!({"id": "p.t", "version": "1.0.0", "description": "d",
            "input": {"type": "object"}, "output": {"type": "object"}, "pauses": pauses}))
        .unwrap()
    }

    #[tokio::test]
    async fn only_a_tool_declaring_pauses_is_called_the_pausing_way() {
        let recorder = Arc::new(Recorder::default());
        let plain = PackTool::new(manifest(false), "p", recorder.clone());
        let out = plain
            .call_or_pause(json!({"a": 1}), ToolContext::for_test())
            .await
            .unwrap();
        assert_eq!(out, CallOutcome::Done(json!({"a": 1})));
        let pausing = PackTool::new(manifest(true), "p", recorder.clone());
        let out = pausing
            .call_or_pause(json!({}), ToolContext::for_test())
            .await
            .unwrap();
        assert_eq!(
            out,
            CallOutcome::Paused {
                timeout_ms: Some(5)
            }
        );
        assert_eq!(
            *recorder.calls.lock().unwrap(),
            ["call_tool", "call_tool_or_pause"]
        );
        assert!(!pausing.runs_concurrently());
    }

    #[tokio::test]
    async fn the_default_pausing_call_answers_through_call_tool_and_maps_its_errors() {
        let tool = PackTool::new(manifest(true), "p", Arc::new(Plain));
        let e = tool
            .call_or_pause(json!({}), ToolContext::for_test())
            .await
            .unwrap_err();
        assert_eq!(e.code, "pack-unreachable");
        assert!(e.transport);
        assert_eq!(
            e.message,
            "tool \"p.t\" in pack \"p\" could not be called: unavailable: down"
        );
    }
}
