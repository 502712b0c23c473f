"""conformance.context: returns the call context it received, in wire form (camelCase keys;
absent fields and empty maps left out)."""

from typing import Any

from kindgi import ToolContext, tool


@tool(id="conformance.context", version="1.0.0", input={"type": "object"}, output={"type": "object"})
def context(payload: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """Echoes the call context."""
    out: dict[str, Any] = {"tenantId": ctx.tenant_id, "runId": ctx.run_id}
    for key, value in (
        ("requestId", ctx.request_id),
        ("idempotencyKey", ctx.idempotency_key),
        ("projectId", ctx.project_id),
        ("orgId", ctx.org_id),
    ):
        if value is not None:
            out[key] = value
    for key, mapping in (
        ("env", ctx.env),
        ("secrets", ctx.secrets),
        ("config", ctx.config),
        ("settings", ctx.settings),
    ):
        if mapping:
            out[key] = {k: (dict(v) if isinstance(v, dict) else v) for k, v in mapping.items()}
    return out
