//! One `/v1/invoke` call after its body was read: the protocol's parse rules (and nothing
//! more — unknown fields are tolerated), tool/check resolution, validation (off the async
//! workers, see [`super::offload`]), and running the handler — all under the call's one
//! deadline, which starts once the body is in. Every outcome here is a 200 message.

// A `CallError` is an answer (one per failed call, moved once), not an exceptional path:
// boxing it would add an allocation to every error answer for nothing.
#![allow(clippy::result_large_err)]

use kindgi_schema::{Budgets, CompileError, Issue};
use kindgi_spec::pack_protocol::{CheckResult, ErrorCode};
use kindgi_tools::context::SecretResolver;
use kindgi_tools::{BoxFuture, HandlerError, ToolContext};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

use super::offload::{self, JobError};
use super::pack::{CheckSlot, LoadedPack, ToolSlot};
use super::registry::CheckContext;
use super::state::State;
use crate::log::{Level, Record};
use crate::service::pause_slot::{PAUSE, PauseSlot};
use kindgi_tools::WaitTicket;
use serde::Deserialize;

tokio::task_local! {
    /// The wire `ctx` of the tool call the current task runs (see [`crate::sdk::call_context`]).
    pub(crate) static CALL_CONTEXT: Arc<Map<String, Value>>;
}

/// What a call is about, once known (for the error's `toolId`/`checkId` and the record).
#[derive(Debug, Clone)]
pub(crate) enum Target {
    Tool(Arc<str>),
    Check(Arc<str>),
}

impl Target {
    pub fn id(&self) -> &str {
        match self {
            Target::Tool(id) | Target::Check(id) => id,
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Target::Tool(_) => "tool",
            Target::Check(_) => "check",
        }
    }
}

/// The wire error message, written without building a `Value`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ErrorBody<'a> {
    v: u8,
    kind: &'static str,
    code: &'static str,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    check_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cause: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    issues: Option<&'a [Issue]>,
}

/// A 200 message that is an error.
#[derive(Debug)]
pub(crate) struct CallError {
    pub code: ErrorCode,
    pub message: String,
    pub target: Option<Target>,
    pub cause: Option<Value>,
    pub issues: Option<Vec<Issue>>,
}

impl CallError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            target: None,
            cause: None,
            issues: None,
        }
    }

    pub fn about(mut self, target: &Target) -> Self {
        self.target = Some(target.clone());
        self
    }

    pub fn to_body(&self) -> Vec<u8> {
        let (tool_id, check_id) = match &self.target {
            Some(Target::Tool(id)) => (Some(&**id), None),
            Some(Target::Check(id)) => (None, Some(&**id)),
            None => (None, None),
        };
        let body = ErrorBody {
            v: 2,
            kind: "error",
            code: self.code.as_str(),
            message: &self.message,
            tool_id,
            check_id,
            cause: self.cause.as_ref(),
            issues: self.issues.as_deref(),
        };
        serde_json::to_vec(&body).unwrap_or_default()
    }
}

/// A parsed request, borrowing nothing.
pub(crate) enum Parsed {
    Tool {
        id: String,
        version: Option<String>,
        input: Value,
        ctx: Map<String, Value>,
    },
    Check {
        id: String,
        config: Map<String, Value>,
        trace: Value,
    },
}

fn malformed(message: &str) -> CallError {
    CallError::new(ErrorCode::MalformedMessage, message)
}

