//! `kindgi tools list|get|register`: talk to a running `/v1` API. JSON answers go to stdout;
//! an API error prints its envelope on stderr and exits 1; a usage problem (no token, a file
//! that is not JSON) exits 2.

use std::process::ExitCode;

use anyhow::Context as _;
use serde_json::Value;

/// The API URL when neither `--api` nor `KINDGI_API_URL` is given.
pub const DEFAULT_API: &str = "http://127.0.0.1:7070";

#[derive(Debug, Clone, clap::Args)]
pub struct ApiArgs {
    /// Base URL of the API.
    #[arg(long = "api", env = "KINDGI_API_URL", default_value = DEFAULT_API)]
    pub api: String,
    /// API key (from `kindgi tokens create`).
    #[arg(long = "token", env = "KINDGI_API_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
}

#[derive(Debug, clap::Subcommand)]
pub enum RemoteCommand {
    /// List tools (the latest version of each), one page.
    List {
        #[command(flatten)]
        api: ApiArgs,
        /// Page size (1..100, default 25).
        #[arg(long)]
        limit: Option<u32>,
        /// The previous page's `nextCursor`.
        #[arg(long)]
        cursor: Option<String>,
        /// Only ids containing this text.
        #[arg(long)]
        name: Option<String>,
    },
    /// Print a tool's manifest (the latest version, or `--version`).
    Get {
        #[command(flatten)]
        api: ApiArgs,
        /// The tool id.
        id: String,
        /// An exact version.
        #[arg(long)]
        version: Option<String>,
    },
    /// Register the manifest in FILE (`-` for stdin).
    Register {
        #[command(flatten)]
        api: ApiArgs,
        /// A tool manifest JSON file.
        file: String,
        /// The project, when the file has no `projectId`.
        #[arg(long, default_value = "default")]
        project: String,
    },
}

pub fn run(command: RemoteCommand) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(run_async(command))
}

/// Percent-encode one path segment (everything but unreserved characters).
fn segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

enum Call {
    Get(String),
    Post(String, Value),
}

async fn run_async(command: RemoteCommand) -> anyhow::Result<ExitCode> {
    let (api, call) = match command {
        RemoteCommand::List {
            api,
            limit,
            cursor,
            name,
        } => {
            let mut query = Vec::new();
            if let Some(l) = limit {
                query.push(format!("limit={l}"));
            }
            if let Some(c) = cursor {
                query.push(format!("cursor={}", segment(&c)));
            }
            if let Some(n) = name {
                query.push(format!("name={}", segment(&n)));
            }
            let q = if query.is_empty() {
                String::new()
            } else {
                format!("?{}", query.join("&"))
            };
            (api, Call::Get(format!("/v1/tools{q}")))
        }
        RemoteCommand::Get { api, id, version } => {
            let path = match version {
                Some(v) => format!("/v1/tools/{}/versions/{}", segment(&id), segment(&v)),
                None => format!("/v1/tools/{}", segment(&id)),
            };
            (api, Call::Get(path))
        }
        RemoteCommand::Register { api, file, project } => {
            let text = if file == "-" {
                std::io::read_to_string(std::io::stdin())
                    .context("cannot read the manifest from stdin")
            } else {
                std::fs::read_to_string(&file).with_context(|| format!("cannot read {file}"))
            };
            let text = match text {
                Ok(t) => t,
                Err(e) => return usage(&format!("{e:#}")),
            };
            let mut manifest: Value = match serde_json::from_str(&text) {
                Ok(v) => v,
                Err(e) => return usage(&format!("{file} is not JSON: {e}")),
            };
            let Some(obj) = manifest.as_object_mut() else {
                return usage(&format!("{file} must hold a JSON object (a tool manifest)"));
            };
            obj.entry("projectId").or_insert(Value::String(project));
            (api, Call::Post("/v1/tools".to_owned(), manifest))
        }
    };
    let Some(token) = api.token.as_deref().filter(|t| !t.trim().is_empty()) else {
        return usage(
            "no API key: pass --token KEY or set KINDGI_API_TOKEN (create one with `kindgi tokens create`)",
        );
    };
    let base = api.api.trim_end_matches('/');
    let client = reqwest::Client::new();
    let request = match call {
        Call::Get(path) => client.get(format!("{base}{path}")),
        Call::Post(path, body) => client.post(format!("{base}{path}")).json(&body),
    };
    let response = match request.bearer_auth(token).send().await {
        Ok(r) => r,
        Err(e) => {
            eprintln!("kindgi: cannot reach the API at {base}: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    let status = response.status();
    let text = response.text().await.unwrap_or_default();
    let pretty = serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or(text);
    if status.is_success() {
        println!("{pretty}");
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("{pretty}");
        Ok(ExitCode::from(1))
    }
}

fn usage(message: &str) -> anyhow::Result<ExitCode> {
    eprintln!("kindgi: {message}");
    Ok(ExitCode::from(2))
}
