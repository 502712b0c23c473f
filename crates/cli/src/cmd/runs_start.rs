//! `kindgi runs start`: the official wire (platform-api.md §12.3). It always sends
//! `options.wait: false`, then (unless `--no-wait`) reads `GET /v1/runs/{id}` while the run
//! is `pending` or `running` — so it returns at `suspended` too. The official CLI first
//! reads after 250 ms, then 500, 1000 and every 2000 ms; most runs end in a few
//! milliseconds, so ours reads after 10, 25, 50, 100 and 250 ms first, then the same (a
//! handful more reads of a finished-or-not run in the first half second, and an answer
//! 250 ms sooner). Five failed reads in a row end it with the last error. It
//! prints the run; a `failed` run exits 1 with `Error [<failure.code>]: <failure.message>`
//! on stderr (else `failureMessage`, else `run-failed`), then each schema issue of
//! `failure.details.issues` as `  ✗ <path>: <reason>` (the reference CLI's way of listing
//! validation issues, runtime.md §9); each `output.warnings[].message`
//! is printed as `⚠ …`. Ctrl-C while following exits 130 and says the run goes on.

use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::api::{ApiArgs, ApiClient, CliError, Output, segment};

/// Pauses between reads while following a run.
pub const PACING_MS: [u64; 8] = [10, 25, 50, 100, 250, 500, 1000, 2000];
/// Consecutive failed reads before giving up on following a run.
pub const MAX_FAILED_READS: u32 = 5;
/// The largest `--input` file read.
pub const MAX_INPUT_BYTES: u64 = 10 * 1024 * 1024;

#[derive(Debug, clap::Args)]
pub struct StartArgs {
    /// The agent to run, by id. Give --agent or --flow.
    #[arg(long)]
    pub agent: Option<String>,
    /// The agent's version (default: its latest).
    #[arg(long = "agent-version")]
    pub agent_version: Option<String>,
    /// The flow to run, by id.
    #[arg(long)]
    pub flow: Option<String>,
    /// The flow's version (default: its latest).
    #[arg(long = "flow-version")]
    pub flow_version: Option<String>,
    /// The run's input as JSON, or @FILE. Required.
    #[arg(long)]
    pub input: Option<String>,
    /// The project to run in (default: the tenant's Default project).
    #[arg(long)]
    pub project: Option<String>,
    /// One step of the run's segment path, key:value; repeat in order, coarse to fine.
    #[arg(long = "segment")]
    pub segments: Vec<String>,
    /// Run only the tools declared read-only; an agent turn skips its model call.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the run as soon as it exists.
    #[arg(long)]
    pub no_wait: bool,
    /// A retry with the same key returns the run the first call started.
    #[arg(long = "idempotency-key")]
    pub idempotency_key: Option<String>,
    #[command(flatten)]
    pub api: ApiArgs,
}

fn read_input(raw: &str) -> Result<Value, CliError> {
    let (text, from) = match raw.strip_prefix('@') {
        Some(path) => {
            let len = std::fs::metadata(path)
                .map_err(|e| {
                    CliError::Usage(format!("--input @{path}: cannot read the file: {e}"))
                })?
                .len();
            if len > MAX_INPUT_BYTES {
                return Err(CliError::Usage(format!(
                    "--input @{path}: the file is over {MAX_INPUT_BYTES} bytes"
                )));
            }
            let text = std::fs::read_to_string(path).map_err(|e| {
                CliError::Usage(format!("--input @{path}: cannot read the file: {e}"))
            })?;
            (text, format!("the file {path}"))
        }
        None => (raw.to_owned(), "--input".to_owned()),
    };
    serde_json::from_str(&text)
        .map_err(|e| CliError::Usage(format!("{from} is not valid JSON: {e}")))
}

