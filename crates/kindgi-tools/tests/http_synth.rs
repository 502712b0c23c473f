//! The HTTP spec synthesizer against a real HTTP server on loopback (tool.md §8 and §14).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod http_support;

use http_support::*;
use kindgi_tools::{HandlerError, ToolContext};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn get_spec(url: String) -> Value {
    json!({"kind": "http", "method": "GET", "urlTemplate": url})
}

#[tokio::test]
async fn url_values_are_percent_encoded_like_encode_uri_component() {
    let s = start().await;
    let h = handler(
        "github.get-issue",
        get_spec(format!(
            "{}/repos/{{owner}}/{{repo}}/issues/{{number}}",
            s.base()
        )),
    );
    let out = call(
        &h,
        json!({"owner": "anthropics", "repo": "claude code", "number": 42}),
    )
    .await
    .unwrap();
    assert_eq!(out["uri"], "/repos/anthropics/claude%20code/issues/42");
    assert_eq!(out["method"], "GET");
    assert_eq!(out["body"], "", "a GET without requestBody sends no body");
    assert!(out["headers"].get("content-type").is_none());

    let h = handler(
        "t.items",
        get_spec(format!("{}/items/{{id}}?q={{q}}&flag={{f}}", s.base())),
    );
    let out = call(&h, json!({"id": "a/b?c", "q": "x&y=z é", "f": true}))
        .await
        .unwrap();
    assert_eq!(
        out["uri"],
        "/items/a%2Fb%3Fc?q=x%26y%3Dz%20%C3%A9&flag=true"
    );
}

#[tokio::test]
async fn missing_and_non_scalar_url_params_are_clear_errors_and_send_nothing() {
    let s = start().await;
    let h = handler(
        "t.missing",
        get_spec(format!("{}/{{missing}}/{{repo}}", s.base())),
    );
    assert_eq!(
        failed(call(&h, json!({"repo": "x"})).await),
        "http-tool \"t.missing\" urlTemplate references \"{missing}\" but input has no such key"
    );
    let h = handler("t.nested", get_spec(format!("{}/{{owner}}", s.base())));
    assert_eq!(
        failed(call(&h, json!({"owner": {"nested": "thing"}})).await),
        "http-tool \"t.nested\" urlTemplate key \"{owner}\" must be a primitive; got object"
    );
    assert!(
        failed(call(&h, json!({"owner": null})).await).contains("must be a primitive; got object")
    );
    assert!(
        failed(call(&h, json!({"owner": [1]})).await).contains("must be a primitive; got object")
    );
    assert_eq!(
        failed(call(&h, json!("just a string")).await),
        "http-tool \"t.nested\" requires an object input for URL substitution; got string"
    );
    assert_eq!(s.hits(), 0);
}

#[tokio::test]
async fn placeholders_in_the_host_are_refused_at_definition() {
    for t in [
        "https://{host}/x",
        "https://api.{domain}/x",
        "https://api.example.com:{port}/x",
        "https://{user}@api.example.com/x",
    ] {
        let err = synthesize(&manifest("acme.lookup", get_spec(t.to_owned()), json!({})))
            .err()
            .unwrap();
        assert_eq!(
            err,
            "Tool \"acme.lookup\" spec.urlTemplate fills {placeholders} in its path and query only, never in its host or port"
        );
    }
    for t in ["{scheme}://api.example.com/x", "ftp://api.example.com/x"] {
        let err = synthesize(&manifest("acme.lookup", get_spec(t.to_owned()), json!({})))
            .err()
            .unwrap();
        assert!(
            err.ends_with("must start with http:// or https:// and a host"),
            "{err}"
        );
    }
    let err = synthesize(&manifest(
        "acme.lookup",
        get_spec("https:///x".into()),
        json!({}),
    ))
    .err()
    .unwrap();
    assert!(err.ends_with("must name a host"), "{err}");
    for t in [
        "https://api.example.com/{id}?q={q}",
        "http://localhost:8080/{id}",
        "HTTPS://API.EXAMPLE.COM/{id}",
    ] {
        assert!(
            synthesize(&manifest("acme.lookup", get_spec(t.to_owned()), json!({}))).is_ok(),
            "{t}"
        );
    }
}

