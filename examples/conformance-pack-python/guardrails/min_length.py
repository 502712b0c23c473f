"""conformance.min-length: passes when the run's output, trimmed, has at least `minLength` characters."""

from pydantic import BaseModel, ConfigDict, Field

from kindgi import CheckResult, RunTrace, guardrail


class MinLength(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    min_length: int = Field(default=1, ge=0, alias="minLength")


@guardrail(id="conformance.min-length", check_id="conformance.checks.min-length", on_violation="halt")
def min_length(config: MinLength, trace: RunTrace) -> CheckResult:
    if len((trace.output or "").strip()) >= config.min_length:
        return CheckResult(passed=True)
    return CheckResult(passed=False, reason="too short")
