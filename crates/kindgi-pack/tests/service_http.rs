//! The pack service over real loopback HTTP: routes and their precedence, auth, results,
//! the parse rules, validation, checks, version resolution, tenant pinning.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod service_common;

use serde_json::{Value, json};
use service_common::{Svc, TOKEN, call, check, index_file, pack};

async fn get(
    svc: &Svc,
    path: &str,
    token: Option<&str>,
) -> (u16, Value, reqwest::header::HeaderMap) {
    let mut req = svc.http.get(format!("{}{path}", svc.base));
    if let Some(t) = token {
        req = req.header("kindgi-pack-token", t);
    }
    let res = req.send().await.unwrap();
    let status = res.status().as_u16();
    let headers = res.headers().clone();
    (status, res.json().await.unwrap_or(Value::Null), headers)
}

#[tokio::test]
async fn health_ready_and_info() {
    let svc = Svc::start().await;
    let (s, body, h) = get(&svc, "/healthz", None).await;
    assert_eq!((s, body), (200, json!({"status": "ok"})));
    assert_eq!(h["content-type"], "application/json; charset=utf-8");
    assert!(h.get("retry-after").is_none());
    assert_eq!(
        get(&svc, "/readyz", None).await.1,
        json!({"status": "ready"})
    );
    let (s, info, _) = get(&svc, "/v1/info", Some(TOKEN)).await;
    assert_eq!(s, 200);
    assert_eq!(info["protocol"], 2);
    assert_eq!(info["packId"], "test");
    assert_eq!(info["artifactVersion"], "20261001.7");
    assert_eq!(info["missingEnv"], json!([]));
    assert!(info["indexHash"].as_str().unwrap().starts_with("sha256:"));
    assert!(
        info["tools"]
            .as_array()
            .unwrap()
            .contains(&json!({"id": "test.echo", "version": "1.0.0"}))
    );
    assert_eq!(
        info["checks"],
        json!(["test.checks.min-length", "test.waits"])
    );
    assert_eq!(get(&svc, "/v1/info?x=1", Some(TOKEN)).await.0, 200);
    assert_eq!(get(&svc, "/v1/info/", Some(TOKEN)).await.0, 404);
}

#[tokio::test]
async fn precedence_404_405_401_415() {
    let svc = Svc::start().await;
    assert_eq!(
        get(&svc, "/v1/nope", None).await,
        (
            404,
            json!({"error": "No route /v1/nope"}),
            get(&svc, "/v1/nope", None).await.2
        )
    );
    let (s, body, _) = get(&svc, "/v1/invoke", Some(TOKEN)).await;
    assert_eq!((s, body), (405, json!({"error": "Use POST"})));
    let res = svc
        .http
        .post(format!("{}/healthz", svc.base))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 405);
    assert_eq!(
        res.json::<Value>().await.unwrap(),
        json!({"error": "Use GET"})
    );
    // Method before auth.
    let res = svc
        .http
        .post(format!("{}/v1/info", svc.base))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 405);
    let res = svc
        .http
        .head(format!("{}/healthz", svc.base))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 405);
    for token in [
        None,
        Some("wrong"),
        Some("test-token-0123456789x"),
        Some(""),
    ] {
        let (s, body, _) = get(&svc, "/v1/info", token).await;
        assert_eq!(
            (s, body),
            (401, json!({"error": "Bad pack token"})),
            "{token:?}"
        );
    }
    let res = svc
        .http
        .post(format!("{}/v1/invoke", svc.base))
        .header("content-type", "application/json")
        .body(call("test.echo", json!({"message": "hi"})).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    for ct in [Some("text/plain"), None, Some("APPLICATION/JSON")] {
        let mut req = svc
            .http
            .post(format!("{}/v1/invoke", svc.base))
            .header("kindgi-pack-token", TOKEN);
        if let Some(ct) = ct {
            req = req.header("content-type", ct);
        }
        let res = req
            .body(call("test.echo", json!({"message": "hi"})).to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 415, "{ct:?}");
        assert_eq!(
            res.json::<Value>().await.unwrap(),
            json!({"error": "Content-Type must be application/json"})
        );
    }
    let res = svc
        .invoke_with(
            &call("test.echo", json!({"message": "hi"})),
            &[("content-type", "application/json; charset=utf-8")],
        )
        .await;
    assert_eq!(res.status(), 200);
}

