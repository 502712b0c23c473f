//! Benchmark: an agent step whose model asks for 8 read-only calls at once, each taking
//! 50 ms (seed 004: they run together). Prints, over `--turns` turns on the memory store and
//! on SQLite:
//! - the tool time of the step (first call started → last call finished; target ≤ 70 ms),
//! - the turn's wall time and its overhead over the calls themselves (wall − 50 ms),
//!   ungated (no `hitl`);
//! - the wall time from `complete_approval` (a reviewer's yes) to the run's completion, for
//!   a turn parked on a gated call (`hitl: {tools: {}}`, one mutating call).
//!
//! `cargo run --release -p kindgi-host --example bench_agent_step -- --turns 50`
//! (here, not in kindgi-runtime, because the SQLite runtime is the host's
//! `Runtime::over(db.ports())`)

use async_trait::async_trait;
use kindgi_runtime::model::{
    FinishReason, ModelError, ModelProvider, ModelRequest, ModelResponse, Role, ToolCall,
};
use kindgi_runtime::{
    AgentSpec, ApprovalQuery, ApprovalStatus, DecisionInput, DecisionKind, ReviewerRole,
    RunOptions, RunStatus, Runtime, RuntimeBuilder,
};
use kindgi_tools::{BoxFuture, Handler, HandlerError, Tool, ToolContext};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const CALLS: usize = 8;
const CALL_MS: u64 = 50;

/// Asks for `CALLS` calls of `tool`, then answers once it has their results.
#[derive(Debug)]
struct FanOutModel {
    tool: &'static str,
    calls: usize,
}

#[async_trait]
impl ModelProvider for FanOutModel {
    fn provider_id(&self) -> &str {
        "bench"
    }
    fn model(&self) -> &str {
        "bench-1"
    }
    async fn invoke(&self, r: ModelRequest) -> Result<ModelResponse, ModelError> {
        let answered = r.messages.iter().any(|m| m.role == Role::Tool);
        let tool_calls = if answered {
            vec![]
        } else {
            (0..self.calls)
                .map(|i| ToolCall {
                    id: format!("call-{i}"),
                    name: self.tool.into(),
                    arguments: json!({"n": i}),
                })
                .collect()
        };
        Ok(ModelResponse {
            text: if answered {
                "done".into()
            } else {
                String::new()
            },
            finish_reason: if answered {
                FinishReason::Stop
            } else {
                FinishReason::ToolUse
            },
            tool_calls,
            usage: Default::default(),
            warnings: vec![],
        })
    }
}

/// When each call started and finished, for the step's tool time.
type Spans = Arc<Mutex<Vec<(Instant, Instant)>>>;

fn lookup_tool(spans: Spans) -> Result<Tool, Box<dyn std::error::Error>> {
    let manifest = serde_json::from_value(json!({
        "id": "bench.lookup", "version": "1.0.0", "description": "a 50 ms read",
        "input": {"type": "object"}, "output": {}, "mutating": false,
    }))?;
    let handler: Handler = Arc::new(move |input: Value, _ctx: ToolContext| {
        let spans = spans.clone();
        let fut: BoxFuture<'static, Result<Value, HandlerError>> = Box::pin(async move {
            let start = Instant::now();
            tokio::time::sleep(Duration::from_millis(CALL_MS)).await;
            if let Ok(mut s) = spans.lock() {
                s.push((start, Instant::now()));
            }
            Ok(input)
        });
        fut
    });
    Ok(Tool::from_parts(manifest, handler))
}

struct Figures {
    tool_ms: Vec<f64>,
    wall_ms: Vec<f64>,
}

async fn run(builder: RuntimeBuilder, turns: usize) -> Result<Figures, Box<dyn std::error::Error>> {
    let spans: Spans = Arc::default();
    let rt = builder
        .model(Arc::new(FanOutModel {
            tool: "bench.lookup",
            calls: CALLS,
        }))
        .build();
    rt.tools().insert_tool(lookup_tool(spans.clone())?);
    rt.agents()
        .insert(AgentSpec::new("bench.agent").with_tools(["bench.lookup"]));
    let mut figures = Figures {
        tool_ms: Vec::new(),
        wall_ms: Vec::new(),
    };
    for _ in 0..turns {
        if let Ok(mut s) = spans.lock() {
            s.clear();
        }
        let started = Instant::now();
        let run = rt
            .start_agent_turn(
                "bench.agent",
                None,
                json!({"message": "go"}),
                RunOptions {
                    wait: true,
                    ..Default::default()
                },
            )
            .await?;
        let wall = started.elapsed();
        if run.status != RunStatus::Completed {
            return Err(format!("turn ended {}: {:?}", run.status, run.failure_message).into());
        }
        let s = spans.lock().map_err(|_| "poisoned")?.clone();
        let first = s.iter().map(|x| x.0).min().ok_or("no call ran")?;
        let last = s.iter().map(|x| x.1).max().ok_or("no call ran")?;
        figures
            .tool_ms
            .push(last.duration_since(first).as_secs_f64() * 1000.0);
        figures.wall_ms.push(wall.as_secs_f64() * 1000.0);
    }
    Ok(figures)
}