#[tokio::test]
async fn a_multibyte_character_at_the_scheme_boundary_is_an_error_not_a_panic() {
    // "é" straddles byte 8 (the length of "https://"): slicing there used to panic.
    for t in ["http:/xé/y", "http:/é", "httpé://h/x", "ééééé"] {
        let err = synthesize(&manifest("acme.lookup", get_spec(t.to_owned()), json!({})))
            .err()
            .unwrap();
        assert!(
            err.ends_with("must start with http:// or https:// and a host"),
            "{t}: {err}"
        );
    }
    assert!(
        synthesize(&manifest(
            "acme.lookup",
            get_spec("https://é.example/{id}".into()),
            json!({})
        ))
        .is_ok()
    );
}

#[tokio::test]
async fn bearer_and_header_auth_resolve_the_secret_ref_on_each_call() {
    let s = start().await;
    let mut spec = get_spec(format!("{}/x", s.base()));
    spec["authorization"] =
        json!({"kind": "bearer", "secretRef": {"envName": "production", "name": "github-token"}});
    let h = synthesize(&manifest("t.bearer", spec, json!({}))).unwrap();
    let secrets = Arc::new(Secrets {
        value: "gh-token-xyz".into(),
        ..Default::default()
    });
    let mut ctx = ToolContext::for_test();
    ctx.secrets = Some(secrets.clone());
    let out = h(json!({}), ctx.clone()).await.unwrap();
    assert_eq!(out["headers"]["authorization"], "Bearer gh-token-xyz");
    h(json!({}), ctx).await.unwrap();
    assert_eq!(
        *secrets.calls.lock().unwrap(),
        vec![("production".to_owned(), "github-token".to_owned()); 2]
    );

    let mut spec = get_spec(format!("{}/x", s.base()));
    spec["headers"] = json!([{"name": "X-API-Key", "value": "static"}]);
    spec["authorization"] = json!({"kind": "header", "headerName": "X-API-Key", "secretRef": {"envName": "e", "name": "k"}});
    let h = synthesize(&manifest("t.header", spec, json!({}))).unwrap();
    let mut ctx = ToolContext::for_test();
    ctx.secrets = Some(Arc::new(Secrets {
        value: "sk-abc".into(),
        ..Default::default()
    }));
    let out = h(json!({}), ctx).await.unwrap();
    assert_eq!(
        out["headers"]["x-api-key"], "sk-abc",
        "auth overrides the static header"
    );
    assert!(out["headers"].get("authorization").is_none());
}

#[tokio::test]
async fn auth_without_a_resolver_or_with_a_failing_one_sends_nothing() {
    let s = start().await;
    let mut spec = get_spec(format!("{}/x", s.base()));
    spec["authorization"] = json!({"kind": "bearer", "secretRef": {"envName": "e", "name": "tok"}});
    let h = synthesize(&manifest("t.unwired", spec, json!({}))).unwrap();
    let err = failed(call(&h, json!({})).await);
    assert!(err.starts_with("http-tool \"t.unwired\" declares authorization but ToolContext.resolveSecret is not wired."), "{err}");
    let mut ctx = ToolContext::for_test();
    ctx.secrets = Some(Arc::new(Secrets::default()));
    let err = failed(h(json!({}), ctx).await);
    assert_eq!(
        err,
        "http-tool \"t.unwired\" could not resolve secret \"tok\" in env \"e\": no secret \"tok\" here"
    );
    assert_eq!(s.hits(), 0);
}

#[tokio::test]
async fn no_authorization_never_touches_the_resolver() {
    let s = start().await;
    let h = handler("t.plain", get_spec(format!("{}/x", s.base())));
    let secrets = Arc::new(Secrets {
        value: "v".into(),
        ..Default::default()
    });
    let mut ctx = ToolContext::for_test();
    ctx.secrets = Some(secrets.clone());
    h(json!({}), ctx).await.unwrap();
    assert!(secrets.calls.lock().unwrap().is_empty());
}

