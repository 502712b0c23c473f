//! The pack's guardrail checks: code the runtime calls over pack protocol `check-invoke`.

use kindgi_pack::sdk::{Check, CheckResult, SdkError};

/// `my-pack.no-card-numbers`, a before-tool guardrail on `my-pack.send-reply`: a reply that
/// carries something shaped like a card number (13 to 19 digits, spaces and dashes allowed
/// between them) is refused before it is sent; the model is told why and the call does not run.
pub fn no_card_numbers() -> Result<Check, SdkError> {
    Check::define("my-pack.no-card-numbers")
        .check_id("my-pack.checks.no-card-numbers")
        .name("No card numbers in replies")
        .before_tool(["my-pack.send-reply"])
        .evaluate(|_config, trace, _ctx| async move {
            // The call being judged is the trace's last tool call.
            let pending = trace["toolCalls"]
                .as_array()
                .and_then(|c| c.last())
                .cloned();
            let message = pending
                .as_ref()
                .and_then(|c| c["arguments"]["message"].as_str())
                .unwrap_or_default()
                .to_owned();
            Ok(if has_card_number(&message) {
                CheckResult::fail("the reply carries what looks like a card number")
            } else {
                CheckResult::pass()
            })
        })
        .build()
}

/// 13 to 19 digits in a row, ignoring single spaces or dashes between them.
fn has_card_number(text: &str) -> bool {
    let mut digits = 0;
    let mut gap = false;
    for c in text.chars() {
        if c.is_ascii_digit() {
            digits += 1;
            gap = false;
            if digits >= 13 {
                return true;
            }
        } else if (c == ' ' || c == '-') && digits > 0 && !gap {
            gap = true;
        } else {
            digits = 0;
            gap = false;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::has_card_number;

    #[test]
    fn card_numbers_are_found_with_or_without_separators() {
        assert!(has_card_number("card 4111 1111 1111 1111, thanks"));
        assert!(has_card_number("4111-1111-1111-1111"));
        assert!(has_card_number("4111111111111111"));
        assert!(!has_card_number("order ord_1001 total 4200 cents"));
        assert!(!has_card_number("call 555 1234 or 555 9876"));
    }
}
