"""A scheduled flow: every night it counts the shop's orders by status (`my-pack.order-digest`,
read-only). A schedule starts it, as its owner, with nobody watching: every step it takes is
read-only and needs no person's connection, so nothing in it waits for an approval.

A flow does not declare how its runs start (flow schema 1.9.0 dropped `triggers`; the
official SDK 0.1.10 has no schedules in code): the schedule is registered through the API,
naming this flow at its exact version. Nightly at 02:00 in Berlin (docs/schedules.md):

    kindgi schedules create --flow=my-pack.nightly-digest --flow-version=0.1.0 \\
        --cron='0 2 * * *' --timezone=Europe/Berlin --input='{}' \\
        --catch-up=latest --overlap=skip --label='nightly order digest'

`catch-up: latest` runs once after downtime (not once per missed night); `overlap: skip`
never starts a second digest while one is still going. `kindgi schedules run-now <id>` fires
it at once (scripts/demo-triggers does).
"""

from kindgi import Flow

nightly_digest = Flow(
    id="my-pack.nightly-digest",
    version="0.1.0",
    name="Count the orders by status, nightly",
    nodes=[
        {
            "id": "digest",
            "kind": "tool",
            "ref": "my-pack.order-digest",
            "inputMapping": {"status": {"path": "runInput.status"}},
        },
    ],
    edges=[
        {"id": "e1", "from": "$start", "to": "digest"},
        {"id": "e2", "from": "digest", "to": "$end"},
    ],
)
