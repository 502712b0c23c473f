//! Pausing tools over pack protocol v2 (docs/pauses.md), end to end on loopback: the SDK's
//! index says `pauses: true`, the runtime's caller sends `ctx.wait` to a pausing tool only,
//! the service answers `{kind:"pause", timeoutMs?}` and the caller returns
//! `CallOutcome::Paused`; every way a pause is not allowed is refused, by the service (a
//! tool that does not declare `pauses`, a call without a ticket, a bad timeout) and by the
//! client (a pack that answers `pause` when it may not).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod service_common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use kindgi_pack::sdk::{self, Pack, PausingHandler, Reply};
use kindgi_pack_client::dispatch::{PackServiceCaller, ServiceSlot, manifest_of};
use kindgi_spec::ToolManifest;
use kindgi_tools::dispatch::{CallOutcome, PackTool, ToolCallError, ToolDispatcher};
use kindgi_tools::{Tool, ToolContext, WaitTicket};
use serde_json::{Value, json};
use service_common::{Svc, TOKEN, handler, index_file, tool};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const WAIT_TOKEN: &str = "wt_9f8e7d6c5b4a39281706f5e4d3c2b1a0ZYXWVUTSRQ";

fn ticket() -> WaitTicket {
    WaitTicket {
        token: WAIT_TOKEN.into(),
        link: format!("http://127.0.0.1:8080/v1/waits/{WAIT_TOKEN}"),
        expires_at: "2026-12-02T16:00:00.000Z".into(),
        timeout_ms: 86_400_000,
    }
}

