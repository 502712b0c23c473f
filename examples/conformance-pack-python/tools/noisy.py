"""conformance.noisy: writes a line on stdout, which must never reach the response."""

from typing import Any

from kindgi import tool


@tool(
    id="conformance.noisy",
    version="1.0.0",
    input={"type": "object"},
    output={
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"],
        "additionalProperties": False,
    },
    mutating=False,
)
def noisy(payload: dict[str, Any]) -> dict[str, Any]:
    """Prints, then answers ok."""
    print("noisy: a line on stdout", flush=True)
    return {"ok": True}
