"""conformance.bad-schema: its input schema uses an unknown keyword, so it never compiles
under strict validation (index.extras.json only)."""

from typing import Any

from kindgi import tool


@tool(
    id="conformance.bad-schema",
    version="1.0.0",
    input={"type": "object", "frobnicate": True},
    output={"type": "object"},
)
def bad_schema(payload: dict[str, Any]) -> dict[str, Any]:
    """Never reached: its input schema does not compile."""
    return payload
