//! Why a pack call produced no output: the one [`PackCallError`] of the pack seam, shared by
//! the pooled pack client (`kindgi_pack_client::client`, which produces the transport
//! variants), pack dispatch (`kindgi_pack_client::dispatch`, which adds "no service serving",
//! "cancelled" and protocol breaches) and [`crate::dispatch::PackTool`], which turns it into
//! the step's [`crate::dispatch::ToolCallError`].
//!
//! The relay rule (pack-protocol reference §10) is data here, not words in a message:
//! [`PackCallError::relay`] says whether the call provably did not run
//! ([`Relay::Unavailable`]: a 503, a transport refusal, no connection, no service serving) or
//! may have run ([`Relay::Failed`]: a timeout, a connection lost after sending, a 5xx, a body
//! that is no answer), which is what a caller needs before it runs a mutating tool again.
//!
//! It lives at this floor (beside [`crate::dispatch::PackCaller`]) so that the runtime's test
//! doubles and the client build the same type. The client's transport variants carry its
//! HTTP client's error boxed ([`TransportSource`]): nothing looks inside it (the client
//! decides connect / timeout / interrupted where it builds the error), and a pack author's
//! build of this crate needs no HTTP client for it (the `http` feature off).

/// The cause of a transport failure, as the pack client's HTTP client reported it.
pub type TransportSource = Box<dyn std::error::Error + Send + Sync>;

/// What the relay rule says about a pack call that got no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Relay {
    /// The call provably did not run: sending it again cannot run it twice.
    Unavailable,
    /// The call was delivered without an answer: it may have run and is never sent again.
    Failed,
}

impl Relay {
    /// The rule's word, as it opens a `pack-unreachable` message (`unavailable`, `failed`).
    pub fn as_str(self) -> &'static str {
        match self {
            Relay::Unavailable => "unavailable",
            Relay::Failed => "failed",
        }
    }
}

/// Why a pack call failed.
#[derive(Debug, thiserror::Error)]
pub enum PackCallError {
    /// The pack answered with a tool failure (its code and message, e.g. `handler-error`).
    #[error("{code}: {message}")]
    Tool {
        code: String,
        message: String,
        issues: Vec<kindgi_schema::Issue>,
    },
    /// The pack service could not be reached, died, or answered nonsense, in words only (a
    /// [`crate::dispatch::PackCaller`] with no typed cause). The message says which side of
    /// the relay rule it was, if it knows.
    #[error("{message}")]
    Transport { message: String },
    /// No pack service serves now (none started yet, a supervised child restarting): `why`.
    #[error("{why}; the call did not run")]
    NotServing { why: String },
    /// The run was cancelled while its call was in flight: the caller stopped waiting.
    #[error("the run was cancelled while the call was in flight; the call may have run")]
    Cancelled,
    /// The service answered a message the call cannot take (a check result to a tool call, a
    /// pause the tool may not take): the call may have run.
    #[error("{detail}")]
    Protocol { detail: String },
    /// 503 on every attempt: not ready, draining, or at the concurrency cap.
    #[error(
        "the pack service at {url} is unavailable ({reason}) after {attempts} attempt(s); \
         the call did not run"
    )]
    Unavailable {
        url: String,
        reason: String,
        attempts: u32,
        /// The `missingEnv` of a strict missing-env 503.
        missing_env: Option<Vec<String>>,
    },
    /// A transport refusal decided before any pack code ran (401, 404, 405, 413, 415, 421…).
    #[error("the pack service at {url} refused the call with HTTP {status}: {error}")]
    Refused {
        url: String,
        status: u16,
        error: String,
    },
    /// The connection could not be made: nothing was sent.
    #[error("could not connect to the pack service at {url}: {source}")]
    Connect {
        url: String,
        #[source]
        source: TransportSource,
    },
    /// No answer within the deadline (+ grace): the call may have run.
    #[error(
        "the pack service at {url} did not answer within {waited_ms} ms; the call may have run"
    )]
    Timeout { url: String, waited_ms: u64 },
    /// The connection failed after the request went out: the call may have run.
    #[error(
        "the connection to the pack service at {url} failed after the call was sent; \
         the call may have run: {source}"
    )]
    Interrupted {
        url: String,
        #[source]
        source: TransportSource,
    },
    /// 500, 502 or another status that says the service (or a proxy) failed mid-call.
    #[error("the pack service at {url} answered HTTP {status}: {error}; the call may have run")]
    ServerFailed {
        url: String,
        status: u16,
        error: String,
    },
    /// 200 whose body is not a pack response message.
    #[error(
        "the pack service at {url} answered 200 with a body that is not a pack response \
         ({detail}); the call may have run"
    )]
    BadResponse { url: String, detail: String },
    /// The answer body is larger than the client's limit
    /// (`PackClientConfig::max_response_bytes`): the call may have run.
    #[error(
        "the pack service at {url} answered with a body larger than the {limit} byte limit \
         (PackClientConfig::max_response_bytes); the call may have run"
    )]
    TooLarge { url: String, limit: usize },
    /// The request could not be serialized (never for well-formed messages).
    #[error("could not serialize the request: {source}")]
    Encode {
        #[source]
        source: serde_json::Error,
    },
}

