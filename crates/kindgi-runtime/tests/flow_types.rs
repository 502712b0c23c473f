//! Flow wire types: lossless round-trip, and load-time validation with clear errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_runtime::{FlowCatalogue, FlowError};
use kindgi_spec::flow::{Expr, Flow, LoopNode, Node, Operand};
use serde_json::{Value, json};

const EXAMPLE: &str = include_str!("data/flow.example.with-loop.json");

#[test]
fn the_loop_example_round_trips_losslessly() {
    let original: Value = serde_json::from_str(EXAMPLE).unwrap();
    let flow: Flow = serde_json::from_str(EXAMPLE).unwrap();
    let back = serde_json::to_value(&flow).unwrap();
    assert_eq!(back, original);
    // And the typed view is what the JSON says.
    assert_eq!(flow.nodes.len(), 2);
    let Node::Loop(LoopNode::Foreach(f)) = &flow.nodes[1] else {
        panic!("foreach expected")
    };
    assert_eq!(
        f.iterate_over,
        Operand::Path("nodeOutputs.setup.items".into())
    );
    assert_eq!(f.collect_all_iterations, Some(true));
    let Node::Loop(LoopNode::While(w)) = &f.body.nodes[0] else {
        panic!("while expected")
    };
    assert!(matches!(&w.exit_condition, Expr::Or { children } if children.len() == 2));
    assert_eq!(w.max_iterations, 8);
    FlowCatalogue::new()
        .insert(flow)
        .expect("the example is a valid flow");
}

#[test]
fn every_node_kind_and_policy_round_trips() {
    let flow = json!({
        "id": "t.all", "version": "1.2.3-beta.1", "maxParallelism": 3,
        "metadata": {"owner": "x"},
        "nodes": [
            {"id": "a", "kind": "tool", "ref": "t.a", "config": {"k": 1}, "inputMapping": {"x": {"path": "runInput.x"}, "c": {"literal": null}}},
            {"id": "f", "kind": "fanout", "concurrency": 2, "convergence": "settle-all", "branches": [
                {"branchId": "b1", "handler": "t.a", "outputSchema": {"type": "object"}},
                {"branchId": "b2", "handler": "t.b", "outputSchema": {}}]},
            {"id": "s", "kind": "subgraph", "flowRef": {"flowId": "t.child", "version": "1.0.0"},
             "inputMapping": {"v": {"path": "nodeOutputs.a.v"}}, "outputSchema": {}, "convergence": "success-only"},
            {"id": "w", "kind": "loop", "loopKind": "while", "evaluationTiming": "before", "maxIterations": 3,
             "exitCondition": {"op": "not", "child": {"op": "in", "value": {"path": "iterationIndex"}, "set": {"literal": [0, 1]}}},
             "outputSchema": {}, "body": {"nodes": [{"id": "wb", "kind": "agent", "ref": "ag"}],
             "edges": [{"id": "w1", "from": "$loop-start", "to": "wb", "when": {"op": "truthy", "value": {"path": "state.go"}}}, {"id": "w2", "from": "wb", "to": "$loop-end"}]}}
        ],
        "edges": [
            {"id": "e1", "from": "$start", "to": "a", "policy": {"retry": {"maxAttempts": 3, "delayMs": 10, "backoff": "exponential", "maxDelayMs": 100}, "timeoutMs": 1000, "concurrencyKey": "k 1", "priority": -5}},
            {"id": "e2", "from": "a", "to": "f", "when": {"op": "and", "children": [{"op": "ne", "left": {"path": "nodeOutputs.a.x"}, "right": {"literal": 1}}, {"op": "notExists", "value": {"path": "runInput.y"}}]}},
            {"id": "e3", "from": "f", "to": "s"},
            {"id": "e4", "from": "s", "to": "w"},
            {"id": "e5", "from": "w", "to": "$end"}
        ],
        "output": {"mapping": {"r": {"path": "nodeOutputs.w.finalOutput"}}, "schema": {"type": "object"}}
    });
    let parsed: Flow = serde_json::from_value(flow.clone()).unwrap();
    assert_eq!(serde_json::to_value(&parsed).unwrap(), flow);
    parsed.validate().unwrap();
}

fn load_err(flow: Value) -> String {
    match FlowCatalogue::new().insert_json(&flow.to_string()) {
        Ok(_) => panic!("flow should be refused: {flow}"),
        Err(e) => e.to_string(),
    }
}

fn base(nodes: Value, edges: Value) -> Value {
    json!({"id": "t.f", "version": "1.0.0", "nodes": nodes, "edges": edges})
}

