//! An agent's approval rules (runtime.md §4): `conversationPolicy.hitl` as written, the
//! tenant's `hitl` policy (a floor the agent cannot go under), and what they decide for
//! one tool: its gate (`never_ask`, `ask_on_first_use`, `always_ask`), the reviewer role
//! its approvals need and how long a reviewer has.
//!
//! - No `hitl.tools` → no gate (opt-in). An override for the tool → its mode and role;
//!   else `tools.default`; else `mutating: false` → `never_ask`, otherwise
//!   `ask_on_first_use`.
//! - The tenant's rule for the tool, when it names one, is a floor: the stricter mode and
//!   the higher role win. Its `minReviewerRole` raises every role, its `maxTimeoutMs`
//!   shortens the timeout (default 24 h). The tenant never loosens.
//! - `argsHash` is the first 40 hex of SHA-256 over the canonical JSON of the arguments
//!   (object keys sorted as the reference's `localeCompare` sorts them, numbers as
//!   JavaScript prints them); a tool call's wait token is the first 40 hex of SHA-256 of
//!   `tool-call:<runId>:<callId>:<argsHash>`.
//!
//! [`check_conversation_policy`] is the define-time check (the reference's messages, each
//! with its JSON Pointer); the runtime parses with the same rules, so an agent put in a
//! catalogue without the check fails its turn clearly instead of running ungated.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use async_trait::async_trait;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use kindgi_core::approval::ReviewerRole;
use kindgi_core::ids::DEFAULT_WAIT_MS;

/// How a tool call is gated, loosest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HitlMode {
    NeverAsk,
    AskOnFirstUse,
    AlwaysAsk,
}

impl HitlMode {
    pub const ALL: [HitlMode; 3] = [
        HitlMode::NeverAsk,
        HitlMode::AskOnFirstUse,
        HitlMode::AlwaysAsk,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            HitlMode::NeverAsk => "never_ask",
            HitlMode::AskOnFirstUse => "ask_on_first_use",
            HitlMode::AlwaysAsk => "always_ask",
        }
    }

    pub fn parse(s: &str) -> Option<HitlMode> {
        HitlMode::ALL.into_iter().find(|m| m.as_str() == s)
    }
}

/// A tool's gate, and the reviewer role its approvals need (`None`: the default role).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolHitlRule {
    pub mode: HitlMode,
    pub required_role: Option<ReviewerRole>,
}

impl ToolHitlRule {
    pub fn mode(mode: HitlMode) -> Self {
        ToolHitlRule {
            mode,
            required_role: None,
        }
    }

    /// The stricter of two rules: the stricter mode, the higher role.
    pub fn stricter(self, other: ToolHitlRule) -> ToolHitlRule {
        ToolHitlRule {
            mode: self.mode.max(other.mode),
            required_role: self.required_role.max(other.required_role),
        }
    }
}

/// `conversationPolicy.hitl.tools`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolsPolicy {
    pub default: Option<HitlMode>,
    pub overrides: BTreeMap<String, ToolHitlRule>,
}

/// An agent's `conversationPolicy.hitl` (and the legacy `hitlAfterTurns`), parsed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentHitl {
    /// The session gate: `hitl.afterTurns`, else `hitlAfterTurns`.
    pub after_turns: Option<u64>,
    /// `None`: no tool gates.
    pub tools: Option<ToolsPolicy>,
    pub default_reviewer_role: Option<ReviewerRole>,
    pub timeout_ms: Option<u64>,
    /// `hitl.separateApprover` (four eyes): whoever started the run may not decide its
    /// approvals — for every gate, or per tool.
    pub separate_approver: SeparateApprover,
}

/// `hitl.separateApprover`: `true`/`false`, or `{default?, overrides?: {toolId: bool}}`
/// (the official SDK's `SeparateApproverPolicy`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SeparateApprover {
    /// For every gate without an override (and the session gate).
    pub default: bool,
    pub overrides: std::collections::BTreeMap<String, bool>,
}

