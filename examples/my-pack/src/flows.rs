//! The pack's agent and flows (data for the runtime; the pack service ignores them).

use serde_json::{Value, json};

/// `my-pack.echo-agent`: answers the greeting it is handed. It calls no tools, so a live run
/// with the dev stand-in model (`dev-echo`) echoes the message back.
pub fn echo_agent() -> Value {
    json!({
        "id": "my-pack.echo-agent",
        "version": "0.1.0",
        "name": "Echo agent",
        "instructions": "Reply to the greeting you are given, briefly.",
        "capabilities": [],
        "tools": [],
    })
}

/// `my-pack.check-order`: looks an order up (read-only, so it runs in a dry run).
pub fn check_order() -> Value {
    json!({
        "id": "my-pack.check-order",
        "version": "0.1.0",
        "name": "Check an order",
        "nodes": [{"id": "lookup", "kind": "tool", "ref": "my-pack.lookup-order"}],
        "edges": [
            {"id": "e1", "from": "$start", "to": "lookup"},
            {"id": "e2", "from": "lookup", "to": "$end"},
        ],
        "kernelPayloadVersion": 1,
    })
}

/// `my-pack.note-order`: looks the order up, then adds a note to it (mutating: a dry run
/// stops there, before the tool is called).
pub fn note_order() -> Value {
    json!({
        "id": "my-pack.note-order",
        "version": "0.1.0",
        "name": "Add a note to an order",
        "nodes": [
            {"id": "lookup", "kind": "tool", "ref": "my-pack.lookup-order",
             "inputMapping": {"orderId": {"path": "runInput.orderId"}}},
            {"id": "note", "kind": "tool", "ref": "my-pack.add-order-note",
             "inputMapping": {"orderId": {"path": "runInput.orderId"}, "text": {"path": "runInput.text"}}},
        ],
        "edges": [
            {"id": "e1", "from": "$start", "to": "lookup"},
            {"id": "e2", "from": "lookup", "to": "note"},
            {"id": "e3", "from": "note", "to": "$end"},
        ],
        "kernelPayloadVersion": 1,
    })
}

/// `my-pack.echo-flow`: greets with a read-only tool, then hands the greeting to the agent.
pub fn echo_flow() -> Value {
    json!({
        "id": "my-pack.echo-flow",
        "version": "0.1.0",
        "name": "Greet, then echo",
        "nodes": [
            {"id": "greet", "kind": "tool", "ref": "my-pack.greet"},
            {"id": "agent", "kind": "agent", "ref": "my-pack.echo-agent",
             "inputMapping": {"message": {"path": "nodeOutputs.greet.greeting"}}},
        ],
        "edges": [
            {"id": "e1", "from": "$start", "to": "greet"},
            {"id": "e2", "from": "greet", "to": "agent"},
            {"id": "e3", "from": "agent", "to": "$end"},
        ],
        "output": {"mapping": {
            "reply": {"path": "nodeOutputs.agent.text"},
            "greeting": {"path": "nodeOutputs.greet.greeting"},
        }},
        "kernelPayloadVersion": 1,
    })
}
