//! Pausing tools in the Rust pack SDK (docs/pauses.md): a tool declaring `pauses: true`
//! gets a wait ticket with each call (`ctx.wait`), hands its link to another system and
//! answers *pause*; the run then waits for that system's answer, which becomes the call's
//! result.
//!
//! A typed handler answers a [`Reply`] and is registered with
//! [`PausingHandler::pausing_handler`] (which also declares `pauses: true`); a raw JSON
//! handler returns `Err(sdk::pause(None))`. Either way the pause travels to the service
//! out of band (a task-local the service sets for each call), never as a value a real
//! output could be mistaken for; the service then checks the tool may pause at all.

use std::future::Future;
use std::time::Duration;

use kindgi_tools::define::ToolBuilder;
use kindgi_tools::{HandlerError, ToolContext, WaitTicket};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::service::pause_slot::PAUSE;

/// What a pausing tool's handler answers: its output now, or a pause.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply<O> {
    /// The call's result, as any tool's.
    Done(O),
    /// The handler handed `ctx.wait.link` to another system: wait for its answer, at most
    /// `timeout` (`None`: the ticket's, 24 h by default). Whole milliseconds, at most 24
    /// days; the service refuses a longer or zero one.
    Pause { timeout: Option<Duration> },
}

impl<O> Reply<O> {
    /// Waits for the other system as long as the ticket says.
    pub fn pause() -> Self {
        Reply::Pause { timeout: None }
    }

    /// Waits for the other system at most `timeout`.
    pub fn pause_for(timeout: Duration) -> Self {
        Reply::Pause {
            timeout: Some(timeout),
        }
    }
}

/// The message of the error a pause is carried in: what a caller sees only when nothing
/// took the pause (the handler ran outside a pack service call).
pub const PAUSE_OUTSIDE_A_SERVICE: &str = "the handler paused, but only a pack service call can pause (Kindgi pack protocol v2 `pause`, docs/pauses.md)";

/// Pauses the current call: return it as the handler's error (`return Err(sdk::pause(None))`).
/// In a pack service call of a tool that declares `pauses: true` and carries a wait ticket,
/// the service answers `{v:2, kind:"pause", timeoutMs?}`; a tool that does not declare
/// `pauses`, or a call without a ticket, gets `output-validation-failed` saying so.
pub fn pause(timeout: Option<Duration>) -> HandlerError {
    let ms = timeout.map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX));
    let _ = PAUSE.try_with(|slot| slot.ask(ms));
    HandlerError::Failed(PAUSE_OUTSIDE_A_SERVICE.to_owned())
}

/// The call's wait ticket, or an error saying why there is none: the tool does not declare
/// `pauses: true`, or the runtime calling it does not know pausing tools.
pub fn wait_ticket(ctx: &ToolContext) -> Result<&WaitTicket, HandlerError> {
    ctx.wait.as_ref().ok_or_else(|| {
        HandlerError::Failed(
            "the call carries no wait ticket (ctx.wait): a tool gets one only when it declares \
             `pauses: true` and the runtime calling it can wait (docs/pauses.md)"
                .to_owned(),
        )
    })
}

/// Registers a handler that may pause.
pub trait PausingHandler {
    /// The typed handler of a pausing tool: like [`ToolBuilder::handler`] (schemas derived
    /// from `I` and `O` unless set), answering a [`Reply`]. Declares `pauses: true`.
    fn pausing_handler<I, O, F, Fut>(self, handler: F) -> ToolBuilder
    where
        I: DeserializeOwned + JsonSchema + 'static,
        O: Serialize + JsonSchema + Send + 'static,
        F: Fn(I, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Reply<O>, HandlerError>> + Send + 'static;
}

impl PausingHandler for ToolBuilder {
    fn pausing_handler<I, O, F, Fut>(self, handler: F) -> ToolBuilder
    where
        I: DeserializeOwned + JsonSchema + 'static,
        O: Serialize + JsonSchema + Send + 'static,
        F: Fn(I, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Reply<O>, HandlerError>> + Send + 'static,
    {
        self.pauses(true)
            .handler(move |input: I, ctx: ToolContext| {
                let running = handler(input, ctx);
                async move {
                    match running.await? {
                        Reply::Done(output) => Ok(output),
                        Reply::Pause { timeout } => Err(pause(timeout)),
                    }
                }
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::pause_slot::PauseSlot;
    use std::sync::Arc;

    #[tokio::test]
    async fn a_pause_is_recorded_only_inside_a_call_scope() {
        // Outside a service call: just an error saying so.
        assert_eq!(
            pause(None),
            HandlerError::Failed(PAUSE_OUTSIDE_A_SERVICE.to_owned())
        );
        let slot = Arc::new(PauseSlot::default());
        assert_eq!(slot.asked(), None);
        let seen = PAUSE
            .scope(slot.clone(), async {
                let _ = pause(Some(Duration::from_secs(90)));
                PAUSE.with(|s| s.asked())
            })
            .await;
        assert_eq!(seen, Some(Some(90_000)));
        assert_eq!(slot.asked(), Some(Some(90_000)));
        let bare = Arc::new(PauseSlot::default());
        PAUSE
            .scope(bare.clone(), async {
                let _ = pause(None);
            })
            .await;
        assert_eq!(bare.asked(), Some(None));
    }

    #[test]
    fn a_missing_ticket_is_a_clear_error() {
        let ctx = ToolContext::for_test();
        let e = wait_ticket(&ctx).unwrap_err().to_string();
        assert!(e.contains("ctx.wait") && e.contains("pauses: true"), "{e}");
        let mut ctx = ToolContext::for_test();
        ctx.wait = Some(WaitTicket {
            token: "wt".into(),
            link: "http://127.0.0.1/v1/waits/wt".into(),
            expires_at: "2026-12-02T00:00:00.000Z".into(),
            timeout_ms: 1000,
        });
        assert_eq!(wait_ticket(&ctx).unwrap().token, "wt");
    }

    #[tokio::test]
    async fn a_typed_pausing_handler_declares_pauses_and_answers_a_reply() {
        #[derive(serde::Deserialize, JsonSchema)]
        struct In {
            n: u32,
        }
        #[derive(Serialize, JsonSchema)]
        struct Out {
            doubled: u32,
        }
        let tool = kindgi_tools::Tool::define("acme.maybe-wait")
            .version("1.0.0")
            .description("Pauses on odd numbers.")
            .pausing_handler(|input: In, _ctx| async move {
                Ok(if input.n % 2 == 1 {
                    Reply::pause_for(Duration::from_secs(60))
                } else {
                    Reply::Done(Out {
                        doubled: input.n * 2,
                    })
                })
            })
            .build()
            .unwrap();
        assert!(tool.manifest().pauses());
        assert_eq!(
            tool.manifest().output["required"],
            serde_json::json!(["doubled"])
        );
        let handler = tool.handler().clone();
        let done = handler(serde_json::json!({"n": 2}), ToolContext::for_test()).await;
        assert_eq!(done, Ok(serde_json::json!({"doubled": 4})));
        let slot = Arc::new(PauseSlot::default());
        let paused = PAUSE
            .scope(
                slot.clone(),
                handler(serde_json::json!({"n": 3}), ToolContext::for_test()),
            )
            .await;
        assert!(paused.is_err());
        assert_eq!(slot.asked(), Some(Some(60_000)));
    }
}
