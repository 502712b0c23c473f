//! What is kept about a request never holds a wait token (a secret): the token is named by
//! its id, core's [`token_id`] (the first 40 hex digits of its SHA-256, the id the runtime
//! stores waits under). Used by the idempotency store's key and the `route-not-found`
//! answer.

use std::borrow::Cow;

pub use kindgi_core::ids::token_id;

/// `path` with a `/v1/waits/{token}` token replaced by its id.
pub fn path_without_token(path: &str) -> Cow<'_, str> {
    match path.strip_prefix("/v1/waits/") {
        Some(token) => format!("/v1/waits/{}", token_id(token)).into(),
        None => path.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_named_by_its_hash() {
        let id = token_id("kgw_abc");
        assert_eq!(id.len(), 40);
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(id, token_id("kgw_abd"));
    }

    #[test]
    fn the_idempotency_key_of_an_answer_holds_no_token() {
        let kept = path_without_token("/v1/waits/kgw_secret");
        assert!(!kept.contains("kgw_secret"));
        assert_eq!(kept, format!("/v1/waits/{}", token_id("kgw_secret")));
        assert_eq!(path_without_token("/v1/runs"), "/v1/runs");
    }
}
