//! Flows (`flow.schema.json` 1.9.0): the serde wire types and the structural checks a flow
//! must pass before it is loaded (ids, sentinels, edges, expression paths, policy bounds,
//! acyclicity).
//!
//! Optional fields are `Option`s so a flow round-trips to the JSON it was read from; defaults
//! (`maxParallelism` 8, `evaluationTiming` `after`, …) are applied by accessors. Node kinds
//! and expression operators are closed sets: anything else is refused when the JSON is read,
//! with a message naming the offending value.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap, HashSet};

/// The flow entry sentinel.
pub const START: &str = "$start";
/// The flow exit sentinel.
pub const END: &str = "$end";
/// A loop body's entry sentinel.
pub const LOOP_START: &str = "$loop-start";
/// A loop body's exit sentinel.
pub const LOOP_END: &str = "$loop-end";
/// The kernel default for `maxParallelism`.
pub const DEFAULT_MAX_PARALLELISM: u32 = 8;
/// The maximum nesting of sub-flows.
pub const DEFAULT_MAX_SUBFLOW_DEPTH: u32 = 10;

/// A flow definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Flow {
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    pub id: String,
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_parallelism: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<FlowOutput>,
}

impl Flow {
    /// `maxParallelism` with the kernel default applied.
    pub fn max_parallelism_or_default(&self) -> u32 {
        self.max_parallelism.unwrap_or(DEFAULT_MAX_PARALLELISM)
    }

    /// Every node at every nesting level (loop bodies included), outer ones first.
    pub fn all_nodes(&self) -> Vec<&Node> {
        let mut out = Vec::new();
        fn walk<'a>(nodes: &'a [Node], out: &mut Vec<&'a Node>) {
            for node in nodes {
                out.push(node);
                if let Node::Loop(l) = node {
                    walk(&l.body().nodes, out);
                }
            }
        }
        walk(&self.nodes, &mut out);
        out
    }

    /// The structural checks of the loader. Returns every problem found, each naming where.
    pub fn validate(&self) -> Result<(), Vec<FlowIssue>> {
        let mut issues = Vec::new();
        validate_flow(self, &mut issues);
        if issues.is_empty() {
            Ok(())
        } else {
            Err(issues)
        }
    }
}

/// One structural problem of a flow: where (a JSON-pointer-like location) and what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FlowIssue {
    pub at: String,
    pub message: String,
}

impl std::fmt::Display for FlowIssue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.at, self.message)
    }
}

/// The run's declared output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FlowOutput {
    pub mapping: Mapping,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<Value>,
}

/// A flow node, discriminated by `kind` (and `loopKind` for loops).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Node {
    Leaf(LeafNode),
    Loop(LoopNode),
    Fanout(FanoutNode),
    Subgraph(SubflowNode),
}

impl Node {
    pub fn id(&self) -> &str {
        match self {
            Node::Leaf(n) => &n.id,
            Node::Loop(l) => l.id(),
            Node::Fanout(n) => &n.id,
            Node::Subgraph(n) => &n.id,
        }
    }

    /// The wire `kind`.
    pub fn kind_str(&self) -> &'static str {
        match self {
            Node::Leaf(n) => n.kind.as_str(),
            Node::Loop(_) => "loop",
            Node::Fanout(_) => "fanout",
            Node::Subgraph(_) => "subgraph",
        }
    }
}

