//! `kindgi runs start|get|journal|cancel`: start flow runs on a running API (`kindgi dev`
//! or `kindgi server`) and read them. Pretty JSON on stdout.
//!
//! The API is `--api`/`KINDGI_API_URL` with `--token`/`KINDGI_API_TOKEN`, else the
//! `.kindgirc.json` that `kindgi dev` wrote in this folder or one above it — address and key
//! from the same source, the file only if it is yours, 0600 and loopback (see
//! [`super::api_source`]).
//!
//! Exit codes (runtime.md §9): 0 the run completed (or, with `--no-wait`, started); 1 it
//! failed or was cancelled (`Error [run-failed]: <failureMessage>` on stderr, the run JSON
//! still on stdout) or the API refused the call (`Error [<code>]: <message>`); 2 a usage
//! error (`Error: <what>` + `Usage: kindgi runs <command> --help`); 130 Ctrl-C while
//! following a run (it goes on).

use std::io::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use serde_json::{Value, json};

#[derive(Debug, Clone, clap::Args)]
pub struct ApiArgs {
    /// Base URL of the API (or KINDGI_API_URL; default: the `.kindgirc.json` of `kindgi dev`).
    #[arg(long = "api")]
    pub api: Option<String>,
    /// API key (or KINDGI_API_TOKEN; give it with --api, or neither, to use `.kindgirc.json`).
    #[arg(long = "token")]
    pub token: Option<String>,
    /// Print nothing on stdout.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Print JSON on one line instead of pretty.
    #[arg(long)]
    pub raw: bool,
}

