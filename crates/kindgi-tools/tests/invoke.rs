//! Invocation rules (tool.md §7, §14 "invokeTool"), run against tools defined through the
//! public API and the real schema engine.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_spec::{Transport, TypedNeeds};
use kindgi_tools::{
    HandlerError, InvokeErrorCode, InvokeOptions, Tool, ToolContext, tool_idempotency_key,
};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn obj(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn echo_tool() -> Tool {
    Tool::define("test.echo")
        .description("Echo the input as output")
        .version("1.0.0")
        .input(json!({"type":"object","properties":{"msg":{"type":"string"}},"required":["msg"]}))
        .output(json!({
            "type":"object",
            "properties":{"msg":{"type":"string"},"length":{"type":"integer","minimum":0}},
            "required":["msg","length"]
        }))
        .handler(|input: Value, _ctx| async move {
            let msg = input["msg"].as_str().unwrap_or_default().to_owned();
            Ok(json!({"length": msg.chars().count(), "msg": msg}))
        })
        .build()
        .unwrap()
}

/// A raw-JSON tool with the given schemas and handler.
fn raw_tool<F, Fut>(id: &str, input: Value, output: Value, handler: F) -> Tool
where
    F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Value, HandlerError>> + Send + 'static,
{
    Tool::define(id)
        .description("a test tool")
        .version("1.0.0")
        .input(input)
        .output(output)
        .handler(handler)
        .build()
        .unwrap()
}

/// What the handler saw as `ctx.env` (outer `None`: the handler did not run).
type SeenEnv = Arc<Mutex<Option<Option<BTreeMap<String, String>>>>>;

fn env_tool(env: Value, seen: SeenEnv) -> Tool {
    Tool::define("acme.env")
        .description("reports its env")
        .version("1.0.0")
        .input(json!({"type":"object","properties":{"n":{"type":"integer"}}}))
        .output(json!({"type":"object"}))
        .needs_spec(TypedNeeds {
            env: Some(obj(env)),
            ..Default::default()
        })
        .handler(move |_input: Value, ctx: ToolContext| {
            let seen = seen.clone();
            async move {
                *seen.lock().unwrap() = Some(ctx.env.as_deref().cloned());
                Ok(json!({}))
            }
        })
        .build()
        .unwrap()
}

fn ctx_with_env(pairs: &[(&str, &str)]) -> ToolContext {
    ToolContext::for_test().with_env(
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    )
}

#[tokio::test]
async fn echo_returns_the_handler_output() {
    let out = echo_tool()
        .invoke(&json!({"msg":"hi"}), ToolContext::for_test())
        .await
        .unwrap();
    assert_eq!(out, json!({"msg":"hi","length":2}));
}

#[tokio::test]
async fn wrong_input_type_is_input_validation_failed() {
    let err = echo_tool()
        .invoke(&json!({"msg":42}), ToolContext::for_test())
        .await
        .unwrap_err();
    assert_eq!(err.code, InvokeErrorCode::InputValidationFailed);
    assert_eq!(err.tool_id, "test.echo");
    let issue = err.errors.iter().find(|i| i.keyword() == "type").unwrap();
    assert_eq!(issue.instance_path(), "/msg");
    assert_eq!(issue.params()["type"], "string");
    assert_eq!(issue.message(), "must be string");
}

#[tokio::test]
async fn missing_required_is_input_validation_failed_and_handler_not_called() {
    let called = Arc::new(Mutex::new(false));
    let flag = called.clone();
    let tool = raw_tool(
        "test.echo",
        json!({"type":"object","properties":{"msg":{"type":"string"}},"required":["msg"]}),
        json!({"type":"object"}),
        move |_i, _c| {
            let flag = flag.clone();
            async move {
                *flag.lock().unwrap() = true;
                Ok(json!({}))
            }
        },
    );
    let err = tool
        .invoke(&json!({}), ToolContext::for_test())
        .await
        .unwrap_err();
    assert_eq!(err.code, InvokeErrorCode::InputValidationFailed);
    assert_eq!(
        err.message,
        "Input for tool \"test.echo\" failed validation"
    );
    let issue = err
        .errors
        .iter()
        .find(|i| i.keyword() == "required")
        .unwrap();
    assert_eq!(issue.instance_path(), "");
    assert_eq!(issue.params()["missingProperty"], "msg");
    assert_eq!(issue.message(), "must have required property 'msg'");
    assert!(
        !*called.lock().unwrap(),
        "the handler must not run on invalid input"
    );
}

#[tokio::test]
async fn closed_schema_refuses_extra_properties() {
    let tool = raw_tool(
        "test.closed",
        json!({"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}),
        json!({"type":"object"}),
        |_i, _c| async { Ok(json!({})) },
    );
    let err = tool
        .invoke(&json!({"a":"x","extra":1}), ToolContext::for_test())
        .await
        .unwrap_err();
    assert_eq!(err.code, InvokeErrorCode::InputValidationFailed);
    let issue = &err.errors[0];
    assert_eq!(issue.keyword(), "additionalProperties");
    assert_eq!(issue.params()["additionalProperty"], "extra");
}

fn wrong_output_tool() -> Tool {
    raw_tool(
        "test.wrong-output",
        json!({"type":"object"}),
        json!({"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}),
        |_i, _c| async { Ok(json!({"x":"not-an-int"})) },
    )
}

#[tokio::test]
async fn off_schema_output_is_output_validation_failed() {
    let err = wrong_output_tool()
        .invoke(&json!({}), ToolContext::for_test())
        .await
        .unwrap_err();
    assert_eq!(err.code, InvokeErrorCode::OutputValidationFailed);
    assert_eq!(
        err.message,
        "Tool \"test.wrong-output\" handler produced output that failed validation"
    );
    assert!(!err.errors.is_empty());
}

#[tokio::test]
async fn skipping_output_validation_returns_the_output() {
    let out = wrong_output_tool()
        .invoke_with(
            &json!({}),
            ToolContext::for_test(),
            InvokeOptions::skip_output_validation(),
        )
        .await
        .unwrap();
    assert_eq!(out, json!({"x":"not-an-int"}));
}

#[tokio::test]
async fn handler_failure_is_handler_error() {
    let tool = raw_tool(
        "test.boom",
        json!({"type":"object"}),
        json!({"type":"object"}),
        |_i, _c| async { Err(HandlerError::msg("kaboom")) },
    );
    let err = tool
        .invoke(&json!({}), ToolContext::for_test())
        .await
        .unwrap_err();
    assert_eq!(err.code, InvokeErrorCode::HandlerError);
    assert_eq!(err.message, "Tool \"test.boom\" handler threw: kaboom");
    assert_eq!(err.tool_id, "test.boom");
    assert_eq!(err.reason, None);
}

#[tokio::test]
async fn panicking_handler_is_handler_error() {
    let tool = raw_tool(
        "test.panics",
        json!({"type":"object"}),
        json!({"type":"object"}),
        |_i, _c| async {
            if true {
                panic!("index out of bounds");
            }
            Ok(json!({}))
        },
    );
    let err = tool
        .invoke(&json!({}), ToolContext::for_test())
        .await
        .unwrap_err();
    assert_eq!(err.code, InvokeErrorCode::HandlerError);
    assert_eq!(
        err.message,
        "Tool \"test.panics\" handler threw: index out of bounds"
    );
    // The tool is still usable afterwards.
    let again = tool
        .invoke(&json!({}), ToolContext::for_test())
        .await
        .unwrap_err();
    assert_eq!(again.code, InvokeErrorCode::HandlerError);
}

#[tokio::test]
async fn handler_panicking_before_its_future_is_handler_error() {
    let tool = Tool::define("test.panics-sync")
        .description("panics while starting")
        .version("1.0.0")
        .input(json!({"type":"object"}))
        .output(json!({"type":"object"}))
        .raw_handler(Arc::new(|_i, _c| {
            panic!("{}", String::from("no future for you"))
        }))
        .build()
        .unwrap();
    let err = tool
        .invoke(&json!({}), ToolContext::for_test())
        .await
        .unwrap_err();
    assert_eq!(err.code, InvokeErrorCode::HandlerError);
    assert_eq!(
        err.message,
        "Tool \"test.panics-sync\" handler threw: no future for you"
    );
}

#[tokio::test]
async fn handler_precondition_is_precondition_failed() {
    let tool = raw_tool(
        "test.keyed",
        json!({"type":"object"}),
        json!({"type":"object"}),
        |_i, _c| async {
            Err(HandlerError::Precondition {
                reason: "secret-unavailable".into(),
                message: "needs secret \"API_KEY\" in env \"local\"".into(),
            })
        },
    );
    let err = tool
        .invoke(&json!({}), ToolContext::for_test())
        .await
        .unwrap_err();
    assert_eq!(err.code, InvokeErrorCode::PreconditionFailed);
    assert_eq!(err.reason.as_deref(), Some("secret-unavailable"));
    assert_eq!(err.tool_id, "test.keyed");
    assert_eq!(
        err.message,
        "Tool \"test.keyed\" was not run: secret-unavailable: needs secret \"API_KEY\" in env \"local\""
    );
    let wire = serde_json::to_value(&err).unwrap();
    assert_eq!(wire["code"], "precondition-failed");
    assert_eq!(wire["toolId"], "test.keyed");
}

#[tokio::test]
async fn defaults_are_filled_into_a_copy() {
    let tool = raw_tool(
        "test.greet",
        json!({
            "type":"object",
            "properties":{"name":{"type":"string"},"greeting":{"type":"string","default":"Hi"}},
            "required":["name"]
        }),
        json!({"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}),
        |input, _c| async move {
            Ok(
                json!({"message": format!("{}, {}!", input["greeting"].as_str().unwrap(), input["name"].as_str().unwrap())}),
            )
        },
    );
    let input = json!({"name":"Ada"});
    let out = tool.invoke(&input, ToolContext::for_test()).await.unwrap();
    assert_eq!(out, json!({"message":"Hi, Ada!"}));
    assert_eq!(
        input,
        json!({"name":"Ada"}),
        "the caller's input must not change"
    );
}

#[tokio::test]
async fn context_passes_through_without_declared_env() {
    let seen = Arc::new(Mutex::new(None));
    let s = seen.clone();
    let tool = raw_tool(
        "test.ctx",
        json!({"type":"object"}),
        json!({"type":"object"}),
        move |_i, ctx| {
            let s = s.clone();
            async move {
                *s.lock().unwrap() =
                    Some((ctx.tenant_id.clone(), ctx.run_id.clone(), ctx.env.is_some()));
                Ok(json!({}))
            }
        },
    );
    tool.invoke(&json!({}), ToolContext::for_test())
        .await
        .unwrap();
    assert_eq!(
        seen.lock().unwrap().clone(),
        Some(("tenant-test".to_owned(), Some("run-test".to_owned()), false))
    );
    // Undeclared env values passed by the caller are not shown to the handler.
    tool.invoke(&json!({}), ctx_with_env(&[("UNDECLARED", "2")]))
        .await
        .unwrap();
    assert_eq!(seen.lock().unwrap().as_ref().map(|s| s.2), Some(false));
}

#[tokio::test]
async fn env_default_and_given_values() {
    let seen = Arc::new(Mutex::new(None));
    let tool = env_tool(json!({"X":{"type":"string","default":"d"}}), seen.clone());
    tool.invoke(&json!({}), ToolContext::for_test())
        .await
        .unwrap();
    let expected: BTreeMap<String, String> = [("X".to_owned(), "d".to_owned())].into();
    assert_eq!(seen.lock().unwrap().clone(), Some(Some(expected)));
    tool.invoke(&json!({}), ctx_with_env(&[("X", "given")]))
        .await
        .unwrap();
    let expected: BTreeMap<String, String> = [("X".to_owned(), "given".to_owned())].into();
    assert_eq!(seen.lock().unwrap().clone(), Some(Some(expected)));
}

#[tokio::test]
async fn env_holds_only_declared_names() {
    let seen = Arc::new(Mutex::new(None));
    let tool = env_tool(json!({"X":{"type":"string"}}), seen.clone());
    tool.invoke(&json!({}), ctx_with_env(&[("X", "1"), ("UNDECLARED", "2")]))
        .await
        .unwrap();
    let expected: BTreeMap<String, String> = [("X".to_owned(), "1".to_owned())].into();
    assert_eq!(seen.lock().unwrap().clone(), Some(Some(expected)));
}

#[tokio::test]
async fn missing_env_value_is_precondition_failed() {
    let seen = Arc::new(Mutex::new(None));
    let tool = env_tool(
        json!({"ACME_ACCOUNT_ID":{"type":"string"},"ORDERS_REGION":{"type":"string","default":"eu"}}),
        seen.clone(),
    );
    let err = tool
        .invoke(&json!({}), ToolContext::for_test())
        .await
        .unwrap_err();
    assert_eq!(err.code, InvokeErrorCode::PreconditionFailed);
    assert_eq!(err.reason.as_deref(), Some("env-value-missing"));
    assert_eq!(
        err.message,
        "Tool \"acme.env\" was not run: env-value-missing: tool \"acme.env\" needs env value \"ACME_ACCOUNT_ID\": the context's `env` doesn't set it, and its schema has no default"
    );
    assert!(seen.lock().unwrap().is_none(), "the handler must not run");
}

#[tokio::test]
async fn several_missing_env_values_are_listed_together() {
    let tool = env_tool(
        json!({"A":{"type":"string"},"B":{"type":"string"}}),
        Arc::default(),
    );
    let err = tool
        .invoke(&json!({}), ToolContext::for_test())
        .await
        .unwrap_err();
    assert!(
        err.message.contains(
            "needs env values \"A\", \"B\": the context's `env` doesn't set them, and their schemas have no default"
        ),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn invalid_env_value_is_precondition_failed() {
    let tool = env_tool(
        json!({"ORDERS_BASE_URL":{"type":"string","pattern":"^https://"}}),
        Arc::default(),
    );
    let err = tool
        .invoke(
            &json!({}),
            ctx_with_env(&[("ORDERS_BASE_URL", "http://orders.example.com")]),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code, InvokeErrorCode::PreconditionFailed);
    assert_eq!(err.reason.as_deref(), Some("env-value-invalid"));
    assert!(
        err.message.ends_with(
            "env value \"ORDERS_BASE_URL\" is \"http://orders.example.com\", which doesn't match the schema tool \"acme.env\" declares for it: must match pattern \"^https://\""
        ),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn a_default_its_own_enum_refuses_is_invalid() {
    let tool = env_tool(
        json!({"REGION":{"type":"string","enum":["eu","us"],"default":"mars"}}),
        Arc::default(),
    );
    let err = tool
        .invoke(&json!({}), ToolContext::for_test())
        .await
        .unwrap_err();
    assert_eq!(err.reason.as_deref(), Some("env-value-invalid"));
}

#[tokio::test]
async fn missing_env_is_reported_before_invalid_env() {
    let tool = env_tool(
        json!({"A":{"type":"string"},"B":{"type":"string","pattern":"^x"}}),
        Arc::default(),
    );
    let err = tool
        .invoke(&json!({}), ctx_with_env(&[("B", "y")]))
        .await
        .unwrap_err();
    assert_eq!(err.reason.as_deref(), Some("env-value-missing"));
}

#[tokio::test]
async fn env_is_checked_before_input() {
    let tool = env_tool(json!({"A":{"type":"string"}}), Arc::default());
    let err = tool
        .invoke(&json!({"n":"not a number"}), ToolContext::for_test())
        .await
        .unwrap_err();
    assert_eq!(err.code, InvokeErrorCode::PreconditionFailed);
}

#[tokio::test]
async fn cooperative_cancellation_is_seen_by_the_handler() {
    let tool = raw_tool(
        "test.abortable",
        json!({"type":"object"}),
        json!({"type":"object","properties":{"exitedVia":{"type":"string"}}}),
        |_i, ctx| async move {
            tokio::select! {
                _ = ctx.signal.cancelled() => Ok(json!({"exitedVia":"abort"})),
                _ = tokio::time::sleep(Duration::from_secs(10)) => Ok(json!({"exitedVia":"timer"})),
            }
        },
    );
    let ctx = ToolContext::for_test();
    let signal = ctx.signal.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        signal.cancel();
    });
    let out = tool.invoke(&json!({}), ctx).await.unwrap();
    assert_eq!(out, json!({"exitedVia":"abort"}));
}

#[tokio::test]
async fn a_handler_ignoring_a_fired_signal_completes() {
    let tool = raw_tool(
        "test.ignores",
        json!({"type":"object"}),
        json!({"type":"object"}),
        |_i, _c| async { Ok(json!({"done":true})) },
    );
    let ctx = ToolContext::for_test();
    ctx.signal.cancel();
    assert_eq!(
        tool.invoke(&json!({}), ctx).await.unwrap(),
        json!({"done":true})
    );
}

fn weather_tool(temperature: Value) -> Tool {
    let draft7 = "http://json-schema.org/draft-07/schema#";
    Tool::define("mcp.weather")
        .description("current weather")
        .version("1.0.0")
        .transport(Transport::Mcp)
        .mcp_endpoint("mcp+http://127.0.0.1:3001/mcp")
        .input(json!({
            "$schema": draft7, "type":"object",
            "properties":{"location":{"type":"string","enum":["Chicago","Paris"]}},
            "required":["location"]
        }))
        .output(json!({
            "$schema": draft7, "type":"object",
            "properties":{"temperature":{"type":"number"},"conditions":{"type":"string"}},
            "required":["temperature","conditions"]
        }))
        .handler(move |_i: Value, _c| {
            let temperature = temperature.clone();
            async move { Ok(json!({"temperature": temperature, "conditions":"Sunny"})) }
        })
        .build()
        .unwrap()
}

#[tokio::test]
async fn mcp_draft07_tool_validates_in_its_dialect() {
    let tool = weather_tool(json!(21));
    let out = tool
        .invoke(&json!({"location":"Chicago"}), ToolContext::for_test())
        .await
        .unwrap();
    assert_eq!(out, json!({"temperature":21,"conditions":"Sunny"}));
    let err = tool
        .invoke(&json!({"location":"Atlantis"}), ToolContext::for_test())
        .await
        .unwrap_err();
    assert_eq!(err.code, InvokeErrorCode::InputValidationFailed);
    assert_eq!(err.errors[0].keyword(), "enum");
    let err = weather_tool(json!("warm"))
        .invoke(&json!({"location":"Chicago"}), ToolContext::for_test())
        .await
        .unwrap_err();
    assert_eq!(err.code, InvokeErrorCode::OutputValidationFailed);
}

#[tokio::test]
async fn mcp_draft07_tuples() {
    let tool = Tool::define("mcp.points")
        .description("points")
        .version("1.0.0")
        .transport(Transport::Mcp)
        .mcp_endpoint("mcp+stdio://points-server")
        .input(json!({
            "$schema":"http://json-schema.org/draft-07/schema#","type":"object",
            "properties":{"id":{"type":["string","number"]},"point":{"type":"array","items":[{"type":"number"},{"type":"number"}]}},
            "required":["id"]
        }))
        .output(json!({"type":"object"}))
        .handler(|_i: Value, _c| async { Ok(json!({})) })
        .build()
        .unwrap();
    assert!(
        tool.invoke(&json!({"id":7,"point":[1,2]}), ToolContext::for_test())
            .await
            .is_ok()
    );
    let err = tool
        .invoke(
            &json!({"id":"p","point":[1,"two"]}),
            ToolContext::for_test(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code, InvokeErrorCode::InputValidationFailed);
}

#[tokio::test]
async fn union_scalar_input_in_strict_mode() {
    let tool = raw_tool(
        "test.union",
        json!({"type":"object","properties":{"v":{"type":["string","number","boolean","null"]}},"required":["v"]}),
        json!({"type":"object"}),
        |_i, _c| async { Ok(json!({})) },
    );
    for v in [json!("a"), json!(1), json!(true), json!(null)] {
        assert!(
            tool.invoke(&json!({"v": v}), ToolContext::for_test())
                .await
                .is_ok(),
            "{v}"
        );
    }
    let err = tool
        .invoke(&json!({"v":[1]}), ToolContext::for_test())
        .await
        .unwrap_err();
    assert_eq!(err.code, InvokeErrorCode::InputValidationFailed);
}

#[tokio::test]
async fn a_tool_assembled_from_parts_compiles_on_first_use() {
    let defined = echo_tool();
    let parts = Tool::from_parts(defined.manifest().clone(), defined.handler().clone());
    let out = parts
        .invoke(&json!({"msg":"abc"}), ToolContext::for_test())
        .await
        .unwrap();
    assert_eq!(out["length"], 3);
    let err = parts
        .invoke(&json!({"msg":1}), ToolContext::for_test())
        .await
        .unwrap_err();
    assert_eq!(err.code, InvokeErrorCode::InputValidationFailed);
}

#[tokio::test]
async fn invoke_owned_fills_defaults_into_the_given_value() {
    let tool = raw_tool(
        "test.owned",
        json!({"type":"object","properties":{"n":{"type":"integer","default":5}}}),
        json!({"type":"object"}),
        |input, _c| async move { Ok(input) },
    );
    let out = kindgi_tools::invoke_owned(&tool, json!({}), ToolContext::for_test())
        .await
        .unwrap();
    assert_eq!(out, json!({"n":5}));
}

#[test]
fn idempotency_keys_match_the_reference() {
    let run = "4b5f8c1e-2f0a-4c8e-9a51-0c7e2d9a6b13";
    let key = |scope: &str, tool: &str, call: Option<&str>| {
        tool_idempotency_key(run, scope, tool, call).to_string()
    };
    assert_eq!(
        key("charge-card", "acme.payments.charge", None),
        "f6c8a374-b63c-5453-8320-1ca9c067447a"
    );
    assert_eq!(
        key(
            "agent-loop#2/dispatch-tools",
            "acme.refunds.issue",
            Some("call_0")
        ),
        "bf055463-2cce-5e82-b31a-43d7698db52e"
    );
    assert_eq!(
        key(
            "agent-loop#3/dispatch-tools",
            "acme.refunds.issue",
            Some("call_0")
        ),
        "f08fa71f-aaa9-5f9e-96bf-7e54d4f1af46"
    );
    let accented = key("notify/branch-é", "acme.mail.send", None);
    assert_eq!(accented, "873f6e4e-cd72-5604-ac09-ab1496cfeb8a");
    assert_ne!(accented, "8680f8f9-077a-5815-ba0b-602d3abed6b3");
}

#[tokio::test]
async fn a_tool_from_parts_with_a_broken_schema_fails_cleanly() {
    let mut manifest = echo_tool().manifest().clone();
    manifest.input = json!({"type": "object", "x-label": "strict mode refuses this"});
    let handler = echo_tool().handler().clone();
    let err = Tool::try_from_parts(manifest.clone(), handler.clone()).unwrap_err();
    assert_eq!(err.slot, kindgi_tools::compiled::SchemaSlot::Input);
    assert!(
        err.error.message.contains("strict mode"),
        "{}",
        err.error.message
    );

    let tool = Tool::from_parts(manifest, handler);
    for _ in 0..2 {
        let err = tool
            .invoke(&json!({"msg": "hi"}), ToolContext::for_test())
            .await
            .unwrap_err();
        assert_eq!(err.code, InvokeErrorCode::InputValidationFailed);
        assert!(
            err.message
                .starts_with("Tool \"test.echo\" input schema does not compile: strict mode"),
            "{}",
            err.message
        );
    }
}
