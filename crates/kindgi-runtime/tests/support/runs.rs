//! What the run tests of both halves share (kindgi-runtime's `tests/runs.rs` on the memory
//! store, kindgi-host's on every store): run options, journal kinds, a chain flow.
#![allow(dead_code)]

use kindgi_runtime::{JournalEntry, RunOptions};
use serde_json::{Value, json};

pub fn wait() -> RunOptions {
    RunOptions {
        wait: true,
        ..Default::default()
    }
}

pub fn dry() -> RunOptions {
    RunOptions {
        wait: true,
        dry_run: true,
        ..Default::default()
    }
}

pub fn kinds(j: &[JournalEntry]) -> Vec<String> {
    j.iter()
        .map(|e| match &e.node_id {
            Some(n) => format!("{} {n}", e.kind),
            None => e.kind.to_string(),
        })
        .collect()
}

pub fn chain(id: &str, refs: &[&str]) -> Value {
    let nodes: Vec<Value> = refs
        .iter()
        .enumerate()
        .map(|(i, r)| json!({"id": format!("n{}", i + 1), "kind": "tool", "ref": r}))
        .collect();
    let mut edges = vec![json!({"id": "e1", "from": "$start", "to": "n1"})];
    for i in 1..refs.len() {
        edges.push(json!({"id": format!("e{}", i + 1), "from": format!("n{i}"), "to": format!("n{}", i + 1)}));
    }
    edges.push(json!({"id": format!("e{}", refs.len() + 1), "from": format!("n{}", refs.len()), "to": "$end"}));
    json!({"id": id, "version": "1.0.0", "nodes": nodes, "edges": edges})
}