fn field_error<E: serde::de::Error>(what: &str, err: serde_json::Error) -> E {
    E::custom(format!("{what}: {err}"))
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let id = value
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_owned();
        let kind = match value.get("kind") {
            Some(Value::String(k)) => k.clone(),
            Some(other) => {
                return Err(D::Error::custom(format!(
                    "node \"{id}\": `kind` must be a string, got {other}"
                )));
            }
            None => return Err(D::Error::custom(format!("node \"{id}\": missing `kind`"))),
        };
        let what = format!("node \"{id}\" (kind {kind})");
        match kind.as_str() {
            "tool" | "agent" => serde_json::from_value(value)
                .map(Node::Leaf)
                .map_err(|e| field_error(&what, e)),
            "loop" => LoopNode::from_value(value)
                .map(Node::Loop)
                .map_err(|e| field_error(&what, e)),
            "fanout" => serde_json::from_value(value)
                .map(Node::Fanout)
                .map_err(|e| field_error(&what, e)),
            "subgraph" => serde_json::from_value(value)
                .map(Node::Subgraph)
                .map_err(|e| field_error(&what, e)),
            other => Err(D::Error::custom(format!(
                "node \"{id}\": unknown kind \"{other}\" (expected tool, agent, loop, fanout or subgraph)"
            ))),
        }
    }
}

/// A tool or agent step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LeafNode {
    pub id: String,
    pub kind: LeafKind,
    /// A tool id (`kind: tool`) or an agent id (`kind: agent`).
    #[serde(rename = "ref")]
    pub ref_: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_mapping: Option<Mapping>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LeafKind {
    Tool,
    Agent,
}

impl LeafKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LeafKind::Tool => "tool",
            LeafKind::Agent => "agent",
        }
    }
}

/// The `kind: "loop"` constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoopTag {
    Loop,
}

/// The `kind: "fanout"` constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FanoutTag {
    Fanout,
}

/// The `kind: "subgraph"` constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SubgraphTag {
    Subgraph,
}

/// The `loopKind: "while"` constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WhileTag {
    While,
}

/// The `loopKind: "foreach"` constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ForeachTag {
    Foreach,
}

/// A loop node, discriminated by `loopKind`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum LoopNode {
    While(WhileLoopNode),
    Foreach(ForeachLoopNode),
}

impl LoopNode {
    fn from_value(value: Value) -> Result<Self, serde_json::Error> {
        match value.get("loopKind").and_then(Value::as_str) {
            Some("while") => serde_json::from_value(value).map(LoopNode::While),
            Some("foreach") => serde_json::from_value(value).map(LoopNode::Foreach),
            Some(other) => Err(serde_json::Error::custom(format!(
                "unknown loopKind \"{other}\" (expected while or foreach)"
            ))),
            None => Err(serde_json::Error::custom(
                "missing `loopKind` (while or foreach)",
            )),
        }
    }

    pub fn id(&self) -> &str {
        match self {
            LoopNode::While(l) => &l.id,
            LoopNode::Foreach(l) => &l.id,
        }
    }

    pub fn body(&self) -> &LoopBody {
        match self {
            LoopNode::While(l) => &l.body,
            LoopNode::Foreach(l) => &l.body,
        }
    }

    pub fn max_iterations(&self) -> u32 {
        match self {
            LoopNode::While(l) => l.max_iterations,
            LoopNode::Foreach(l) => l.max_iterations,
        }
    }

    pub fn output_schema(&self) -> &Value {
        match self {
            LoopNode::While(l) => &l.output_schema,
            LoopNode::Foreach(l) => &l.output_schema,
        }
    }

    pub fn collect_all_iterations(&self) -> bool {
        match self {
            LoopNode::While(l) => l.collect_all_iterations,
            LoopNode::Foreach(l) => l.collect_all_iterations,
        }
        .unwrap_or(false)
    }
}

impl<'de> Deserialize<'de> for LoopNode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        LoopNode::from_value(value).map_err(D::Error::custom)
    }
}

/// Condition-driven loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WhileLoopNode {
    pub id: String,
    pub kind: LoopTag,
    pub loop_kind: WhileTag,
    pub body: LoopBody,
    pub exit_condition: Expr,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evaluation_timing: Option<EvaluationTiming>,
    pub max_iterations: u32,
    pub output_schema: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collect_all_iterations: Option<bool>,
}

