//! Kindgi tools: the authoring API, invocation, the tool context, spec synthesizers (http),
//! and the in-memory registry with npm-semver resolution.
//!
//! A [`Tool`] is a [`ToolManifest`](kindgi_spec::ToolManifest) plus a [`Handler`].
//! Declarative tools (`spec`) get their handler from a [`synth::SpecSynthesizer`] at
//! definition time. Invocation runs a tool exactly as seed 001 describes: env preconditions,
//! input validated with defaults filled, the handler, the output validated.

pub mod compiled;
pub mod context;
pub mod define;
pub mod derive;
pub mod engine;
pub mod error;
pub mod http;
pub mod idempotency;
pub mod invoke;
pub mod registry;
pub mod semver;
pub mod synth;
pub mod tool;

pub use context::ToolContext;
pub use define::{DefineError, DefineErrorCode, ToolBuilder, define_manifest};
pub use error::{InvokeError, InvokeErrorCode};
pub use idempotency::tool_idempotency_key;
pub use invoke::{InvokeOptions, invoke, invoke_owned, invoke_owned_with, invoke_with};
pub use tool::{BoxFuture, Handler, HandlerError, Tool};