/// A mutating tool that answers at once.
fn note_tool() -> Result<Tool, Box<dyn std::error::Error>> {
    let manifest = serde_json::from_value(json!({
        "id": "bench.note", "version": "1.0.0", "description": "a write",
        "input": {"type": "object"}, "output": {},
    }))?;
    let handler: Handler = Arc::new(|input: Value, _ctx: ToolContext| {
        let fut: BoxFuture<'static, Result<Value, HandlerError>> =
            Box::pin(async move { Ok(input) });
        fut
    });
    Ok(Tool::from_parts(manifest, handler))
}

/// Wall time (ms) from a reviewer's yes to the end of the run it resumes.
async fn approval_to_completion(
    builder: RuntimeBuilder,
    turns: usize,
) -> Result<Vec<f64>, Box<dyn std::error::Error>> {
    let rt = builder
        .model(Arc::new(FanOutModel {
            tool: "bench.note",
            calls: 1,
        }))
        .build();
    rt.tools().insert_tool(note_tool()?);
    rt.agents().insert(
        AgentSpec::new("bench.gated")
            .with_tools(["bench.note"])
            .with_conversation_policy(json!({"hitl": {"tools": {}}})),
    );
    let mut figures = Vec::new();
    for _ in 0..turns {
        let run = rt
            .start_agent_turn(
                "bench.gated",
                None,
                json!({"message": "go"}),
                RunOptions {
                    wait: true,
                    ..Default::default()
                },
            )
            .await?;
        if run.status != RunStatus::Suspended {
            return Err(format!(
                "the gated turn ended {}: {:?}",
                run.status, run.failure_message
            )
            .into());
        }
        let open = rt
            .list_approvals(&ApprovalQuery {
                tenant_id: run.tenant_id.clone(),
                statuses: vec![ApprovalStatus::Pending],
                run_id: Some(run.id.clone()),
                limit: 2,
                ..Default::default()
            })
            .await?;
        let approval = open.first().ok_or("no open approval")?;
        let started = Instant::now();
        let done = rt
            .complete_approval(
                &approval.tenant_id,
                &approval.id,
                DecisionInput {
                    decision: DecisionKind::Approve,
                    rationale: None,
                    decided_by: "user:bench".into(),
                    reviewer_id: "bench".into(),
                    reviewer_role: ReviewerRole::Admin,
                },
            )
            .await?;
        figures.push(started.elapsed().as_secs_f64() * 1000.0);
        if done.run_status != Some(RunStatus::Completed) {
            return Err(format!("the approved run is {:?}", done.run_status).into());
        }
    }
    Ok(figures)
}

fn report_approvals(store: &str, mut ms: Vec<f64>) {
    println!(
        "{store:8} approvals complete → run completed: p50 {:.2} ms p95 {:.2} ms",
        pct(&mut ms, 0.5),
        pct(&mut ms, 0.95)
    );
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn report(store: &str, mut f: Figures) {
    let tool = (pct(&mut f.tool_ms, 0.5), pct(&mut f.tool_ms, 0.95));
    let wall = (pct(&mut f.wall_ms, 0.5), pct(&mut f.wall_ms, 0.95));
    println!(
        "{store:8} {CALLS} × {CALL_MS} ms read-only calls: tool time p50 {:.1} ms p95 {:.1} ms | turn wall p50 {:.1} ms p95 {:.1} ms | overhead over the calls p50 {:.1} ms",
        tool.0,
        tool.1,
        wall.0,
        wall.1,
        wall.0 - CALL_MS as f64
    );
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut turns = 30usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--turns" => turns = args.next().ok_or("--turns needs a number")?.parse()?,
            other => return Err(format!("unknown argument {other}; use --turns N").into()),
        }
    }
    report("memory", run(Runtime::in_memory(), turns).await?);
    let dir = tempfile::tempdir()?;
    let url = format!("sqlite://{}", dir.path().join("bench.db").display());
    let db = kindgi_store::Database::connect(&url).await?;
    db.migrate().await?;
    report("sqlite", run(Runtime::over(db.ports()), turns).await?);
    report_approvals(
        "memory",
        approval_to_completion(Runtime::in_memory(), turns).await?,
    );
    report_approvals(
        "sqlite",
        approval_to_completion(Runtime::over(db.ports()), turns).await?,
    );
    Ok(())
}