impl WhileLoopNode {
    pub fn evaluation_timing_or_default(&self) -> EvaluationTiming {
        self.evaluation_timing.unwrap_or(EvaluationTiming::After)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EvaluationTiming {
    Before,
    After,
}

/// Array-driven loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ForeachLoopNode {
    pub id: String,
    pub kind: LoopTag,
    pub loop_kind: ForeachTag,
    pub body: LoopBody,
    pub iterate_over: Operand,
    pub max_iterations: u32,
    pub output_schema: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collect_all_iterations: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<u32>,
}

impl ForeachLoopNode {
    pub fn concurrency_or_default(&self) -> u32 {
        self.concurrency.unwrap_or(1)
    }
}

/// The sub-flow a loop iterates (`$loop-start` / `$loop-end` sentinels).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LoopBody {
    pub nodes: Vec<Node>,
    pub edges: Vec<LoopEdge>,
}

/// An edge inside a loop body (no policy).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LoopEdge {
    pub id: String,
    pub from: String,
    pub to: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<Expr>,
}

/// N different handlers run in parallel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FanoutNode {
    pub id: String,
    pub kind: FanoutTag,
    pub branches: Vec<FanoutBranch>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<u32>,
    pub convergence: FanoutConvergence,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FanoutBranch {
    pub branch_id: String,
    /// Resolved like a leaf `ref`: a tool id (or an agent id).
    pub handler: String,
    pub output_schema: Value,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FanoutConvergence {
    AllSucceed,
    AnySucceed,
    SettleAll,
}

/// Another registered flow, run as a child run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubflowNode {
    pub id: String,
    pub kind: SubgraphTag,
    pub flow_ref: FlowRef,
    pub input_mapping: Mapping,
    pub output_schema: Value,
    pub convergence: SubgraphConvergence,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FlowRef {
    pub flow_id: String,
    pub version: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SubgraphConvergence {
    SuccessOnly,
    SettleAll,
}

/// A directed edge of the outer flow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Edge {
    pub id: String,
    pub from: String,
    pub to: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<Expr>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<EdgePolicy>,
}

/// Per-edge runtime policy; honoured only on a destination's sole incoming edge.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EdgePolicy {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<RetryPolicy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RetryPolicy {
    pub max_attempts: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff: Option<Backoff>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_delay_ms: Option<u64>,
}

