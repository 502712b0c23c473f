//! Kindgi pack protocol v2: the pack service, its client, pack dispatch (the runtime's
//! [`kindgi_tools::dispatch::PackCaller`] over the service serving now, [`dispatch`]), the
//! pack SDK's `index`/`serve`, and the conformance kit.

pub mod client;
pub mod conformance;
pub mod dispatch;
pub mod log;
pub mod log_tracing;
pub mod sdk;
pub mod service;