/// The parse rules (pack-protocol §2), in order, with their exact messages.
pub(crate) fn parse(body: &[u8]) -> Result<Parsed, CallError> {
    let value: Value =
        serde_json::from_slice(body).map_err(|_| malformed("Request body is not valid JSON"))?;
    let Value::Object(mut msg) = value else {
        return Err(malformed("Message must be a JSON object"));
    };
    match msg.get("v") {
        Some(v) if kindgi_spec::pack_protocol::is_protocol_v2(v) => {}
        Some(v) => {
            return Err(CallError::new(
                ErrorCode::UnknownProtocolVersion,
                format!("Expected protocol v2, got {v}"),
            ));
        }
        None => {
            return Err(CallError::new(
                ErrorCode::UnknownProtocolVersion,
                "Expected protocol v2, got undefined",
            ));
        }
    }
    let kind = match msg.get("kind") {
        Some(Value::String(k)) if k == "invoke" => 0,
        Some(Value::String(k)) if k == "check-invoke" => 1,
        Some(other) => {
            return Err(CallError::new(
                ErrorCode::UnexpectedMessageKind,
                format!("Unknown request kind {other}"),
            ));
        }
        None => {
            return Err(CallError::new(
                ErrorCode::UnexpectedMessageKind,
                "Unknown request kind undefined",
            ));
        }
    };
    if kind == 0 {
        let (id, version) = match msg.get_mut("tool") {
            Some(Value::Object(tool)) => {
                let id = match tool.get_mut("id") {
                    Some(Value::String(id)) if !id.is_empty() => std::mem::take(id),
                    _ => return Err(malformed("`tool.id` is required")),
                };
                let version = match tool.get_mut("version") {
                    None => None,
                    Some(Value::String(v)) => Some(std::mem::take(v)),
                    Some(_) => return Err(malformed("`tool.version` must be a string")),
                };
                (id, version)
            }
            _ => return Err(malformed("`tool.id` is required")),
        };
        let ctx = match msg.remove("ctx") {
            Some(Value::Object(ctx))
                if ctx.get("tenantId").is_some_and(Value::is_string)
                    && ctx.get("runId").is_some_and(Value::is_string) =>
            {
                ctx
            }
            _ => return Err(malformed("`ctx` needs string `tenantId` and `runId`")),
        };
        let input = msg.remove("input").unwrap_or(Value::Null);
        Ok(Parsed::Tool {
            id,
            version,
            input,
            ctx,
        })
    } else {
        let id = match msg.get_mut("check").and_then(|c| c.get_mut("id")) {
            Some(Value::String(id)) if !id.is_empty() => std::mem::take(id),
            _ => return Err(malformed("`check.id` is required")),
        };
        let config = match msg.remove("config") {
            Some(Value::Object(config)) => config,
            _ => return Err(malformed("`config` must be an object")),
        };
        let trace = msg.remove("trace").unwrap_or(Value::Null);
        Ok(Parsed::Check { id, config, trace })
    }
}

/// `kindgi-timeout-ms`: trimmed ASCII digits > 0, else the default; huge values clamp.
pub(crate) fn parse_timeout(raw: Option<&[u8]>) -> Duration {
    const MAX_MS: u64 = i32::MAX as u64; // ~24.8 days: far beyond any call, safe for timers
    let default = Duration::from_millis(kindgi_spec::pack_protocol::DEFAULT_TIMEOUT_MS);
    let Some(raw) = raw else { return default };
    let trimmed = raw.trim_ascii();
    if trimmed.is_empty() || !trimmed.iter().all(u8::is_ascii_digit) {
        return default;
    }
    let mut ms: u64 = 0;
    for d in trimmed {
        ms = ms.saturating_mul(10).saturating_add(u64::from(d - b'0'));
    }
    if ms == 0 {
        default
    } else {
        Duration::from_millis(ms.min(MAX_MS))
    }
}

fn ctx_str(ctx: &Map<String, Value>, key: &str) -> Option<String> {
    ctx.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// Secrets the caller sent in `ctx.secrets`, by name (or env name).
#[derive(Debug)]
struct WireSecrets(Map<String, Value>);

impl SecretResolver for WireSecrets {
    fn resolve<'a>(
        &'a self,
        env_name: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<String, String>> {
        let found = self
            .0
            .get(name)
            .or_else(|| self.0.get(env_name))
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| format!("The call carries no secret \"{name}\""));
        Box::pin(async move { found })
    }
}