impl RetryPolicy {
    /// The delay before retry number `retry` (1 = the first retry, i.e. the second attempt).
    pub fn delay_before_retry(&self, retry: u32) -> u64 {
        let base = self.delay_ms.unwrap_or(0);
        let retry = retry.max(1);
        match self.backoff.unwrap_or(Backoff::Fixed) {
            Backoff::Fixed => base,
            Backoff::Linear => base
                .saturating_mul(u64::from(retry))
                .min(self.max_delay_ms.unwrap_or(60_000)),
            Backoff::Exponential => {
                let factor = 1u64.checked_shl(retry - 1).unwrap_or(u64::MAX);
                base.saturating_mul(factor)
                    .min(self.max_delay_ms.unwrap_or(u64::MAX))
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backoff {
    Fixed,
    Linear,
    Exponential,
}

/// A predicate: a closed set of operators over operands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase", deny_unknown_fields)]
pub enum Expr {
    Eq { left: Operand, right: Operand },
    Ne { left: Operand, right: Operand },
    Lt { left: Operand, right: Operand },
    Lte { left: Operand, right: Operand },
    Gt { left: Operand, right: Operand },
    Gte { left: Operand, right: Operand },
    In { value: Operand, set: Operand },
    NotIn { value: Operand, set: Operand },
    Exists { value: Operand },
    NotExists { value: Operand },
    Truthy { value: Operand },
    Falsy { value: Operand },
    And { children: Vec<Expr> },
    Or { children: Vec<Expr> },
    Not { child: Box<Expr> },
}

impl Expr {
    /// Every operand of the expression, depth first.
    pub fn operands(&self) -> Vec<&Operand> {
        let mut out = Vec::new();
        self.collect_operands(&mut out);
        out
    }

    fn collect_operands<'a>(&'a self, out: &mut Vec<&'a Operand>) {
        match self {
            Expr::Eq { left, right }
            | Expr::Ne { left, right }
            | Expr::Lt { left, right }
            | Expr::Lte { left, right }
            | Expr::Gt { left, right }
            | Expr::Gte { left, right } => {
                out.push(left);
                out.push(right);
            }
            Expr::In { value, set } | Expr::NotIn { value, set } => {
                out.push(value);
                out.push(set);
            }
            Expr::Exists { value }
            | Expr::NotExists { value }
            | Expr::Truthy { value }
            | Expr::Falsy { value } => out.push(value),
            Expr::And { children } | Expr::Or { children } => {
                for c in children {
                    c.collect_operands(out);
                }
            }
            Expr::Not { child } => child.collect_operands(out),
        }
    }
}

/// A literal JSON value or a dot-path into the run environment.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    Literal(Value),
    Path(String),
}

impl Serialize for Operand {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = Map::new();
        match self {
            Operand::Literal(v) => map.insert("literal".into(), v.clone()),
            Operand::Path(p) => map.insert("path".into(), Value::String(p.clone())),
        };
        map.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Operand {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let Value::Object(mut map) = value else {
            return Err(D::Error::custom(format!(
                "an operand is an object {{\"literal\": …}} or {{\"path\": \"…\"}}, got {value}"
            )));
        };
        if map.len() != 1 {
            let keys: Vec<&String> = map.keys().collect();
            return Err(D::Error::custom(format!(
                "an operand has exactly one key, `literal` or `path`; got keys {keys:?}"
            )));
        }
        if let Some(v) = map.remove("literal") {
            return Ok(Operand::Literal(v));
        }
        match map.remove("path") {
            Some(Value::String(p)) => Ok(Operand::Path(p)),
            Some(other) => Err(D::Error::custom(format!(
                "an operand's `path` must be a string, got {other}"
            ))),
            None => {
                let keys: Vec<&String> = map.keys().collect();
                Err(D::Error::custom(format!(
                    "an operand has exactly one key, `literal` or `path`; got keys {keys:?}"
                )))
            }
        }
    }
}

/// The roots an operand path may start with.
pub const PATH_ROOTS: [&str; 5] = [
    "runInput",
    "state",
    "nodeOutputs",
    "iterationIndex",
    "iterationOutput",
];

/// Checks a path against the schema's pattern:
/// `^(runInput|state|nodeOutputs\.[A-Za-z0-9_.-]+|iterationIndex|iterationOutput)(\.[A-Za-z0-9_-]+)*$`.
pub fn check_path(path: &str) -> Result<(), String> {
    let segment_ok = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    let mut parts = path.split('.');
    let root = parts.next().unwrap_or("");
    if !PATH_ROOTS.contains(&root) {
        return Err(format!(
            "path \"{path}\" must start with runInput, state, nodeOutputs.<nodeId>, iterationIndex or iterationOutput"
        ));
    }
    let rest: Vec<&str> = parts.collect();
    if root == "nodeOutputs" && rest.is_empty() {
        return Err(format!(
            "path \"{path}\" must name a node: nodeOutputs.<nodeId>"
        ));
    }
    if let Some(bad) = rest.iter().find(|s| !segment_ok(s)) {
        return Err(format!(
            "path \"{path}\" has an invalid segment \"{bad}\" (letters, digits, `_` and `-` only; no wildcards or indexes)"
        ));
    }
    Ok(())
}

/// A declarative object: each key resolves an operand. Keeps its key order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Mapping(pub Vec<(String, Operand)>);

impl Mapping {
    pub fn iter(&self) -> impl Iterator<Item = &(String, Operand)> {
        self.0.iter()
    }
}

impl Serialize for Mapping {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Mapping {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = Map::<String, Value>::deserialize(deserializer)?;
        let mut out = Vec::with_capacity(map.len());
        for (k, v) in map {
            if k.is_empty() {
                return Err(D::Error::custom("a mapping key must not be empty"));
            }
            let operand: Operand = serde_json::from_value(v)
                .map_err(|e| D::Error::custom(format!("mapping key \"{k}\": {e}")))?;
            out.push((k, operand));
        }
        Ok(Mapping(out))
    }
}

// ---------------------------------------------------------------------------------------------
// Structural validation.

fn issue(issues: &mut Vec<FlowIssue>, at: impl Into<String>, message: impl Into<String>) {
    issues.push(FlowIssue {
        at: at.into(),
        message: message.into(),
    });
}

fn is_sentinel(id: &str) -> bool {
    [START, END, LOOP_START, LOOP_END].contains(&id)
}

fn is_semver(v: &str) -> bool {
    let (core, pre) = match v.split_once('-') {
        Some((c, p)) => (c, Some(p)),
        None => (v, None),
    };
    let nums: Vec<&str> = core.split('.').collect();
    let core_ok = nums.len() == 3
        && nums
            .iter()
            .all(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
    let pre_ok = pre.is_none_or(|p| {
        p.split('.')
            .all(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
    });
    core_ok && pre_ok
}

fn validate_flow(flow: &Flow, issues: &mut Vec<FlowIssue>) {
    if flow.id.is_empty() {
        issue(issues, "id", "must not be empty");
    }
    if !is_semver(&flow.version) {
        issue(
            issues,
            "version",
            format!("\"{}\" is not a semver version (X.Y.Z)", flow.version),
        );
    }
    if flow.nodes.is_empty() {
        issue(issues, "nodes", "a flow has at least one node");
    }
    if flow.max_parallelism == Some(0) {
        issue(issues, "maxParallelism", "must be at least 1");
    }
    // Node ids are unique across the whole flow, loop bodies included.
    let mut seen: HashMap<&str, String> = HashMap::new();
    collect_ids(&flow.nodes, "nodes", &mut seen, issues);
    let all_ids: HashSet<&str> = seen.keys().copied().collect();

    validate_nodes(&flow.nodes, "nodes", &all_ids, issues);
    let edges: Vec<GraphEdge<'_>> = flow
        .edges
        .iter()
        .map(|e| GraphEdge {
            id: &e.id,
            from: &e.from,
            to: &e.to,
            when: e.when.as_ref(),
        })
        .collect();
    validate_graph(&flow.nodes, &edges, "edges", START, END, &all_ids, issues);

    for (i, e) in flow.edges.iter().enumerate() {
        if let Some(p) = &e.policy {
            validate_policy(p, &format!("edges[{i}].policy"), issues);
        }
    }
    if let Some(out) = &flow.output {
        validate_mapping(&out.mapping, "output.mapping", &all_ids, issues);
        if let Some(s) = &out.schema
            && !s.is_object()
        {
            issue(issues, "output.schema", "must be a JSON Schema object");
        }
    }
}

fn collect_ids<'a>(
    nodes: &'a [Node],
    at: &str,
    seen: &mut HashMap<&'a str, String>,
    issues: &mut Vec<FlowIssue>,
) {
    for (i, node) in nodes.iter().enumerate() {
        let here = format!("{at}[{i}]");
        let id = node.id();
        if id.is_empty() {
            issue(issues, format!("{here}.id"), "must not be empty");
        } else if is_sentinel(id) {
            issue(
                issues,
                format!("{here}.id"),
                format!("\"{id}\" is a sentinel and cannot be a node id"),
            );
        } else if let Some(first) = seen.get(id) {
            issue(
                issues,
                format!("{here}.id"),
                format!(
                    "duplicate node id \"{id}\" (first declared at {first}); node ids are unique across the whole flow, loop bodies included"
                ),
            );
        } else {
            seen.insert(id, here.clone());
        }
        if let Node::Loop(l) = node {
            collect_ids(&l.body().nodes, &format!("{here}.body.nodes"), seen, issues);
        }
    }
}

fn validate_nodes(nodes: &[Node], at: &str, all_ids: &HashSet<&str>, issues: &mut Vec<FlowIssue>) {
    for (i, node) in nodes.iter().enumerate() {
        let here = format!("{at}[{i}]");
        match node {
            Node::Leaf(leaf) => {
                if leaf.ref_.is_empty() {
                    issue(issues, format!("{here}.ref"), "must not be empty");
                }
                if let Some(m) = &leaf.input_mapping {
                    validate_mapping(m, &format!("{here}.inputMapping"), all_ids, issues);
                }
            }
            Node::Loop(l) => validate_loop(l, &here, all_ids, issues),
            Node::Fanout(f) => validate_fanout(f, &here, issues),
            Node::Subgraph(s) => validate_subgraph(s, &here, all_ids, issues),
        }
    }
}

/// A loop: its bounds, its condition or iterated operand, and its body as a graph of its own.
fn validate_loop(l: &LoopNode, here: &str, all_ids: &HashSet<&str>, issues: &mut Vec<FlowIssue>) {
    let max = l.max_iterations();
    if !(1..=10_000).contains(&max) {
        issue(
            issues,
            format!("{here}.maxIterations"),
            format!("{max} is out of range 1..10000"),
        );
    }
    if !l.output_schema().is_object() {
        issue(
            issues,
            format!("{here}.outputSchema"),
            "must be a JSON Schema object",
        );
    }
    match l {
        LoopNode::While(w) => {
            validate_expr(
                &w.exit_condition,
                &format!("{here}.exitCondition"),
                all_ids,
                issues,
            );
        }
        LoopNode::Foreach(f) => {
            validate_operand(
                &f.iterate_over,
                &format!("{here}.iterateOver"),
                all_ids,
                issues,
            );
            if let Some(c) = f.concurrency {
                let cap = max.min(32);
                if c < 1 || c > cap {
                    issue(
                        issues,
                        format!("{here}.concurrency"),
                        format!(
                            "{c} is out of range 1..{cap} (1 ≤ concurrency ≤ min(maxIterations, 32))"
                        ),
                    );
                }
            }
        }
    }
    let body = l.body();
    let body_at = format!("{here}.body");
    if body.nodes.is_empty() {
        issue(
            issues,
            format!("{body_at}.nodes"),
            "a loop body has at least one node",
        );
    }
    validate_nodes(&body.nodes, &format!("{body_at}.nodes"), all_ids, issues);
    let edges: Vec<GraphEdge<'_>> = body
        .edges
        .iter()
        .map(|e| GraphEdge {
            id: &e.id,
            from: &e.from,
            to: &e.to,
            when: e.when.as_ref(),
        })
        .collect();
    validate_graph(
        &body.nodes,
        &edges,
        &format!("{body_at}.edges"),
        LOOP_START,
        LOOP_END,
        all_ids,
        issues,
    );
}

/// A fanout: at least two branches with distinct ids, and a concurrency within them.
fn validate_fanout(f: &FanoutNode, here: &str, issues: &mut Vec<FlowIssue>) {
    if f.branches.len() < 2 {
        issue(
            issues,
            format!("{here}.branches"),
            "a fanout has at least 2 branches",
        );
    }
    let mut ids = HashSet::new();
    for (b, branch) in f.branches.iter().enumerate() {
        if !ids.insert(branch.branch_id.as_str()) {
            issue(
                issues,
                format!("{here}.branches[{b}].branchId"),
                format!("duplicate branchId \"{}\"", branch.branch_id),
            );
        }
        if branch.handler.is_empty() {
            issue(
                issues,
                format!("{here}.branches[{b}].handler"),
                "must not be empty",
            );
        }
        if !branch.output_schema.is_object() {
            issue(
                issues,
                format!("{here}.branches[{b}].outputSchema"),
                "must be a JSON Schema object",
            );
        }
    }
    if let Some(c) = f.concurrency
        && (c < 1 || c as usize > f.branches.len())
    {
        issue(
            issues,
            format!("{here}.concurrency"),
            format!(
                "{c} is out of range 1..{} (the number of branches)",
                f.branches.len()
            ),
        );
    }
}

/// A sub-flow: an exact flow reference, its input mapping and its output schema.
fn validate_subgraph(
    s: &SubflowNode,
    here: &str,
    all_ids: &HashSet<&str>,
    issues: &mut Vec<FlowIssue>,
) {
    if s.flow_ref.flow_id.is_empty() {
        issue(
            issues,
            format!("{here}.flowRef.flowId"),
            "must not be empty",
        );
    }
    if !is_semver(&s.flow_ref.version) {
        issue(
            issues,
            format!("{here}.flowRef.version"),
            format!(
                "\"{}\" is not an exact semver version (no ranges)",
                s.flow_ref.version
            ),
        );
    }
    validate_mapping(
        &s.input_mapping,
        &format!("{here}.inputMapping"),
        all_ids,
        issues,
    );
    if !s.output_schema.is_object() {
        issue(
            issues,
            format!("{here}.outputSchema"),
            "must be a JSON Schema object",
        );
    }
}

struct GraphEdge<'a> {
    id: &'a str,
    from: &'a str,
    to: &'a str,
    when: Option<&'a Expr>,
}

fn validate_graph(
    nodes: &[Node],
    edges: &[GraphEdge<'_>],
    at: &str,
    start: &str,
    end: &str,
    all_ids: &HashSet<&str>,
    issues: &mut Vec<FlowIssue>,
) {
    let local: HashSet<&str> = nodes.iter().map(Node::id).collect();
    let mut edge_ids = HashSet::new();
    let mut adjacency: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut has_start = false;
    for (i, e) in edges.iter().enumerate() {
        let here = format!("{at}[{i}]");
        if e.id.is_empty() {
            issue(issues, format!("{here}.id"), "must not be empty");
        } else if !edge_ids.insert(e.id) {
            issue(
                issues,
                format!("{here}.id"),
                format!("duplicate edge id \"{}\"", e.id),
            );
        }
        let from_ok = e.from == start || local.contains(e.from);
        if !from_ok {
            let why = if e.from == end {
                format!("an edge cannot start at \"{end}\"")
            } else if is_sentinel(e.from) {
                format!(
                    "sentinel \"{}\" is not allowed here (use \"{start}\")",
                    e.from
                )
            } else if all_ids.contains(e.from) {
                format!(
                    "node \"{}\" is declared in another graph (a loop body and its outer graph do not share edges)",
                    e.from
                )
            } else {
                format!("unknown node \"{}\" in edge \"{}\"", e.from, e.id)
            };
            issue(issues, format!("{here}.from"), why);
        }
        let to_ok = e.to == end || local.contains(e.to);
        if !to_ok {
            let why = if e.to == start {
                format!("an edge cannot end at \"{start}\"")
            } else if is_sentinel(e.to) {
                format!("sentinel \"{}\" is not allowed here (use \"{end}\")", e.to)
            } else if all_ids.contains(e.to) {
                format!(
                    "node \"{}\" is declared in another graph (a loop body and its outer graph do not share edges)",
                    e.to
                )
            } else {
                format!("unknown node \"{}\" in edge \"{}\"", e.to, e.id)
            };
            issue(issues, format!("{here}.to"), why);
        }
        if e.from == start {
            has_start = true;
        }
        if let Some(w) = e.when {
            validate_expr(w, &format!("{here}.when"), all_ids, issues);
        }
        if from_ok && to_ok {
            adjacency.entry(e.from).or_default().push(e.to);
        }
    }
    if !nodes.is_empty() && !has_start {
        issue(
            issues,
            at.to_owned(),
            format!("no edge leaves \"{start}\", so nothing would run"),
        );
    }
    for node in nodes {
        let id = node.id();
        if !edges.iter().any(|e| e.to == id) {
            issue(
                issues,
                at.to_owned(),
                format!("node \"{id}\" has no incoming edge, so it can never run"),
            );
        }
    }
    // Cycle check (depth-first, colours).
    let mut state: HashMap<&str, u8> = HashMap::new();
    fn visit<'a>(
        n: &'a str,
        adjacency: &BTreeMap<&'a str, Vec<&'a str>>,
        state: &mut HashMap<&'a str, u8>,
        path: &mut Vec<&'a str>,
    ) -> Option<Vec<&'a str>> {
        match state.get(n) {
            Some(1) => {
                let pos = path.iter().position(|p| *p == n).unwrap_or(0);
                let mut cycle = path[pos..].to_vec();
                cycle.push(n);
                return Some(cycle);
            }
            Some(2) => return None,
            _ => {}
        }
        state.insert(n, 1);
        path.push(n);
        if let Some(next) = adjacency.get(n) {
            for m in next {
                if let Some(c) = visit(m, adjacency, state, path) {
                    return Some(c);
                }
            }
        }
        path.pop();
        state.insert(n, 2);
        None
    }
    let keys: Vec<&str> = adjacency.keys().copied().collect();
    for k in keys {
        let mut path = Vec::new();
        if let Some(cycle) = visit(k, &adjacency, &mut state, &mut path) {
            issue(
                issues,
                at.to_owned(),
                format!(
                    "the edges form a cycle: {} (use a loop node to repeat work)",
                    cycle.join(" → ")
                ),
            );
            break;
        }
    }
}

fn validate_policy(p: &EdgePolicy, at: &str, issues: &mut Vec<FlowIssue>) {
    if let Some(r) = &p.retry {
        if !(1..=10).contains(&r.max_attempts) {
            issue(
                issues,
                format!("{at}.retry.maxAttempts"),
                format!("{} is out of range 1..10", r.max_attempts),
            );
        }
        if r.backoff == Some(Backoff::Exponential) && r.max_delay_ms.is_none() {
            issue(
                issues,
                format!("{at}.retry.maxDelayMs"),
                "exponential backoff requires maxDelayMs",
            );
        }
    }
    if let Some(t) = p.timeout_ms
        && !(1..=3_600_000).contains(&t)
    {
        issue(
            issues,
            format!("{at}.timeoutMs"),
            format!("{t} is out of range 1..3600000"),
        );
    }
    if let Some(k) = &p.concurrency_key
        && (k.is_empty() || k.len() > 256 || !k.bytes().all(|b| (0x20..=0x7e).contains(&b)))
    {
        issue(
            issues,
            format!("{at}.concurrencyKey"),
            "must be 1..256 printable ASCII characters",
        );
    }
    if let Some(pr) = p.priority
        && !(-100..=100).contains(&pr)
    {
        issue(
            issues,
            format!("{at}.priority"),
            format!("{pr} is out of range -100..100"),
        );
    }
}

fn validate_mapping(m: &Mapping, at: &str, all_ids: &HashSet<&str>, issues: &mut Vec<FlowIssue>) {
    for (k, op) in m.iter() {
        validate_operand(op, &format!("{at}.{k}"), all_ids, issues);
    }
}

fn validate_operand(op: &Operand, at: &str, all_ids: &HashSet<&str>, issues: &mut Vec<FlowIssue>) {
    if let Operand::Path(p) = op {
        if let Err(e) = check_path(p) {
            issue(issues, at.to_owned(), e);
        } else if let Some(rest) = p.strip_prefix("nodeOutputs.") {
            // Node ids may contain dots: accept when some dotted prefix names a node.
            let mut known = false;
            let mut prefix = String::new();
            for seg in rest.split('.') {
                if !prefix.is_empty() {
                    prefix.push('.');
                }
                prefix.push_str(seg);
                if all_ids.contains(prefix.as_str()) {
                    known = true;
                    break;
                }
            }
            if !known {
                issue(
                    issues,
                    at.to_owned(),
                    format!("path \"{p}\" names no node of this flow"),
                );
            }
        }
    }
}

fn validate_expr(e: &Expr, at: &str, all_ids: &HashSet<&str>, issues: &mut Vec<FlowIssue>) {
    match e {
        Expr::And { children } | Expr::Or { children } if children.is_empty() => {
            issue(issues, at.to_owned(), "`and`/`or` need at least one child");
        }
        _ => {}
    }
    for op in e.operands() {
        validate_operand(op, at, all_ids, issues);
    }
}