#[tokio::test]
async fn connection_auth_sends_the_connections_access_token() {
    let s = start().await;
    let mut spec = get_spec(format!("{}/x", s.base()));
    spec["authorization"] = json!({"kind": "connection", "connection": "mail"});
    let needs = json!({"needsSpec": {"connections": {"mail": {"app": "google", "permissions": ["gmail.send"], "as": "person"}}}});
    let h = synthesize(&manifest("t.conn", spec.clone(), needs)).unwrap();
    let mut ctx = ToolContext::for_test();
    ctx.connections = Some(Arc::new(BTreeMap::from([(
        "mail".to_owned(),
        "ya29.token".to_owned(),
    )])));
    let out = h(json!({}), ctx).await.unwrap();
    assert_eq!(out["headers"]["authorization"], "Bearer ya29.token");

    let err = failed(call(&h, json!({})).await);
    assert!(
        err.contains("connection \"mail\", but the tool context carries no access token"),
        "{err}"
    );

    let err = synthesize(&manifest("t.conn", spec, json!({})))
        .err()
        .unwrap();
    assert!(
        err.contains("which needsSpec.connections doesn't declare"),
        "{err}"
    );
}

#[tokio::test]
async fn bodies_json_input_passthrough_text_and_empty() {
    let s = start().await;
    let post = |url: String, body: Option<Value>| {
        let mut spec = json!({"kind": "http", "method": "POST", "urlTemplate": url});
        if let Some(b) = body {
            spec["requestBody"] = b;
        }
        spec
    };
    let h = handler(
        "t.post",
        post(
            format!("{}/repos/{{owner}}/{{repo}}/issues", s.base()),
            None,
        ),
    );
    let out = call(
        &h,
        json!({"owner": "a", "repo": "b", "title": "hi", "body": "first!"}),
    )
    .await
    .unwrap();
    assert_eq!(out["method"], "POST");
    assert_eq!(out["headers"]["content-type"], "application/json");
    assert_eq!(out["body"], r#"{"title":"hi","body":"first!"}"#);

    let h = handler(
        "t.pass",
        post(
            format!("{}/{{owner}}/{{repo}}", s.base()),
            Some(json!({"kind": "input-passthrough"})),
        ),
    );
    let out = call(&h, json!({"owner": "a", "repo": "b"})).await.unwrap();
    assert_eq!(out["body"], r#"{"owner":"a","repo":"b"}"#);
    assert_eq!(out["headers"]["content-type"], "application/json");

    let h = handler("t.empty", post(format!("{}/{{id}}", s.base()), None));
    let out = call(&h, json!({"id": "1"})).await.unwrap();
    assert_eq!(out["body"], "");
    assert!(
        out["headers"].get("content-type").is_none(),
        "an empty remainder adds no Content-Type"
    );

    let h = handler(
        "t.text",
        post(
            format!("{}/t", s.base()),
            Some(json!({"kind": "text", "template": "case {case_id} by {who}"})),
        ),
    );
    let out = call(&h, json!({"case_id": "a b"})).await.unwrap();
    assert_eq!(out["body"], "case a b by {who}");
    assert_eq!(out["headers"]["content-type"], "text/plain");

    // DELETE without requestBody still sends the unconsumed keys as JSON (as the reference does).
    let h = handler(
        "t.del",
        json!({"kind": "http", "method": "DELETE", "urlTemplate": format!("{}/d/{{id}}", s.base())}),
    );
    let out = call(&h, json!({"id": "9", "reason": "dup"})).await.unwrap();
    assert_eq!(out["method"], "DELETE");
    assert_eq!(out["body"], r#"{"reason":"dup"}"#);

    // An explicit Content-Type header wins over the default.
    let mut spec = post(format!("{}/ct", s.base()), None);
    spec["headers"] = json!([{"name": "Content-Type", "value": "application/vnd.api+json"}]);
    let out = call(&handler("t.ct", spec), json!({"a": 1})).await.unwrap();
    assert_eq!(out["headers"]["content-type"], "application/vnd.api+json");
}

#[tokio::test]
async fn a_get_with_a_request_body_is_a_handler_error() {
    let s = start().await;
    let mut spec = get_spec(format!("{}/x", s.base()));
    spec["requestBody"] = json!({"kind": "json-input"});
    let err = failed(call(&handler("t.getbody", spec), json!({"a": 1})).await);
    assert!(err.contains("requestBody on a GET request"), "{err}");
    assert_eq!(s.hits(), 0);
}

#[tokio::test]
async fn header_templates_are_raw_and_keep_missing_keys() {
    let s = start().await;
    let mut spec = get_spec(format!("{}/h", s.base()));
    spec["headers"] = json!([
        {"name": "X-Trace-Id", "value": "{requestId}"},
        {"name": "X-Dup", "value": "first"},
        {"name": "X-Dup", "value": "second {n}"}
    ]);
    let h = handler("t.headers", spec);
    let out = call(&h, json!({"requestId": "r 1", "n": 3})).await.unwrap();
    assert_eq!(out["headers"]["x-trace-id"], "r 1");
    assert_eq!(out["headers"]["x-dup"], "second 3");
    let out = call(&h, json!({})).await.unwrap();
    assert_eq!(out["headers"]["x-trace-id"], "{requestId}");

    let err = failed(call(&h, json!({"requestId": "a\r\nInjected: yes"})).await);
    assert!(
        err.contains("header \"X-Trace-Id\" has a value that is not a valid HTTP header value"),
        "{err}"
    );
}

#[tokio::test]
async fn responses_json_text_empty_and_invalid() {
    let s = start().await;
    let out = call(
        &handler("t.json", get_spec(format!("{}/json", s.base()))),
        json!({}),
    )
    .await
    .unwrap();
    assert_eq!(out, json!({"number": 42, "title": "ok", "extra": true}));

    let mut spec = get_spec(format!("{}/text", s.base()));
    spec["parseJson"] = json!(false);
    assert_eq!(
        call(&handler("t.text", spec), json!({})).await.unwrap(),
        json!("plain text body")
    );

    let out = call(
        &handler("t.empty", get_spec(format!("{}/empty", s.base()))),
        json!({}),
    )
    .await
    .unwrap();
    assert_eq!(out, Value::Null);

    let err = failed(
        call(
            &handler("t.bad", get_spec(format!("{}/notjson", s.base()))),
            json!({}),
        )
        .await,
    );
    assert!(
        err.starts_with("http-tool \"t.bad\" response was not valid JSON: "),
        "{err}"
    );
}

#[tokio::test]
async fn status_outside_the_success_range_quotes_the_body() {
    let s = start().await;
    let h = handler(
        "github.get-issue",
        get_spec(format!("{}/status/429", s.base())),
    );
    assert_eq!(
        failed(call(&h, json!({})).await),
        "http-tool \"github.get-issue\" got status 429 Too Many Requests — rate limit exceeded"
    );
    let h = handler("t.500", get_spec(format!("{}/status/500", s.base())));
    assert!(
        failed(call(&h, json!({})).await)
            .contains("got status 500 Internal Server Error — rate limit exceeded")
    );

    // 302 without Location is a plain response: inside 200..399 it succeeds.
    let mut spec = get_spec(format!("{}/found-json", s.base()));
    spec["successStatus"] = json!({"min": 200, "max": 399});
    assert_eq!(
        call(&handler("t.302", spec), json!({})).await.unwrap(),
        json!({"moved": false})
    );
    let err = failed(
        call(
            &handler("t.302d", get_spec(format!("{}/found-json", s.base()))),
            json!({}),
        )
        .await,
    );
    assert!(err.contains("got status 302 Found"), "{err}");

    // A narrowed range refuses a 200.
    let mut spec = get_spec(format!("{}/json", s.base()));
    spec["successStatus"] = json!({"min": 201, "max": 201});
    assert!(failed(call(&handler("t.201", spec), json!({})).await).contains("got status 200 OK"));

    let mut spec = get_spec(format!("{}/json", s.base()));
    spec["successStatus"] = json!({"min": 300, "max": 200});
    assert!(
        synthesize(&manifest("t.range", spec, json!({})))
            .err()
            .unwrap()
            .contains("min 300 above max 200")
    );
}

#[tokio::test]
async fn the_timeout_covers_headers_and_a_stalled_body() {
    let s = start().await;
    for path in ["stall-headers", "stall-body"] {
        let mut spec = get_spec(format!("{}/{path}", s.base()));
        spec["timeoutMs"] = json!(150);
        let started = Instant::now();
        let err = failed(call(&handler("t.slow", spec), json!({})).await);
        assert_eq!(err, "http-tool \"t.slow\" timed out after 150ms", "{path}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{path} took {:?}",
            started.elapsed()
        );
    }
}

#[tokio::test]
async fn cancellation_before_and_during_the_call() {
    let s = start().await;
    let h = handler("t.cancel", get_spec(format!("{}/stall-headers", s.base())));
    let ctx = ToolContext::for_test();
    ctx.signal.cancel();
    assert_eq!(
        h(json!({}), ctx).await,
        Err(HandlerError::Failed("aborted".into()))
    );
    assert_eq!(s.hits(), 0, "a pre-aborted call makes no request");

    let ctx = ToolContext::for_test();
    let signal = ctx.signal.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        signal.cancel();
    });
    let started = Instant::now();
    assert_eq!(
        h(json!({}), ctx).await,
        Err(HandlerError::Failed("aborted".into()))
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn network_policy_none_refuses_every_request() {
    let s = start().await;
    let m = manifest(
        "t.none",
        get_spec(format!("{}/x", s.base())),
        json!({"network": {"kind": "none"}}),
    );
    let err = failed(call(&synthesize(&m).unwrap(), json!({})).await);
    assert_eq!(
        err,
        "http-tool \"t.none\" may not reach host \"127.0.0.1\": its network policy is \"none\" (no egress)"
    );
    assert_eq!(s.hits(), 0);
}

#[tokio::test]
async fn allowlist_is_checked_on_the_request_and_every_redirect() {
    let s = start().await;
    let allow = |hosts: Value| json!({"network": {"kind": "allowlist", "hosts": hosts}});

    // Not listed: refused before any request.
    let m = manifest(
        "t.allow",
        get_spec(format!("{}/x", s.base())),
        allow(json!(["api.example.com"])),
    );
    let err = failed(call(&synthesize(&m).unwrap(), json!({})).await);
    assert!(err.contains("may not reach host \"127.0.0.1\": it is not in the tool's network allowlist (api.example.com)"), "{err}");
    assert_eq!(s.hits(), 0);

    // A redirect out of the allowlist (127.0.0.1 → localhost) is refused at the hop.
    let target = format!("{}/landed", s.base_localhost());
    let url = format!("{}/redirect?to={}", s.base(), urlencode(&target));
    let m = manifest(
        "t.allow",
        get_spec(url.clone()),
        allow(json!(["127.0.0.1"])),
    );
    let err = failed(call(&synthesize(&m).unwrap(), json!({})).await);
    assert!(err.contains("was redirected to http://localhost:"), "{err}");
    assert!(
        err.contains("not in the tool's network allowlist (127.0.0.1)"),
        "{err}"
    );
    assert_eq!(s.hits(), 1, "the refused hop is never requested");

    // Both hosts listed: the redirect is followed (and the auth header dropped across origins).
    let mut spec = get_spec(url);
    spec["authorization"] = json!({"kind": "bearer", "secretRef": {"envName": "e", "name": "n"}});
    let m = manifest("t.allow", spec, allow(json!(["127.0.0.1", "localhost"])));
    let mut ctx = ToolContext::for_test();
    ctx.secrets = Some(Arc::new(Secrets {
        value: "tok".into(),
        ..Default::default()
    }));
    let out = synthesize(&m).unwrap()(json!({}), ctx).await.unwrap();
    assert_eq!(out["uri"], "/landed");
    assert!(
        out["headers"].get("authorization").is_none(),
        "auth must not follow a cross-origin redirect"
    );
}

#[tokio::test]
async fn redirects_keep_auth_on_same_origin_and_rewrite_methods_like_fetch() {
    let s = start().await;
    let hop =
        |code: u16, to: &str| format!("{}/redirect?code={code}&to={}", s.base(), urlencode(to));

    let mut spec = get_spec(hop(301, "/same"));
    spec["authorization"] = json!({"kind": "bearer", "secretRef": {"envName": "e", "name": "n"}});
    let mut ctx = ToolContext::for_test();
    ctx.secrets = Some(Arc::new(Secrets {
        value: "tok".into(),
        ..Default::default()
    }));
    let out = handler("t.same", spec)(json!({}), ctx).await.unwrap();
    assert_eq!(out["uri"], "/same");
    assert_eq!(out["headers"]["authorization"], "Bearer tok");

    let post = |url: String| json!({"kind": "http", "method": "POST", "urlTemplate": url});
    let out = call(&handler("t.303", post(hop(303, "/after"))), json!({"a": 1}))
        .await
        .unwrap();
    assert_eq!(
        (out["method"].as_str(), out["body"].as_str()),
        (Some("GET"), Some(""))
    );
    let out = call(&handler("t.307", post(hop(307, "/after"))), json!({"a": 1}))
        .await
        .unwrap();
    assert_eq!(
        (out["method"].as_str(), out["body"].as_str()),
        (Some("POST"), Some(r#"{"a":1}"#))
    );

    let err = failed(
        call(
            &handler("t.loop", get_spec(format!("{}/loop", s.base()))),
            json!({}),
        )
        .await,
    );
    assert_eq!(err, "http-tool \"t.loop\" followed more than 20 redirects");
}

#[tokio::test]
async fn oversized_responses_are_refused() {
    let s = start().await;
    let m = manifest(
        "t.big",
        get_spec(format!("{}/big?n=5000", s.base())),
        json!({}),
    );
    let spec = m.spec.clone().unwrap();
    let small = kindgi_tools::http::HttpSynthesizer::new().with_max_response_bytes(4096);
    use kindgi_tools::synth::SpecSynthesizer;
    let err =
        failed(small.synthesize(&m, &spec).unwrap()(json!({}), ToolContext::for_test()).await);
    assert_eq!(
        err,
        "http-tool \"t.big\" response body is larger than the 4096 byte limit"
    );

    let m = manifest(
        "t.big",
        get_spec(format!("{}/big?n=50000&chunked=1", s.base())),
        json!({}),
    );
    let spec = m.spec.clone().unwrap();
    let err =
        failed(small.synthesize(&m, &spec).unwrap()(json!({}), ToolContext::for_test()).await);
    assert!(err.contains("larger than the 4096 byte limit"), "{err}");

    let out = small
        .with_max_response_bytes(100_000)
        .synthesize(&m, &spec)
        .unwrap()(json!({}), ToolContext::for_test())
    .await
    .unwrap();
    assert_eq!(out.as_str().map(str::len), Some(49_998));
}

#[tokio::test]
async fn connection_refused_is_a_clear_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let err = failed(
        call(
            &handler("t.down", get_spec(format!("http://127.0.0.1:{port}/x"))),
            json!({}),
        )
        .await,
    );
    assert!(
        err.starts_with(&format!(
            "http-tool \"t.down\" request to http://127.0.0.1:{port}/x failed: "
        )),
        "{err}"
    );
}

#[tokio::test]
async fn invoke_wraps_handler_failures_and_the_builtin_registry_has_http() {
    let s = start().await;
    let registry = kindgi_tools::synth::SynthesizerRegistry::empty();
    kindgi_tools::http::register_builtin(&registry);
    let synth = registry.get("http").expect("http registered");
    let m = manifest(
        "github.get-issue",
        get_spec(format!("{}/status/429", s.base())),
        json!({}),
    );
    let h = synth.synthesize(&m, m.spec.as_ref().unwrap()).unwrap();
    let tool = kindgi_tools::Tool::from_parts(m, h);
    let err = kindgi_tools::invoke(&tool, &json!({}), ToolContext::for_test())
        .await
        .unwrap_err();
    assert_eq!(err.code.as_str(), "handler-error");
    assert_eq!(
        err.message,
        "Tool \"github.get-issue\" handler threw: http-tool \"github.get-issue\" got status 429 Too Many Requests — rate limit exceeded"
    );
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

#[tokio::test]
async fn an_http_spec_that_does_not_parse_says_why() {
    let m = manifest(
        "t.bad",
        json!({"kind": "http", "method": "FETCH", "urlTemplate": "https://x.example/"}),
        json!({}),
    );
    let err = synthesize(&m).err().unwrap();
    assert!(
        err.starts_with("Tool \"t.bad\" spec is not a valid http spec: "),
        "{err}"
    );
    assert!(err.contains("FETCH"), "{err}");
}