#[test]
fn load_time_errors_name_what_and_where() {
    let a = json!([{"id": "a", "kind": "tool", "ref": "t.a"}]);
    let e = load_err(base(
        a.clone(),
        json!([{"id": "e1", "from": "$start", "to": "a"}, {"id": "e2", "from": "a", "to": "ghost"}]),
    ));
    assert!(
        e.contains("edges[1].to: unknown node \"ghost\" in edge \"e2\""),
        "{e}"
    );

    let e = load_err(base(
        a.clone(),
        json!([{"id": "e1", "from": "$start", "to": "a", "when": {"op": "eq", "left": {"path": "nodeOutputs.nope.x"}, "right": {"literal": 1}}}, {"id": "e2", "from": "a", "to": "$end"}]),
    ));
    assert!(
        e.contains("edges[0].when: path \"nodeOutputs.nope.x\" names no node of this flow"),
        "{e}"
    );

    let e = load_err(base(
        a.clone(),
        json!([{"id": "e1", "from": "$start", "to": "a", "when": {"op": "eq", "left": {"path": "input.x"}, "right": {"literal": 1}}}]),
    ));
    assert!(e.contains("must start with runInput"), "{e}");

    let e = load_err(base(
        a.clone(),
        json!([{"id": "e1", "from": "$start", "to": "a", "when": {"op": "between", "left": {"literal": 1}, "right": {"literal": 2}}}]),
    ));
    assert!(e.contains("between"), "unknown operator named: {e}");
    assert!(e.starts_with("flow definition is not valid"), "{e}");

    let e = load_err(base(
        json!([{"id": "a", "kind": "tool", "ref": "t.a"}, {"id": "b", "kind": "tool", "ref": "t.b"}]),
        json!([{"id": "e1", "from": "$start", "to": "a"}, {"id": "e2", "from": "a", "to": "b"}, {"id": "e3", "from": "b", "to": "a"}]),
    ));
    assert!(e.contains("cycle"), "{e}");

    let e = load_err(base(
        json!([{"id": "a", "kind": "tool", "ref": "t.a"}, {"id": "a", "kind": "tool", "ref": "t.b"}]),
        json!([{"id": "e1", "from": "$start", "to": "a"}]),
    ));
    assert!(e.contains("nodes[1].id: duplicate node id \"a\""), "{e}");

    let e = load_err(base(
        a.clone(),
        json!([{"id": "e1", "from": "$start", "to": "a", "policy": {"retry": {"maxAttempts": 11}}}]),
    ));
    assert!(
        e.contains("edges[0].policy.retry.maxAttempts: 11 is out of range 1..10"),
        "{e}"
    );

    let e = load_err(base(
        a.clone(),
        json!([{"id": "e1", "from": "$start", "to": "a", "policy": {"retry": {"maxAttempts": 2, "backoff": "exponential"}}}]),
    ));
    assert!(e.contains("exponential backoff requires maxDelayMs"), "{e}");

    let e = load_err(base(
        a.clone(),
        json!([{"id": "e1", "from": "$start", "to": "a", "policy": {"timeoutMs": 3600001}}]),
    ));
    assert!(e.contains("timeoutMs: 3600001 is out of range"), "{e}");

    let e = load_err(base(
        a.clone(),
        json!([{"id": "e1", "from": "$start", "to": "a", "policy": {"suspend": true}}]),
    ));
    assert!(e.contains("suspend"), "{e}");

    let e = load_err(base(
        json!([{"id": "a", "kind": "widget", "ref": "t.a"}]),
        json!([]),
    ));
    assert!(e.contains("unknown kind \"widget\""), "{e}");

    let e = load_err(base(
        json!([{"id": "$end", "kind": "tool", "ref": "t.a"}]),
        json!([]),
    ));
    assert!(e.contains("sentinel"), "{e}");

    let e = load_err(
        json!({"id": "t.f", "version": "one", "nodes": a, "edges": [{"id": "e1", "from": "$start", "to": "a"}]}),
    );
    assert!(e.contains("version: \"one\" is not a semver"), "{e}");

    let e = load_err(base(
        json!([{"id": "l", "kind": "loop", "loopKind": "foreach", "iterateOver": {"path": "runInput.items"},
        "maxIterations": 4, "concurrency": 5, "outputSchema": {}, "body": {"nodes": [{"id": "x", "kind": "tool", "ref": "t.a"}],
        "edges": [{"id": "b1", "from": "$start", "to": "x"}]}}]),
        json!([{"id": "e1", "from": "$start", "to": "l"}]),
    ));
    assert!(e.contains("concurrency: 5 is out of range 1..4"), "{e}");
    assert!(
        e.contains("sentinel \"$start\" is not allowed here (use \"$loop-start\")"),
        "{e}"
    );
}

#[test]
fn a_flow_error_is_typed() {
    let err = FlowCatalogue::new().insert_json("{").unwrap_err();
    assert!(matches!(err, FlowError::Parse { .. }));
}