/// The handler's context: the wire ctx's known fields plus the call's signal. `wait` only
/// for a tool that declares `pauses` (and only when it is a whole ticket).
fn tool_context(ctx: &Map<String, Value>, signal: CancellationToken, pauses: bool) -> ToolContext {
    let mut tc = ToolContext::new(
        ctx.get("tenantId")
            .and_then(Value::as_str)
            .unwrap_or_default(),
    );
    tc.run_id = ctx_str(ctx, "runId");
    tc.request_id = ctx_str(ctx, "requestId");
    tc.idempotency_key = ctx_str(ctx, "idempotencyKey");
    tc.project_id = ctx_str(ctx, "projectId");
    tc.org_id = ctx_str(ctx, "orgId");
    if let Some(Value::Object(env)) = ctx.get("env") {
        let env: BTreeMap<String, String> = env
            .iter()
            .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_owned())))
            .collect();
        tc.env = Some(Arc::new(env));
    }
    if let Some(Value::Object(secrets)) = ctx.get("secrets") {
        tc.secrets = Some(Arc::new(WireSecrets(secrets.clone())));
    }
    if let Some(Value::Object(connections)) = ctx.get("connections") {
        let tokens: BTreeMap<String, String> = connections
            .iter()
            .filter_map(|(name, c)| {
                let token = c.get("accessToken")?.as_str()?;
                Some((name.clone(), token.to_owned()))
            })
            .collect();
        tc.connections = Some(Arc::new(tokens));
    }
    if pauses {
        tc.wait = ctx
            .get("wait")
            .and_then(|w| WaitTicket::deserialize(w).ok());
    }
    tc.signal = signal;
    tc
}

/// The answer of a handler that paused: `{v:2, kind:"pause", timeoutMs?}` when the tool
/// may pause, else why not (docs/pauses.md).
fn pause_body(
    slot: &ToolSlot,
    target: &Target,
    has_ticket: bool,
    timeout_ms: Option<u64>,
) -> Result<Vec<u8>, CallError> {
    let id = &*slot.id;
    let refuse =
        |why: String| Err(CallError::new(ErrorCode::OutputValidationFailed, why).about(target));
    if !slot.pauses {
        return refuse(format!(
            "Tool \"{id}\" handler answered pause, but the tool does not declare `pauses: true`; declare it (Tool::define(..).pauses(true)) or return the call's output"
        ));
    }
    if !has_ticket {
        return refuse(format!(
            "Tool \"{id}\" handler answered pause, but the call carries no wait ticket (`ctx.wait`): the runtime calling it cannot wait for another system's answer"
        ));
    }
    let timeout = match timeout_ms {
        None => None,
        Some(ms) => match kindgi_spec::pack_protocol::pause_timeout(&Value::from(ms)) {
            Ok(ms) => Some(ms),
            Err(why) => {
                return refuse(format!(
                    "Tool \"{id}\" handler answered a pause whose {why}"
                ));
            }
        },
    };
    let mut body = Vec::with_capacity(48);
    body.extend_from_slice(br#"{"v":2,"kind":"pause""#);
    if let Some(ms) = timeout {
        body.extend_from_slice(br#","timeoutMs":"#);
        body.extend_from_slice(ms.to_string().as_bytes());
    }
    body.push(b'}');
    Ok(body)
}

/// A thrown error as the wire's `cause`.
fn cause(message: &str, name: &str, at: &str) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), Value::from(name));
    m.insert("message".into(), Value::from(message));
    m.insert(
        "stack".into(),
        Value::from(format!("{name}: {message}\n    at {at}")),
    );
    Value::Object(m)
}

fn thrown(e: &HandlerError) -> (&'static str, String) {
    match e {
        HandlerError::Failed(m) => ("Error", m.clone()),
        HandlerError::Precondition { reason, message } => {
            ("PreconditionError", format!("{reason}: {message}"))
        }
    }
}

fn compile_failed(what: &str, id: &str, side: &str, e: &CompileError) -> String {
    format!(
        "{what} \"{id}\" {side} schema failed to compile: {}: {}",
        e.name, e.message
    )
}

/// Why a spawned handler did not return normally.
enum Ran<T> {
    Done(T),
    Panicked(String),
}

