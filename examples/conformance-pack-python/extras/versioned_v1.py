"""conformance.versioned 1.0.0 — one of two versions of one tool id (index.extras.json only)."""

from typing import Any

from kindgi import tool

OUTPUT = {"type": "object", "properties": {"version": {"type": "string"}}, "required": ["version"]}


@tool(id="conformance.versioned", version="1.0.0", input={"type": "object"}, output=OUTPUT)
def versioned_v1(payload: dict[str, Any]) -> dict[str, Any]:
    """Answers with its own version."""
    return {"version": "1.0.0"}
