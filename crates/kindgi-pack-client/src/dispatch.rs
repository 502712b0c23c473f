//! Pack dispatch: how the runtime reaches a pack's tools. A [`PackServiceCaller`] is the
//! [`kindgi_tools::dispatch::PackCaller`] of one pack; it sends each call through
//! [`crate::client::PackClient`] to **the service serving now**, read from a [`ServiceSlot`]:
//!
//! * a supervised child (`kindgi dev`, `kindgi server --pack-dir`): the supervisor publishes
//!   each child it boots and clears the slot while none serves;
//! * a deployed pack service at a fixed URL with its token (`kindgi server --pack-url`):
//!   [`ServiceSlot::remote`], set once. `https://` URLs go through the same client
//!   (reqwest with rustls). The token travels in `kindgi-pack-token` only; `Authorization`
//!   is never set, so a platform's own identity header (Cloud Run's) is left alone (seed 002).
//!
//! The relay rule (pack-protocol reference §10): no service serving, or a connection
//! refused, means the call provably did not run (*unavailable*); a call delivered without an
//! answer may have run (*failed*) and is never sent again. Both end the step with
//! `pack-unreachable: …` naming which it was; the verdict travels as data
//! ([`PackCallError::relay`]), with the client's typed error whole. A run cancelled while
//! its call is in flight stops waiting at once.
//!
//! The slot's [`SecretMask`] learns every secret value a call sends (`ctx.secrets`); a
//! supervisor masks the lines its child writes with it.
//!
//! A guardrail check a pack serves goes the same way ([`PackServiceCaller::call_check`],
//! `check-invoke`): its answer is the check's result, or why it could not run.
//!
//! [`manifest_of`] turns an index entry into the runtime's manifest (the index is what a
//! pack's build wrote; `/v1/info` names tools but carries no schemas).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use async_trait::async_trait;
use kindgi_spec::ToolManifest;
use kindgi_spec::pack_index::IndexTool;
use kindgi_spec::pack_protocol::{
    CallContext, CallWait, CheckInvoke, CheckRef, CheckResult, ErrorCode, Response, ToolInvoke,
    ToolPause, ToolRef, V2,
};
use kindgi_tools::ToolContext;
use kindgi_tools::dispatch::{CallOutcome, PackCallError, PackCaller};
use kindgi_tools::secret_mask::SecretMask;
use serde_json::{Map, Value, json};

use crate::client::{CallOptions, PackClient, PackClientConfig, PackClientConfigError};

/// A pack service that serves now. Its `Debug` leaves the client (and so the token) out.
pub struct Serving {
    /// Where it listens (for messages).
    pub base_url: String,
    /// The child's process id, for a supervised service; `None` for a remote one.
    pub pid: Option<u32>,
    /// The pooled client that calls it.
    pub client: PackClient,
}

impl std::fmt::Debug for Serving {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Serving")
            .field("base_url", &self.base_url)
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

/// The service serving now (if any), and why none does; and the secret values sent to it.
#[derive(Debug)]
pub struct ServiceSlot {
    current: RwLock<Option<Arc<Serving>>>,
    why_not: Mutex<String>,
    /// Every secret value a call through this slot sent (the newest
    /// [`kindgi_tools::secret_mask::MAX_VALUES`]): a supervisor masks what its child
    /// writes with it.
    mask: Arc<SecretMask>,
}

impl ServiceSlot {
    /// An empty slot: "the pack service has not started yet".
    pub fn new() -> Arc<ServiceSlot> {
        Arc::new(ServiceSlot {
            current: RwLock::new(None),
            why_not: Mutex::new("the pack service has not started yet".into()),
            mask: SecretMask::new(),
        })
    }

    /// The secret values sent to the services of this slot, to mask what they print.
    pub fn mask(&self) -> &Arc<SecretMask> {
        &self.mask
    }

    /// A slot holding a deployed service at `base_url` (http or https) with `token`, for
    /// good. The token is kept only inside the client (a sensitive header value).
    pub fn remote(
        base_url: &str,
        token: &str,
        config: impl FnOnce(&mut PackClientConfig),
    ) -> Result<Arc<ServiceSlot>, PackClientConfigError> {
        let mut cfg = PackClientConfig::new(base_url, token);
        config(&mut cfg);
        let client = PackClient::new(cfg)?;
        let slot = ServiceSlot::new();
        slot.set(
            Some(Arc::new(Serving {
                base_url: base_url.trim_end_matches('/').to_owned(),
                pid: None,
                client,
            })),
            "",
        );
        Ok(slot)
    }

    /// The serving service, or why there is none.
    pub fn get(&self) -> Result<Arc<Serving>, String> {
        if let Ok(g) = self.current.read()
            && let Some(s) = g.as_ref()
        {
            return Ok(s.clone());
        }
        Err(self
            .why_not
            .lock()
            .map(|g| g.clone())
            .unwrap_or_else(|_| "the pack service is not serving".into()))
    }

