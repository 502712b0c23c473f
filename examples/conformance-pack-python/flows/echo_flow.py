"""conformance.echo-flow: one tool step that calls conformance.echo."""

from kindgi import Flow

echo_flow = Flow(
    id="conformance.echo-flow",
    version="1.0.0",
    name="Echo flow",
    nodes=[{"id": "echo", "kind": "tool", "ref": "conformance.echo"}],
    edges=[
        {"id": "e1", "from": "$start", "to": "echo"},
        {"id": "e2", "from": "echo", "to": "$end"},
    ],
)