/// The `POST /v1/runs` body, or the usage error.
pub fn body(args: &StartArgs) -> Result<Value, CliError> {
    let nonempty = |o: &Option<String>| o.clone().filter(|s| !s.is_empty());
    let mut b = Map::new();
    match (nonempty(&args.agent), nonempty(&args.flow)) {
        (Some(_), Some(_)) => {
            return Err(CliError::Usage("give --agent or --flow, not both".into()));
        }
        (None, None) => {
            return Err(CliError::Usage(
                "--agent=<agent-id> or --flow=<flow-id> is required".into(),
            ));
        }
        (Some(a), None) => {
            if args.flow_version.is_some() {
                return Err(CliError::Usage("--flow-version goes with --flow".into()));
            }
            b.insert("agent".into(), json!(a));
            if let Some(v) = nonempty(&args.agent_version) {
                b.insert("agentVersion".into(), json!(v));
            }
        }
        (None, Some(f)) => {
            if args.agent_version.is_some() {
                return Err(CliError::Usage("--agent-version goes with --agent".into()));
            }
            b.insert("flow".into(), json!(f));
            if let Some(v) = nonempty(&args.flow_version) {
                b.insert("flowVersion".into(), json!(v));
            }
        }
    }
    let Some(input) = args.input.as_deref() else {
        return Err(CliError::Usage("--input=<json|@file> is required".into()));
    };
    if let Some(p) = nonempty(&args.project) {
        b.insert("projectId".into(), json!(p));
    }
    let mut segments = Vec::new();
    for raw in &args.segments {
        match raw.split_once(':') {
            Some((k, v)) if !k.is_empty() && !v.is_empty() => {
                segments.push(json!({"key": k, "value": v}))
            }
            _ => {
                return Err(CliError::Usage(format!(
                    "--segment must be key:value, got \"{raw}\""
                )));
            }
        }
    }
    if !segments.is_empty() {
        b.insert("segments".into(), Value::Array(segments));
    }
    b.insert("input".into(), read_input(input)?);
    let mut options = Map::new();
    options.insert("wait".into(), json!(false));
    if args.dry_run {
        options.insert("dryRun".into(), json!(true));
    }
    b.insert("options".into(), Value::Object(options));
    Ok(Value::Object(b))
}

pub async fn start(args: StartArgs, name: &str) -> Result<ExitCode, CliError> {
    // Usage errors come before looking for an API: they are usage errors anywhere.
    let body = body(&args)?;
    let client = args.api.connect(name)?;
    let out = args.api.output();
    let mut run = client
        .post("/v1/runs", &body, args.idempotency_key.as_deref())
        .await?;
    if !args.no_wait {
        run = match follow(&client, run).await? {
            Followed::Run(r) => r,
            Followed::Interrupted(id) => {
                eprintln!("Stopped waiting. Run {id} goes on: kindgi runs get {id}");
                return Ok(ExitCode::from(130));
            }
        };
    }
    out.json(&run);
    Ok(outcome(&run, &out))
}

enum Followed {
    Run(Value),
    Interrupted(String),
}

fn is_live(run: &Value) -> bool {
    matches!(
        run.get("status").and_then(Value::as_str),
        Some("pending" | "running")
    )
}

async fn follow(client: &ApiClient, mut run: Value) -> Result<Followed, CliError> {
    let id = run
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let path = format!("/v1/runs/{}", segment(&id));
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let mut round = 0usize;
    let mut failed = 0u32;
    while is_live(&run) {
        let pause = PACING_MS[round.min(PACING_MS.len() - 1)];
        round += 1;
        let read = tokio::select! {
            r = async {
                tokio::time::sleep(Duration::from_millis(pause)).await;
                client.get(&path, vec![]).await
            } => r,
            _ = &mut ctrl_c => return Ok(Followed::Interrupted(id)),
        };
        match read {
            Ok(r) => {
                failed = 0;
                run = r;
            }
            Err(e) => {
                failed += 1;
                if failed >= MAX_FAILED_READS {
                    return Err(e);
                }
            }
        }
    }
    Ok(Followed::Run(run))
}

/// Warnings and the failure line on stderr; exit 1 for a failed run.
fn outcome(run: &Value, out: &Output) -> ExitCode {
    if !out.quiet
        && let Some(ws) = run.pointer("/output/warnings").and_then(Value::as_array)
    {
        for w in ws {
            if let Some(m) = w.get("message").and_then(Value::as_str) {
                eprintln!("⚠ {m}");
            }
        }
    }
    if run.get("status").and_then(Value::as_str) != Some("failed") {
        return ExitCode::SUCCESS;
    }
    if !out.quiet {
        let code = run
            .pointer("/failure/code")
            .and_then(Value::as_str)
            .unwrap_or("run-failed");
        let message = run
            .pointer("/failure/message")
            .or_else(|| run.get("failureMessage"))
            .and_then(Value::as_str)
            .unwrap_or("the run failed");
        eprintln!("Error [{code}]: {message}");
        for line in issue_lines(run) {
            eprintln!("{line}");
        }
    }
    ExitCode::from(1)
}

/// The failure's schema issues, one `  ✗ <instancePath or />: <message>` line each.
fn issue_lines(run: &Value) -> Vec<String> {
    let Some(issues) = run
        .pointer("/failure/details/issues")
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    issues
        .iter()
        .map(|i| {
            let path = i
                .get("instancePath")
                .and_then(Value::as_str)
                .filter(|p| !p.is_empty())
                .unwrap_or("/");
            let reason = i
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("failed validation");
            format!("  \u{2717} {path}: {reason}")
        })
        .collect()
}
