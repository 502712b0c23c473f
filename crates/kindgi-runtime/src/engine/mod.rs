//! The engine's vocabulary: what every part of an executing run shares and nothing above it
//! defines — the run context and its failure, the shared state, the journal writer and
//! replay, the pure scheduler and expression evaluator, the stop signal, and the port through
//! which a node kind asks the driver for a sub-graph. Everything here imports only itself and
//! the crate's leaf modules (records, stores, catalogues), never the driver, the steps or the
//! service.

pub(crate) mod ctx;
pub mod expr;
pub(crate) mod failure;
pub(crate) mod graph;
pub(crate) mod journal;
pub(crate) mod run_end;
pub mod scheduler;
pub(crate) mod shared;
pub(crate) mod stop;
pub(crate) mod tool_call;
