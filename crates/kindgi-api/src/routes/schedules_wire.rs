//! The wire of `/v1/schedules` (platform-api.md §8): `OA:ScheduleRecord` and
//! `OA:ScheduleFire` of core's records, and the register and PATCH bodies read into them,
//! with the reference's `400 bad-input` messages (`api/routes/schedules.ts`) and `400
//! trigger-invalid-config` for an expression or zone the runtime refuses (naming the field).

use axum::http::StatusCode;
use kindgi_core::schedule::{
    CatchUp, DEFAULT_STARTING_DEADLINE_SECONDS, MAX_STARTING_DEADLINE_SECONDS, Overlap,
    ScheduleFire, ScheduleRecord, ScheduleTarget,
};
use kindgi_runtime::triggers::CronError;
use serde_json::{Map, Value, json};

use super::key_holder::iso;
use crate::error::ApiError;

/// The longest `label`.
pub const MAX_LABEL: usize = 200;
/// The longest id of a flow or agent, or a version.
const MAX_ID: usize = 200;

/// The message of a body that names no target, or several.
pub const NAME_ONE_TARGET: &str = "Name what the schedule runs: `flowId` (with `flowVersion`), `agentId`, or `improve` — exactly one of them";

/// `OA:ScheduleRecord` of `s`, with `upcoming` when asked for.
pub fn record_json(s: &ScheduleRecord, upcoming: Option<&[i64]>) -> Value {
    let mut o = Map::new();
    o.insert("scheduleId".into(), json!(s.id));
    o.insert("triggerId".into(), json!(s.id));
    match &s.target {
        ScheduleTarget::Flow {
            flow_id,
            flow_version,
        } => {
            o.insert("flowId".into(), json!(flow_id));
            o.insert("flowVersion".into(), json!(flow_version));
        }
        ScheduleTarget::Agent {
            agent_id,
            agent_version,
        } => {
            o.insert("agentId".into(), json!(agent_id));
            if let Some(v) = agent_version {
                o.insert("agentVersion".into(), json!(v));
            }
        }
    }
    o.insert("projectId".into(), json!(s.project_id));
    o.insert("owner".into(), json!(s.owner));
    o.insert("cronExpression".into(), json!(s.cron_expression));
    if let Some(tz) = &s.timezone {
        o.insert("timezone".into(), json!(tz));
    }
    if let Some(input) = &s.input {
        o.insert("input".into(), input.clone());
    }
    o.insert("catchUp".into(), json!(s.catch_up.as_str()));
    o.insert("overlap".into(), json!(s.overlap.as_str()));
    o.insert(
        "startingDeadlineSeconds".into(),
        json!(s.starting_deadline_seconds),
    );
    o.insert("label".into(), json!(s.label));
    o.insert("status".into(), json!(s.status.as_str()));
    if let Some(r) = &s.status_reason {
        o.insert("statusReason".into(), json!(r));
    }
    o.insert("nextFireAt".into(), json!(s.next_fire_at.map(iso)));
    if let Some(up) = upcoming {
        o.insert(
            "upcoming".into(),
            Value::Array(up.iter().map(|t| json!(iso(*t))).collect()),
        );
    }
    o.insert("lastFiredAt".into(), json!(s.last_fired_at.map(iso)));
    if !s.tools_allowed_unattended.is_empty() {
        o.insert(
            super::unattended::FIELD.into(),
            json!(s.tools_allowed_unattended),
        );
    }
    o.insert("createdAt".into(), json!(iso(s.created_at)));
    o.insert("updatedAt".into(), json!(iso(s.updated_at)));
    Value::Object(o)
}

/// `OA:ScheduleFire` of `f`.
pub fn fire_json(f: &ScheduleFire) -> Value {
    let mut o = Map::new();
    o.insert("fireId".into(), json!(f.id));
    o.insert("scheduleId".into(), json!(f.schedule_id));
    o.insert("triggerId".into(), json!(f.schedule_id));
    if let Some(t) = f.scheduled_for {
        o.insert("scheduledFor".into(), json!(iso(t)));
    }
    o.insert("firedAt".into(), json!(iso(f.fired_at)));
    o.insert("outcome".into(), json!(f.outcome.as_str()));
    if let Some(r) = &f.run_id {
        o.insert("runId".into(), json!(r));
    }
    if let Some(d) = &f.detail {
        o.insert("detail".into(), json!(d));
    }
    if let Some(c) = f.counts_toward_pause {
        o.insert("countsTowardPause".into(), json!(c));
    }
    if let Some(m) = f.missed_count {
        o.insert("missedCount".into(), json!(m));
    }
    if f.manual {
        o.insert("manual".into(), json!(true));
    }
    Value::Object(o)
}

fn bad(field: &str, message: impl Into<String>) -> ApiError {
    ApiError::bad_input(message).with_details(json!({"field": field}))
}

/// `400 trigger-invalid-config` for an expression or zone the runtime refuses.
pub fn invalid_config(e: &CronError) -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "trigger-invalid-config",
        e.to_string(),
    )
    .with_details(json!({"field": e.field()}))
}

/// `501 trigger-operation-unsupported` for an `improve` target.
pub fn improve_unsupported() -> ApiError {
    ApiError::new(
        StatusCode::NOT_IMPLEMENTED,
        "trigger-operation-unsupported",
        "`improve` schedules (improvement passes) are not served by this runtime: schedule a flow or an agent",
    )
    .with_details(json!({"field": "improve"}))
}

/// A non-empty string field of at most `max` characters, when present.
fn string_field<'a>(
    body: &'a Map<String, Value>,
    field: &str,
    max: usize,
) -> Result<Option<&'a str>, ApiError> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.is_empty() && s.chars().count() <= max => Ok(Some(s)),
        Some(_) => Err(bad(
            field,
            format!("`{field}` must be a non-empty string of at most {max} characters"),
        )),
    }
}