#[derive(Debug, clap::Subcommand)]
pub enum RunsCommand {
    /// Start a run of a flow and follow it until it leaves pending/running.
    Start {
        /// The flow id.
        #[arg(long)]
        flow: Option<String>,
        /// The flow version (default: the highest).
        #[arg(long = "flow-version")]
        flow_version: Option<String>,
        /// The run input: JSON text, or @FILE.
        #[arg(long)]
        input: Option<String>,
        /// Run only read-only tools; skip model calls.
        #[arg(long)]
        dry_run: bool,
        /// Print the run as started (pending) instead of following it.
        #[arg(long)]
        no_wait: bool,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Print a run.
    Get {
        /// The run id.
        id: String,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Print a run's journal.
    Journal {
        /// The run id.
        id: String,
        /// Only entries after this sequence number.
        #[arg(long)]
        after: Option<u64>,
        /// At most this many entries.
        #[arg(long)]
        limit: Option<u32>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Cancel a run.
    Cancel {
        /// The run id.
        id: String,
        #[command(flatten)]
        api: ApiArgs,
    },
}

/// Pauses between reads while following a run (runtime.md §9), each a long poll that
/// returns as soon as the run ends.
const PACING_MS: [u64; 4] = [250, 500, 1000, 2000];
/// Consecutive failed reads before giving up on following a run.
const MAX_FAILED_READS: u32 = 5;

fn usage(command: &str, what: &str) -> ExitCode {
    eprintln!("Error: {what}");
    eprintln!("Usage: kindgi runs {command} --help");
    ExitCode::from(2)
}

struct Api {
    url: String,
    token: String,
    quiet: bool,
    raw: bool,
    http: reqwest::Client,
}

impl Api {
    fn resolve(args: &ApiArgs) -> Result<Api, String> {
        let cwd =
            std::env::current_dir().map_err(|e| format!("cannot read the current folder: {e}"))?;
        let given = super::api_source::Given::from_flags_and_env(
            args.api.as_deref(),
            args.token.as_deref(),
        );
        let super::api_source::ApiSource { url, token } = super::api_source::resolve(&given, &cwd)?;
        let http = reqwest::Client::builder()
            .no_proxy()
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(Api {
            url: url.trim_end_matches('/').to_owned(),
            token,
            quiet: args.quiet,
            raw: args.raw,
            http,
        })
    }

    /// Sends a call; `Ok((status, body))` for any HTTP answer.
    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
        wait: Duration,
    ) -> Result<(u16, Value), String> {
        let url = format!("{}{path}", self.url);
        let mut req = self
            .http
            .request(method, &url)
            .bearer_auth(&self.token)
            .timeout(wait + Duration::from_secs(30));
        if let Some(b) = body {
            req = req.json(b);
        }
        let resp = req
            .send()
            .await
            .map_err(|e| format!("cannot reach the API at {}: {e}", self.url))?;
        let status = resp.status().as_u16();
        let text = resp
            .text()
            .await
            .map_err(|e| format!("the API at {} answered unreadably: {e}", self.url))?;
        let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
        Ok((status, value))
    }

    fn print(&self, value: &Value) {
        if self.quiet {
            return;
        }
        let text = if self.raw {
            serde_json::to_string(value)
        } else {
            serde_json::to_string_pretty(value)
        };
        if let Ok(t) = text {
            println!("{t}");
            let _ = std::io::stdout().flush();
        }
    }
}

/// `Error [<code>]: <message>` for an API error envelope; exit 1.
fn api_error(status: u16, body: &Value, quiet: bool) -> ExitCode {
    if !quiet {
        let code = body
            .pointer("/error/code")
            .and_then(Value::as_str)
            .unwrap_or("api-error");
        let message = body
            .pointer("/error/message")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| format!("HTTP {status}: {body}"));
        eprintln!("Error [{code}]: {message}");
        if let Some(issues) = body
            .pointer("/error/details/issues")
            .and_then(Value::as_array)
        {
            for i in issues {
                let path = i.get("instancePath").and_then(Value::as_str).unwrap_or("");
                let msg = i.get("message").and_then(Value::as_str).unwrap_or("");
                eprintln!(
                    "  ✗ {}: {msg}",
                    if path.is_empty() { "(input)" } else { path }
                );
            }
        }
    }
    ExitCode::from(1)
}

fn transport_error(e: &str) -> ExitCode {
    eprintln!("Error: {e}");
    ExitCode::from(1)
}

/// A run record with the fields people read first, first (runtime.md §1.4's CLI order).
fn ordered(run: &Value) -> Value {
    let Some(obj) = run.as_object() else {
        return run.clone();
    };
    let mut out = serde_json::Map::new();
    for key in [
        "id",
        "status",
        "dryRun",
        "output",
        "failureMessage",
        "flowId",
        "flowVersion",
    ] {
        if let Some(v) = obj.get(key) {
            out.insert(key.to_owned(), v.clone());
        }
    }
    for (k, v) in obj {
        if !out.contains_key(k) {
            out.insert(k.clone(), v.clone());
        }
    }
    Value::Object(out)
}

/// Exit code and stderr line for a run record.
fn run_outcome(run: &Value, quiet: bool) -> ExitCode {
    match run.get("status").and_then(Value::as_str) {
        Some("failed") => {
            if !quiet {
                let message = run
                    .get("failureMessage")
                    .and_then(Value::as_str)
                    .unwrap_or("the run failed");
                eprintln!("Error [run-failed]: {message}");
            }
            ExitCode::from(1)
        }
        Some("cancelled") => {
            if !quiet {
                eprintln!("Error [run-cancelled]: the run was cancelled");
            }
            ExitCode::from(1)
        }
        _ => ExitCode::SUCCESS,
    }
}

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

fn read_input(raw: &str) -> Result<Value, String> {
    let (text, from) = match raw.strip_prefix('@') {
        Some(path) => (
            std::fs::read_to_string(path)
                .map_err(|e| format!("--input @{path}: cannot read the file: {e}"))?,
            format!("the file {path}"),
        ),
        None => (raw.to_owned(), "--input".to_owned()),
    };
    serde_json::from_str(&text).map_err(|e| format!("{from} is not valid JSON: {e}"))
}

pub fn run(command: RunsCommand) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    Ok(runtime.block_on(run_async(command)))
}