#[tokio::test]
async fn results_and_headers() {
    let svc = Svc::start().await;
    let res = svc
        .invoke_with(&call("test.echo", json!({"message": "hi"})), &[])
        .await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["kindgi-artifact-version"], "20261001.7");
    let ms: u64 = res.headers()["kindgi-duration-ms"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(ms < 5_000);
    assert_eq!(
        res.text().await.unwrap(),
        r#"{"v":2,"kind":"result","output":{"message":"hi"}}"#
    );
    let mut body = call("test.echo", json!({"message": "hi"}));
    body["tool"]["version"] = json!("1.0.0");
    assert_eq!(svc.invoke(&body).await["kind"], "result");
    body["tool"]["version"] = json!("9.9.9");
    let out = svc.invoke(&body).await;
    assert_eq!(out["code"], "tool-version-mismatch");
    assert_eq!(out["toolId"], "test.echo");
    assert_eq!(
        out["message"],
        "Tool \"test.echo\" is 1.0.0 in this pack; the caller asked for 9.9.9"
    );
    let out = svc.invoke(&call("test.nope", json!({}))).await;
    assert_eq!(
        out,
        json!({"v":2,"kind":"error","code":"tool-not-in-pack","message":"This pack has no tool \"test.nope\"","toolId":"test.nope"})
    );
}

#[tokio::test]
async fn two_versions_of_one_tool() {
    let pack = pack(true);
    let file = index_file(&pack, |_| {});
    let svc = Svc::start_with(pack, file, |_| {}).await;
    let mut body = call("test.echo", json!({"message": "hi"}));
    body["tool"]["version"] = json!("2.0.0");
    assert_eq!(
        svc.invoke(&body).await["output"],
        json!({"message": "hi", "version": "2.0.0"})
    );
    body["tool"]["version"] = json!("1.0.0");
    assert_eq!(svc.invoke(&body).await["output"], json!({"message": "hi"}));
    let out = svc
        .invoke(&call("test.echo", json!({"message": "hi"})))
        .await;
    assert_eq!(out["code"], "tool-version-mismatch");
    assert!(
        out["message"].as_str().unwrap().contains("1.0.0, 2.0.0"),
        "{out}"
    );
    let (_, info, _) = get(&svc, "/v1/info", Some(TOKEN)).await;
    let tools = info["tools"].as_array().unwrap();
    assert!(tools.contains(&json!({"id":"test.echo","version":"1.0.0"})));
    assert!(tools.contains(&json!({"id":"test.echo","version":"2.0.0"})));
}

async fn raw_invoke(svc: &Svc, body: &str) -> Value {
    let res = svc
        .http
        .post(format!("{}/v1/invoke", svc.base))
        .header("kindgi-pack-token", TOKEN)
        .header("content-type", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200, "{body}");
    res.json().await.unwrap()
}

