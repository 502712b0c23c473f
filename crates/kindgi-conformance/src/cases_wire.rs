//! Checks 1–46 and 53–60: routes and transport, results and headers, malformed requests,
//! validation, handler behaviour, guardrail checks — all against the shared base service
//! (the extras index for 17 and 39).

use serde_json::{Value, json};

use super::http::{Call, check_info_shape, find_issue};
use super::service::Launch;
use super::{Case, CaseFuture, Kit, check_invoke, ensure, invoke};

macro_rules! case {
    ($name:ident, |$k:ident| $body:block) => {
        fn $name($k: &mut Kit) -> CaseFuture<'_> {
            Box::pin(async move { $body })
        }
    };
}

pub(crate) fn cases() -> Vec<Case> {
    let c = |n, title, run| Case { n, title, run };
    vec![
        c(
            1,
            "GET /healthz without token → 200 {\"status\":\"ok\"}",
            c01,
        ),
        c(
            2,
            "GET /readyz without token → 200 {\"status\":\"ready\"}",
            c02,
        ),
        c(3, "GET /v1/info → 200 info of pack conformance", c03),
        c(4, "GET /v1/info without token → 401 Bad pack token", c04),
        c(5, "GET /v1/info with a wrong or extended token → 401", c05),
        c(6, "POST /v1/invoke without token → 401", c06),
        c(7, "GET /v1/nope → 404 No route /v1/nope", c07),
        c(8, "wrong method → 405 Use POST / Use GET, before auth", c08),
        c(9, "GET /v1/info?x=1 → 200; /v1/info/ → 404", c09),
        c(10, "content-type text/plain or none → 415", c10),
        c(
            11,
            "content-type application/json; charset=utf-8 → 200",
            c11,
        ),
        c(12, "Echo with a 10 MiB body → 413", c12),
        c(13, "a body of exactly 10 MiB → not 413", c13),
        c(
            14,
            "echo → exact result, kindgi-duration-ms, kindgi-artifact-version",
            c14,
        ),
        c(15, "echo naming version 1.0.0 → result", c15),
        c(16, "echo naming version 9.9.9 → tool-version-mismatch", c16),
        c(
            17,
            "one id at 1.0.0 and 2.0.0: each version runs its own handler",
            c17,
        ),
        c(18, "unknown tool → tool-not-in-pack", c18),
        c(19, "body not JSON → malformed-message", c19),
        c(
            20,
            "body [1] / null / \"x\" → Message must be a JSON object",
            c20,
        ),
        c(21, "v 1 / \"2\" / true → unknown-protocol-version", c21),
        c(22, "v 2.0 → result", c22),
        c(23, "kind bogus / result → unexpected-message-kind", c23),
        c(
            24,
            "tool {} / id \"\" / no tool → `tool.id` is required",
            c24,
        ),
        c(25, "tool.version 7 → `tool.version` must be a string", c25),
        c(
            26,
            "bad ctx → `ctx` needs string `tenantId` and `runId`",
            c26,
        ),
        c(27, "check {} → `check.id` is required", c27),
        c(28, "config 1 / [] / null → `config` must be an object", c28),
        c(
            29,
            "extra top-level and ctx fields (ctx.wait too) → result",
            c29,
        ),
        c(30, "echo {} → input-validation-failed, required issue", c30),
        c(
            31,
            "echo with an extra field → additionalProperties issue",
            c31,
        ),
        c(32, "echo {message:7} → type issue", c32),
        c(33, "echo {message:\"\"} → minLength issue", c33),
        c(34, "echo {message:7,a:1,b:2} → three issues", c34),
        c(35, "echo input \"x\" → type issue must be object", c35),
        c(36, "bad-output → output-validation-failed", c36),
        c(37, "defaults {name} → defaults filled, nested too", c37),
        c(
            38,
            "defaults with greeting and options {} → nested default filled",
            c38,
        ),
        c(
            39,
            "unknown schema keyword → input schema failed to compile",
            c39,
        ),
        c(
            40,
            "throws → handler-throw with cause {name,message,stack}",
            c40,
        ),
        c(41, "context → the full ctx, as sent", c41),
        c(42, "context with projectId only → no orgId", c42),
        c(43, "context with CTX only → no idempotencyKey", c43),
        c(44, "process-env never lists KINDGI_PACK_SERVICE_TOKEN", c44),
        c(45, "noisy → {ok:true}; its line goes to stdout", c45),
        c(46, "a secret in ctx.secrets never appears on stderr", c46),
        c(53, "min-length {minLength:2} on hello → passed", c53),
        c(
            54,
            "min-length {minLength:3} on a and on \"  a  \" (trimmed) → passed:false too short",
            c54,
        ),
        c(
            55,
            "min-length {minLength:-1} → config failed validation",
            c55,
        ),
        c(56, "min-length {minLength:\"three\"} → type issue", c56),
        c(57, "min-length {} → the check's own default", c57),
        c(58, "unknown check → check-not-in-pack", c58),
        c(59, "check throws → handler-throw with checkId only", c59),
        c(60, "trace with extra fields → check-result", c60),
    ]
}

