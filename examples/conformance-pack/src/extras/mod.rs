//! Tools and checks only `index.extras.json` lists: a second version of `conformance.echo`,
//! `conformance.versioned` at two versions, a tool whose input schema does not compile, a
//! probe for whether pack code can read the service token back, a tool that logs through
//! `tracing`, and two checks that wait on their abort signal.

pub mod bad_schema;
pub mod echo_v2;
pub mod log_probe;
pub mod slow;
pub mod token_probe;
pub mod versioned;
pub mod waits;