impl PackCallError {
    /// The relay rule's verdict: `None` for a tool failure (the pack ran and answered) and
    /// for a [`PackCallError::Transport`] (words only: the message says it, if anything).
    pub fn relay(&self) -> Option<Relay> {
        match self {
            Self::Tool { .. } | Self::Transport { .. } => None,
            Self::NotServing { .. }
            | Self::Unavailable { .. }
            | Self::Refused { .. }
            | Self::Connect { .. }
            | Self::Encode { .. } => Some(Relay::Unavailable),
            Self::Cancelled
            | Self::Protocol { .. }
            | Self::Timeout { .. }
            | Self::Interrupted { .. }
            | Self::ServerFailed { .. }
            | Self::BadResponse { .. }
            | Self::TooLarge { .. } => Some(Relay::Failed),
        }
    }

    /// Whether the pack code may have run. `false` only when the service provably did not
    /// run it (a 503, a transport refusal, no connection, no service), so a retry cannot run
    /// it twice; a tool failure ran.
    pub fn may_have_run(&self) -> bool {
        !matches!(self.relay(), Some(Relay::Unavailable))
    }

    /// What a `pack-unreachable` message says after "could not be called: ": the relay
    /// word, then why (`unavailable: …`, `failed: …`). A cancelled call and a
    /// [`PackCallError::Transport`] say it in their own words.
    pub fn relay_message(&self) -> String {
        match (self, self.relay()) {
            (Self::Cancelled | Self::Transport { .. }, _) | (_, None) => self.to_string(),
            (_, Some(relay)) => format!("{}: {self}", relay.as_str()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_relay_rule_is_data() {
        let not_serving = PackCallError::NotServing {
            why: "the pack service has not started yet".into(),
        };
        assert_eq!(not_serving.relay(), Some(Relay::Unavailable));
        assert!(!not_serving.may_have_run());
        assert_eq!(
            not_serving.relay_message(),
            "unavailable: the pack service has not started yet; the call did not run"
        );
        let timeout = PackCallError::Timeout {
            url: "http://127.0.0.1:1".into(),
            waited_ms: 5,
        };
        assert_eq!(timeout.relay(), Some(Relay::Failed));
        assert!(timeout.may_have_run());
        assert!(
            timeout
                .relay_message()
                .starts_with("failed: the pack service at")
        );
        assert_eq!(
            PackCallError::Cancelled.relay_message(),
            "the run was cancelled while the call was in flight; the call may have run"
        );
        let words = PackCallError::Transport {
            message: "unavailable: down".into(),
        };
        assert_eq!(words.relay(), None);
        assert_eq!(words.relay_message(), "unavailable: down");
    }
}
