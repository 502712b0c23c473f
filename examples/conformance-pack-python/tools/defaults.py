"""conformance.defaults: returns its input after the service filled the schema's defaults."""

from typing import Any

from kindgi import tool

OPTIONS = {
    "type": "object",
    "properties": {"loud": {"type": "boolean", "default": False}},
}


@tool(
    id="conformance.defaults",
    version="1.0.0",
    input={
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "greeting": {"type": "string", "default": "Hello"},
            "options": {**OPTIONS, "default": {}},
        },
        "required": ["name"],
    },
    output={
        "type": "object",
        "properties": {"name": {"type": "string"}, "greeting": {"type": "string"}, "options": OPTIONS},
        "required": ["name"],
    },
    mutating=False,
)
def defaults(payload: dict[str, Any]) -> dict[str, Any]:
    """Returns the input with defaults filled in."""
    return payload
