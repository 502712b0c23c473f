//! The one composition root of Kindgi: what `kindgi server` and `kindgi dev` are.
//!
//! # Design
//!
//! A [`Host`] is built from a [`HostConfig`] — database URL, listen address, serving limits,
//! packs ([`PackSource`]), MCP servers ([`McpServer`]), model — and wires, in one place:
//!
//! * the database (`kindgi-store`: SQLite or PostgreSQL, migrated) and the API state over it
//!   (tool registry, API keys);
//! * the runtime (`kindgi-runtime`: flows, durable runs, recovery) over the database's
//!   stores (`Runtime::over(db.ports())`: the runtime knows only core's ports), whose tool catalogue
//!   holds [`ToolDispatcher`](kindgi_tools::dispatch::ToolDispatcher)s of every transport.
//!   The transports implement the trait **below** the runtime: pack dispatch is
//!   `kindgi_pack_client::dispatch` (a `PackServiceCaller` over "the service serving now" — a
//!   supervised child's slot or a fixed remote URL + token), MCP dispatch is
//!   `kindgi_mcp::dispatch`, native and declarative http tools are `kindgi_tools`'s
//!   `InProcessTool`. Nothing here or below climbs to `kindgi-dev`'s callers: `kindgi-dev`
//!   only knows pack folders (detect, build, index, supervise, watch);
//! * each pack's index ([`register`]): its tools as pack tools, its agents and flows, listed
//!   for the pack's tenant in the API registry;
//! * the `/v1` router (`kindgi_api::router` over the state and the runtime) served with
//!   `kindgi-serve` (timeouts, connection caps, bounded drain).
//!
//! `kindgi dev DIR` is a host with one [`PackSource::Folder`] (watching) over
//! `DIR/.kindgi/dev.db`, plus the dev key and `.kindgirc.json`; `kindgi server` is a host
//! from flags and `--config FILE` ([`ConfigFile`]). They differ only in where packs come
//! from and which database they open.
//!
//! Failure is contained: a remote pack service unreachable at start is a warning (its
//! tools fail `pack-unreachable` until it answers, and the run record says so); one that
//! dies mid-call fails that step `pack-unreachable: … failed: …` (the call may have run, so
//! it is not repeated) and the host keeps serving. An MCP server that cannot be reached is
//! left out with a warning.
//!
//! Tenancy: packs and MCP servers name a tenant; their tools, agents and flows are registered
//! in the runtime's catalogues for that tenant only, and put in the store's registries for it
//! (what `GET /v1/tools|flows|agents|guardrails` serve). Behind the catalogues the runtime
//! reads the store ([`sources`]): flows and agents published through the API, and tools
//! registered through `POST /v1/tools` — an http-spec tool runs in process, a pack's tool in
//! the service of the pack this host runs for the tenant (by the id's pack prefix).

pub mod caps;
pub mod config;
pub mod dotenv;
pub mod error;
pub mod host;
pub mod mcp;
pub mod packs;
pub mod register;
pub mod registry_mcp;
pub mod smtp;
pub mod sources;

pub use config::{ConfigFile, DEFAULT_TENANT, HostConfig, McpServer, PackSource};
pub use error::HostError;
pub use host::Host;