const ECHO: &str = "conformance.echo";
const MIN_LENGTH: &str = "conformance.checks.min-length";

fn echo(message: &str) -> Value {
    invoke(ECHO, json!({"message": message}))
}

/// An error message with `code` and `message`, and no `toolId`/`checkId`.
fn parse_error(m: &Value, code: &str, message: Option<&str>) -> Result<(), String> {
    ensure(m["code"] == code, || {
        format!("expected code {code:?}, got {m}")
    })?;
    if let Some(text) = message {
        ensure(m["message"] == text, || {
            format!("expected message {text:?}, got {}", m["message"])
        })?;
    }
    ensure(
        m.get("toolId").is_none() && m.get("checkId").is_none(),
        || format!("a parse-level error carries no toolId/checkId, got {m}"),
    )
}

async fn malformed(
    k: &mut Kit,
    body: &[u8],
    code: &str,
    message: Option<&str>,
) -> Result<(), String> {
    let r = k
        .call(
            Call::post("/v1/invoke")
                .auth()
                .raw(Some("application/json"), body.to_vec()),
        )
        .await?;
    let m = r.message()?;
    parse_error(&m, code, message)
        .map_err(|e| format!("body {}: {e}", String::from_utf8_lossy(body)))
}

case!(c01, |k| {
    let r = k.call(Call::get("/healthz")).await?;
    r.expect(200, &json!({"status": "ok"}))?
        .expect_json_content_type()?;
    Ok(())
});

case!(c02, |k| {
    k.call(Call::get("/readyz"))
        .await?
        .expect(200, &json!({"status": "ready"}))?;
    Ok(())
});

