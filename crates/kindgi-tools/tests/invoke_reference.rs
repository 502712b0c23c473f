//! Invocation compared with the official implementation: every case in
//! `tests/reference/invoke_cases.json` is run through `@kindgi/tools` (`invokeTool`, Node)
//! and through `kindgi_tools::invoke`; results — values, codes, messages, reasons and the
//! Ajv issues — must be equal. Idempotency keys are compared the same way.
//!
//! Needs the reference install (`scripts/setup-reference`, env from
//! `.cache/reference.env`): skipped with a message when it is missing, a failure when
//! `KINDGI_REQUIRE_REFERENCE=1`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_tools::synth::SynthesizerRegistry;
use kindgi_tools::{
    Handler, HandlerError, InvokeOptions, ToolContext, define_manifest, tool_idempotency_key,
};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

fn reference_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference")
}

/// The Node binary and the `@kindgi/tools` entry point, or why they are not available.
fn reference() -> Result<(PathBuf, PathBuf), String> {
    let node_dir = std::env::var("KINDGI_NODE24_DIR")
        .map_err(|_| "KINDGI_NODE24_DIR is not set (source .cache/reference.env)".to_owned())?;
    let modules = std::env::var("KINDGI_CLI_NODE_MODULES").map_err(|_| {
        "KINDGI_CLI_NODE_MODULES is not set (source .cache/reference.env)".to_owned()
    })?;
    let node = Path::new(&node_dir).join("bin/node");
    let tools = Path::new(&modules).join("@kindgi/tools/dist/index.js");
    for path in [&node, &tools] {
        if !path.exists() {
            return Err(format!(
                "{} does not exist (run scripts/setup-reference)",
                path.display()
            ));
        }
    }
    Ok((node, tools))
}

fn handler_for(spec: &Value) -> Handler {
    let spec = spec.clone();
    Arc::new(move |input: Value, ctx: ToolContext| {
        let spec = spec.clone();
        Box::pin(async move {
            match spec["kind"].as_str().unwrap() {
                "echo" => Ok(input),
                "return" => Ok(spec["value"].clone()),
                "throw" => Err(HandlerError::msg(spec["message"].as_str().unwrap())),
                "precondition" => Err(HandlerError::Precondition {
                    reason: spec["reason"].as_str().unwrap().to_owned(),
                    message: spec["message"].as_str().unwrap().to_owned(),
                }),
                "env" => Ok(json!({"env": ctx.env.as_deref()})),
                other => panic!("unknown handler kind {other}"),
            }
        })
    })
}

async fn run_ours(case: &Value) -> Value {
    let name = case["name"].clone();
    let tool = define_manifest(
        &case["manifest"],
        Some(handler_for(&case["handler"])),
        &SynthesizerRegistry::empty(),
    )
    .unwrap_or_else(|e| panic!("{name}: {e:?}"));
    let mut ctx = ToolContext::for_test();
    if let Some(env) = case.get("env").and_then(Value::as_object) {
        ctx = ctx.with_env(
            env.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
                .collect(),
        );
    }
    let options = InvokeOptions {
        skip_output_validation: case["skipOutputValidation"] == json!(true),
    };
    match tool.invoke_with(&case["input"], ctx, options).await {
        Ok(value) => json!({"name": name, "ok": true, "value": value}),
        Err(e) => {
            let mut out = json!({
                "name": name, "ok": false, "code": e.code.as_str(), "message": e.message, "toolId": e.tool_id,
            });
            if let Some(reason) = e.reason {
                out["reason"] = json!(reason);
            }
            if !e.errors.is_empty() {
                out["errors"] = serde_json::to_value(&e.errors).unwrap();
            }
            out
        }
    }
}

#[tokio::test]
async fn invocation_matches_the_official_implementation() {
    let (node, tools) = match reference() {
        Ok(found) => found,
        Err(why) => {
            kindgi_spec::testing::skip_without_reference(
                "invocation_matches_the_official_implementation",
                why,
            );
            return;
        }
    };
    let dir = reference_dir();
    let cases_path = dir.join("invoke_cases.json");
    let output = Command::new(node)
        .arg(dir.join("invoke_reference.mjs"))
        .arg(&tools)
        .arg(&cases_path)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "node failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let reference: Value = serde_json::from_slice(&output.stdout).unwrap();
    let data: Value = serde_json::from_str(&std::fs::read_to_string(&cases_path).unwrap()).unwrap();

    let cases = data["cases"].as_array().unwrap();
    let expected = reference["results"].as_array().unwrap();
    assert_eq!(cases.len(), expected.len());
    let mut mismatches = Vec::new();
    for (case, theirs) in cases.iter().zip(expected) {
        let ours = run_ours(case).await;
        if &ours != theirs {
            mismatches.push(format!(
                "{}\n  ours:      {ours}\n  reference: {theirs}",
                case["name"]
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} cases differ:\n{}",
        mismatches.len(),
        cases.len(),
        mismatches.join("\n")
    );

    let keys = data["idempotencyKeys"].as_array().unwrap();
    for (input, theirs) in keys.iter().zip(reference["keys"].as_array().unwrap()) {
        let ours = tool_idempotency_key(
            input["runId"].as_str().unwrap(),
            input["stepScope"].as_str().unwrap(),
            input["toolId"].as_str().unwrap(),
            input["callId"].as_str(),
        );
        assert_eq!(json!(ours.to_string()), *theirs, "{input}");
    }
}
