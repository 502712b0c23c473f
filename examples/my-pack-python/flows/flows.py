"""The pack's flows: check-order (read-only), note-order (stops a dry run at its mutating
step) and echo-flow (a read-only greeting, then the agent)."""

from kindgi import Flow

check_order = Flow(
    id="my-pack.check-order",
    version="0.1.0",
    name="Check an order",
    nodes=[{"id": "lookup", "kind": "tool", "ref": "my-pack.lookup-order"}],
    edges=[
        {"id": "e1", "from": "$start", "to": "lookup"},
        {"id": "e2", "from": "lookup", "to": "$end"},
    ],
)

note_order = Flow(
    id="my-pack.note-order",
    version="0.1.0",
    name="Add a note to an order",
    nodes=[
        {
            "id": "lookup",
            "kind": "tool",
            "ref": "my-pack.lookup-order",
            "inputMapping": {"orderId": {"path": "runInput.orderId"}},
        },
        {
            "id": "note",
            "kind": "tool",
            "ref": "my-pack.add-order-note",
            "inputMapping": {
                "orderId": {"path": "runInput.orderId"},
                "text": {"path": "runInput.text"},
            },
        },
    ],
    edges=[
        {"id": "e1", "from": "$start", "to": "lookup"},
        {"id": "e2", "from": "lookup", "to": "note"},
        {"id": "e3", "from": "note", "to": "$end"},
    ],
)

echo_flow = Flow(
    id="my-pack.echo-flow",
    version="0.1.0",
    name="Greet, then echo",
    nodes=[
        {"id": "greet", "kind": "tool", "ref": "my-pack.greet"},
        {
            "id": "agent",
            "kind": "agent",
            "ref": "my-pack.echo-agent",
            "inputMapping": {"message": {"path": "nodeOutputs.greet.greeting"}},
        },
    ],
    edges=[
        {"id": "e1", "from": "$start", "to": "greet"},
        {"id": "e2", "from": "greet", "to": "agent"},
        {"id": "e3", "from": "agent", "to": "$end"},
    ],
    output={
        "mapping": {
            "reply": {"path": "nodeOutputs.agent.text"},
            "greeting": {"path": "nodeOutputs.greet.greeting"},
        }
    },
)
