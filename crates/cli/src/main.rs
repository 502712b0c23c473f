//! `kindgi`: the command line. Thin by design: clap parses the raw arguments, each command
//! module validates them and calls into the library crates.
//!
//! Exit codes (every command): 0 success, 1 the thing checked or run failed (an invalid
//! manifest, a failed run, a failed conformance check, an API error), 2 a usage error
//! (clap's own code) or input that cannot be used at all (a schema that does not compile);
//! the API commands' own table (3/4 for `runs resume`, 130 on Ctrl-C) is in
//! [`api::errors`]. The process has one tokio runtime, made here, that every API command
//! runs on. Logs go to stderr through one `tracing` subscriber ([`logging`]).

use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod api;
mod cmd;
mod logging;

#[derive(Debug, Parser)]
#[command(
    name = "kindgi",
    // Says which `kindgi` answered when the official CLI (PyPI kindgi-cli) is also installed.
    version = concat!(env!("CARGO_PKG_VERSION"), " (kindgi-rs, the Rust runtime)"),
    about = "Kindgi: an agent runtime whose unit of work is the tool"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check manifests, and list, get or register tools on a running API.
    #[command(subcommand)]
    Tools(cmd::tools::ToolsCommand),
    /// Validate an instance against a JSON Schema, as the runtime does.
    #[command(subcommand)]
    Schema(cmd::schema::SchemaCommand),
    /// Pack services: the conformance kit.
    #[command(subcommand)]
    Pack(cmd::pack::PackCommand),
    /// MCP servers as tool sources.
    #[command(subcommand)]
    Mcp(cmd::mcp::McpCommand),
    /// Serve the /v1 REST API.
    Server(cmd::server::ServerArgs),
    /// API keys.
    #[command(subcommand)]
    Tokens(cmd::tokens::TokensCommand),
    /// Start runs and read them.
    #[command(subcommand)]
    Runs(cmd::runs::RunsCommand),
    /// Review approvals: list, get, complete (decide).
    #[command(subcommand)]
    Approvals(cmd::approvals::ApprovalsCommand),
    /// Manage connections to other apps that tools act with: add, list, get, revoke, connect.
    #[command(subcommand)]
    Connections(cmd::connections::ConnectionsCommand),
    /// Manage HITL reviewers: list, get, register, unregister.
    #[command(subcommand)]
    Reviewers(cmd::reviewers::ReviewersCommand),
    /// Run agents and flows on a schedule: create, list, get, update, pause, resume, run-now,
    /// fires, take-ownership, unregister.
    #[command(subcommand)]
    Schedules(cmd::schedules::SchedulesCommand),
    /// Start flow runs from signed webhooks: register, list, get, update, pause, resume,
    /// fires, take-ownership, unregister.
    #[command(subcommand)]
    Webhooks(cmd::webhooks::WebhooksCommand),
    /// Manage mail triggers: create, list, get, pause, resume, unregister, fires.
    #[command(subcommand, name = "mail-triggers")]
    MailTriggers(cmd::mail_triggers::MailTriggersCommand),
    /// Read flow registrations: list, get, versions.
    #[command(subcommand)]
    Flows(cmd::registry::ReadCommand),
    /// Read agent registrations: list, get, versions.
    #[command(subcommand)]
    Agents(cmd::registry::ReadCommand),
    /// The runtime's env values at a scope: list, set, unset.
    #[command(subcommand)]
    Env(cmd::env::EnvCommand),
    /// Secrets at a scope: list, get, set, revoke; values are never printed.
    #[command(subcommand)]
    Secrets(cmd::secrets::SecretsCommand),
    /// Model providers: list, get, register, check, capabilities, unregister.
    #[command(subcommand)]
    Providers(cmd::providers::ProvidersCommand),
    /// Run a pack locally: build, index, supervise its pack service and serve the API.
    Dev(cmd::dev::DevArgs),
    /// Scaffold a Rust pack (`--template=rust`): tools, a guardrail, an agent and a flow.
    Init(cmd::init::InitArgs),
    /// The configured key: whoami.
    #[command(subcommand)]
    Auth(cmd::auth::AuthCommand),
    /// Conversations: list, get, open, close, unregister, messages.
    #[command(subcommand)]
    Conversations(cmd::conversations::ConversationsCommand),
    /// Guardrail registrations: list, get, register, unregister.
    #[command(subcommand)]
    Guardrails(cmd::guardrails::GuardrailsCommand),
    /// Projects: list, get-default, get, create, rename.
    #[command(subcommand)]
    Projects(cmd::projects::ProjectsCommand),
    /// Your workspace: get, rename.
    #[command(subcommand)]
    Tenant(cmd::tenant::TenantCommand),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Servers report what they do; a one-shot command's stderr stays its answer.
    logging::install(match cli.command {
        Command::Server(_) | Command::Dev(_) => "info",
        _ => "warn",
    });
    let result = match cli.command {
        Command::Server(a) => cmd::server::run(a),
        Command::Dev(a) => cmd::dev::run(a),
        Command::Init(a) => cmd::init::run(a),
        command => match tokio::runtime::Runtime::new() {
            Ok(runtime) => run(command, &runtime),
            Err(e) => Err(anyhow::anyhow!("cannot start the async runtime: {e}")),
        },
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("kindgi: {err:#}");
            ExitCode::from(2)
        }
    }
}

/// The commands that run on this process's runtime (`server` and `dev` make their own).
fn run(command: Command, runtime: &tokio::runtime::Runtime) -> anyhow::Result<ExitCode> {
    match command {
        Command::Tools(c) => cmd::tools::run(c, runtime),
        Command::Schema(c) => cmd::schema::run(c),
        Command::Pack(c) => cmd::pack::run(c, runtime),
        Command::Mcp(c) => cmd::mcp::run(c, runtime),
        Command::Tokens(c) => cmd::tokens::run(c, runtime),
        Command::Runs(c) => Ok(runtime.block_on(cmd::runs::run(c))),
        Command::Approvals(c) => Ok(runtime.block_on(cmd::approvals::run(c))),
        Command::Reviewers(c) => Ok(runtime.block_on(cmd::reviewers::run(c))),
        Command::Schedules(c) => Ok(runtime.block_on(cmd::schedules::run(c))),
        Command::Webhooks(c) => Ok(runtime.block_on(cmd::webhooks::run(c))),
        Command::Connections(c) => Ok(runtime.block_on(cmd::connections::run(c))),
        Command::MailTriggers(c) => Ok(runtime.block_on(cmd::mail_triggers::run(c))),
        Command::Flows(c) => Ok(runtime.block_on(cmd::registry::run("flows", c))),
        Command::Agents(c) => Ok(runtime.block_on(cmd::registry::run("agents", c))),
        Command::Env(c) => Ok(runtime.block_on(cmd::env::run(c))),
        Command::Secrets(c) => Ok(runtime.block_on(cmd::secrets::run(c))),
        Command::Auth(c) => Ok(runtime.block_on(cmd::auth::run(c))),
        Command::Conversations(c) => Ok(runtime.block_on(cmd::conversations::run(c))),
        Command::Guardrails(c) => Ok(runtime.block_on(cmd::guardrails::run(c))),
        Command::Projects(c) => Ok(runtime.block_on(cmd::projects::run(c))),
        Command::Tenant(c) => Ok(runtime.block_on(cmd::tenant::run(c))),
        Command::Providers(c) => Ok(runtime.block_on(cmd::providers::run(c))),
        Command::Server(a) => cmd::server::run(a),
        Command::Dev(a) => cmd::dev::run(a),
        Command::Init(a) => cmd::init::run(a),
    }
}
