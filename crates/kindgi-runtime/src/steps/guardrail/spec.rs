//! A guardrail as a turn applies it ([`GuardrailSpec`]), read from definition JSON in either
//! form the registries hold: a `POST /v1/guardrails` definition (`check`) or a pack index
//! entry (`checkId`, else `id`; `checkModulePath`).
//!
//! Beyond the reference (docs/guardrails.md): `stage` says when the guardrail judges
//! (`after-turn`, the default, or `before-tool`), and `scope.tools` which calls a
//! before-tool guardrail judges (default: all of them).

use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use kindgi_core::ids::ALL_TENANTS;

/// When a guardrail judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Once per turn, on the final answer (runtime.md §7).
    AfterTurn,
    /// Before each call it judges starts (seed 004).
    BeforeTool,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::AfterTurn => "after-turn",
            Stage::BeforeTool => "before-tool",
        }
    }
}

/// `scope.when`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    Always,
    CiOnly,
    RuntimeOnly,
}

/// Where a guardrail applies; an absent or empty list does not narrow it.
#[derive(Debug, Clone, PartialEq)]
pub struct Scope {
    pub when: When,
    pub agents: Vec<String>,
    pub flows: Vec<String>,
    pub tenants: Vec<String>,
    /// Before-tool only: the tools whose calls it judges (empty: every call).
    pub tools: Vec<String>,
}

/// One guardrail, as a turn applies it.
#[derive(Debug, Clone, PartialEq)]
pub struct GuardrailSpec {
    pub id: String,
    /// `zero-llm`, `llm-judge`, `external`, … (open).
    pub kind: String,
    /// The check's id: a built-in (`max-tool-calls`) or a pack's (`acme.checks.x`).
    pub check: String,
    /// The index's `checkBuiltIn` marker: the check is one of the built-ins.
    pub check_built_in: bool,
    pub config: Map<String, Value>,
    /// `action.on-violation` (open: `halt`, `log-only`, `retry`, …).
    pub on_violation: String,
    /// `info`, `warn`, `error` (default) or `critical`.
    pub severity: String,
    pub scope: Scope,
    pub stage: Stage,
    /// `judgeCapabilities` is present.
    pub has_judge_capabilities: bool,
}

fn strings(v: Option<&Value>, field: &str) -> Result<Vec<String>, String> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| {
                i.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| format!("`{field}` must be a list of strings"))
            })
            .collect(),
        Some(_) => Err(format!("`{field}` must be a list of strings")),
    }
}

fn parse_scope(v: Option<&Value>) -> Result<Scope, String> {
    let empty = Map::new();
    let m = match v {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(m)) => m,
        Some(_) => return Err("`scope` must be an object".into()),
    };
    let when = match m.get("when").and_then(Value::as_str) {
        None | Some("always") => When::Always,
        Some("ci-only") => When::CiOnly,
        Some("runtime-only") => When::RuntimeOnly,
        Some(other) => {
            return Err(format!(
                "`scope.when` is \"{other}\"; use always, ci-only or runtime-only"
            ));
        }
    };
    Ok(Scope {
        when,
        agents: strings(m.get("agents"), "scope.agents")?,
        flows: strings(m.get("flows"), "scope.flows")?,
        tenants: strings(m.get("tenants"), "scope.tenants")?,
        tools: strings(m.get("tools"), "scope.tools")?,
    })
}

/// The `stage` of a definition: absent means after-turn.
pub fn parse_stage(v: Option<&Value>) -> Result<Stage, String> {
    match v {
        None | Some(Value::Null) => Ok(Stage::AfterTurn),
        Some(Value::String(s)) if s == "after-turn" => Ok(Stage::AfterTurn),
        Some(Value::String(s)) if s == "before-tool" => Ok(Stage::BeforeTool),
        Some(other) => Err(format!(
            "`stage` is {other}; use \"after-turn\" (the default) or \"before-tool\""
        )),
    }
}