fn ctx_with_ticket() -> ToolContext {
    let mut ctx = ToolContext::for_test();
    ctx.wait = Some(ticket());
    ctx
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct ReviewIn {
    /// Answer at once instead of pausing.
    #[serde(default)]
    now: bool,
    /// The pause's timeout.
    #[serde(default)]
    ms: Option<u64>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct ReviewOut {
    approved: bool,
}

/// The links the review tool was handed, in order (what "the other system" would get).
type Handed = Arc<Mutex<Vec<String>>>;

fn pausing_pack(handed: Handed) -> Pack {
    let review = Tool::define("test.review")
        .version("1.0.0")
        .description("Asks a reviewer; the run waits for the answer.")
        .mutating(false)
        .pausing_handler(move |input: ReviewIn, ctx: ToolContext| {
            let handed = handed.clone();
            async move {
                if input.now {
                    return Ok(Reply::Done(ReviewOut { approved: true }));
                }
                let ticket = sdk::wait_ticket(&ctx)?;
                handed.lock().unwrap().push(ticket.link.clone());
                Ok(match input.ms {
                    Some(ms) => Reply::pause_for(Duration::from_millis(ms)),
                    None => Reply::pause(),
                })
            }
        })
        .build()
        .unwrap();
    let obj = json!({"type": "object"});
    // Pauses with whatever ticket it has, even none: the service must refuse that.
    let raw = Tool::define("test.raw-pause")
        .version("1.0.0")
        .description("Pauses unconditionally.")
        .input(obj.clone())
        .output(obj.clone())
        .pauses(true)
        .raw_handler(handler(|_, _| async move { Err(sdk::pause(None)) }))
        .build()
        .unwrap();
    // Does not declare `pauses`, yet tries to.
    let sneaky = tool(
        "test.sneaky",
        "1.0.0",
        obj.clone(),
        obj.clone(),
        handler(|_, _| async move { Err(sdk::pause(None)) }),
    );
    // Does not declare `pauses`: reports whether a ticket reached it.
    let plain = tool(
        "test.plain",
        "1.0.0",
        obj.clone(),
        obj,
        handler(|_, ctx| async move {
            let raw_wait = sdk::call_context().is_some_and(|c| c.contains_key("wait"));
            Ok(json!({"ticket": ctx.wait.is_some(), "rawWait": raw_wait}))
        }),
    );
    Pack::new("test", "1.0.0")
        .tool("t/review.rs", review)
        .tool("t/raw_pause.rs", raw)
        .tool("t/sneaky.rs", sneaky)
        .tool("t/plain.rs", plain)
}

struct Fixture {
    svc: Svc,
    tools: Vec<PackTool>,
}

impl Fixture {
    async fn start(handed: Handed) -> Fixture {
        let pack = pausing_pack(handed);
        let file = index_file(&pack, |_| {});
        let tools_index = file.index.tools.clone();
        let svc = Svc::start_with(pack, file, |_| {}).await;
        let slot = ServiceSlot::remote(&svc.base, TOKEN, |_| {}).unwrap();
        let caller = PackServiceCaller::new(slot);
        let tools = tools_index
            .iter()
            .map(|t| PackTool::new(manifest_of(t).unwrap(), "test", caller.clone()))
            .collect();
        Fixture { svc, tools }
    }

    fn tool(&self, id: &str) -> &PackTool {
        self.tools.iter().find(|t| t.manifest().id == id).unwrap()
    }

    async fn call(
        &self,
        id: &str,
        input: Value,
        ctx: ToolContext,
    ) -> Result<CallOutcome, ToolCallError> {
        self.tool(id).call_or_pause(input, ctx).await
    }
}

#[test]
fn the_index_of_a_pausing_tool_says_pauses_and_the_manifest_keeps_it() {
    let pack = pausing_pack(Handed::default());
    let index = pack.index("1", "2026-10-01T12:00:00.000Z", None).unwrap();
    let text = index.to_canonical_string().unwrap();
    let value: Value = serde_json::from_str(&text).unwrap();
    let entry = |id: &str| {
        value["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(entry("test.review")["pauses"], true);
    assert_eq!(entry("test.raw-pause")["pauses"], true);
    // Only when true: an index without a pausing tool is exactly the 1.4.0 shape.
    assert!(entry("test.plain").get("pauses").is_none());
    let review = index.tools.iter().find(|t| t.id == "test.review").unwrap();
    assert!(review.pauses());
    let m: ToolManifest = manifest_of(review).unwrap();
    assert!(m.pauses());
    assert_eq!(m.output["required"], json!(["approved"]));
    let plain = index.tools.iter().find(|t| t.id == "test.plain").unwrap();
    assert!(!manifest_of(plain).unwrap().pauses());
}

#[tokio::test]
async fn a_pausing_tool_gets_the_ticket_and_its_pause_comes_back_as_paused() {
    let handed = Handed::default();
    let f = Fixture::start(handed.clone()).await;

    let out = f
        .call("test.review", json!({"ms": 3_600_000}), ctx_with_ticket())
        .await
        .unwrap();
    assert_eq!(
        out,
        CallOutcome::Paused {
            timeout_ms: Some(3_600_000)
        }
    );
    assert_eq!(*handed.lock().unwrap(), [ticket().link]);

    let out = f
        .call("test.review", json!({}), ctx_with_ticket())
        .await
        .unwrap();
    assert_eq!(out, CallOutcome::Paused { timeout_ms: None });

    // The longest allowed wait: 24 days.
    let out = f
        .call(
            "test.review",
            json!({"ms": 2_073_600_000u64}),
            ctx_with_ticket(),
        )
        .await
        .unwrap();
    assert_eq!(
        out,
        CallOutcome::Paused {
            timeout_ms: Some(2_073_600_000)
        }
    );

    // A pausing tool may also answer at once.
    let out = f
        .call("test.review", json!({"now": true}), ctx_with_ticket())
        .await
        .unwrap();
    assert_eq!(out, CallOutcome::Done(json!({"approved": true})));

    // The call's record says it paused; the token is in no record.
    let records = f.svc.logs.records();
    let calls: Vec<&Value> = records
        .iter()
        .filter(|r| r["event"] == "call" && r["id"] == "test.review")
        .collect();
    assert_eq!(calls.len(), 4, "{records:?}");
    assert_eq!(calls[0]["outcome"], "paused");
    assert_eq!(calls[3]["outcome"], "ok");
    assert!(!f.svc.logs.text().contains(WAIT_TOKEN));
}

#[tokio::test]
async fn the_service_refuses_a_pause_the_tool_may_not_make() {
    let f = Fixture::start(Handed::default()).await;
    let refused = |r: Result<CallOutcome, ToolCallError>| {
        let e = r.unwrap_err();
        assert_eq!(e.code, "output-validation-failed", "{e:?}");
        assert!(!e.transport);
        e.message
    };

    // Longer than 24 days, or zero.
    let m = refused(
        f.call(
            "test.review",
            json!({"ms": 2_073_600_001u64}),
            ctx_with_ticket(),
        )
        .await,
    );
    assert!(m.contains("`timeoutMs`") && m.contains("24 days"), "{m}");
    let m = refused(
        f.call("test.review", json!({"ms": 0}), ctx_with_ticket())
            .await,
    );
    assert!(m.contains("`timeoutMs` must be a positive"), "{m}");

    // A tool that does not declare `pauses`.
    let m = refused(f.call("test.sneaky", json!({}), ctx_with_ticket()).await);
    assert_eq!(
        m,
        "Tool \"test.sneaky\" handler answered pause, but the tool does not declare `pauses: true`; declare it (Tool::define(..).pauses(true)) or return the call's output"
    );

    // A call that carries no ticket.
    let m = refused(
        f.call("test.raw-pause", json!({}), ToolContext::for_test())
            .await,
    );
    assert!(m.contains("carries no wait ticket (`ctx.wait`)"), "{m}");

    // The SDK's own check: a handler asking for its ticket without one is told why.
    let e = f
        .call("test.review", json!({}), ToolContext::for_test())
        .await
        .unwrap_err();
    assert_eq!(e.code, "handler-throw");
    assert!(
        e.message.contains("no wait ticket (ctx.wait)"),
        "{}",
        e.message
    );
}

#[tokio::test]
async fn only_a_pausing_tool_is_sent_the_ticket() {
    let f = Fixture::start(Handed::default()).await;
    let out = f
        .call("test.plain", json!({}), ctx_with_ticket())
        .await
        .unwrap();
    assert_eq!(
        out,
        CallOutcome::Done(json!({"ticket": false, "rawWait": false}))
    );
    let out = f
        .tool("test.plain")
        .call(json!({}), ctx_with_ticket())
        .await
        .unwrap();
    assert_eq!(out, json!({"ticket": false, "rawWait": false}));
}

#[tokio::test]
async fn a_pause_through_a_call_that_cannot_wait_fails_the_call() {
    let f = Fixture::start(Handed::default()).await;
    let e = f
        .tool("test.review")
        .call(json!({}), ctx_with_ticket())
        .await
        .unwrap_err();
    assert_eq!(e.code, "pack-unreachable");
    assert!(e.message.contains("this call cannot wait"), "{}", e.message);
}

/// A pack service that answers every invoke with the next of `answers` (HTTP 200) and
/// keeps the request bodies: a service misbehaving in ways ours never does.
async fn scripted(answers: Vec<Value>) -> (String, Arc<Mutex<Vec<Value>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = seen.clone();
    tokio::spawn(async move {
        for answer in answers {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut buf = Vec::new();
            let body = loop {
                let mut chunk = [0u8; 4096];
                let n = stream.read(&mut chunk).await.unwrap();
                assert!(n > 0, "the client closed before its request was in");
                buf.extend_from_slice(&chunk[..n]);
                let text = String::from_utf8_lossy(&buf).into_owned();
                let Some(end) = text.find("\r\n\r\n") else {
                    continue;
                };
                let len: usize = text[..end]
                    .lines()
                    .find_map(|l| {
                        let (k, v) = l.split_once(':')?;
                        k.eq_ignore_ascii_case("content-length")
                            .then(|| v.trim().parse().ok())?
                    })
                    .unwrap_or(0);
                if buf.len() >= end + 4 + len {
                    break buf[end + 4..end + 4 + len].to_vec();
                }
            };
            kept.lock()
                .unwrap()
                .push(serde_json::from_slice::<Value>(&body).unwrap());
            let body = answer.to_string();
            let reply = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            stream.write_all(reply.as_bytes()).await.unwrap();
            let _ = stream.shutdown().await;
        }
    });
    (base, seen)
}

fn manifest(pauses: bool) -> ToolManifest {
    let mut m = json!({
        "id": "odd.tool", "version": "1.0.0", "description": "d",
        "input": {"type": "object"}, "output": {"type": "object"}, "mutating": false,
    });
    if pauses {
        m["pauses"] = json!(true);
    }
    serde_json::from_value(m).unwrap()
}

#[tokio::test]
async fn the_client_refuses_a_pause_it_may_not_take() {
    let pause = |t: Value| json!({"v": 2, "kind": "pause", "timeoutMs": t});
    let (base, seen) = scripted(vec![
        json!({"v": 2, "kind": "pause"}),
        json!({"v": 2, "kind": "pause"}),
        pause(json!(0)),
        pause(json!("soon")),
        pause(json!(2_073_600_001u64)),
        pause(json!(60_000)),
    ])
    .await;
    let slot = ServiceSlot::remote(&base, TOKEN, |_| {}).unwrap();
    let caller = PackServiceCaller::new(slot);
    let pausing = PackTool::new(manifest(true), "odd", caller.clone());
    let failed = |r: Result<CallOutcome, ToolCallError>| {
        let e = r.unwrap_err();
        assert_eq!(e.code, "pack-unreachable", "{e:?}");
        assert!(e.message.contains("failed: "), "{}", e.message);
        e.message
    };
    use kindgi_tools::dispatch::PackCaller;

    // From a tool whose manifest does not declare `pauses` (asked directly: PackTool sends
    // such a tool's calls through `call`, which never waits).
    let e = caller
        .call_tool_or_pause(&manifest(false), json!({}), &ctx_with_ticket())
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("does not declare `pauses: true`"), "{e}");
    // With no ticket sent.
    let m = failed(
        pausing
            .call_or_pause(json!({}), ToolContext::for_test())
            .await,
    );
    assert!(m.contains("carried no wait ticket"), "{m}");
    // Bad timeouts.
    let m = failed(pausing.call_or_pause(json!({}), ctx_with_ticket()).await);
    assert!(m.contains("`timeoutMs` must be a positive"), "{m}");
    let m = failed(pausing.call_or_pause(json!({}), ctx_with_ticket()).await);
    assert!(m.contains("got \"soon\""), "{m}");
    let m = failed(pausing.call_or_pause(json!({}), ctx_with_ticket()).await);
    assert!(m.contains("24 days"), "{m}");
    // A good one.
    let out = pausing
        .call_or_pause(json!({}), ctx_with_ticket())
        .await
        .unwrap();
    assert_eq!(
        out,
        CallOutcome::Paused {
            timeout_ms: Some(60_000)
        }
    );

    // What went out: `ctx.wait` only for the pausing manifest with a ticket.
    let seen = seen.lock().unwrap();
    assert!(seen[0]["ctx"].get("wait").is_none(), "{}", seen[0]);
    assert!(seen[1]["ctx"].get("wait").is_none(), "{}", seen[1]);
    assert_eq!(
        seen[5]["ctx"]["wait"],
        json!({"token": WAIT_TOKEN, "link": ticket().link,
            "expiresAt": "2026-12-02T16:00:00.000Z", "timeoutMs": 86_400_000})
    );
}

/// `examples/my-pack`'s pausing tool, as built (`cargo build -p my-pack`): its call is sent
/// the ticket, appends the link to the outbox file (0600, the token in no log line) and
/// comes back paused; `now: true` answers at once.
#[tokio::test]
async fn my_pack_request_review_hands_the_link_over_and_pauses() {
    use kindgi_conformance::service::{Launch, ServiceCommand, random_token};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap();
    let bin = root.join("target/debug/my-pack");
    if !bin.is_file() {
        kindgi_spec::testing::skip_without_reference(
            "pause",
            "target/debug/my-pack is not built (cargo build -p my-pack)",
        );
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let index = tmp.path().join("index.json");
    let status = std::process::Command::new(&bin)
        .args(["index", "--out"])
        .arg(&index)
        .status()
        .unwrap();
    assert!(status.success());
    let outbox = tmp.path().join("outbox.jsonl");
    let argv = vec![
        bin.display().to_string(),
        "serve".into(),
        "--index".into(),
        index.display().to_string(),
    ];
    let cmd = ServiceCommand::parse(&argv).unwrap();
    let launch = Launch {
        env: [(
            "MY_PACK_REVIEW_OUTBOX".to_owned(),
            outbox.display().to_string(),
        )]
        .into(),
        ..Launch::default()
    };
    let token = random_token();
    let mut svc = cmd.start(&launch, &token).await.unwrap();
    let file = kindgi_pack::service::IndexFile::read(&index).unwrap();
    let entry = file
        .index
        .tools
        .iter()
        .find(|t| t.id == "my-pack.request-review")
        .unwrap();
    let slot = ServiceSlot::remote(&svc.base, &token, |_| {}).unwrap();
    let review = PackTool::new(
        manifest_of(entry).unwrap(),
        "my-pack",
        PackServiceCaller::new(slot),
    );
    assert!(review.manifest().pauses() && !review.runs_concurrently());

    let out = review
        .call_or_pause(
            json!({"orderId": "ord_1001", "note": "big order", "timeoutHours": 2}),
            ctx_with_ticket(),
        )
        .await
        .unwrap();
    assert_eq!(
        out,
        CallOutcome::Paused {
            timeout_ms: Some(7_200_000)
        }
    );
    let lines = std::fs::read_to_string(&outbox).unwrap();
    let handed: Value = serde_json::from_str(lines.trim()).unwrap();
    assert_eq!(
        handed,
        json!({"orderId": "ord_1001", "note": "big order", "link": ticket().link,
            "expiresAt": "2026-12-02T16:00:00.000Z"})
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&outbox).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    let out = review
        .call_or_pause(
            json!({"orderId": "ord_1001", "now": true}),
            ctx_with_ticket(),
        )
        .await
        .unwrap();
    assert_eq!(
        out,
        CallOutcome::Done(json!({"approved": true, "comment": "no review asked"}))
    );
    svc.process.stop(Duration::from_secs(10)).await;
    let logged =
        svc.process.stderr.snapshot().join("\n") + &svc.process.stdout.snapshot().join("\n");
    assert!(logged.contains("my-pack.request-review paused"), "{logged}");
    assert!(!logged.contains(WAIT_TOKEN), "the wait token was logged");
}
