//! A graph as the driver runs it (the flow itself or a loop body, its edges, what it gives
//! back) and [`Drive`], what a node kind may ask of the driver: drive a sub-graph or a child
//! run. The driver implements it and hands itself in, so a node kind receives the port, never
//! the driver.

use kindgi_spec::flow::{EdgePolicy, Expr, Flow, LoopBody, Node};
use kindgi_tools::BoxFuture;
use serde_json::Value;
use std::sync::Arc;

use crate::engine::expr::NodeOutputs;
use crate::engine::failure::Failure;
use crate::record::RunRecord;

/// One edge of a graph being run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EdgeRef<'a> {
    pub id: &'a str,
    pub from: &'a str,
    pub to: &'a str,
    pub when: Option<&'a Expr>,
    pub policy: Option<&'a EdgePolicy>,
}

/// A graph: the flow itself or a loop body.
#[derive(Debug, Clone, Copy)]
pub(crate) enum GraphRef<'a> {
    Top(&'a Flow),
    Body(&'a LoopBody),
}

impl<'a> GraphRef<'a> {
    pub(crate) fn nodes(&self) -> &'a [Node] {
        match self {
            GraphRef::Top(f) => &f.nodes,
            GraphRef::Body(b) => &b.nodes,
        }
    }

    pub(crate) fn edges(&self) -> Vec<EdgeRef<'a>> {
        match self {
            GraphRef::Top(f) => f
                .edges
                .iter()
                .map(|e| EdgeRef {
                    id: &e.id,
                    from: &e.from,
                    to: &e.to,
                    when: e.when.as_ref(),
                    policy: e.policy.as_ref(),
                })
                .collect(),
            GraphRef::Body(b) => b
                .edges
                .iter()
                .map(|e| EdgeRef {
                    id: &e.id,
                    from: &e.from,
                    to: &e.to,
                    when: e.when.as_ref(),
                    policy: None,
                })
                .collect(),
        }
    }

    pub(crate) fn sentinels(&self) -> (&'static str, &'static str) {
        match self {
            GraphRef::Top(_) => (kindgi_spec::flow::START, kindgi_spec::flow::END),
            GraphRef::Body(_) => (kindgi_spec::flow::LOOP_START, kindgi_spec::flow::LOOP_END),
        }
    }
}

/// What a finished graph gives back.
pub(crate) struct GraphResult {
    pub output: Arc<Value>,
    /// Outputs of this graph's own nodes.
    pub local: NodeOutputs,
}

/// What a node kind asks of the graph driver.
pub(crate) trait Drive: Sync {
    /// Drives `graph` (a loop body) to completion in journal scope `scope`, its nodes seeing
    /// `outer` besides their own outputs.
    fn run_graph<'a>(
        &'a self,
        graph: GraphRef<'a>,
        scope: String,
        input: Arc<Value>,
        outer: NodeOutputs,
    ) -> BoxFuture<'a, Result<GraphResult, Failure>>;

    /// Runs (or resumes) `child`, a sub-flow's run one level deeper, stopping with this run,
    /// and returns its record once it ended or parked.
    fn run_child(&self, child: RunRecord) -> BoxFuture<'_, RunRecord>;
}