impl SeparateApprover {
    /// Whether `tool_id`'s approvals need a reviewer other than the person who asked.
    pub fn for_tool(&self, tool_id: &str) -> bool {
        self.overrides.get(tool_id).copied().unwrap_or(self.default)
    }
}

/// A problem in a policy: where (a JSON Pointer into the definition) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HitlIssue {
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for HitlIssue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

fn issue(path: impl Into<String>, message: impl Into<String>) -> HitlIssue {
    HitlIssue {
        path: path.into(),
        message: message.into(),
    }
}

/// A positive integer, as JavaScript's `Number.isInteger(x) && x > 0` sees it (`5.0` is one).
fn positive_int(v: &Value) -> Option<u64> {
    match v.as_u64() {
        Some(0) => None,
        Some(n) => Some(n),
        None => v
            .as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 1.0 && *f < u64::MAX as f64)
            .map(|f| f as u64),
    }
}

const ROLES_MESSAGE: &str = "standard, senior, admin";
const MODES_MESSAGE: &str = "never_ask, ask_on_first_use, always_ask";
const HITL_KEYS: [&str; 6] = [
    "afterTurns",
    "tools",
    "defaultReviewerRole",
    "timeoutMs",
    "onTimeout",
    "separateApprover",
];

/// RFC 6901: `~` → `~0`, `/` → `~1`.
fn pointer_segment(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// The define-time check of a `conversationPolicy`'s approval settings (`hitlAfterTurns`
/// and `hitl`): every problem, none when it is fine. Other keys are not looked at.
pub fn check_conversation_policy(policy: &Value) -> Vec<HitlIssue> {
    match parse_agent_hitl(Some(policy)) {
        Ok(_) => Vec::new(),
        Err(issues) => issues,
    }
}

/// Parses an agent's `conversationPolicy` approval settings (`None`: no policy).
pub fn parse_agent_hitl(policy: Option<&Value>) -> Result<AgentHitl, Vec<HitlIssue>> {
    let mut out = AgentHitl::default();
    let mut issues = Vec::new();
    let Some(policy) = policy.and_then(Value::as_object) else {
        return Ok(out);
    };
    if let Some(v) = policy.get("hitlAfterTurns") {
        match positive_int(v) {
            Some(n) => out.after_turns = Some(n),
            None => issues.push(issue(
                "/conversationPolicy/hitlAfterTurns",
                "hitlAfterTurns must be a positive integer",
            )),
        }
    }
    match policy.get("hitl") {
        None => {}
        Some(Value::Object(h)) => parse_hitl(h, &mut out, &mut issues),
        Some(_) => issues.push(issue(
            "/conversationPolicy/hitl",
            "hitl must be an object: {afterTurns?, tools?, defaultReviewerRole?, timeoutMs?, onTimeout?}",
        )),
    }
    if issues.is_empty() {
        Ok(out)
    } else {
        Err(issues)
    }
}

fn parse_hitl(h: &Map<String, Value>, out: &mut AgentHitl, issues: &mut Vec<HitlIssue>) {
    const AT: &str = "/conversationPolicy/hitl";
    for key in h.keys().filter(|k| !HITL_KEYS.contains(&k.as_str())) {
        issues.push(issue(
            format!("{AT}/{}", pointer_segment(key)),
            format!(
                "{key} is not a hitl setting: use afterTurns, tools, defaultReviewerRole, timeoutMs or onTimeout"
            ),
        ));
    }
    if let Some(v) = h.get("afterTurns") {
        match positive_int(v) {
            Some(n) => out.after_turns = Some(n),
            None => issues.push(issue(
                format!("{AT}/afterTurns"),
                "hitl.afterTurns must be a positive integer",
            )),
        }
    }
    if let Some(v) = h.get("timeoutMs") {
        match positive_int(v) {
            Some(n) => out.timeout_ms = Some(n),
            None => issues.push(issue(
                format!("{AT}/timeoutMs"),
                "hitl.timeoutMs must be a positive integer (ms)",
            )),
        }
    }
    if let Some(problem) = on_timeout_issue(h.get("onTimeout")) {
        issues.push(issue(format!("{AT}/onTimeout"), problem));
    }
    if let Some(v) = h.get("defaultReviewerRole") {
        match v.as_str().and_then(ReviewerRole::parse) {
            Some(r) => out.default_reviewer_role = Some(r),
            None => issues.push(issue(
                format!("{AT}/defaultReviewerRole"),
                format!("hitl.defaultReviewerRole must be one of: {ROLES_MESSAGE}"),
            )),
        }
    }
    out.separate_approver = separate_approver(h.get("separateApprover"), issues);
    if let Some(tools) = h.get("tools") {
        out.tools = parse_tools(tools, issues);
    }
}

/// `hitl.onTimeout`: only `escalate` (what the runtime does when a reviewer's time runs
/// out); the reference's messages.
fn on_timeout_issue(v: Option<&Value>) -> Option<String> {
    match v {
        None => None,
        Some(Value::String(s)) if s == "escalate" => None,
        Some(Value::String(s)) if s == "auto-approve" || s == "auto-reject" => Some(format!(
            "hitl.onTimeout '{s}' isn't supported: an approval that times out escalates one reviewer tier, and at admin it expires (the turn fails with hitl-cancelled). Use 'escalate', or leave it out."
        )),
        Some(_) => Some("hitl.onTimeout must be 'escalate'".to_owned()),
    }
}

/// `hitl.separateApprover` (four eyes): `true`, `false` or `{default?, overrides?}`
/// (absent: `false`). With it, each approval records who started the run (`requestedBy`)
/// and that person may not decide it (`403 separate-approver-required`).
fn separate_approver(v: Option<&Value>, issues: &mut Vec<HitlIssue>) -> SeparateApprover {
    const AT: &str = "/conversationPolicy/hitl/separateApprover";
    let mut out = SeparateApprover::default();
    match v {
        None => {}
        Some(Value::Bool(b)) => out.default = *b,
        Some(Value::Object(m)) => {
            for key in m
                .keys()
                .filter(|k| !matches!(k.as_str(), "default" | "overrides"))
            {
                issues.push(issue(
                    format!("{AT}/{key}"),
                    "hitl.separateApprover takes only default and overrides",
                ));
            }
            match m.get("default") {
                None => {}
                Some(Value::Bool(b)) => out.default = *b,
                Some(_) => issues.push(issue(
                    format!("{AT}/default"),
                    "hitl.separateApprover.default must be true or false",
                )),
            }
            match m.get("overrides") {
                None => {}
                Some(Value::Object(o)) => {
                    for (tool, flag) in o {
                        match flag {
                            Value::Bool(b) => {
                                out.overrides.insert(tool.clone(), *b);
                            }
                            _ => issues.push(issue(
                                format!("{AT}/overrides/{tool}"),
                                "hitl.separateApprover.overrides maps tool ids to true or false",
                            )),
                        }
                    }
                }
                Some(_) => issues.push(issue(
                    format!("{AT}/overrides"),
                    "hitl.separateApprover.overrides maps tool ids to true or false",
                )),
            }
        }
        Some(_) => issues.push(issue(
            AT,
            "hitl.separateApprover must be true, false, or { default, overrides }",
        )),
    }
    out
}

fn parse_tools(v: &Value, issues: &mut Vec<HitlIssue>) -> Option<ToolsPolicy> {
    const AT: &str = "/conversationPolicy/hitl/tools";
    let Some(t) = v.as_object() else {
        issues.push(issue(
            AT,
            "hitl.tools must be an object: {default?, overrides?}",
        ));
        return None;
    };
    let mut policy = ToolsPolicy::default();
    for key in t.keys().filter(|k| *k != "default" && *k != "overrides") {
        issues.push(issue(
            format!("{AT}/{}", pointer_segment(key)),
            format!("{key} is not a hitl.tools setting: use default or overrides"),
        ));
    }
    if let Some(d) = t.get("default") {
        match d.as_str().and_then(HitlMode::parse) {
            Some(m) => policy.default = Some(m),
            None => issues.push(issue(
                format!("{AT}/default"),
                format!("hitl.tools.default must be one of: {MODES_MESSAGE}"),
            )),
        }
    }
    match t.get("overrides") {
        None => {}
        Some(Value::Object(o)) => {
            for (tool_id, rule) in o {
                let at = format!("{AT}/overrides/{}", pointer_segment(tool_id));
                if let Some(r) = parse_rule(rule, &at, "override", issues) {
                    policy.overrides.insert(tool_id.clone(), r);
                }
            }
        }
        Some(_) => issues.push(issue(
            format!("{AT}/overrides"),
            "hitl.tools.overrides must map tool ids to a mode or {mode, requiredRole?}",
        )),
    }
    Some(policy)
}

/// A mode, or `{mode, requiredRole?}`; `what` names it in messages (`override`, `tenant rule`).
fn parse_rule(
    rule: &Value,
    at: &str,
    what: &str,
    issues: &mut Vec<HitlIssue>,
) -> Option<ToolHitlRule> {
    let mode_issue = || issue(at, format!("{what} mode must be one of: {MODES_MESSAGE}"));
    match rule {
        Value::String(s) => match HitlMode::parse(s) {
            Some(m) => Some(ToolHitlRule::mode(m)),
            None => {
                issues.push(mode_issue());
                None
            }
        },
        Value::Object(m) => {
            let before = issues.len();
            for key in m.keys().filter(|k| *k != "mode" && *k != "requiredRole") {
                issues.push(issue(
                    format!("{at}/{}", pointer_segment(key)),
                    format!("{key} is not a rule setting: use mode and requiredRole"),
                ));
            }
            let mode = m
                .get("mode")
                .and_then(Value::as_str)
                .and_then(HitlMode::parse);
            if mode.is_none() {
                issues.push(mode_issue());
            }
            let role = match m.get("requiredRole") {
                None => None,
                Some(r) => {
                    let parsed = r.as_str().and_then(ReviewerRole::parse);
                    if parsed.is_none() {
                        issues.push(issue(
                            format!("{at}/requiredRole"),
                            format!("{what} requiredRole must be one of: {ROLES_MESSAGE}"),
                        ));
                    }
                    parsed
                }
            };
            let mode = mode.filter(|_| issues.len() == before)?;
            Some(ToolHitlRule {
                mode,
                required_role: role,
            })
        }
        _ => {
            issues.push(issue(
                at,
                format!("{what} must be a mode ({MODES_MESSAGE}) or {{mode, requiredRole?}}"),
            ));
            None
        }
    }
}

/// A tenant's `hitl` policy (the reference's `HitlSpec`): only stricter than an agent's.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HitlSpec {
    /// The longest an approval may stay open, in milliseconds.
    pub max_timeout_ms: Option<u64>,
    /// The lowest reviewer role an approval may go to.
    pub min_reviewer_role: Option<ReviewerRole>,
    /// Per tool id, the gate every agent applies at least.
    pub tools: BTreeMap<String, ToolHitlRule>,
}

