//! The service's budgets for what a call may cost beyond its 10 MiB body rule: the bytes of
//! bodies being received, the memory of parsed calls (estimated before parsing, see
//! [`super::estimate`]), and the CPU-heavy jobs (large parses, validation) running off the
//! async workers. Defaults and the figures that show they hold: docs/pack-sdk.md.

use kindgi_spec::pack_protocol::MAX_BODY_BYTES;

/// How much a service lets calls cost at once (see the module comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Bodies up to this size are read, scanned and parsed without any reservation (their
    /// parsed form is small whatever they hold), and parsed on the async worker.
    pub small_body: usize,
    /// Bytes of larger bodies being received at once. Past it, reading waits (the bytes stay
    /// in the caller's socket) until another body is in, or the read time runs out (503).
    pub reading_bytes: usize,
    /// Estimated bytes (body + parsed form) of the larger calls parsed and not yet answered.
    /// Past it, a call waits for room until its deadline (then 503 `overloaded`).
    pub parsed_bytes: usize,
    /// The most one call's parsed form may take (estimated); a body past it is refused
    /// (`malformed-message`) before it is parsed.
    pub parsed_per_call: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            small_body: 64 * 1024,
            reading_bytes: 64 * 1024 * 1024,
            parsed_bytes: 192 * 1024 * 1024,
            parsed_per_call: 8 * MAX_BODY_BYTES,
        }
    }
}