#[tokio::test]
async fn malformed_requests_are_200_messages_without_ids() {
    let svc = Svc::start().await;
    let ctx = r#""ctx":{"tenantId":"t","runId":"r"}"#;
    let cases: Vec<(String, &str, &str)> = vec![
        (
            "not json".into(),
            "malformed-message",
            "Request body is not valid JSON",
        ),
        (
            "[1]".into(),
            "malformed-message",
            "Message must be a JSON object",
        ),
        (
            "null".into(),
            "malformed-message",
            "Message must be a JSON object",
        ),
        (
            "\"x\"".into(),
            "malformed-message",
            "Message must be a JSON object",
        ),
        (
            format!(
                r#"{{"v":1,"kind":"invoke","tool":{{"id":"test.echo"}},"input":{{"message":"hi"}},{ctx}}}"#
            ),
            "unknown-protocol-version",
            "Expected protocol v2, got 1",
        ),
        (
            format!(r#"{{"v":"2","kind":"invoke","tool":{{"id":"test.echo"}},{ctx}}}"#),
            "unknown-protocol-version",
            "Expected protocol v2, got \"2\"",
        ),
        (
            format!(r#"{{"v":true,"kind":"invoke",{ctx}}}"#),
            "unknown-protocol-version",
            "Expected protocol v2, got true",
        ),
        (
            r#"{"v":2,"kind":"bogus"}"#.into(),
            "unexpected-message-kind",
            "Unknown request kind \"bogus\"",
        ),
        (
            r#"{"v":2,"kind":"result","output":{}}"#.into(),
            "unexpected-message-kind",
            "Unknown request kind \"result\"",
        ),
        (
            format!(r#"{{"v":2,"kind":"invoke","tool":{{}},{ctx}}}"#),
            "malformed-message",
            "`tool.id` is required",
        ),
        (
            format!(r#"{{"v":2,"kind":"invoke","tool":{{"id":""}},{ctx}}}"#),
            "malformed-message",
            "`tool.id` is required",
        ),
        (
            format!(r#"{{"v":2,"kind":"invoke",{ctx}}}"#),
            "malformed-message",
            "`tool.id` is required",
        ),
        (
            format!(r#"{{"v":2,"kind":"invoke","tool":{{"id":"test.echo","version":7}},{ctx}}}"#),
            "malformed-message",
            "`tool.version` must be a string",
        ),
        (
            r#"{"v":2,"kind":"invoke","tool":{"id":"test.echo"},"ctx":{"tenantId":"t"}}"#.into(),
            "malformed-message",
            "`ctx` needs string `tenantId` and `runId`",
        ),
        (
            r#"{"v":2,"kind":"invoke","tool":{"id":"test.echo"}}"#.into(),
            "malformed-message",
            "`ctx` needs string `tenantId` and `runId`",
        ),
        (
            r#"{"v":2,"kind":"invoke","tool":{"id":"test.echo"},"ctx":{"tenantId":1,"runId":"r"}}"#
                .into(),
            "malformed-message",
            "`ctx` needs string `tenantId` and `runId`",
        ),
        (
            r#"{"v":2,"kind":"check-invoke","check":{},"config":{}}"#.into(),
            "malformed-message",
            "`check.id` is required",
        ),
        (
            r#"{"v":2,"kind":"check-invoke","check":{"id":"c"},"config":1}"#.into(),
            "malformed-message",
            "`config` must be an object",
        ),
        (
            r#"{"v":2,"kind":"check-invoke","check":{"id":"c"},"config":[]}"#.into(),
            "malformed-message",
            "`config` must be an object",
        ),
        (
            r#"{"v":2,"kind":"check-invoke","check":{"id":"c"},"config":null}"#.into(),
            "malformed-message",
            "`config` must be an object",
        ),
    ];
    for (body, code, message) in cases {
        let out = raw_invoke(&svc, &body).await;
        assert_eq!(
            out,
            json!({"v": 2, "kind": "error", "code": code, "message": message}),
            "{body}"
        );
    }
    // 2.0 is 2; unknown fields anywhere are tolerated.
    let body = r#"{"v":2.0,"kind":"invoke","tool":{"id":"test.echo"},"input":{"message":"hi"},"extra":1,
        "ctx":{"tenantId":"t","runId":"r","projectId":"p","orgId":"o","settings":{"a":{}},"idempotencyKey":"0d6f4c1a-9a43-5b1e-8f1d-2b7e6c3d9a10","foo":1}}"#;
    assert_eq!(
        raw_invoke(&svc, body).await["output"],
        json!({"message": "hi"})
    );
}

#[tokio::test]
async fn validation_defaults_and_handler_failures() {
    let svc = Svc::start().await;
    let out = svc.invoke(&call("test.echo", json!({}))).await;
    assert_eq!(out["code"], "input-validation-failed");
    assert_eq!(out["message"], "Tool \"test.echo\" input failed validation");
    assert_eq!(out["toolId"], "test.echo");
    let issue = &out["issues"][0];
    assert_eq!(issue["keyword"], "required");
    assert_eq!(issue["params"], json!({"missingProperty": "message"}));
    assert_eq!(issue["message"], "must have required property 'message'");
    let out = svc
        .invoke(&call("test.echo", json!({"message": 7, "a": 1, "b": 2})))
        .await;
    assert_eq!(out["issues"].as_array().unwrap().len(), 3, "{out}");
    let out = svc.invoke(&call("test.echo", json!("x"))).await;
    assert_eq!(out["issues"][0]["message"], "must be object");

    let out = svc.invoke(&call("test.bad-output", json!({}))).await;
    assert_eq!(out["code"], "output-validation-failed");
    assert_eq!(out["issues"][0]["instancePath"], "/message");

    let out = svc
        .invoke(&call("test.defaults", json!({"name": "Ada"})))
        .await;
    assert_eq!(
        out["output"],
        json!({"name": "Ada", "greeting": "Hello", "options": {"loud": false}})
    );
    let out = svc
        .invoke(&call(
            "test.defaults",
            json!({"name": "Ada", "greeting": "Hi", "options": {}}),
        ))
        .await;
    assert_eq!(
        out["output"],
        json!({"name": "Ada", "greeting": "Hi", "options": {"loud": false}})
    );

    let out = svc.invoke(&call("test.throws", json!({}))).await;
    assert_eq!(out["code"], "handler-throw");
    assert_eq!(
        out["message"],
        "Handler for tool \"test.throws\" threw: Error: boom"
    );
    assert_eq!(out["cause"]["name"], "Error");
    assert_eq!(out["cause"]["message"], "boom");
    assert!(out["cause"]["stack"].is_string());

    // A panicking handler is a throw, and the service keeps serving.
    let out = svc.invoke(&call("test.panics", json!({}))).await;
    assert_eq!(out["code"], "handler-throw");
    assert!(out["message"].as_str().unwrap().contains("kaboom"));
    assert_eq!(
        svc.invoke(&call("test.echo", json!({"message": "still here"})))
            .await["kind"],
        "result"
    );
}

#[tokio::test]
async fn uncompilable_schema_answers_per_call() {
    let pack = pack(false);
    let file = index_file(&pack, |index| {
        for t in index["tools"].as_array_mut().unwrap() {
            if t["id"] == "test.echo" {
                t["input"] = json!({"type": "object", "frobnicate": true});
            }
        }
    });
    let svc = Svc::start_with(pack, file, |_| {}).await;
    for _ in 0..2 {
        let out = svc
            .invoke(&call("test.echo", json!({"message": "hi"})))
            .await;
        assert_eq!(out["code"], "input-validation-failed");
        assert!(
            out["message"]
                .as_str()
                .unwrap()
                .contains("input schema failed to compile"),
            "{out}"
        );
    }
}

#[tokio::test]
async fn context_reaches_the_handler() {
    let svc = Svc::start().await;
    let ctx = json!({"tenantId":"t-1","runId":"run-1","requestId":"req-1","idempotencyKey":"0d6f4c1a-9a43-5b1e-8f1d-2b7e6c3d9a10",
        "projectId":"project-1","orgId":"org-1","env":{"REGION":"eu"},"secrets":{"API_KEY":"s3cret"},"config":{"mode":"fast"},
        "settings":{"acme.weights":{"recency":0.7}},"future":true});
    let body = json!({"v":2,"kind":"invoke","tool":{"id":"test.context"},"input":{},"ctx":ctx});
    let out = svc.invoke(&body).await;
    assert_eq!(out["output"]["raw"], ctx);
    assert_eq!(out["output"]["tenant"], "t-1");
    assert_eq!(out["output"]["run"], "run-1");
    assert_eq!(out["output"]["env"], json!({"REGION": "eu"}));
    // The secret is never logged.
    assert!(!svc.logs.text().contains("s3cret"));
}

#[tokio::test]
async fn checks() {
    let svc = Svc::start().await;
    assert_eq!(
        serde_json::to_string(
            &svc.invoke(&check(
                "test.checks.min-length",
                json!({"minLength": 2}),
                "hello"
            ))
            .await
        )
        .unwrap(),
        r#"{"v":2,"kind":"check-result","result":{"passed":true}}"#
    );
    let out = svc
        .invoke(&check(
            "test.checks.min-length",
            json!({"minLength": 3}),
            "a",
        ))
        .await;
    assert_eq!(
        out["result"],
        json!({"passed": false, "reason": "too short"})
    );
    let out = svc
        .invoke(&check(
            "test.checks.min-length",
            json!({"minLength": -1}),
            "a",
        ))
        .await;
    assert_eq!(out["code"], "input-validation-failed");
    assert_eq!(out["checkId"], "test.checks.min-length");
    assert_eq!(
        out["message"],
        "Check \"test.checks.min-length\" config failed validation at /minLength: must be >= 0"
    );
    assert_eq!(out["issues"][0]["keyword"], "minimum");
    let out = svc
        .invoke(&check(
            "test.checks.min-length",
            json!({"minLength": "three"}),
            "a",
        ))
        .await;
    assert_eq!(out["issues"][0]["keyword"], "type");
    let out = svc
        .invoke(&check("test.checks.min-length", json!({}), "a"))
        .await;
    assert_eq!(out["result"]["passed"], true);
    let out = svc.invoke(&check("test.checks.nope", json!({}), "a")).await;
    assert_eq!(
        out,
        json!({"v":2,"kind":"error","code":"check-not-in-pack","message":"This pack has no check \"test.checks.nope\"","checkId":"test.checks.nope"})
    );
}

#[tokio::test]
async fn tenant_pinned_service_refuses_other_tenants() {
    let pack = pack(false);
    let file = index_file(&pack, |_| {});
    let svc = Svc::start_with(pack, file, |o| o.tenant = Some("t-1".into())).await;
    let (s, body, _) = get(&svc, "/v1/info", Some(TOKEN)).await;
    assert_eq!(s, 421);
    assert_eq!(body["code"], "pack-tenant-mismatch");
    let res = svc
        .invoke_with(
            &call("test.echo", json!({"message": "hi"})),
            &[("kindgi-tenant-id", "t-1")],
        )
        .await;
    assert_eq!(res.status(), 200);
    let mut other = call("test.echo", json!({"message": "hi"}));
    other["ctx"]["tenantId"] = json!("t-2");
    let res = svc
        .invoke_with(&other, &[("kindgi-tenant-id", "t-1")])
        .await;
    assert_eq!(res.status(), 421);
    let res = svc
        .invoke_with(
            &call("test.echo", json!({"message": "hi"})),
            &[("kindgi-tenant-id", "t-2")],
        )
        .await;
    assert_eq!(res.status(), 421);
    // Health needs no tenant.
    assert_eq!(get(&svc, "/healthz", None).await.0, 200);
}

#[tokio::test]
async fn missing_env_strict_and_warn() {
    let pack = pack(false);
    let file = index_file(&pack, |_| {});
    let svc = Svc::start_with(pack.clone(), file.clone(), |o| {
        o.missing_env = vec!["A".into(), "B".into()]
    })
    .await;
    let (s, body, h) = get(&svc, "/readyz", None).await;
    assert_eq!(
        (s, body),
        (
            503,
            json!({"error": "missing env", "missingEnv": ["A", "B"]})
        )
    );
    assert_eq!(h["retry-after"], "1");
    let res = svc
        .invoke_with(&call("test.echo", json!({"message": "hi"})), &[])
        .await;
    assert_eq!(res.status(), 503);
    assert_eq!(res.headers()["retry-after"], "1");
    assert_eq!(get(&svc, "/healthz", None).await.0, 200);
    assert_eq!(
        get(&svc, "/v1/info", Some(TOKEN)).await.1["missingEnv"],
        json!(["A", "B"])
    );

    let svc = Svc::start_with(pack, file, |o| {
        o.missing_env = vec!["B".into()];
        o.env_check = kindgi_pack::service::EnvCheck::Warn;
    })
    .await;
    assert_eq!(get(&svc, "/readyz", None).await.0, 200);
    assert_eq!(
        svc.invoke(&call("test.echo", json!({"message": "hi"})))
            .await["kind"],
        "result"
    );
    assert_eq!(
        get(&svc, "/v1/info", Some(TOKEN)).await.1["missingEnv"],
        json!(["B"])
    );
}

#[tokio::test]
async fn boot_refuses_missing_modules_and_handlers() {
    let pack = pack(false);
    let file = index_file(&pack, |index| {
        index["tools"].as_array_mut().unwrap().push(json!({"id":"test.ghost","input":{},"output":{},"modulePath":"tools/does-not-exist.rs"}));
    });
    let logs = service_common::Sink::default();
    let logger = std::sync::Arc::new(kindgi_pack::log::Logger::to_writer(
        Default::default(),
        Box::new(logs),
    ));
    let err = kindgi_pack::service::start(
        &file,
        &pack.registry(),
        kindgi_pack::service::ServiceOptions::loopback(TOKEN),
        logger.clone(),
    )
    .await
    .unwrap_err();
    let kindgi_pack::service::StartError::Boot { problems } = err else {
        panic!("boot error expected")
    };
    assert_eq!(problems, ["Missing module: tools/does-not-exist.rs"]);

    let file = index_file(&pack, |index| {
        index["tools"]
            .as_array_mut()
            .unwrap()
            .push(json!({"id":"test.ghost","input":{},"output":{},"modulePath":"t/echo.rs"}));
    });
    let err = kindgi_pack::service::start(
        &file,
        &pack.registry(),
        kindgi_pack::service::ServiceOptions::loopback(TOKEN),
        logger,
    )
    .await
    .unwrap_err();
    let kindgi_pack::service::StartError::Boot { problems } = err else {
        panic!("boot error expected")
    };
    assert!(problems[0].starts_with("test.ghost: "), "{problems:?}");
}
