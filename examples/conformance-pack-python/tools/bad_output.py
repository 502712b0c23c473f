"""conformance.bad-output: returns a number where its output schema wants a string."""

from typing import Any

from kindgi import tool


@tool(
    id="conformance.bad-output",
    version="1.0.0",
    input={"type": "object"},
    output={
        "type": "object",
        "properties": {"message": {"type": "string"}},
        "required": ["message"],
    },
    mutating=False,
)
def bad_output(payload: dict[str, Any]) -> dict[str, Any]:
    """Produces output that fails its own output schema."""
    return {"message": 7}
