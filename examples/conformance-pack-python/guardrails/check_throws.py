"""conformance.check-throws: its check always raises `check boom`."""

from typing import Any

from kindgi import RunTrace, guardrail


@guardrail(id="conformance.check-throws", check_id="conformance.checks.throws", on_violation="halt")
def check_throws(config: dict[str, Any], trace: RunTrace) -> bool:
    raise RuntimeError("check boom")
