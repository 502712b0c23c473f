//! `kindgi dev`: run a pack locally against the Rust runtime, with no Docker.
//!
//! # Design
//!
//! One process holds everything the closed reference runtime's container would: the
//! [`kindgi_runtime::Runtime`] (flows, runs, journal) over an embedded SQLite database in the
//! pack folder (`.kindgi/dev.db`), and the `/v1` API (`kindgi_api`: tools, flows, runs) on
//! `127.0.0.1`. The pack's code runs in its own pack service process, supervised here:
//!
//! 1. [`detect`] — Rust (`Cargo.toml`), Python (`pyproject.toml` with `[tool.kindgi]`) or
//!    TypeScript (`kindgi.config.ts`, the official SDK's; [`typescript`]);
//! 2. [`prepare`] — build (`cargo build`) and index (`<pack> index`, `python -m kindgi.pack
//!    index`, the official TypeScript indexer) into `.kindgi/index.json`;
//! 3. [`supervisor`] — start the pack service (`PORT=0`, a random base64url token,
//!    `KINDGI_LOG_FORMAT=json`, `KINDGI_PACK_ENV_CHECK=warn`), wait for its `listening` line
//!    (60 s), restart it when it dies (3× in a row, 500 ms apart; the budget resets after
//!    60 s up), stop it with SIGTERM then SIGKILL; it dies with `kindgi dev` ([`parent_death`]);
//! 4. [`register`] — every index tool becomes a pack tool whose calls go through
//!    [`caller::DevPackCaller`] (`kindgi_pack::client`) to the child serving now, plus the
//!    agents and flows;
//! 5. [`discovery`] — `.kindgirc.json` (url + API key) so `kindgi runs …` find the server;
//! 6. [`watch`] — on a source change: rebuild, re-index, restart, re-register. A failed
//!    rebuild keeps the previous build serving.
//!
//! Tool calls use the relay rule of pack-protocol §10 in-process (no HTTP hop): when no
//! child serves, or the connection is refused, the call provably did not run
//! (*unavailable*); a call delivered without an answer may have run (*failed*) and is never
//! repeated. Either way the step fails with `pack-unreachable: …` at once — no hang.

pub mod caller;
pub mod detect;
pub mod dev_key;
pub mod discovery;
pub mod error;
pub mod parent_death;
pub mod prepare;
pub mod register;
pub mod server;
pub mod supervisor;
pub mod typescript;
pub mod watch;

pub use error::DevError;
pub use server::{DevOptions, run};
