"""conformance.hold: prints `hold: <release>` on stdout, then waits until the file named by
`release` exists (the conformance kit creates it to release the call), or the call is cancelled."""

import os
from typing import Any

from kindgi import ToolContext, tool


@tool(
    id="conformance.hold",
    version="1.0.0",
    input={
        "type": "object",
        "properties": {"release": {"type": "string", "minLength": 1}},
        "required": ["release"],
    },
    output={
        "type": "object",
        "properties": {"released": {"type": "boolean"}},
        "required": ["released"],
    },
)
def hold(payload: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """Holds the call until released."""
    release = str(payload["release"])
    print(f"hold: {release}", flush=True)
    while not os.path.exists(release):
        if ctx.cancellation.wait(0.01):
            return {"released": False}
    return {"released": True}