    /// Publishes `service` (or none, with why not).
    pub fn set(&self, service: Option<Arc<Serving>>, why_not: &str) {
        if let Ok(mut g) = self.current.write() {
            *g = service;
        }
        if let Ok(mut g) = self.why_not.lock() {
            *g = why_not.to_owned();
        }
    }
}

/// Calls one pack's tools in the service its slot holds now.
#[derive(Debug)]
pub struct PackServiceCaller {
    slot: Arc<ServiceSlot>,
    /// Tool id → the version its index entry names (`None`: the entry has none, so the call
    /// names none either, as the service resolves it).
    versions: RwLock<HashMap<String, Option<String>>>,
}

impl PackServiceCaller {
    pub fn new(slot: Arc<ServiceSlot>) -> Arc<PackServiceCaller> {
        Arc::new(PackServiceCaller {
            slot,
            versions: RwLock::new(HashMap::new()),
        })
    }

    /// The slot this caller reads.
    pub fn slot(&self) -> &Arc<ServiceSlot> {
        &self.slot
    }

    /// Replaces what the index says about tool versions (on every (re)load).
    pub fn set_versions(&self, versions: HashMap<String, Option<String>>) {
        if let Ok(mut g) = self.versions.write() {
            *g = versions;
        }
    }

    fn version_of(&self, manifest: &ToolManifest) -> Option<String> {
        self.versions
            .read()
            .ok()
            .and_then(|g| g.get(&manifest.id).cloned())
            .unwrap_or_else(|| Some(manifest.version.clone()))
    }
}

/// Why a pack's guardrail check did not answer a result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CheckCallError {
    /// The pack serves no check of that id.
    #[error("the pack serves no check \"{check_id}\"")]
    NotInPack { check_id: String },
    /// The check ran and failed (it threw, its config did not fit, …): `code: message`.
    #[error("{code}: {message}")]
    Check { code: String, message: String },
    /// The service could not be reached or did not answer (`unavailable: …` when the check
    /// provably did not run, else `failed: …`).
    #[error("{message}")]
    Transport { message: String },
}