/// Marks the moment the call gave up, so a handler that finishes later is logged.
struct Late {
    gave_up: std::sync::Mutex<Option<Instant>>,
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".to_owned()
    }
}

/// Spawns `fut` (so a deadline can answer while it keeps going) and logs when it finishes
/// after the call gave up.
fn spawn_watched<T: Send + 'static>(
    state: &Arc<State>,
    target: &Target,
    fut: BoxFuture<'static, T>,
) -> (tokio::task::JoinHandle<Ran<T>>, Arc<Late>) {
    use futures::FutureExt;
    let late = Arc::new(Late {
        gave_up: std::sync::Mutex::new(None),
    });
    let watcher = late.clone();
    let state = state.clone();
    let target = target.clone();
    let handle = tokio::spawn(async move {
        let ran = match std::panic::AssertUnwindSafe(fut).catch_unwind().await {
            Ok(v) => Ran::Done(v),
            Err(p) => Ran::Panicked(panic_message(&*p)),
        };
        let gave_up = watcher.gave_up.lock().ok().and_then(|g| *g);
        if let Some(at) = gave_up {
            let after_ms = at.elapsed().as_millis() as u64;
            state.logger.write(
                Record::new(
                    Level::Warn,
                    "pack",
                    format!(
                        "{} {} finished {after_ms}ms after its call ended",
                        target.kind(),
                        target.id()
                    ),
                )
                .with_event("handler-finished-late")
                .field("target", target.kind())
                .field("id", target.id())
                .field("afterMs", after_ms),
            );
        }
        ran
    });
    (handle, late)
}

/// Waits for the spawned work or the deadline, whichever is first.
async fn settle<T>(
    handle: tokio::task::JoinHandle<Ran<T>>,
    late: &Late,
    until: tokio::time::Instant,
    signal: &CancellationToken,
    target: &Target,
) -> Result<Ran<T>, CallError> {
    tokio::select! {
        joined = handle => match joined {
            Ok(ran) => Ok(ran),
            Err(e) => Ok(Ran::Panicked(e.to_string())),
        },
        () = tokio::time::sleep_until(until) => {
            if let Ok(mut g) = late.gave_up.lock() {
                *g = Some(Instant::now());
            }
            Err(passed_deadline(target, signal))
        }
    }
}

/// The deadline answer; fires the call's signal first.
pub(crate) fn passed_deadline(target: &Target, signal: &CancellationToken) -> CallError {
    signal.cancel();
    CallError::new(
        ErrorCode::DeadlineExceeded,
        format!("{} passed its deadline", target.id()),
    )
    .about(target)
}

/// The answer when an offloaded validation gave no value: its deadline passed, or (a bug)
/// the validator panicked.
fn job_failed(
    e: JobError,
    code: ErrorCode,
    what: &str,
    target: &Target,
    signal: &CancellationToken,
) -> CallError {
    match e {
        JobError::Expired => passed_deadline(target, signal),
        JobError::Panicked(message) => CallError::new(
            code,
            format!("Validating the {what} of {} failed: {message}", target.id()),
        )
        .about(target),
    }
}

