"""The example's orders: an in-memory table (orderId -> status, totalCents)."""

ORDERS = {
    "ord_1001": ("shipped", 4200),
    "ord_1002": ("processing", 1299),
}