impl PackServiceCaller {
    /// Runs check `check_id` with `config` over `trace` (a `RunTrace`) in the service serving
    /// now; a `cancel` that fires stops waiting at once.
    pub async fn call_check(
        &self,
        check_id: &str,
        config: Map<String, Value>,
        trace: Value,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<CheckResult, CheckCallError> {
        let service = self.slot.get().map_err(|why| CheckCallError::Transport {
            message: format!("unavailable: {why}; the check did not run"),
        })?;
        let invoke = CheckInvoke {
            v: V2,
            check: CheckRef {
                id: check_id.to_owned(),
                extra: Map::new(),
            },
            config,
            trace: Some(trace),
            extra: Map::new(),
        };
        let options = CallOptions::default();
        let answer = tokio::select! {
            a = service.client.invoke_check(&invoke, &options) => a,
            () = cancel.cancelled() => {
                return Err(CheckCallError::Transport {
                    message: "failed: the run was cancelled while the check was in flight".into(),
                });
            }
        };
        let answer = answer.map_err(|e| CheckCallError::Transport {
            message: e.relay_message(),
        })?;
        match answer.response {
            Response::CheckResult(r) => Ok(r.result),
            Response::Error(e) if e.code == ErrorCode::CheckNotInPack => {
                Err(CheckCallError::NotInPack {
                    check_id: check_id.to_owned(),
                })
            }
            Response::Error(e) => Err(CheckCallError::Check {
                code: e.code.as_str().to_owned(),
                message: e.message,
            }),
            Response::Result(_) => Err(CheckCallError::Transport {
                message: "failed: the pack service answered a check with a tool result".into(),
            }),
            Response::Pause(_) => Err(CheckCallError::Transport {
                message: "failed: the pack service answered a check with a pause".into(),
            }),
        }
    }
}

/// The wire `ctx` of a call. `wait` goes only to a tool that declares `pauses`: no other
/// tool (nor an official service, which ignores it anyway) ever sees a wait token.
/// `secrets` is `{NAME: value}` for the names the tool's `needsSpec.secrets` declares.
fn call_context(manifest: &ToolManifest, ctx: &ToolContext) -> CallContext {
    let mut call_ctx = CallContext::new(
        ctx.tenant_id.clone(),
        ctx.run_id.clone().unwrap_or_default(),
    );
    call_ctx.project_id = ctx.project_id.clone();
    call_ctx.org_id = ctx.org_id.clone();
    call_ctx.request_id = ctx.request_id.clone();
    call_ctx.idempotency_key = ctx.idempotency_key.clone();
    call_ctx.env = ctx.env.as_ref().map(|e| (**e).clone());
    // Exactly the secrets the tool declares, resolved by the runtime before the call.
    call_ctx.secrets = ctx.secret_values.as_ref().map(|s| {
        s.0.iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect()
    });
    call_ctx.connections = call_connections(manifest, ctx);
    // SDKs without `ctx.connections` (the official Python SDK 0.1.10) read each token as
    // the secret `connection:<name>` (docs/connections.md).
    if let Some(connections) = &call_ctx.connections {
        let secrets = call_ctx.secrets.get_or_insert_with(Map::new);
        for (name, c) in connections {
            secrets.insert(
                format!("{CONNECTION_SECRET_PREFIX}{name}"),
                Value::String(c.access_token.clone()),
            );
        }
    }
    if manifest.pauses() {
        call_ctx.wait = ctx.wait.as_ref().map(|w| CallWait {
            token: w.token.clone(),
            link: w.link.clone(),
            expires_at: w.expires_at.clone(),
            timeout_ms: w.timeout_ms,
            extra: Map::new(),
        });
    }
    call_ctx
}

/// The prefix of a connection's access token among the call's `ctx.secrets`.
pub const CONNECTION_SECRET_PREFIX: &str = "connection:";

/// The wire's `ctx.connections`: each connection the tool declares that the runtime resolved.
fn call_connections(
    manifest: &ToolManifest,
    ctx: &ToolContext,
) -> Option<std::collections::BTreeMap<String, kindgi_spec::pack_protocol::CallConnection>> {
    let tokens = ctx.connections.as_ref()?;
    let needs = manifest.needs_spec.as_ref()?.connections.as_ref()?;
    let sent: std::collections::BTreeMap<_, _> = needs
        .iter()
        .filter_map(|(name, need)| {
            let token = tokens.get(name)?;
            Some((
                name.clone(),
                kindgi_spec::pack_protocol::CallConnection {
                    app: need.app.clone(),
                    as_: match need.as_ {
                        kindgi_spec::tool::ConnectionOwner::Person => "person".into(),
                        kindgi_spec::tool::ConnectionOwner::Company => "company".into(),
                    },
                    access_token: token.clone(),
                },
            ))
        })
        .collect();
    (!sent.is_empty()).then_some(sent)
}

/// What a pack answered to a tool call, before the caller decides whether a pause is one
/// it may take.
enum Answered {
    Output(Value),
    Paused(ToolPause),
}

/// The service answered something this call cannot take: it may have run.
fn failed(message: impl std::fmt::Display) -> PackCallError {
    PackCallError::Protocol {
        detail: message.to_string(),
    }
}

/// A pause is taken only from a tool that declares `pauses` and was sent a ticket, with a
/// timeout that is a positive number of milliseconds up to 24 days. Anything else is the
/// pack breaking the protocol: the call may have run, so it fails (and is not retried).
fn take_pause(
    manifest: &ToolManifest,
    ctx: &ToolContext,
    pause: &ToolPause,
) -> Result<CallOutcome, PackCallError> {
    let id = &manifest.id;
    if !manifest.pauses() {
        return Err(failed(format_args!(
            "tool \"{id}\" answered `pause`, but it does not declare `pauses: true`, so its call cannot wait"
        )));
    }
    if ctx.wait.is_none() {
        return Err(failed(format_args!(
            "tool \"{id}\" answered `pause`, but its call carried no wait ticket (`ctx.wait`), so nobody could answer it"
        )));
    }
    let timeout_ms = pause
        .timeout()
        .map_err(|why| failed(format_args!("tool \"{id}\" answered a `pause` whose {why}")))?;
    Ok(CallOutcome::Paused { timeout_ms })
}

impl PackServiceCaller {
    /// Sends one call to the service serving now and reads its answer.
    async fn invoke(
        &self,
        manifest: &ToolManifest,
        input: Value,
        ctx: &ToolContext,
    ) -> Result<Answered, PackCallError> {
        let service = self
            .slot
            .get()
            .map_err(|why| PackCallError::NotServing { why })?;
        // Learnt before they leave, so whatever the service prints of them is masked.
        if let Some(secrets) = &ctx.secret_values {
            for value in secrets.0.values() {
                self.slot.mask.add(value);
            }
        }
        if let Some(tokens) = &ctx.connections {
            for token in tokens.values() {
                self.slot.mask.add(token);
            }
        }
        let invoke = ToolInvoke::new(
            ToolRef {
                id: manifest.id.clone(),
                version: self.version_of(manifest),
                extra: Default::default(),
            },
            input,
            call_context(manifest, ctx),
        );
        let options = CallOptions::default();
        let call = service.client.invoke_tool(&invoke, &options);
        let answer = tokio::select! {
            a = call => a,
            () = ctx.signal.cancelled() => {
                return Err(PackCallError::Cancelled);
            }
        };
        // The client's error is the seam's: passed on whole, its relay verdict with it.
        let answer = answer?;
        match answer.response {
            Response::Result(r) => Ok(Answered::Output(r.output)),
            Response::Pause(p) => Ok(Answered::Paused(p)),
            Response::Error(e) => Err(PackCallError::Tool {
                code: e.code.as_str().to_owned(),
                message: e.message,
                issues: e
                    .issues
                    .unwrap_or_default()
                    .into_iter()
                    .map(schema_issue)
                    .collect(),
            }),
            Response::CheckResult(_) => Err(failed(
                "the pack service answered a tool call with a check result",
            )),
        }
    }
}

#[async_trait]
impl PackCaller for PackServiceCaller {
    async fn call_tool(
        &self,
        manifest: &ToolManifest,
        input: Value,
        ctx: &ToolContext,
    ) -> Result<Value, PackCallError> {
        match self.invoke(manifest, input, ctx).await? {
            Answered::Output(output) => Ok(output),
            // A caller that cannot wait: even a valid pause has nobody to resume it.
            Answered::Paused(pause) => {
                take_pause(manifest, ctx, &pause)?;
                Err(failed(format_args!(
                    "tool \"{}\" answered `pause`, but this call cannot wait (it was not made through call_or_pause)",
                    manifest.id
                )))
            }
        }
    }

