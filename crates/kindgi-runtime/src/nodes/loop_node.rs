//! Loop nodes: `while`/`after` and `foreach` loops, each iteration a sub-graph with its own
//! journal scope (`<loopId>#<iteration>`), finished iterations reused on resume.

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use kindgi_spec::flow::{EvaluationTiming, LoopNode};
use serde_json::{Map, Value, json};
use std::sync::Arc;

use crate::engine::ctx::{RunCtx, child_scope, issues_text, journal_failure};
use crate::engine::expr::{Env, NodeOutputs, eval, resolve_operand};
use crate::engine::failure::Failure;
use crate::engine::graph::{Drive, GraphRef};
use crate::record::JournalKind;
use crate::store::payload;

impl RunCtx {
    pub(crate) async fn run_loop(
        &self,
        drive: &dyn Drive,
        node: &LoopNode,
        scope: &str,
        input: Value,
        visible: NodeOutputs,
    ) -> Result<Value, Failure> {
        let id = node.id();
        let max = u64::from(node.max_iterations());
        let mut outputs: Vec<Value> = Vec::new();
        let stop_reason: &str;
        match node {
            LoopNode::Foreach(f) => {
                let resolved =
                    resolve_operand(&f.iterate_over, &self.env(&visible)).map(|v| v.into_owned());
                let items = match resolved {
                    Some(Value::Array(items)) => items,
                    other => {
                        let got = match other {
                            None => "nothing (the path does not resolve)".to_owned(),
                            Some(v) => json_type(&v).to_owned(),
                        };
                        return Err(Failure::fatal(format!(
                            "loop-failed: loop \"{id}\": iterateOver resolved to {got}, not an array (stopReason: iterate-over-not-array)"
                        )));
                    }
                };
                let n = (items.len() as u64).min(max) as usize;
                stop_reason = if items.len() as u64 > max {
                    "max-iterations"
                } else {
                    "array-exhausted"
                };
                let concurrency = f.concurrency_or_default().max(1) as usize;
                let mut slots: Vec<Option<Value>> = vec![None; n];
                let mut pending = items.into_iter().take(n).enumerate();
                let mut running = FuturesUnordered::new();
                loop {
                    while running.len() < concurrency {
                        let Some((i, item)) = pending.next() else {
                            break;
                        };
                        let visible = visible.clone();
                        running.push(async move {
                            (
                                i,
                                self.run_iteration(drive, node, scope, i as u64, item, visible)
                                    .await,
                            )
                        });
                    }
                    let Some((i, r)) = running.next().await else {
                        break;
                    };
                    // A failed iteration fails the loop; dropping `running` cancels siblings.
                    slots[i] = Some(r?.0);
                }
                outputs = slots
                    .into_iter()
                    .map(|s| s.unwrap_or(Value::Null))
                    .collect();
            }
            LoopNode::While(w) => {
                let timing = w.evaluation_timing_or_default();
                let mut prev = Value::Null;
                let mut body_outputs = NodeOutputs::new();
                let mut i: u64 = 0;
                loop {
                    if timing == EvaluationTiming::Before {
                        let mut seen = visible.clone();
                        seen.extend(body_outputs.clone());
                        let env = Env {
                            iteration_index: Some(i),
                            iteration_output: Some(&prev),
                            ..self.env(&seen)
                        };
                        if eval(&w.exit_condition, &env) {
                            stop_reason = "exit-condition";
                            break;
                        }
                    }
                    if i >= max {
                        stop_reason = "max-iterations";
                        break;
                    }
                    let iter_input = if i == 0 { input.clone() } else { prev.clone() };
                    let (out, body) = self
                        .run_iteration(drive, node, scope, i, iter_input, visible.clone())
                        .await?;
                    body_outputs = body;
                    outputs.push(out.clone());
                    prev = out;
                    i += 1;
                    if timing == EvaluationTiming::After {
                        let mut seen = visible.clone();
                        seen.extend(body_outputs.clone());
                        let env = Env {
                            iteration_index: Some(i - 1),
                            iteration_output: Some(&prev),
                            ..self.env(&seen)
                        };
                        if eval(&w.exit_condition, &env) {
                            stop_reason = "exit-condition";
                            break;
                        }
                    }
                }
            }
        }
        let mut out = Map::new();
        out.insert(
            "finalOutput".into(),
            outputs.last().cloned().unwrap_or(Value::Null),
        );
        out.insert("iterations".into(), json!(outputs.len()));
        out.insert("stopReason".into(), json!(stop_reason));
        if node.collect_all_iterations() {
            out.insert("outputs".into(), Value::Array(outputs));
        }
        Ok(Value::Object(out))
    }

    /// One loop iteration: its body graph in scope `<loopId>#<i>`, output checked.
    async fn run_iteration(
        &self,
        drive: &dyn Drive,
        node: &LoopNode,
        scope: &str,
        i: u64,
        item: Value,
        visible: NodeOutputs,
    ) -> Result<(Value, NodeOutputs), Failure> {
        let id = node.id();
        let key = (scope.to_owned(), id.to_owned(), i);
        if !self.replay.iterations_started.contains(&key) {
            self.journal
                .write(
                    JournalKind::IterationStarted,
                    Some(id),
                    scope,
                    Some(payload([("iteration", json!(i))])),
                )
                .await
                .map_err(journal_failure)?;
        }
        let body_scope = child_scope(scope, &format!("{id}#{i}"));
        let result = drive
            .run_graph(
                GraphRef::Body(node.body()),
                body_scope,
                Arc::new(item),
                visible,
            )
            .await?;
        let output = Arc::unwrap_or_clone(result.output);
        if let Some(v) = self.flow.schema(&format!("node:{id}.outputSchema"))
            && let Err(issues) = v.validate(&output)
        {
            return Err(Failure::fatal(format!(
                "loop-failed: loop \"{id}\" iteration {i}: the output does not match outputSchema: {}",
                issues_text(&issues)
            )));
        }
        if !self.replay.iterations_completed.contains(&key) {
            self.journal
                .write(
                    JournalKind::IterationCompleted,
                    Some(id),
                    scope,
                    Some(payload([
                        ("iteration", json!(i)),
                        ("output", output.clone()),
                    ])),
                )
                .await
                .map_err(journal_failure)?;
        }
        Ok((output, result.local))
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