impl HitlSpec {
    /// Reads a policy's `spec` (`{maxTimeoutMs?, minReviewerRole?, tools?}`, nothing else);
    /// the issues' paths point into the spec.
    pub fn from_value(v: &Value) -> Result<HitlSpec, Vec<HitlIssue>> {
        let Some(m) = v.as_object() else {
            return Err(vec![issue("", "must be an object")]);
        };
        let mut spec = HitlSpec::default();
        let mut issues = Vec::new();
        for key in m
            .keys()
            .filter(|k| !["maxTimeoutMs", "minReviewerRole", "tools"].contains(&k.as_str()))
        {
            issues.push(issue(
                format!("/{}", pointer_segment(key)),
                "is not a hitl setting",
            ));
        }
        if let Some(t) = m.get("maxTimeoutMs") {
            match positive_int(t) {
                Some(n) => spec.max_timeout_ms = Some(n),
                None => issues.push(issue(
                    "/maxTimeoutMs",
                    "must be a positive integer (milliseconds)",
                )),
            }
        }
        if let Some(r) = m.get("minReviewerRole") {
            match r.as_str().and_then(ReviewerRole::parse) {
                Some(r) => spec.min_reviewer_role = Some(r),
                None => issues.push(issue(
                    "/minReviewerRole",
                    format!("must be one of {ROLES_MESSAGE}"),
                )),
            }
        }
        match m.get("tools") {
            None => {}
            Some(Value::Object(tools)) => {
                for (tool_id, rule) in tools {
                    let at = format!("/tools/{}", pointer_segment(tool_id));
                    if tool_id.is_empty() {
                        issues.push(issue(&at, "a tool id must not be empty"));
                    }
                    if let Some(r) = parse_rule(rule, &at, "tenant rule", &mut issues) {
                        spec.tools.insert(tool_id.clone(), r);
                    }
                }
            }
            Some(_) => issues.push(issue("/tools", "must be an object of tool ids")),
        }
        if issues.is_empty() {
            Ok(spec)
        } else {
            Err(issues)
        }
    }

