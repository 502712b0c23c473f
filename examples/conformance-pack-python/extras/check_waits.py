"""conformance.check-waits: a check that waits on its abort signal, then returns (asyncio
cancellation is Python's abort signal: the check stops waiting when its call is cancelled or
passes its deadline, and returns) (index.extras.json only)."""

import asyncio
from typing import Any

from kindgi import RunTrace, guardrail


@guardrail(id="conformance.check-waits", check_id="conformance.checks.waits", on_violation="halt")
async def check_waits(config: dict[str, Any], trace: RunTrace) -> bool:
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        return True  # aborted: stop waiting, as a handler honouring its signal does
    return True
