//! Kindgi pack protocol v2 for pack authors: the pack SDK's `index`/`serve` ([`sdk`]), the
//! pack service it runs ([`service`]) and its call records ([`log`], [`log_tracing`]).
//! Hosts call packs through `kindgi-pack-client`; the conformance kit is
//! `kindgi-conformance`.

pub mod log;
pub mod log_tracing;
pub mod sdk;
pub mod service;