/// Resolves the tool entry an invoke names.
fn resolve_tool<'p>(
    pack: &'p LoadedPack,
    id: &str,
    version: Option<&str>,
) -> Result<&'p Arc<ToolSlot>, CallError> {
    let target = Target::Tool(Arc::from(id));
    let Some(slots) = pack.tools.get(id) else {
        return Err(CallError::new(
            ErrorCode::ToolNotInPack,
            format!("This pack has no tool \"{id}\""),
        )
        .about(&target));
    };
    let versions = || {
        slots
            .iter()
            .map(|s| s.version.as_deref().unwrap_or("unversioned"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match version {
        Some(v) => slots
            .iter()
            .find(|s| s.version.as_deref() == Some(v))
            .ok_or_else(|| {
                CallError::new(
                    ErrorCode::ToolVersionMismatch,
                    format!(
                        "Tool \"{id}\" is {} in this pack; the caller asked for {v}",
                        versions()
                    ),
                )
                .about(&target)
            }),
        None if slots.len() == 1 => Ok(&slots[0]),
        None => Err(CallError::new(
            ErrorCode::ToolVersionMismatch,
            format!(
                "Tool \"{id}\" has several versions in this pack ({}); the caller named none",
                versions()
            ),
        )
        .about(&target)),
    }
}

/// The answer to a tool call: the result body, or an error.
#[allow(clippy::too_many_arguments)] // one call's parts, moved in once
pub(crate) async fn run_tool(
    state: &Arc<State>,
    id: String,
    version: Option<String>,
    mut input: Value,
    ctx: Map<String, Value>,
    small: bool,
    until: tokio::time::Instant,
    signal: &CancellationToken,
    target_out: &mut Option<Target>,
) -> Result<Vec<u8>, CallError> {
    let slot = resolve_tool(&state.pack, &id, version.as_deref())?.clone();
    let target = Target::Tool(slot.id.clone());
    *target_out = Some(target.clone());
    match &slot.input {
        Err(e) => {
            let mut err = CallError::new(
                ErrorCode::InputValidationFailed,
                compile_failed("Tool", &id, "input", e),
            )
            .about(&target);
            err.cause = Some(cause(&e.message, &e.name, &id));
            return Err(err);
        }
        Ok(validator) => {
            let tried = match small {
                true => validator.try_validate_in_place_within(&mut input, &offload::INLINE),
                false => None,
            };
            let result = match tried {
                Some(result) => result,
                None => {
                    let job = slot.clone();
                    let (checked, result) = offload::run(state, until, move || {
                        let result = match &job.input {
                            Ok(validator) => validator.validate_in_place(&mut input),
                            Err(_) => Ok(()),
                        };
                        (input, result)
                    })
                    .await
                    .map_err(|e| {
                        job_failed(
                            e,
                            ErrorCode::InputValidationFailed,
                            "input",
                            &target,
                            signal,
                        )
                    })?;
                    input = checked;
                    result
                }
            };
            if let Err(issues) = result {
                let mut err = CallError::new(
                    ErrorCode::InputValidationFailed,
                    format!("Tool \"{id}\" input failed validation"),
                )
                .about(&target);
                err.issues = Some(issues.into());
                return Err(err);
            }
        }
    }
    let tool_ctx = tool_context(&ctx, signal.clone(), slot.pauses);
    let has_ticket = tool_ctx.wait.is_some();
    let running = (slot.handler)(input, tool_ctx);
    let paused = Arc::new(PauseSlot::default());
    let fut: BoxFuture<'static, _> =
        Box::pin(CALL_CONTEXT.scope(Arc::new(ctx), PAUSE.scope(paused.clone(), running)));
    let (handle, late) = spawn_watched(state, &target, fut);
    let output = match settle(handle, &late, until, signal, &target).await? {
        Ran::Done(Ok(output)) => output,
        // A pause travels as the handler's error, with the slot saying it is one.
        Ran::Done(Err(_)) if paused.asked().is_some() => {
            let timeout_ms = paused.asked().flatten();
            return pause_body(&slot, &target, has_ticket, timeout_ms);
        }
        Ran::Done(Err(e)) => {
            let (name, message) = thrown(&e);
            let mut err = CallError::new(
                ErrorCode::HandlerThrow,
                format!("Handler for tool \"{id}\" threw: {name}: {message}"),
            )
            .about(&target);
            err.cause = Some(cause(&message, name, &id));
            return Err(err);
        }
        Ran::Panicked(message) => {
            let mut err = CallError::new(
                ErrorCode::HandlerThrow,
                format!("Handler for tool \"{id}\" threw: Panic: {message}"),
            )
            .about(&target);
            err.cause = Some(cause(&message, "Panic", &id));
            return Err(err);
        }
    };
    if offload::is_small(&output) {
        if let Some(body) = result_body(&slot, &id, &target, &output, Some(&offload::INLINE)) {
            return body;
        }
    }
    let job_target = target.clone();
    offload::run(state, until, move || {
        result_body(&slot, &id, &job_target, &output, None).unwrap_or_else(|| {
            Err(CallError::new(
                ErrorCode::OutputValidationFailed,
                "output validation gave no answer".to_owned(),
            ))
        })
    })
    .await
    .map_err(|e| {
        job_failed(
            e,
            ErrorCode::OutputValidationFailed,
            "output",
            &target,
            signal,
        )
    })?
}

/// Validates a handler's output and writes the result message: under `budgets` where given
/// (on an async worker; `None` when they ran out), else under the validator's own (in an
/// offloaded job; always `Some`).
fn result_body(
    slot: &ToolSlot,
    id: &str,
    target: &Target,
    output: &Value,
    budgets: Option<&Budgets>,
) -> Option<Result<Vec<u8>, CallError>> {
    match &slot.output {
        Err(e) => {
            let mut err = CallError::new(
                ErrorCode::OutputValidationFailed,
                compile_failed("Tool", id, "output", e),
            )
            .about(target);
            err.cause = Some(cause(&e.message, &e.name, id));
            return Some(Err(err));
        }
        Ok(validator) => {
            let checked = match budgets {
                Some(budgets) => validator.try_validate_within(output, budgets)?,
                None => validator.validate(output),
            };
            if let Err(issues) = checked {
                let mut err = CallError::new(
                    ErrorCode::OutputValidationFailed,
                    format!("Tool \"{id}\" handler produced output that failed validation"),
                )
                .about(target);
                err.issues = Some(issues.into());
                return Some(Err(err));
            }
        }
    }
    let mut body = Vec::with_capacity(64);
    body.extend_from_slice(br#"{"v":2,"kind":"result","output":"#);
    if let Err(e) = serde_json::to_writer(&mut body, output) {
        return Some(Err(CallError::new(
            ErrorCode::OutputValidationFailed,
            e.to_string(),
        )
        .about(target)));
    }
    body.push(b'}');
    Some(Ok(body))
}

/// The answer to a check call.
pub(crate) async fn run_check(
    state: &Arc<State>,
    id: String,
    config: Map<String, Value>,
    trace: Value,
    until: tokio::time::Instant,
    signal: &CancellationToken,
    target_out: &mut Option<Target>,
) -> Result<Vec<u8>, CallError> {
    let slot: Arc<CheckSlot> = match state.pack.checks.get(&id) {
        Some(slot) => slot.clone(),
        None => {
            return Err(CallError::new(
                ErrorCode::CheckNotInPack,
                format!("This pack has no check \"{id}\""),
            )
            .about(&Target::Check(Arc::from(id.as_str()))));
        }
    };
    let target = Target::Check(slot.check_id.clone());
    *target_out = Some(target.clone());
    let mut config = Value::Object(config);
    match &slot.config {
        None => {}
        Some(Err(e)) => {
            let mut err = CallError::new(
                ErrorCode::InputValidationFailed,
                compile_failed("Check", &id, "config", e),
            )
            .about(&target);
            err.cause = Some(cause(&e.message, &e.name, &id));
            return Err(err);
        }
        Some(Ok(_)) => {
            let job = slot.clone();
            let (checked, result) = offload::run(state, until, move || {
                let result = match &job.config {
                    Some(Ok(validator)) => validator.validate(&config),
                    _ => Ok(()),
                };
                (config, result)
            })
            .await
            .map_err(|e| {
                job_failed(
                    e,
                    ErrorCode::InputValidationFailed,
                    "config",
                    &target,
                    signal,
                )
            })?;
            config = checked;
            if let Err(issues) = result {
                let mut message = format!("Check \"{id}\" config failed validation");
                if let Some(first) = issues.first() {
                    if !first.instance_path().is_empty() {
                        message.push_str(" at ");
                        message.push_str(first.instance_path());
                    }
                    message.push_str(": ");
                    message.push_str(&first.message());
                }
                let mut err =
                    CallError::new(ErrorCode::InputValidationFailed, message).about(&target);
                err.issues = Some(issues.into());
                return Err(err);
            }
        }
    }
    let config = match config {
        Value::Object(config) => config,
        _ => Map::new(),
    };
    let fut = (slot.evaluate)(
        config,
        trace,
        CheckContext {
            signal: signal.clone(),
        },
    );
    let (handle, late) = spawn_watched(state, &target, fut);
    let result: CheckResult = match settle(handle, &late, until, signal, &target).await? {
        Ran::Done(Ok(result)) => result,
        Ran::Done(Err(e)) => {
            let (name, message) = thrown(&e);
            let mut err = CallError::new(
                ErrorCode::HandlerThrow,
                format!("Check \"{id}\" evaluate() threw: {name}: {message}"),
            )
            .about(&target);
            err.cause = Some(cause(&message, name, &id));
            return Err(err);
        }
        Ran::Panicked(message) => {
            let mut err = CallError::new(
                ErrorCode::HandlerThrow,
                format!("Check \"{id}\" evaluate() threw: Panic: {message}"),
            )
            .about(&target);
            err.cause = Some(cause(&message, "Panic", &id));
            return Err(err);
        }
    };
    let mut body = Vec::with_capacity(64);
    body.extend_from_slice(br#"{"v":2,"kind":"check-result","result":"#);
    serde_json::to_writer(&mut body, &result).map_err(|e| {
        CallError::new(ErrorCode::OutputValidationFailed, e.to_string()).about(&target)
    })?;
    body.push(b'}');
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(body: &str) -> CallError {
        match parse(body.as_bytes()) {
            Err(e) => e,
            Ok(_) => panic!("expected an error for {body}"),
        }
    }

    #[test]
    fn parse_rules_in_order() {
        assert_eq!(err("not json").message, "Request body is not valid JSON");
        assert_eq!(err("[1]").message, "Message must be a JSON object");
        assert_eq!(err("null").message, "Message must be a JSON object");
        assert_eq!(err(r#"{"v":1}"#).message, "Expected protocol v2, got 1");
        assert_eq!(
            err(r#"{"v":"2"}"#).message,
            "Expected protocol v2, got \"2\""
        );
        assert_eq!(err(r#"{}"#).message, "Expected protocol v2, got undefined");
        assert_eq!(
            err(r#"{"v":2,"kind":"bogus"}"#).message,
            "Unknown request kind \"bogus\""
        );
        assert_eq!(
            err(r#"{"v":2,"kind":"invoke","tool":{}}"#).message,
            "`tool.id` is required"
        );
        assert_eq!(
            err(r#"{"v":2,"kind":"invoke","tool":{"id":"a","version":7}}"#).message,
            "`tool.version` must be a string"
        );
        assert_eq!(
            err(r#"{"v":2,"kind":"invoke","tool":{"id":"a"},"ctx":{"tenantId":"t"}}"#).message,
            "`ctx` needs string `tenantId` and `runId`"
        );
        assert_eq!(
            err(r#"{"v":2,"kind":"check-invoke","check":{}}"#).message,
            "`check.id` is required"
        );
        assert_eq!(
            err(r#"{"v":2,"kind":"check-invoke","check":{"id":"c"},"config":[]}"#).message,
            "`config` must be an object"
        );
        assert!(parse(br#"{"v":2.0,"kind":"invoke","tool":{"id":"a"},"ctx":{"tenantId":"t","runId":"r","x":1},"y":2}"#).is_ok());
    }

    #[test]
    fn timeout_rules() {
        assert_eq!(parse_timeout(None), Duration::from_millis(120_000));
        assert_eq!(parse_timeout(Some(b" 100 ")), Duration::from_millis(100));
        for bad in [&b"abc"[..], b"0", b"-1", b"1e3", b""] {
            assert_eq!(parse_timeout(Some(bad)), Duration::from_millis(120_000));
        }
        assert_eq!(
            parse_timeout(Some(b"99999999999999999999999")),
            Duration::from_millis(i32::MAX as u64)
        );
    }
}