    /// One spec at least as strict as each of `specs`.
    pub fn combine(specs: impl IntoIterator<Item = HitlSpec>) -> HitlSpec {
        let mut out = HitlSpec::default();
        for s in specs {
            out.max_timeout_ms = match (out.max_timeout_ms, s.max_timeout_ms) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            out.min_reviewer_role = out.min_reviewer_role.max(s.min_reviewer_role);
            for (tool, rule) in s.tools {
                let held = out.tools.get(&tool).copied();
                out.tools
                    .insert(tool, held.map_or(rule, |h| h.stricter(rule)));
            }
        }
        out
    }
}

/// Why a tenant's `hitl` policy could not be read: core's one storage error. The turn
/// fails closed on it (`tenant-policy-unavailable`), before any tool runs.
pub use kindgi_core::StorageError as TenantPolicyError;
pub use kindgi_core::ports::TenantApprovalPolicy;

/// Where the runtime gets a tenant's `hitl` policy: core's [`TenantApprovalPolicy`] port
/// over [`HitlSpec`] (implement that; every implementation is one of these).
pub trait TenantHitlPolicy: TenantApprovalPolicy<HitlSpec> {}

impl<T: TenantApprovalPolicy<HitlSpec> + ?Sized> TenantHitlPolicy for T {}

