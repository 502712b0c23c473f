"""my-pack.order-digest: counts the orders by status and sums their totals. Read-only, and it
needs no person or connection, so a schedule's unattended run may call it."""

from pydantic import BaseModel, Field

from kindgi import ToolContext, tool

from ._orders import ORDERS


class DigestInput(BaseModel):
    # Only orders in this status; absent: every order.
    status: str | None = Field(default=None, min_length=1)


class Digest(BaseModel):
    orders: int = Field(ge=0)
    byStatus: dict[str, int]
    totalCents: int = Field(ge=0)


@tool(id="my-pack.order-digest", version="0.1.0", mutating=False)
def order_digest(query: DigestInput, ctx: ToolContext) -> Digest:
    """Counts the orders by status and sums their totals."""
    by_status: dict[str, int] = {}
    total = 0
    for status, cents in ORDERS.values():
        if query.status is not None and status != query.status:
            continue
        by_status[status] = by_status.get(status, 0) + 1
        total += cents
    return Digest(orders=sum(by_status.values()), byStatus=by_status, totalCents=total)