case!(c03, |k| {
    let r = k.call(Call::get("/v1/info").auth()).await?;
    r.expect_status(200)?.expect_json_content_type()?;
    let info = r.json()?;
    check_info_shape(&info)?;
    ensure(info["packId"] == "conformance", || {
        format!("packId: {}", info["packId"])
    })?;
    ensure(info["artifactVersion"] == "20261001.7", || {
        format!("artifactVersion: {}", info["artifactVersion"])
    })?;
    let tools = info["tools"].as_array().cloned().unwrap_or_default();
    ensure(
        tools.contains(&json!({"id": ECHO, "version": "1.0.0"})),
        || {
            format!(
                "tools lack {{id:conformance.echo, version:1.0.0}}: {}",
                info["tools"]
            )
        },
    )?;
    let mut checks: Vec<String> = info["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c.as_str().map(str::to_owned))
        .collect();
    checks.sort();
    ensure(checks == [MIN_LENGTH, "conformance.checks.throws"], || {
        format!("checks: {}", info["checks"])
    })?;
    ensure(info["missingEnv"] == json!([]), || {
        format!("missingEnv: expected [], got {}", info["missingEnv"])
    })
});

case!(c04, |k| {
    k.call(Call::get("/v1/info"))
        .await?
        .expect(401, &json!({"error": "Bad pack token"}))?;
    Ok(())
});

case!(c05, |k| {
    k.call(Call::get("/v1/info").token("wrong"))
        .await?
        .expect(401, &json!({"error": "Bad pack token"}))?;
    let longer = format!("{}x", k.base().await?.process.token);
    k.call(Call::get("/v1/info").token(longer))
        .await?
        .expect(401, &json!({"error": "Bad pack token"}))?;
    Ok(())
});

case!(c06, |k| {
    k.call(Call::post("/v1/invoke").json(&echo("hi")))
        .await?
        .expect(401, &json!({"error": "Bad pack token"}))?;
    Ok(())
});

case!(c07, |k| {
    k.call(Call::get("/v1/nope").auth())
        .await?
        .expect(404, &json!({"error": "No route /v1/nope"}))?;
    Ok(())
});

case!(c08, |k| {
    k.call(Call::get("/v1/invoke").auth())
        .await?
        .expect(405, &json!({"error": "Use POST"}))?;
    k.call(Call::post("/healthz"))
        .await?
        .expect(405, &json!({"error": "Use GET"}))?;
    k.call(Call::post("/v1/info"))
        .await?
        .expect(405, &json!({"error": "Use GET"}))
        .map_err(|e| format!("POST /v1/info without token: {e}"))?;
    Ok(())
});

case!(c09, |k| {
    k.call(Call::get("/v1/info?x=1").auth())
        .await?
        .expect_status(200)?;
    k.call(Call::get("/v1/info/").auth())
        .await?
        .expect_status(404)?;
    Ok(())
});

case!(c10, |k| {
    let body = echo("hi").to_string();
    let want = json!({"error": "Content-Type must be application/json"});
    k.call(
        Call::post("/v1/invoke")
            .auth()
            .raw(Some("text/plain"), body.clone()),
    )
    .await?
    .expect(415, &want)?;
    k.call(Call::post("/v1/invoke").auth().raw(None, body))
        .await?
        .expect(415, &want)
        .map_err(|e| format!("no content-type: {e}"))?;
    Ok(())
});

case!(c11, |k| {
    let r = k
        .call(Call::post("/v1/invoke").auth().raw(
            Some("application/json; charset=utf-8"),
            echo("hi").to_string(),
        ))
        .await?;
    let out = r.result()?;
    ensure(out == json!({"message": "hi"}), || format!("output {out}"))
});

case!(c12, |k| {
    let big = "a".repeat(10 * 1024 * 1024);
    let body = echo(&big).to_string();
    k.call(
        Call::post("/v1/invoke")
            .auth()
            .json(&serde_json::from_str(&body).map_err(|e| e.to_string())?),
    )
    .await?
    .expect(413, &json!({"error": "Request body too large"}))?;
    Ok(())
});

case!(c13, |k| {
    let limit = 10 * 1024 * 1024;
    let empty = echo("").to_string().len();
    let body = echo(&"a".repeat(limit - empty)).to_string();
    ensure(body.len() == limit, || {
        format!("kit bug: body is {} bytes", body.len())
    })?;
    let r = k
        .call(
            Call::post("/v1/invoke")
                .auth()
                .raw(Some("application/json"), body),
        )
        .await?;
    ensure(r.status != 413, || {
        "a body of exactly 10 MiB was refused with 413".to_owned()
    })?;
    r.result()?;
    Ok(())
});

case!(c14, |k| {
    let r = k.invoke(&echo("hi")).await?;
    r.expect_status(200)?.expect_json_content_type()?;
    let want = r#"{"v":2,"kind":"result","output":{"message":"hi"}}"#;
    ensure(r.text == want, || {
        format!("expected exactly {want}, got {}", r.text)
    })?;
    let d = r
        .header("kindgi-duration-ms")
        .ok_or("kindgi-duration-ms is missing")?;
    ensure(d.parse::<u64>().is_ok(), || {
        format!("kindgi-duration-ms {d:?} is not an integer ≥ 0")
    })?;
    r.expect_header("kindgi-artifact-version", "20261001.7")?;
    Ok(())
});

case!(c15, |k| {
    let mut m = echo("hi");
    m["tool"]["version"] = json!("1.0.0");
    let out = k.invoke(&m).await?.result()?;
    ensure(out == json!({"message": "hi"}), || format!("output {out}"))
});

case!(c16, |k| {
    let mut m = echo("hi");
    m["tool"]["version"] = json!("9.9.9");
    let e = k.invoke(&m).await?.error("tool-version-mismatch")?;
    ensure(e["toolId"] == ECHO, || format!("toolId: {e}"))
});

case!(c17, |k| {
    let index = k.shipped("extras")?;
    let mut svc = k
        .start(&Launch {
            index: Some(index),
            ..Launch::default()
        })
        .await?;
    let result = async {
        for version in ["1.0.0", "2.0.0"] {
            let mut m = invoke("conformance.versioned", json!({}));
            m["tool"]["version"] = json!(version);
            let out = k
                .call_on(&svc, Call::post("/v1/invoke").auth().json(&m))
                .await?
                .result()?;
            ensure(out == json!({"version": version}), || {
                format!("version {version} ran {out}")
            })?;
        }
        let e = k
            .call_on(
                &svc,
                Call::post("/v1/invoke")
                    .auth()
                    .json(&invoke("conformance.versioned", json!({}))),
            )
            .await?
            .error("tool-version-mismatch")?;
        ensure(
            e["message"]
                .as_str()
                .is_some_and(|m| m.contains("1.0.0, 2.0.0")),
            || format!("message lacks `1.0.0, 2.0.0`: {e}"),
        )?;
        let info = k
            .call_on(&svc, Call::get("/v1/info").auth())
            .await?
            .json()?;
        let tools = info["tools"].as_array().cloned().unwrap_or_default();
        for v in ["1.0.0", "2.0.0"] {
            ensure(
                tools.contains(&json!({"id": "conformance.versioned", "version": v})),
                || {
                    format!(
                        "info.tools lacks conformance.versioned {v}: {}",
                        info["tools"]
                    )
                },
            )?;
        }
        Ok(())
    }
    .await;
    svc.process.stop(std::time::Duration::from_secs(10)).await;
    result
});

case!(c18, |k| {
    let e = k
        .invoke(&invoke("conformance.nope", json!({})))
        .await?
        .error("tool-not-in-pack")?;
    ensure(e["toolId"] == "conformance.nope", || format!("toolId: {e}"))?;
    ensure(
        e["message"] == "This pack has no tool \"conformance.nope\"",
        || format!("message: {}", e["message"]),
    )
});

case!(c19, |k| {
    malformed(
        k,
        b"not json",
        "malformed-message",
        Some("Request body is not valid JSON"),
    )
    .await
});

case!(c20, |k| {
    for body in [&b"[1]"[..], b"null", b"\"x\""] {
        malformed(
            k,
            body,
            "malformed-message",
            Some("Message must be a JSON object"),
        )
        .await?;
    }
    Ok(())
});

case!(c21, |k| {
    let mut m = echo("hi");
    m["v"] = json!(1);
    malformed(
        k,
        m.to_string().as_bytes(),
        "unknown-protocol-version",
        Some("Expected protocol v2, got 1"),
    )
    .await?;
    for v in [json!("2"), json!(true)] {
        m["v"] = v;
        malformed(
            k,
            m.to_string().as_bytes(),
            "unknown-protocol-version",
            None,
        )
        .await?;
    }
    Ok(())
});

case!(c22, |k| {
    let body = r#"{"v":2.0,"kind":"invoke","tool":{"id":"conformance.echo"},"input":{"message":"hi"},"ctx":{"tenantId":"t-conformance","runId":"run-conformance"}}"#;
    let r = k
        .call(
            Call::post("/v1/invoke")
                .auth()
                .raw(Some("application/json"), body),
        )
        .await?;
    let out = r.result()?;
    ensure(out == json!({"message": "hi"}), || format!("output {out}"))
});

case!(c23, |k| {
    let mut m = echo("hi");
    m["kind"] = json!("bogus");
    malformed(
        k,
        m.to_string().as_bytes(),
        "unexpected-message-kind",
        Some("Unknown request kind \"bogus\""),
    )
    .await?;
    m["kind"] = json!("result");
    malformed(k, m.to_string().as_bytes(), "unexpected-message-kind", None).await
});

case!(c24, |k| {
    for tool in [Some(json!({})), Some(json!({"id": ""})), None] {
        let mut m = echo("hi");
        match tool {
            Some(t) => m["tool"] = t,
            None => {
                m.as_object_mut().map(|o| o.remove("tool"));
            }
        }
        malformed(
            k,
            m.to_string().as_bytes(),
            "malformed-message",
            Some("`tool.id` is required"),
        )
        .await?;
    }
    Ok(())
});

case!(c25, |k| {
    let mut m = echo("hi");
    m["tool"] = json!({"id": ECHO, "version": 7});
    malformed(
        k,
        m.to_string().as_bytes(),
        "malformed-message",
        Some("`tool.version` must be a string"),
    )
    .await
});

case!(c26, |k| {
    for c in [
        Some(json!({"tenantId": "t"})),
        None,
        Some(json!({"tenantId": 1, "runId": "r"})),
    ] {
        let mut m = echo("hi");
        match c {
            Some(c) => m["ctx"] = c,
            None => {
                m.as_object_mut().map(|o| o.remove("ctx"));
            }
        }
        malformed(
            k,
            m.to_string().as_bytes(),
            "malformed-message",
            Some("`ctx` needs string `tenantId` and `runId`"),
        )
        .await?;
    }
    Ok(())
});

case!(c27, |k| {
    let mut m = check_invoke(MIN_LENGTH, json!({}), "hello");
    m["check"] = json!({});
    malformed(
        k,
        m.to_string().as_bytes(),
        "malformed-message",
        Some("`check.id` is required"),
    )
    .await
});

case!(c28, |k| {
    for config in [json!(1), json!([]), Value::Null] {
        let mut m = check_invoke(MIN_LENGTH, json!({}), "hello");
        m["config"] = config;
        malformed(
            k,
            m.to_string().as_bytes(),
            "malformed-message",
            Some("`config` must be an object"),
        )
        .await?;
    }
    Ok(())
});

case!(c29, |k| {
    let mut m = echo("hi");
    m["extra"] = json!({"any": true});
    m["ctx"]["projectId"] = json!("project-1");
    m["ctx"]["orgId"] = json!("org-1");
    m["ctx"]["settings"] = json!({"acme.weights": {"recency": 0.7}});
    m["ctx"]["idempotencyKey"] = json!("0d6f4c1a-9a43-5b1e-8f1d-2b7e6c3d9a10");
    m["ctx"]["foo"] = json!("bar");
    // Kindgi's pause extension (docs/pauses.md): a service that does not know it must still
    // answer (a runtime sends `wait` only to a tool declaring `pauses`, but an older
    // service must not be broken by one).
    m["ctx"]["wait"] = json!({"token": "wt_conformance", "link": "http://127.0.0.1:9/v1/waits/wt_conformance",
        "expiresAt": "2026-10-02T12:00:00.000Z", "timeoutMs": 86_400_000});
    let out = k.invoke(&m).await?.result()?;
    ensure(out == json!({"message": "hi"}), || format!("output {out}"))
});

async fn echo_invalid(k: &mut Kit, input: Value) -> Result<Value, String> {
    let e = k
        .invoke(&invoke(ECHO, input))
        .await?
        .error("input-validation-failed")?;
    ensure(e["toolId"] == ECHO, || format!("toolId: {e}"))?;
    Ok(e)
}

case!(c30, |k| {
    let e = echo_invalid(k, json!({})).await?;
    ensure(
        e["message"] == "Tool \"conformance.echo\" input failed validation",
        || format!("message: {}", e["message"]),
    )?;
    find_issue(
        &e,
        &json!({"instancePath": "", "keyword": "required", "params": {"missingProperty": "message"},
        "message": "must have required property 'message'"}),
    )?;
    Ok(())
});

case!(c31, |k| {
    let e = echo_invalid(k, json!({"message": "hi", "extra": 1})).await?;
    find_issue(
        &e,
        &json!({"instancePath": "", "keyword": "additionalProperties", "params": {"additionalProperty": "extra"}}),
    )?;
    Ok(())
});

case!(c32, |k| {
    let e = echo_invalid(k, json!({"message": 7})).await?;
    find_issue(
        &e,
        &json!({"instancePath": "/message", "keyword": "type", "params": {"type": "string"}, "message": "must be string"}),
    )?;
    Ok(())
});

case!(c33, |k| {
    let e = echo_invalid(k, json!({"message": ""})).await?;
    find_issue(
        &e,
        &json!({"instancePath": "/message", "keyword": "minLength", "params": {"limit": 1},
        "message": "must NOT have fewer than 1 characters"}),
    )?;
    Ok(())
});

case!(c34, |k| {
    let e = echo_invalid(k, json!({"message": 7, "a": 1, "b": 2})).await?;
    let n = e["issues"].as_array().map_or(0, Vec::len);
    ensure(n == 3, || {
        format!("expected 3 issues (all errors), got {n}: {}", e["issues"])
    })
});

case!(c35, |k| {
    let e = echo_invalid(k, json!("x")).await?;
    find_issue(
        &e,
        &json!({"instancePath": "", "keyword": "type", "message": "must be object"}),
    )?;
    Ok(())
});

case!(c36, |k| {
    let e = k
        .invoke(&invoke("conformance.bad-output", json!({})))
        .await?
        .error("output-validation-failed")?;
    ensure(e["toolId"] == "conformance.bad-output", || {
        format!("toolId: {e}")
    })?;
    find_issue(&e, &json!({"instancePath": "/message", "keyword": "type"}))?;
    Ok(())
});

case!(c37, |k| {
    let out = k
        .invoke(&invoke("conformance.defaults", json!({"name": "Ada"})))
        .await?
        .result()?;
    let want = json!({"name": "Ada", "greeting": "Hello", "options": {"loud": false}});
    ensure(out == want, || format!("expected {want}, got {out}"))
});

case!(c38, |k| {
    let out = k
        .invoke(&invoke(
            "conformance.defaults",
            json!({"name": "Ada", "greeting": "Hi", "options": {}}),
        ))
        .await?
        .result()?;
    let want = json!({"name": "Ada", "greeting": "Hi", "options": {"loud": false}});
    ensure(out == want, || format!("expected {want}, got {out}"))
});

case!(c39, |k| {
    let index = k.shipped("extras")?;
    let mut svc = k
        .start(&Launch {
            index: Some(index),
            ..Launch::default()
        })
        .await?;
    let result = async {
        for _ in 0..2 {
            let r = k
                .call_on(
                    &svc,
                    Call::post("/v1/invoke")
                        .auth()
                        .json(&invoke("conformance.bad-schema", json!({}))),
                )
                .await?;
            let e = r.error("input-validation-failed")?;
            ensure(
                e["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("input schema failed to compile")),
                || format!("message lacks `input schema failed to compile`: {e}"),
            )?;
        }
        Ok(())
    }
    .await;
    svc.process.stop(std::time::Duration::from_secs(10)).await;
    result
});

case!(c40, |k| {
    let e = k
        .invoke(&invoke("conformance.throws", json!({})))
        .await?
        .error("handler-throw")?;
    ensure(e["toolId"] == "conformance.throws", || {
        format!("toolId: {e}")
    })?;
    ensure(
        e["message"].as_str().is_some_and(|m| m.contains("boom")),
        || format!("message lacks boom: {e}"),
    )?;
    let cause = &e["cause"];
    ensure(
        cause["message"]
            .as_str()
            .is_some_and(|m| m.contains("boom")),
        || format!("cause.message lacks boom: {e}"),
    )?;
    ensure(
        cause.get("name").is_some() && cause.get("stack").is_some(),
        || format!("cause lacks name/stack: {cause}"),
    )
});

case!(c41, |k| {
    let full = json!({"tenantId": "t-conformance", "runId": "run-conformance", "requestId": "req-1",
        "idempotencyKey": "0d6f4c1a-9a43-5b1e-8f1d-2b7e6c3d9a10", "projectId": "project-1", "orgId": "org-1",
        "env": {"REGION": "eu"}, "secrets": {"API_KEY": "s3cret"}, "config": {"mode": "fast"},
        "settings": {"acme.weights": {"recency": 0.7}}});
    let mut m = invoke("conformance.context", json!({}));
    m["ctx"] = full.clone();
    let out = k.invoke(&m).await?.result()?;
    ensure(out == full, || format!("expected {full}, got {out}"))
});

case!(c42, |k| {
    let mut m = invoke("conformance.context", json!({}));
    m["ctx"]["projectId"] = json!("project-1");
    let out = k.invoke(&m).await?.result()?;
    ensure(out["projectId"] == "project-1", || {
        format!("no projectId: {out}")
    })?;
    ensure(out.get("orgId").is_none(), || {
        format!("orgId present: {out}")
    })
});

case!(c43, |k| {
    let out = k
        .invoke(&invoke("conformance.context", json!({})))
        .await?
        .result()?;
    ensure(
        out["tenantId"] == "t-conformance" && out["runId"] == "run-conformance",
        || format!("ids: {out}"),
    )?;
    ensure(out.get("idempotencyKey").is_none(), || {
        format!("idempotencyKey present: {out}")
    })
});

case!(c44, |k| {
    let out = k
        .invoke(&invoke("conformance.process-env", json!({})))
        .await?
        .result()?;
    let names = out["names"]
        .as_array()
        .ok_or_else(|| format!("no names: {out}"))?;
    ensure(!names.is_empty(), || "names is empty".to_owned())?;
    ensure(!names.contains(&json!("KINDGI_PACK_SERVICE_TOKEN")), || {
        "names lists KINDGI_PACK_SERVICE_TOKEN".to_owned()
    })
});

case!(c45, |k| {
    let r = k.invoke(&invoke("conformance.noisy", json!({}))).await?;
    let m = r.message()?;
    let want = json!({"v": 2, "kind": "result", "output": {"ok": true}});
    ensure(m == want, || format!("expected {want}, got {m}"))?;
    let svc = k.base().await?;
    svc.process
        .stdout
        .wait_for(std::time::Duration::from_secs(3), |l| {
            l.contains("noisy: a line on stdout")
        })
        .await
        .ok_or_else(|| "`noisy: a line on stdout` never appeared on stdout".to_owned())?;
    Ok(())
});

case!(c46, |k| {
    let secret = format!("s3cret-{:016x}", rand::random::<u64>());
    let run = format!("run-secret-{:08x}", rand::random::<u32>());
    let mut m = invoke("conformance.context", json!({}));
    m["ctx"] = json!({"tenantId": "t-conformance", "runId": run, "secrets": {"API_KEY": secret}});
    k.invoke(&m).await?.result()?;
    let mut m = echo("hi");
    m["ctx"] = json!({"tenantId": "t-conformance", "runId": run, "secrets": {"API_KEY": secret}});
    k.invoke(&m).await?.result()?;
    let svc = k.base().await?;
    // Wait until the calls were logged, so the check looks at the lines that could leak.
    let logged = svc
        .process
        .stderr
        .wait_record(std::time::Duration::from_secs(3), |r| {
            super::service::event_of(r) == Some("call")
                && r["runId"] == run.as_str()
                && r["id"] == ECHO
        })
        .await;
    ensure(logged.is_some(), || {
        format!("no call record for runId {run}")
    })?;
    let leaked = svc
        .process
        .stderr
        .snapshot()
        .into_iter()
        .find(|l| l.contains(&secret));
    ensure(leaked.is_none(), || {
        format!(
            "the secret appears on stderr: {}",
            leaked.unwrap_or_default()
        )
    })
});

async fn check_call(k: &mut Kit, m: &Value) -> Result<Value, String> {
    k.invoke(m).await?.message()
}

case!(c53, |k| {
    let m = check_call(
        k,
        &check_invoke(MIN_LENGTH, json!({"minLength": 2}), "hello"),
    )
    .await?;
    let want = json!({"v": 2, "kind": "check-result", "result": {"passed": true}});
    ensure(m == want, || format!("expected {want}, got {m}"))
});

case!(c54, |k| {
    // The output is counted trimmed: "  a  " is one character, as in the official fixture.
    for output in ["a", "  a  "] {
        let m = check_call(
            k,
            &check_invoke(MIN_LENGTH, json!({"minLength": 3}), output),
        )
        .await?;
        ensure(
            m["kind"] == "check-result"
                && m["result"]["passed"] == false
                && m["result"]["reason"] == "too short",
            || {
                format!(
                    "output {output:?}: expected result {{passed:false, reason:\"too short\"}}, got {m}"
                )
            },
        )?;
    }
    Ok(())
});

case!(c55, |k| {
    let e = k
        .invoke(&check_invoke(MIN_LENGTH, json!({"minLength": -1}), "hello"))
        .await?
        .error("input-validation-failed")?;
    ensure(e["checkId"] == MIN_LENGTH, || format!("checkId: {e}"))?;
    let want = "Check \"conformance.checks.min-length\" config failed validation at /minLength: must be >= 0";
    ensure(e["message"] == want, || {
        format!("expected message {want:?}, got {}", e["message"])
    })?;
    find_issue(
        &e,
        &json!({"instancePath": "/minLength", "keyword": "minimum"}),
    )?;
    Ok(())
});

case!(c56, |k| {
    let e = k
        .invoke(&check_invoke(
            MIN_LENGTH,
            json!({"minLength": "three"}),
            "hello",
        ))
        .await?
        .error("input-validation-failed")?;
    find_issue(
        &e,
        &json!({"instancePath": "/minLength", "keyword": "type"}),
    )?;
    Ok(())
});

case!(c57, |k| {
    let m = check_call(k, &check_invoke(MIN_LENGTH, json!({}), "hello")).await?;
    ensure(
        m["kind"] == "check-result" && m["result"]["passed"] == true,
        || format!("expected passed:true, got {m}"),
    )?;
    let m = check_call(k, &check_invoke(MIN_LENGTH, json!({}), "")).await?;
    ensure(
        m["kind"] == "check-result" && m["result"]["passed"] == false,
        || format!("the default minLength 1 should fail an empty output, got {m}"),
    )
});

case!(c58, |k| {
    let e = k
        .invoke(&check_invoke("conformance.checks.nope", json!({}), "hello"))
        .await?
        .error("check-not-in-pack")?;
    ensure(e["checkId"] == "conformance.checks.nope", || {
        format!("checkId: {e}")
    })
});

case!(c59, |k| {
    let e = k
        .invoke(&check_invoke(
            "conformance.checks.throws",
            json!({}),
            "hello",
        ))
        .await?
        .error("handler-throw")?;
    ensure(e["checkId"] == "conformance.checks.throws", || {
        format!("checkId: {e}")
    })?;
    ensure(
        e["message"]
            .as_str()
            .is_some_and(|m| m.contains("check boom")),
        || format!("message lacks `check boom`: {e}"),
    )?;
    ensure(e.get("toolId").is_none(), || {
        format!("a check error has no toolId: {e}")
    })
});

case!(c60, |k| {
    let mut m = check_invoke(MIN_LENGTH, json!({"minLength": 2}), "hello");
    m["trace"]["projectId"] = json!("project-1");
    m["trace"]["orgId"] = json!("org-1");
    m["trace"]["settings"] = json!({"acme.weights": {"recency": 0.7}});
    let m = check_call(k, &m).await?;
    ensure(
        m["kind"] == "check-result" && m["result"]["passed"] == true,
        || format!("expected passed:true, got {m}"),
    )
});