/// True when `body` names any target field.
pub fn names_target(body: &Map<String, Value>) -> bool {
    [
        "flowId",
        "flowVersion",
        "agentId",
        "agentVersion",
        "improve",
    ]
    .iter()
    .any(|f| body.get(*f).is_some_and(|v| !v.is_null()))
}

/// The target a body names (register, or a PATCH naming any target field).
pub fn target_of(body: &Map<String, Value>) -> Result<ScheduleTarget, ApiError> {
    let flow = string_field(body, "flowId", MAX_ID)?;
    let agent = string_field(body, "agentId", MAX_ID)?;
    let improve = body.get("improve").is_some_and(|v| !v.is_null());
    match (flow, agent, improve) {
        (Some(flow_id), None, false) => {
            let version = string_field(body, "flowVersion", MAX_ID)?
                .ok_or_else(|| bad("flowVersion", "`flowVersion` is required with `flowId`"))?;
            Ok(ScheduleTarget::Flow {
                flow_id: flow_id.to_owned(),
                flow_version: version.to_owned(),
            })
        }
        (None, Some(agent_id), false) => Ok(ScheduleTarget::Agent {
            agent_id: agent_id.to_owned(),
            agent_version: string_field(body, "agentVersion", MAX_ID)?.map(str::to_owned),
        }),
        (None, None, true) => Err(improve_unsupported()),
        _ => Err(bad("flowId", NAME_ONE_TARGET)),
    }
}

/// `config` of a body: an object, when present.
pub fn config_of(body: &Map<String, Value>) -> Result<Option<&Map<String, Value>>, ApiError> {
    match body.get("config") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(c)) => Ok(Some(c)),
        Some(_) => Err(bad("config", "`config` must be an object")),
    }
}

/// `config.cronExpression`, when present.
pub fn cron_of(config: &Map<String, Value>) -> Result<Option<String>, ApiError> {
    match config.get("cronExpression") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.trim().to_owned())),
        Some(_) => Err(bad(
            "config.cronExpression",
            "`config.cronExpression` is required",
        )),
    }
}

/// `config.timezone`, when present (`Some(None)`: given as null, back to UTC).
pub fn timezone_of(config: &Map<String, Value>) -> Result<Option<Option<String>>, ApiError> {
    match config.get("timezone") {
        None => Ok(None),
        Some(Value::Null) => Ok(Some(None)),
        Some(Value::String(s)) if !s.is_empty() && s.len() <= 64 => Ok(Some(Some(s.clone()))),
        Some(_) => Err(bad(
            "config.timezone",
            "`config.timezone` must be an IANA time zone name (e.g. UTC, Europe/Berlin)",
        )),
    }
}

/// An agent schedule's runs take the agent payload: `config.input.userMessage` is required.
pub fn check_agent_input(target: &ScheduleTarget, input: Option<&Value>) -> Result<(), ApiError> {
    if !matches!(target, ScheduleTarget::Agent { .. }) {
        return Ok(());
    }
    match input.and_then(|i| i.get("userMessage")) {
        Some(Value::String(m)) if !m.is_empty() => Ok(()),
        _ => Err(bad(
            "config.input.userMessage",
            "An agent schedule needs `config.input.userMessage` (a non-empty string): its runs take the agent payload `{ userMessage, parameters? }`",
        )),
    }
}

/// The policies of a body, each when present.
#[derive(Debug, Default)]
pub struct Policies {
    pub catch_up: Option<CatchUp>,
    pub overlap: Option<Overlap>,
    pub starting_deadline_seconds: Option<u32>,
    /// `Some(None)`: `label: null` (cleared).
    pub label: Option<Option<String>>,
}

/// Reads `catchUp`, `overlap`, `startingDeadlineSeconds` and `label`.
pub fn policies_of(body: &Map<String, Value>) -> Result<Policies, ApiError> {
    let mut p = Policies::default();
    match body.get("catchUp") {
        None | Some(Value::Null) => {}
        Some(v) => {
            p.catch_up = Some(
                v.as_str()
                    .and_then(CatchUp::parse)
                    .ok_or_else(|| bad("catchUp", "`catchUp` must be one of: latest, skip"))?,
            );
        }
    }
    match body.get("overlap") {
        None | Some(Value::Null) => {}
        Some(v) => {
            p.overlap = Some(
                v.as_str()
                    .and_then(Overlap::parse)
                    .ok_or_else(|| bad("overlap", "`overlap` must be one of: skip, allow"))?,
            );
        }
    }
    match body.get("startingDeadlineSeconds") {
        None | Some(Value::Null) => {}
        Some(v) => {
            let n = v
                .as_u64()
                .filter(|n| (1..=u64::from(MAX_STARTING_DEADLINE_SECONDS)).contains(n))
                .ok_or_else(|| {
                    bad(
                        "startingDeadlineSeconds",
                        format!("`startingDeadlineSeconds` must be an integer from 1 to {MAX_STARTING_DEADLINE_SECONDS}"),
                    )
                })?;
            p.starting_deadline_seconds = u32::try_from(n).ok();
        }
    }
    match body.get("label") {
        None => {}
        Some(Value::Null) => p.label = Some(None),
        Some(Value::String(s)) if s.chars().count() <= MAX_LABEL => {
            p.label = Some(Some(s.clone()));
        }
        Some(_) => {
            return Err(bad(
                "label",
                format!("`label` must be a string of at most {MAX_LABEL} characters, or null"),
            ));
        }
    }
    Ok(p)
}

/// The defaults of a new schedule's policies.
pub fn default_deadline() -> u32 {
    DEFAULT_STARTING_DEADLINE_SECONDS
}
