"""conformance.process-env: the names (never the values) of the service's environment."""

import os
from typing import Any

from kindgi import tool


@tool(
    id="conformance.process-env",
    version="1.0.0",
    input={"type": "object"},
    output={
        "type": "object",
        "properties": {"names": {"type": "array", "items": {"type": "string"}}},
        "required": ["names"],
    },
    mutating=False,
)
def process_env(payload: dict[str, Any]) -> dict[str, Any]:
    """Lists the process environment's variable names, sorted."""
    return {"names": sorted(os.environ)}
