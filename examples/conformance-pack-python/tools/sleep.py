"""conformance.sleep: waits `ms` milliseconds, or until the call is cancelled."""

from typing import Any

from kindgi import ToolContext, tool


@tool(
    id="conformance.sleep",
    version="1.0.0",
    input={
        "type": "object",
        "properties": {"ms": {"type": "integer", "minimum": 0}},
        "required": ["ms"],
    },
    output={
        "type": "object",
        "properties": {"slept": {"type": "integer"}},
        "required": ["slept"],
    },
    mutating=False,
)
def sleep(payload: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """Sleeps for `ms` milliseconds (cancellable)."""
    ms = int(payload["ms"])
    ctx.cancellation.wait(ms / 1000)
    return {"slept": ms}
