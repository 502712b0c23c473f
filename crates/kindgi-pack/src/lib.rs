//! Kindgi pack protocol v2: the pack service, its client, the pack SDK's `index`/`serve`,
//! and the conformance kit.

pub mod client;
pub mod conformance;
pub mod log;
pub mod sdk;
pub mod service;
