"""conformance.echo: returns its input. The schemas are the fixture's, as JSON Schema."""

from typing import Any

from kindgi import tool

ECHO_INPUT = {
    "type": "object",
    "properties": {"message": {"type": "string", "minLength": 1}},
    "required": ["message"],
    "additionalProperties": False,
}
ECHO_OUTPUT = {
    "type": "object",
    "properties": {"message": {"type": "string"}},
    "required": ["message"],
    "additionalProperties": False,
}


@tool(id="conformance.echo", version="1.0.0", input=ECHO_INPUT, output=ECHO_OUTPUT, mutating=False)
def echo(payload: dict[str, Any]) -> dict[str, Any]:
    """Returns the message it was given."""
    return {"message": payload["message"]}