/// One spec for every tenant (a host with a fixed policy, tests).
#[async_trait]
impl TenantApprovalPolicy<HitlSpec> for HitlSpec {
    async fn hitl_policy(&self, _tenant: &str) -> Result<Option<HitlSpec>, TenantPolicyError> {
        Ok(Some(self.clone()))
    }
}

/// A policy per tenant name (a host's configuration file); a tenant not named has none.
#[async_trait]
impl TenantApprovalPolicy<HitlSpec> for std::collections::BTreeMap<String, HitlSpec> {
    async fn hitl_policy(&self, tenant: &str) -> Result<Option<HitlSpec>, TenantPolicyError> {
        Ok(self.get(tenant).cloned())
    }
}

/// The rules one turn applies: the agent's, held to the tenant's.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EffectiveHitl {
    pub agent: AgentHitl,
    pub tenant: Option<HitlSpec>,
}

/// What the rules decide for one tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolGateRule {
    pub mode: HitlMode,
    pub required_role: ReviewerRole,
    pub timeout_ms: u64,
}

impl EffectiveHitl {
    /// Whether any tool could be gated (else no gate decision is recorded).
    pub fn gates_anything(&self) -> bool {
        self.agent.tools.is_some() || self.tenant.as_ref().is_some_and(|t| !t.tools.is_empty())
    }

