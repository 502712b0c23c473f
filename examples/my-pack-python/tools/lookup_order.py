"""my-pack.lookup-order: reads an order. Declared read-only, so it runs in a dry run."""

from pydantic import BaseModel, Field

from kindgi import ToolContext, tool

from ._orders import ORDERS


class OrderRef(BaseModel):
    orderId: str = Field(min_length=1)


class Order(BaseModel):
    status: str
    orderId: str
    totalCents: int = Field(ge=0)


@tool(id="my-pack.lookup-order", version="0.1.0", mutating=False)
def lookup_order(ref: OrderRef, ctx: ToolContext) -> Order:
    """Looks an order up by id."""
    found = ORDERS.get(ref.orderId)
    if found is None:
        raise LookupError(f'no order "{ref.orderId}"')
    status, total = found
    return Order(status=status, orderId=ref.orderId, totalCents=total)
