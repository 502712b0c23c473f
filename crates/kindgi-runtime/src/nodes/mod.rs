//! The nodes of a flow's graph: a run from its journal to its end ([`run`]), the driver that
//! runs a graph ([`driver`]), and one file per node kind — [`leaf`] (tool and agent steps),
//! [`loop_node`], [`fanout`] and [`subflow`].
//! The driver calls the node kinds; a node kind gets what it needs (the run context, its
//! node, its input, and for sub-graphs the [`crate::engine::graph::Drive`] port) and returns
//! its output or a failure, never calling the driver by name.

pub(crate) mod driver;
pub(crate) mod fanout;
pub(crate) mod leaf;
pub(crate) mod loop_node;
pub(crate) mod run;
pub(crate) mod subflow;

pub(crate) use run::execute_run;