    /// The role the session gate's approvals need: the agent's `defaultReviewerRole`
    /// (standard by default), at least the tenant's `minReviewerRole`.
    pub fn default_role(&self) -> ReviewerRole {
        let agent = self
            .agent
            .default_reviewer_role
            .unwrap_or(ReviewerRole::Standard);
        match self.tenant.as_ref().and_then(|t| t.min_reviewer_role) {
            Some(min) => agent.max(min),
            None => agent,
        }
    }

    /// How long a reviewer has: the agent's `timeoutMs` (24 h by default), at most the
    /// tenant's `maxTimeoutMs`.
    pub fn timeout_ms(&self) -> u64 {
        let agent = self.agent.timeout_ms.unwrap_or(DEFAULT_WAIT_MS);
        match self.tenant.as_ref().and_then(|t| t.max_timeout_ms) {
            Some(max) => agent.min(max),
            None => agent,
        }
    }

    /// The gate of `tool_id` (`mutating`: the tool's declaration; `unattended_floor`: the
    /// unattended rule holds for the call, [`crate::unattended::approval_required`]).
    pub fn tool_rule(
        &self,
        tool_id: &str,
        mutating: Option<bool>,
        unattended_floor: bool,
    ) -> ToolGateRule {
        let default_role = self
            .agent
            .default_reviewer_role
            .unwrap_or(ReviewerRole::Standard);
        let agent_rule = match &self.agent.tools {
            None => ToolHitlRule::mode(HitlMode::NeverAsk),
            Some(t) => t
                .overrides
                .get(tool_id)
                .copied()
                .or(t.default.map(ToolHitlRule::mode))
                .unwrap_or(ToolHitlRule::mode(if mutating == Some(false) {
                    HitlMode::NeverAsk
                } else {
                    HitlMode::AskOnFirstUse
                })),
        };
        let agent_role = agent_rule.required_role.unwrap_or(default_role);
        let mut rule = ToolHitlRule {
            mode: agent_rule.mode,
            required_role: Some(agent_role),
        };
        if let Some(floor) = self.tenant.as_ref().and_then(|t| t.tools.get(tool_id)) {
            rule = rule.stricter(*floor);
        }
        if unattended_floor {
            rule = rule.stricter(ToolHitlRule::mode(HitlMode::AlwaysAsk));
        }
        let min = self.tenant.as_ref().and_then(|t| t.min_reviewer_role);
        ToolGateRule {
            mode: rule.mode,
            required_role: rule.required_role.max(min).unwrap_or(agent_role),
            timeout_ms: self.timeout_ms(),
        }
    }
}

/// The first 40 hex of SHA-256 over `text`.
fn sha40(text: &str) -> String {
    let mut h = hex::encode(Sha256::digest(text.as_bytes()));
    h.truncate(40);
    h
}

/// `argsHash`: the first 40 hex of SHA-256 over the arguments' canonical JSON.
pub fn args_hash(arguments: &Value) -> String {
    let mut s = String::new();
    canonical_json(arguments, &mut s);
    sha40(&s)
}

/// A tool call's wait token: 40 hex of SHA-256 of `tool-call:<runId>:<callId>:<argsHash>`.
pub fn tool_call_token(run_id: &str, call_id: &str, args_hash: &str) -> String {
    sha40(&format!("tool-call:{run_id}:{call_id}:{args_hash}"))
}

/// The session gate's wait token: 40 hex of SHA-256 of
/// `agent-turn:session-hitl-gate:<runId>:<turnCount>`.
pub fn session_gate_token(run_id: &str, turn_count: u64) -> String {
    sha40(&format!(
        "agent-turn:session-hitl-gate:{run_id}:{turn_count}"
    ))
}

