//! Route groups, each mounted by [`crate::router`]; [`registry`] holds what the versioned
//! registries (flows, agents, guardrails) share, [`scope`] the one scope triplet.

pub mod agents;
pub mod approvals;
pub mod approvals_query;
pub mod approvals_wire;
pub mod audit_bundle;
pub mod connections;
pub mod conversations;
pub mod env;
pub mod flows;
pub mod guardrail_extension;
pub mod guardrails;
pub mod identity;
pub mod key_holder;
pub mod mcp;
pub mod mcp_auth;
pub mod mcp_proxy;
pub mod mcp_sync;
pub mod mcp_validate;
pub mod projects;
pub mod providers;
pub mod providers_validate;
pub mod registry;
pub mod reviewer;
pub mod reviewers;
pub mod scope;
pub mod secret_binding;
pub mod secrets;
pub mod service_accounts;
pub mod tenant;
pub mod tokens;
pub mod tools;
pub mod unattended;
pub mod values;
pub mod waits;
