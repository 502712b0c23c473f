//! Kindgi tools: the authoring API, invocation, the tool context, spec synthesizers (http),
//! and the in-memory registry with npm-semver resolution.
//!
//! A [`Tool`] is a [`ToolManifest`](kindgi_spec::ToolManifest) plus a [`Handler`] plus the
//! validators compiled from the manifest's schemas.
//!
//! - **Define** ([`define`]): [`Tool::define`] is a builder whose methods are named after the
//!   manifest fields; a typed handler `async fn(I, ToolContext) -> Result<O, HandlerError>`
//!   gives the schemas (derived with schemars, made strict-clean by [`derive`]), or they are
//!   given as raw JSON Schema. [`define_manifest`] defines from manifest JSON. Both run the
//!   wire path's manifest validation (`kindgi_spec::validate`) through [`engine`], the
//!   adapter onto `kindgi-schema`, and keep what it compiled ([`compiled`]): nothing is
//!   compiled per call. Declarative tools (`spec`) get their handler from a
//!   [`synth::SpecSynthesizer`] at definition time.
//! - **Invoke** ([`invoke`]): exactly the reference `invokeTool` — env preconditions, input
//!   validated on a copy with defaults filled, the handler (failures and panics caught), the
//!   output validated — with the reference's codes and messages ([`InvokeError`]).
//! - **Dispatch** ([`dispatch`]): the trait every transport implements ([`dispatch::ToolDispatcher`]),
//!   so the runtime calls tools without knowing transports and transports need no runtime.
//! - **Egress** ([`egress`], `http` feature): the host's address policy for outbound connections a tenant's
//!   definitions cause (the http synthesizer, MCP endpoints).
//! - [`tool_idempotency_key`]: the reference's per-call UUIDv5.
//!
//! # Features
//!
//! - `http` (default): the http-tool side — the declarative http synthesizer ([`http`], the
//!   `http` kind of [`synth::SynthesizerRegistry::builtin`]) and the egress policy
//!   ([`egress`]), with the HTTP client (`reqwest`, rustls) they need. Hosts keep it. A pack
//!   that only defines, derives and invokes its own tools depends on this crate with
//!   `default-features = false` and compiles no HTTP client: its builtin registry then knows
//!   no kind, so a declarative `spec` tool is refused at definition with the usual "no
//!   synthesizer registered" error. Nothing outside those two modules changes with the
//!   feature (the pack seam's transport causes are boxed, [`pack_call::TransportSource`]).
//! - `testing`: the test kits other crates' tests use (`testing`, the registry conformance
//!   suite).

pub mod compiled;
pub mod context;
pub mod define;
pub mod derive;
pub mod dispatch;
#[cfg(feature = "http")]
pub mod egress;
pub mod engine;
pub mod error;
#[cfg(feature = "http")]
pub mod http;
pub mod idempotency;
pub mod invoke;
pub mod pack_call;
pub mod registry;
pub mod secret_mask;
pub mod semver;
pub mod synth;
#[cfg(feature = "testing")]
pub mod testing;
pub mod tool;

pub use context::{ToolContext, WaitTicket};
pub use define::{DefineError, DefineErrorCode, ToolBuilder, define_manifest};
pub use error::{InvokeError, InvokeErrorCode};
pub use idempotency::tool_idempotency_key;
pub use invoke::{InvokeOptions, invoke, invoke_owned, invoke_owned_with, invoke_with};
pub use tool::{Handler, HandlerError, Tool};

/// A boxed, sendable future: what handlers, the tool context and the registry return. Here in
/// the crate root because `context` needs it and `tool` needs `context` (no circle).
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;
