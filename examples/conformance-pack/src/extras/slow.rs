//! `conformance.slow` / `conformance.checks.slow`: returns `{passed: true}` once its abort
//! signal fires or after 300 ms, whichever comes first. No config schema.

use kindgi_pack::sdk::{Check, CheckResult, SdkError};
use std::time::Duration;

pub fn check() -> Result<Check, SdkError> {
    Check::define("conformance.slow")
        .check_id("conformance.checks.slow")
        .kind("zero-llm")
        .on_violation("halt")
        .evaluate(|_config, _trace, ctx| async move {
            tokio::select! {
                () = ctx.signal.cancelled() => {}
                () = tokio::time::sleep(Duration::from_millis(300)) => {}
            }
            Ok(CheckResult::pass())
        })
        .build()
}
