//! `conformance.check-throws` / `conformance.checks.throws`: always fails with `check boom`.

use kindgi_pack::sdk::{Check, SdkError};
use kindgi_tools::HandlerError;

pub fn check() -> Result<Check, SdkError> {
    Check::define("conformance.check-throws")
        .check_id("conformance.checks.throws")
        .kind("zero-llm")
        .on_violation("halt")
        .evaluate(|_config, _trace, _ctx| async move { Err(HandlerError::msg("check boom")) })
        .build()
}
