"""A webhook-triggered flow: WooCommerce posts `order.updated` to a webhook trigger's receive
URL and each signed delivery starts this flow, its input the order the shop sent (data from
outside: the flow reads one field of it, by path, and never hands it to an agent as
instructions). Register it (docs/webhooks.md):

    kindgi webhooks register --flow=my-pack.webhook-order --flow-version=0.1.0 \
        --secret=WOO_ORDERS --generate-secret --preset=woocommerce
"""

from kindgi import Flow

webhook_order = Flow(
    id="my-pack.webhook-order",
    version="0.1.0",
    name="Look up an order a shop's webhook names",
    nodes=[
        {
            "id": "lookup",
            "kind": "tool",
            "ref": "my-pack.lookup-order",
            # WooCommerce's order payload carries the order number, as a string, in `number`.
            "inputMapping": {"orderId": {"path": "runInput.number"}},
        },
    ],
    edges=[
        {"id": "e1", "from": "$start", "to": "lookup"},
        {"id": "e2", "from": "lookup", "to": "$end"},
    ],
)
