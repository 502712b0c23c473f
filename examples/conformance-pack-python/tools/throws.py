"""conformance.throws: its handler always raises `boom`."""

from typing import Any

from kindgi import tool


@tool(id="conformance.throws", version="1.0.0", input={"type": "object"}, output={"type": "object"})
def throws(payload: dict[str, Any]) -> dict[str, Any]:
    """Always raises."""
    raise RuntimeError("boom")