    async fn call_tool_or_pause(
        &self,
        manifest: &ToolManifest,
        input: Value,
        ctx: &ToolContext,
    ) -> Result<CallOutcome, PackCallError> {
        match self.invoke(manifest, input, ctx).await? {
            Answered::Output(output) => Ok(CallOutcome::Done(output)),
            Answered::Paused(pause) => take_pause(manifest, ctx, &pause),
        }
    }
}

/// The runtime manifest of an index tool. An index entry may carry fields the manifest
/// type spells differently; an optional one that does not parse is left out rather than
/// losing the tool (what matters to the runtime is id, version, schemas, `mutating`,
/// `effects` and `pauses`).
pub fn manifest_of(tool: &IndexTool) -> Result<ToolManifest, String> {
    let mut m = Map::new();
    m.insert("id".into(), json!(tool.id));
    m.insert(
        "description".into(),
        json!(tool.description.clone().unwrap_or_default()),
    );
    m.insert("version".into(), json!(tool.version().unwrap_or("0.0.0")));
    m.insert("input".into(), tool.input.clone());
    m.insert("output".into(), tool.output.clone());
    let optional: [(&str, Option<Value>); 9] = [
        ("effects", tool.effects.clone().map(Value::Array)),
        ("mutating", tool.mutating.map(Value::Bool)),
        ("pauses", tool.pauses.map(Value::Bool)),
        (
            "needsApprovalWhenUnattended",
            tool.needs_approval_when_unattended.map(Value::Bool),
        ),
        ("needs", tool.needs.clone().map(Value::Array)),
        ("needsSpec", tool.needs_spec.clone()),
        ("sandbox", tool.sandbox.clone().map(Value::String)),
        ("limits", tool.limits.clone()),
        ("network", tool.network.clone()),
    ];
    for (key, value) in optional {
        let Some(value) = value else { continue };
        let mut trial = m.clone();
        trial.insert(key.into(), value.clone());
        if serde_json::from_value::<ToolManifest>(Value::Object(trial)).is_ok() {
            m.insert(key.into(), value);
        } else if matches!(key, "effects" | "mutating" | "pauses") {
            return Err(format!("its `{key}` is not valid: {value}"));
        }
    }
    // Tool schema 1.3.0 (seed 000): an SDK that writes `resultIsOutsideData` has it reach
    // the agent, which wraps the tool's results as outside data.
    if let Some(flag) = tool
        .extra
        .get("resultIsOutsideData")
        .filter(|v| v.is_boolean())
    {
        m.insert("resultIsOutsideData".into(), flag.clone());
    }
    serde_json::from_value(Value::Object(m)).map_err(|e| e.to_string())
}

/// A pack's issue as a schema issue, every one kept: a Zod refinement or a pydantic
/// validator reports only `{instancePath, message}` (pack-protocol.md §3), so an absent
/// `schemaPath` or `keyword` is left empty rather than the issue dropped — which field was
/// wrong is the point of it.
fn schema_issue(w: kindgi_spec::pack_protocol::WireIssue) -> kindgi_schema::Issue {
    kindgi_schema::Issue::new(
        w.instance_path,
        w.schema_path.unwrap_or_default(),
        w.keyword.as_deref().unwrap_or_default(),
        w.params.unwrap_or_default(),
        w.message,
    )
}
