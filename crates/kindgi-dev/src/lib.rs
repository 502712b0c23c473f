//! `kindgi dev`'s pack-folder work: run a pack's own code locally, with no Docker.
//!
//! # Design
//!
//! This crate knows pack folders and pack service processes, nothing above them: the
//! runtime, the `/v1` API and the wiring of both live in `kindgi-host`, which `kindgi dev`
//! and `kindgi server --pack-dir` use with a [`folder::FolderPack`] from here. The steps:
//!
//! 1. [`detect`] — Rust (`Cargo.toml`), Python (`pyproject.toml` with `[tool.kindgi]`) or
//!    TypeScript (`kindgi.config.ts`, the official SDK's; [`typescript`]);
//! 2. [`prepare`] — build (`cargo build`) and index (`<pack> index`, `python -m kindgi.pack
//!    index`, the official TypeScript indexer) into `.kindgi/index.json`;
//! 3. [`supervisor`] — start the pack service (`PORT=0`, a random base64url token,
//!    `KINDGI_LOG_FORMAT=json`, `KINDGI_PACK_ENV_CHECK=warn`, an allowlisted environment:
//!    [`pack_env`]), wait for its `listening` line
//!    (60 s), restart it when it dies (3× in a row, 500 ms apart; the budget resets after
//!    60 s up), stop it with SIGTERM then SIGKILL; it dies with its parent ([`parent_death`]).
//!    The child serving now is published in a `kindgi_pack_client::dispatch::ServiceSlot`, which
//!    the pack dispatch (`PackServiceCaller`) reads on every call;
//! 4. [`watch`] / [`folder`] — on a source change: rebuild, re-index, restart. A failed
//!    rebuild keeps the previous build serving;
//! 5. [`dev_key`] — one API key per pack folder, rotated on every start, revoked on a stop;
//! 6. [`discovery`] — `.kindgirc.json` in the official CLI's shape (`apiUrl`, `token`,
//!    `tenantId`, `userId`, `packServicePort`), mode 0600.
//!
//! Tool calls follow the relay rule of pack-protocol §10 in-process (no HTTP hop): when no
//! child serves, or the connection is refused, the call provably did not run
//! (*unavailable*); a call delivered without an answer may have run (*failed*) and is never
//! repeated. Either way the step fails with `pack-unreachable: …` at once — no hang.

pub mod detect;
pub mod dev_key;
pub mod discovery;
pub mod error;
pub mod folder;
pub mod pack_env;
pub mod parent_death;
pub mod prepare;
pub mod supervisor;
pub mod ts_build;
pub mod typescript;
pub mod upwards;
pub mod watch;

pub use error::DevError;
pub use folder::FolderPack;

/// The tenant the dev server's API key belongs to (the runtime's default tenant).
pub const DEV_TENANT: &str = "default";
/// The default API port of `kindgi dev`.
pub const DEFAULT_PORT: u16 = 4000;
