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

/// `my-pack.support-agent`: answers a customer with the pack's tools, under the policy the
/// tools declare (seed 004). Its approval gates are on (`conversationPolicy.hitl` with no
/// per-tool rules): the read-only `my-pack.lookup-order` runs straight away, while
/// `my-pack.send-reply` and `my-pack.request-review` (mutating) wait for a person's
/// approval on first use — `kindgi approvals list`, then `kindgi approvals complete <id>
/// --decision=approve`. `my-pack.request-review` also pauses: the run then waits for the
/// reviewer's answer at the call's link (docs/pauses.md). The before-tool guardrail
/// `my-pack.no-card-numbers` refuses a reply carrying a card number before it is sent.
///
/// With the dev stand-in model (`dev-echo`), a turn calls the first tool with the user's
/// message — so `send-reply` parks the run until someone approves it.
pub fn support_agent() -> Value {
    json!({
        "id": "my-pack.support-agent",
        "version": "0.1.0",
        "name": "Support agent",
        "instructions": "Answer the customer. Look orders up before you reply; ask for a review before promising a refund.",
        "capabilities": [],
        "tools": [
            {"id": "my-pack.send-reply", "version": "^0.1.0"},
            {"id": "my-pack.lookup-order", "version": "^0.1.0"},
            {"id": "my-pack.request-review", "version": "^0.1.0"},
        ],
        "guardrails": ["my-pack.no-card-numbers"],
        "conversationPolicy": {"hitl": {"tools": {}}},
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
