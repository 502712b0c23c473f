//! `kindgi mcp`: MCP servers as tool sources, from the command line.
//!
//! - `kindgi mcp list ENDPOINT [--timeout-ms N] [--id-prefix P]` prints the server's tools as
//!   Kindgi manifests (a JSON array).
//! - `kindgi mcp call ENDPOINT TOOL [--input JSON] [--timeout-ms N]` calls one tool (by the
//!   server's name for it) and prints the result as JSON: `structuredContent` when the
//!   server sent one, else the `content` blocks.
//!
//! Exit codes: 0 success; 1 the tool ran and reported an error (`isError`: the result is
//! still printed, the error text goes to stderr); 2 a usage error or a connection problem
//! (bad endpoint or input, a server that cannot start, crashes, hangs past the timeout or
//! answers garbage).

use anyhow::anyhow;
use kindgi_mcp::{ConnectOptions, ManifestOptions, McpClient};
use serde_json::Value;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Debug, clap::Subcommand)]
pub enum McpCommand {
    /// List an MCP server's tools as Kindgi tool manifests (JSON).
    List(ListArgs),
    /// Call one tool of an MCP server and print its result (JSON).
    Call(CallArgs),
}

#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// `mcp+stdio://COMMAND ARG…` (words split on spaces, each percent-decoded),
    /// `mcp+http(s)://HOST/PATH` (streamable HTTP) or `mcp+sse(s)://HOST/PATH` (legacy SSE).
    pub endpoint: String,
    /// Bound on connecting and on listing, in milliseconds.
    #[arg(long, default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout_ms: u64,
    /// Name tools `<PREFIX>.<tool>` instead of the bare MCP tool name.
    #[arg(long, value_name = "PREFIX")]
    pub id_prefix: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct CallArgs {
    /// The server (same forms as `kindgi mcp list`).
    pub endpoint: String,
    /// The tool's name on the server.
    pub tool: String,
    /// The tool input: a JSON object.
    #[arg(long, default_value = "{}", value_name = "JSON")]
    pub input: String,
    /// Bound on the call (and, separately, on connecting), in milliseconds.
    #[arg(long, default_value_t = 120_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout_ms: u64,
}

pub fn run(command: McpCommand, runtime: &tokio::runtime::Runtime) -> anyhow::Result<ExitCode> {
    runtime.block_on(async {
        match command {
            McpCommand::List(args) => list(args).await,
            McpCommand::Call(args) => call(args).await,
        }
    })
}

async fn list(args: ListArgs) -> anyhow::Result<ExitCode> {
    let options = ConnectOptions {
        timeout: Duration::from_millis(args.timeout_ms),
        manifest: ManifestOptions {
            id_prefix: args.id_prefix,
        },
        // The operator's own command: any address.
        ..Default::default()
    };
    let client = McpClient::connect(&args.endpoint, options).await?;
    let manifests = client.list_tools().await;
    client.close().await;
    println!("{}", serde_json::to_string_pretty(&manifests?)?);
    Ok(ExitCode::SUCCESS)
}

async fn call(args: CallArgs) -> anyhow::Result<ExitCode> {
    let input: Value = serde_json::from_str(&args.input)
        .map_err(|e| anyhow!("--input is not JSON ({e}): give the tool input as a JSON object, e.g. --input '{{\"a\": 1}}'"))?;
    if !input.is_object() {
        return Err(anyhow!(
            "--input must be a JSON object (MCP tool arguments are an object), got {input}"
        ));
    }
    let timeout = Duration::from_millis(args.timeout_ms);
    let client = McpClient::connect(
        &args.endpoint,
        ConnectOptions {
            timeout,
            ..Default::default()
        },
    )
    .await?;
    let outcome = client.call_tool(&args.tool, input, timeout).await;
    client.close().await;
    let outcome = outcome?;
    println!("{}", serde_json::to_string_pretty(&outcome.value)?);
    if outcome.is_error {
        eprintln!(
            "kindgi: MCP tool \"{}\" reported an error: {}",
            args.tool,
            outcome.error_text()
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