async fn run_async(command: RunsCommand) -> ExitCode {
    let (name, api_args) = match &command {
        RunsCommand::Start { api, .. } => ("start", api),
        RunsCommand::Get { api, .. } => ("get", api),
        RunsCommand::Journal { api, .. } => ("journal", api),
        RunsCommand::Cancel { api, .. } => ("cancel", api),
    };
    // Check the arguments before looking for an API: a usage error is a usage error anywhere.
    let start_body = match &command {
        RunsCommand::Start {
            flow,
            flow_version,
            input,
            dry_run,
            ..
        } => {
            let Some(flow) = flow.as_deref().filter(|f| !f.is_empty()) else {
                return usage(name, "--flow=<flow id> is required");
            };
            let Some(input) = input.as_deref() else {
                return usage(name, "--input=<json|@file> is required");
            };
            let input = match read_input(input) {
                Ok(v) => v,
                Err(e) => return usage(name, &e),
            };
            let mut body = json!({"flow": flow, "input": input, "options": {"dryRun": dry_run, "wait": false}});
            if let (Some(v), Some(obj)) = (flow_version, body.as_object_mut()) {
                obj.insert("flowVersion".into(), json!(v));
            }
            Some(body)
        }
        _ => None,
    };
    let api = match Api::resolve(api_args) {
        Ok(a) => a,
        Err(e) => return usage(name, &e),
    };
    match command {
        RunsCommand::Start { no_wait, .. } => {
            let mut body = start_body.unwrap_or(Value::Null);
            start(&api, &mut body, no_wait).await
        }
        RunsCommand::Get { id, .. } => {
            simple(
                &api,
                reqwest::Method::GET,
                &format!("/v1/runs/{}", segment(&id)),
                true,
            )
            .await
        }
        RunsCommand::Journal {
            id, after, limit, ..
        } => {
            let mut path = format!("/v1/runs/{}/journal", segment(&id));
            let mut sep = '?';
            if let Some(a) = after {
                path.push_str(&format!("{sep}since={a}"));
                sep = '&';
            }
            if let Some(l) = limit {
                path.push_str(&format!("{sep}limit={l}"));
            }
            simple(&api, reqwest::Method::GET, &path, false).await
        }
        RunsCommand::Cancel { id, .. } => {
            simple(
                &api,
                reqwest::Method::POST,
                &format!("/v1/runs/{}/cancel", segment(&id)),
                true,
            )
            .await
        }
    }
}

async fn simple(api: &Api, method: reqwest::Method, path: &str, is_run: bool) -> ExitCode {
    match api.call(method, path, None, Duration::ZERO).await {
        Ok((s, body)) if (200..300).contains(&s) => {
            api.print(&if is_run { ordered(&body) } else { body.clone() });
            if is_run {
                run_outcome(&body, api.quiet)
            } else {
                ExitCode::SUCCESS
            }
        }
        Ok((s, body)) => api_error(s, &body, api.quiet),
        Err(e) => transport_error(&e),
    }
}

async fn start(api: &Api, body: &mut Value, no_wait: bool) -> ExitCode {
    // The start answers at once (`options.wait: false`); the run is then polled as the
    // official CLI does (platform-api.md §12.3).
    let first = Duration::ZERO;
    let mut run = match api
        .call(reqwest::Method::POST, "/v1/runs", Some(body), first)
        .await
    {
        Ok((s, b)) if (200..300).contains(&s) => b,
        Ok((s, b)) => return api_error(s, &b, api.quiet),
        Err(e) => return transport_error(&e),
    };
    if no_wait {
        api.print(&ordered(&run));
        return ExitCode::SUCCESS;
    }
    let id = run
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let mut round = 0usize;
    let mut failed_reads = 0u32;
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    while matches!(
        run.get("status").and_then(Value::as_str),
        Some("pending" | "running")
    ) {
        let wait = PACING_MS[round.min(PACING_MS.len() - 1)];
        round += 1;
        let path = format!("/v1/runs/{}", segment(&id));
        let read = tokio::select! {
            r = async {
                tokio::time::sleep(Duration::from_millis(wait)).await;
                api.call(reqwest::Method::GET, &path, None, Duration::ZERO).await
            } => r,
            _ = &mut ctrl_c => {
                eprintln!("Stopped waiting. Run {id} goes on: kindgi runs get {id}");
                return ExitCode::from(130);
            }
        };
        match read {
            Ok((s, b)) if (200..300).contains(&s) => {
                failed_reads = 0;
                run = b;
            }
            Ok((s, b)) => {
                failed_reads += 1;
                if failed_reads >= MAX_FAILED_READS {
                    return api_error(s, &b, api.quiet);
                }
                tokio::time::sleep(Duration::from_millis(wait)).await;
            }
            Err(e) => {
                failed_reads += 1;
                if failed_reads >= MAX_FAILED_READS {
                    return transport_error(&format!("{e} (gave up following run {id})"));
                }
                tokio::time::sleep(Duration::from_millis(wait)).await;
            }
        }
    }
    api.print(&ordered(&run));
    run_outcome(&run, api.quiet)
}