/// JSON with object keys sorted, as the reference writes it for hashing.
pub fn canonical_json(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort_by(|a, b| locale_cmp(a, b));
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                if let Some(v) = m.get(k) {
                    canonical_json(v, out);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical_json(item, out);
            }
            out.push(']');
        }
        Value::Number(n) => match n.as_f64() {
            Some(f) if !n.is_i64() && !n.is_u64() => out.push_str(&js_number(f)),
            _ => out.push_str(&n.to_string()),
        },
        other => out.push_str(&other.to_string()),
    }
}

/// A float as JavaScript's `Number.prototype.toString` prints it (`1.0` → `1`,
/// `1e21` → `1e+21`, `1e-7` → `1e-7`, `0.000001` → `0.000001`).
fn js_number(f: f64) -> String {
    if !f.is_finite() {
        return "null".into();
    }
    if f == 0.0 {
        return "0".into();
    }
    // Shortest round-trip digits, as `d.ddde<k>`.
    let e = format!("{:e}", f.abs());
    let (mantissa, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let k: i64 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let len = digits.len() as i64;
    let n = k + 1;
    let sign = if f < 0.0 { "-" } else { "" };
    let body = if (len..=21).contains(&n) {
        format!("{digits}{}", "0".repeat((n - len) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let rest = if len > 1 {
            format!(".{}", &digits[1..])
        } else {
            String::new()
        };
        let esign = if k >= 0 { "+" } else { "-" };
        format!("{}{rest}e{esign}{}", &digits[..1], k.abs())
    };
    format!("{sign}{body}")
}

/// The primary weight of a character in the CLDR root collation JavaScript's
/// `localeCompare` uses, for ASCII (whitespace, punctuation and symbols in CLDR's order,
/// then digits, then letters case-blind); other characters come after, by code point.
fn primary(c: char) -> (u8, u32) {
    const ORDER: &str = "\t\n\x0b\x0c\r _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789";
    if let Some(i) = ORDER.find(c) {
        return (0, i as u32);
    }
    if c.is_ascii_alphabetic() {
        return (1, u32::from(c.to_ascii_lowercase()));
    }
    let lower = c.to_lowercase().next().unwrap_or(c);
    (2, u32::from(lower))
}

/// Key order of the reference's `Object.entries(..).sort(([a],[b]) => a.localeCompare(b))`:
/// case-blind first, then lowercase before uppercase.
fn locale_cmp(a: &str, b: &str) -> Ordering {
    let p = |s: &str| s.chars().map(primary).collect::<Vec<_>>();
    let t = |s: &str| s.chars().map(char::is_uppercase).collect::<Vec<_>>();
    p(a).cmp(&p(b))
        .then_with(|| t(a).cmp(&t(b)))
        .then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn reordered_keys_hash_the_same_and_numbers_print_as_javascript_does() {
        assert_eq!(
            args_hash(&json!({"b": 1, "a": [1.0, {"y": 2, "x": "s"}]})),
            args_hash(&json!({"a": [1, {"x": "s", "y": 2}], "b": 1}))
        );
        let mut s = String::new();
        canonical_json(
            &json!({"b": 1.5, "B": 1e21, "a_b": 1e-7, "ab": 0.000001, "A": null}),
            &mut s,
        );
        assert_eq!(
            s,
            r#"{"A":null,"a_b":1e-7,"ab":0.000001,"b":1.5,"B":1e+21}"#
        );
        // What Node 24 answers for the reference's canonicalStringify and hashToolArgs.
        let mut s = String::new();
        canonical_json(
            &json!({"orderId":"o-1","note":"hi","Zed":1,"z-a":2,"z_a":3,"z1":4,"za":5,"$x":6,"~y":7}),
            &mut s,
        );
        assert_eq!(
            s,
            r#"{"~y":7,"$x":6,"note":"hi","orderId":"o-1","z_a":3,"z-a":2,"z1":4,"za":5,"Zed":1}"#
        );
        assert_eq!(
            args_hash(&json!({})),
            "44136fa355b3678a1146ad16f7e8649e94fb4fc2"
        );
        assert_eq!(
            args_hash(&json!({"orderId": "o-1", "amount": 12.5})),
            "2f60ae6c0d774df1c7e6132e1adf0da7f710d52f"
        );
    }

    #[test]
    fn on_timeout_other_than_escalate_is_refused_with_the_reference_message() {
        let issues = check_conversation_policy(&json!({"hitl": {"onTimeout": "auto-approve"}}));
        assert_eq!(issues.len(), 1);
        assert_eq!(issues[0].path, "/conversationPolicy/hitl/onTimeout");
        assert!(
            issues[0]
                .message
                .starts_with("hitl.onTimeout 'auto-approve' isn't supported")
        );
        let other = check_conversation_policy(&json!({"hitl": {"onTimeout": "never"}}));
        assert_eq!(other[0].message, "hitl.onTimeout must be 'escalate'");
        assert!(check_conversation_policy(&json!({"hitl": {"onTimeout": "escalate"}})).is_empty());
    }

    #[test]
    fn the_tenant_floor_only_tightens() {
        let agent = parse_agent_hitl(Some(&json!({"hitl": {"tools": {
            "overrides": {"t.read": "never_ask", "t.pay": {"mode": "always_ask", "requiredRole": "senior"}}
        }, "timeoutMs": 172_800_000}}))).unwrap();
        let mut tools = BTreeMap::new();
        tools.insert("t.read".into(), ToolHitlRule::mode(HitlMode::AlwaysAsk));
        tools.insert("t.pay".into(), ToolHitlRule::mode(HitlMode::NeverAsk));
        let tenant = HitlSpec {
            max_timeout_ms: Some(3_600_000),
            min_reviewer_role: None,
            tools,
        };
        let e = EffectiveHitl {
            agent,
            tenant: Some(tenant),
        };
        assert_eq!(
            e.tool_rule("t.read", Some(false), false).mode,
            HitlMode::AlwaysAsk
        );
        let pay = e.tool_rule("t.pay", Some(true), false);
        assert_eq!(pay.mode, HitlMode::AlwaysAsk);
        assert_eq!(pay.required_role, ReviewerRole::Senior);
        assert_eq!(pay.timeout_ms, 3_600_000);
        assert_eq!(
            e.tool_rule("t.other", None, false).mode,
            HitlMode::AskOnFirstUse
        );
        assert_eq!(
            e.tool_rule("t.other", Some(false), false).mode,
            HitlMode::NeverAsk
        );
        let none = EffectiveHitl::default();
        assert_eq!(
            none.tool_rule("t.pay", Some(true), false).mode,
            HitlMode::NeverAsk
        );
        assert_eq!(none.timeout_ms(), DEFAULT_WAIT_MS);
    }
}

#[cfg(test)]
mod separate_approver_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn per_tool_four_eyes_as_the_official_sdk_writes_it() {
        let policy = json!({"hitl": {"separateApprover": {
            "overrides": {"a.refund-large": true, "a.refund": false}
        }}});
        let hitl = parse_agent_hitl(Some(&policy)).unwrap();
        assert!(hitl.separate_approver.for_tool("a.refund-large"));
        assert!(!hitl.separate_approver.for_tool("a.refund"));
        assert!(!hitl.separate_approver.for_tool("a.other"), "default false");
        let all = parse_agent_hitl(Some(&json!({"hitl": {"separateApprover": true}}))).unwrap();
        assert!(all.separate_approver.for_tool("anything"));
        let bad = check_conversation_policy(
            &json!({"hitl": {"separateApprover": {"default": "yes", "extra": 1, "overrides": {"x": 2}}}}),
        );
        let paths: Vec<&str> = bad.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "/conversationPolicy/hitl/separateApprover/extra",
                "/conversationPolicy/hitl/separateApprover/default",
                "/conversationPolicy/hitl/separateApprover/overrides/x",
            ]
        );
    }
}