impl GuardrailSpec {
    /// Reads a guardrail definition (registry or pack index form). The error names the
    /// field that does not fit.
    pub fn from_value(v: &Value) -> Result<GuardrailSpec, String> {
        let m = v
            .as_object()
            .ok_or_else(|| "a guardrail definition must be an object".to_owned())?;
        let text = |k: &str| m.get(k).and_then(Value::as_str).map(str::to_owned);
        let id = text("id").ok_or_else(|| "`id` must be a string".to_owned())?;
        let check = text("check")
            .or_else(|| text("checkId"))
            .unwrap_or_else(|| id.clone());
        let config = match m.get("config") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(c)) => c.clone(),
            Some(_) => return Err("`config` must be an object".into()),
        };
        let on_violation = m
            .get("action")
            .and_then(|a| a.get("on-violation"))
            .and_then(Value::as_str)
            .ok_or_else(|| "`action.on-violation` must be a string".to_owned())?
            .to_owned();
        Ok(GuardrailSpec {
            kind: text("kind").unwrap_or_else(|| "zero-llm".into()),
            check,
            check_built_in: m.get("checkBuiltIn").and_then(Value::as_bool) == Some(true),
            config,
            on_violation,
            severity: text("severity").unwrap_or_else(|| "error".into()),
            scope: parse_scope(m.get("scope"))?,
            stage: parse_stage(m.get("stage"))?,
            has_judge_capabilities: m.get("judgeCapabilities").is_some_and(|j| !j.is_null()),
            id,
        })
    }

    /// Why the guardrail does not apply to this turn (`None`: it applies). A turn is a
    /// runtime-mode trace, so `ci-only` never applies.
    pub fn scope_mismatch(&self, tenant: &str, agent: &str, flow: Option<&str>) -> Option<String> {
        let s = &self.scope;
        if s.when == When::CiOnly {
            return Some(format!("guardrail \"{}\" is ci-only", self.id));
        }
        if !s.agents.is_empty() && !s.agents.iter().any(|a| a == agent) {
            return Some(format!(
                "guardrail \"{}\" does not apply to agent {agent}",
                self.id
            ));
        }
        if !s.flows.is_empty() && !flow.is_some_and(|f| s.flows.iter().any(|x| x == f)) {
            return Some(format!(
                "guardrail \"{}\" does not apply to flow {}",
                self.id,
                flow.unwrap_or("undefined")
            ));
        }
        if !s.tenants.is_empty() && !s.tenants.iter().any(|t| t == tenant) {
            return Some(format!(
                "guardrail \"{}\" does not apply to tenant {tenant}",
                self.id
            ));
        }
        None
    }

    /// Whether this (before-tool) guardrail judges calls of `tool_id`.
    pub fn judges_tool(&self, tool_id: &str) -> bool {
        self.stage == Stage::BeforeTool
            && (self.scope.tools.is_empty() || self.scope.tools.iter().any(|t| t == tool_id))
    }
}

/// `(tenant, guardrail id)` → the guardrail.
type ByTenant = HashMap<(String, String), Arc<GuardrailSpec>>;

/// In-memory guardrails, per tenant (or for every tenant, [`ALL_TENANTS`]).
#[derive(Debug, Clone, Default)]
pub struct GuardrailCatalogue {
    inner: Arc<RwLock<ByTenant>>,
}

impl GuardrailCatalogue {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) a guardrail for every tenant.
    pub fn insert(&self, guardrail: GuardrailSpec) {
        self.insert_for(None, guardrail);
    }

    /// Adds (or replaces) a guardrail for `tenant` (`None`: every tenant).
    pub fn insert_for(&self, tenant: Option<&str>, guardrail: GuardrailSpec) {
        let key = (
            tenant.unwrap_or(ALL_TENANTS).to_owned(),
            guardrail.id.clone(),
        );
        if let Ok(mut g) = self.inner.write() {
            g.insert(key, Arc::new(guardrail));
        }
    }

    /// Adds a guardrail from its definition JSON, for every tenant.
    pub fn insert_json(&self, definition: &Value) -> Result<(), String> {
        self.insert(GuardrailSpec::from_value(definition)?);
        Ok(())
    }

    /// `tenant`'s guardrail `id` (its own first, then one for every tenant).
    pub fn get_for(&self, tenant: &str, id: &str) -> Option<Arc<GuardrailSpec>> {
        let g = self.inner.read().ok()?;
        g.get(&(tenant.to_owned(), id.to_owned()))
            .or_else(|| g.get(&(ALL_TENANTS.to_owned(), id.to_owned())))
            .cloned()
    }

    pub fn remove_for(&self, tenant: Option<&str>, id: &str) {
        if let Ok(mut g) = self.inner.write() {
            g.remove(&(tenant.unwrap_or(ALL_TENANTS).to_owned(), id.to_owned()));
        }
    }
}
