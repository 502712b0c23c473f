//! `conformance.check-waits` / `conformance.checks.waits`: waits on its abort signal (at
//! most 30 s), then passes.

use kindgi_pack::sdk::{Check, CheckResult, SdkError};
use std::time::Duration;

pub fn check() -> Result<Check, SdkError> {
    Check::define("conformance.check-waits")
        .check_id("conformance.checks.waits")
        .kind("zero-llm")
        .on_violation("halt")
        .evaluate(|_config, _trace, ctx| async move {
            tokio::select! {
                () = ctx.signal.cancelled() => {}
                () = tokio::time::sleep(Duration::from_secs(30)) => {}
            }
            Ok(CheckResult::pass())
        })
        .build()
}
