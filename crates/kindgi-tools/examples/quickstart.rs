//! Quickstart: define tools with the typed API and with raw JSON Schema, invoke them, and see
//! what a refused input looks like.
//!
//! Run: `cargo run -p kindgi-tools --example quickstart`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_spec::{EffectKind, TypedNeeds};
use kindgi_tools::{HandlerError, Tool, ToolContext};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The typed tool's input: its JSON Schema is derived from this type.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct LookupInput {
    /// The customer's id, e.g. `cus_123`.
    customer_id: String,
    /// How many orders to return (default 3).
    #[serde(default = "default_limit")]
    limit: u8,
}

fn default_limit() -> u8 {
    3
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Order {
    id: String,
    total_cents: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
struct LookupOutput {
    orders: Vec<Order>,
}

fn show(label: &str, result: &Result<Value, kindgi_tools::InvokeError>) {
    match result {
        Ok(value) => println!("{label}\n  ok: {value}\n"),
        Err(err) => println!(
            "{label}\n  error: {}\n  {}\n",
            err.code.as_str(),
            serde_json::to_string_pretty(err)
                .unwrap()
                .replace('\n', "\n  ")
        ),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // 1. Typed: schemas from the handler's types; a read-only tool.
    let lookup = Tool::define("acme.orders-lookup")
        .description("Look up a customer's most recent orders")
        .version("1.0.0")
        .mutating(false)
        .effect(EffectKind::Reads, "db:orders")
        .handler(|input: LookupInput, _ctx: ToolContext| async move {
            let orders = (1..=input.limit)
                .map(|n| Order {
                    id: format!("{}-order-{n}", input.customer_id),
                    total_cents: 1250 * n as u64,
                })
                .collect();
            Ok(LookupOutput { orders })
        })
        .build()?;
    println!(
        "derived input schema of {}:\n{}\n",
        lookup.id(),
        serde_json::to_string_pretty(&lookup.manifest().input)?
    );

    // 2. Raw JSON Schema, an env value the tool declares, and a mutating tool.
    let refund = Tool::define("acme.refund-order")
        .description("Refund an order")
        .version("1.0.0")
        .effect(EffectKind::Writes, "db:refunds")
        .needs_spec(TypedNeeds {
            env: Some(json!({"PAYMENTS_REGION": {"type": "string", "enum": ["eu", "us"], "default": "eu"}}).as_object().cloned().unwrap()),
            ..Default::default()
        })
        .input(json!({
            "type": "object",
            "properties": {"orderId": {"type": "string", "minLength": 1}, "amountCents": {"type": "integer", "minimum": 1}},
            "required": ["orderId", "amountCents"],
            "additionalProperties": false
        }))
        .output(json!({
            "type": "object",
            "properties": {"refundId": {"type": "string"}, "region": {"type": "string"}},
            "required": ["refundId", "region"]
        }))
        .handler(|input: Value, ctx: ToolContext| async move {
            let region = ctx.env.as_ref().and_then(|env| env.get("PAYMENTS_REGION").cloned());
            let region = region.ok_or_else(|| HandlerError::msg("no region"))?;
            Ok(json!({"refundId": format!("re_{}", input["orderId"].as_str().unwrap_or("")), "region": region}))
        })
        .build()?;
    println!(
        "manifest of {} (mutating: {}):\n{}\n",
        refund.id(),
        refund.manifest().is_mutating(),
        serde_json::to_string_pretty(&refund.to_manifest_value())?
    );

    let ctx = ToolContext::for_test;
    show(
        "lookup {customerId: cus_1} (limit defaults to 3):",
        &lookup.invoke(&json!({"customerId": "cus_1"}), ctx()).await,
    );
    show(
        "lookup {customerId: 42, colour: red}:",
        &lookup
            .invoke(&json!({"customerId": 42, "colour": "red"}), ctx())
            .await,
    );
    show(
        "refund {orderId: o-1, amountCents: 500}:",
        &refund
            .invoke(&json!({"orderId": "o-1", "amountCents": 500}), ctx())
            .await,
    );
    let in_us = ctx().with_env([("PAYMENTS_REGION".to_owned(), "us".to_owned())].into());
    show(
        "refund in env PAYMENTS_REGION=us:",
        &refund
            .invoke(&json!({"orderId": "o-2", "amountCents": 1}), in_us)
            .await,
    );
    let on_mars = ctx().with_env([("PAYMENTS_REGION".to_owned(), "mars".to_owned())].into());
    show(
        "refund in env PAYMENTS_REGION=mars:",
        &refund
            .invoke(&json!({"orderId": "o-3", "amountCents": 1}), on_mars)
            .await,
    );
    show(
        "refund {orderId: \"\", amountCents: 0}:",
        &refund
            .invoke(&json!({"orderId": "", "amountCents": 0}), ctx())
            .await,
    );

    // 3. A manifest file (the one `kindgi tools check` validates) plus a handler.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/tools/orders-lookup.json"
    );
    let manifest: Value = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    let handler: kindgi_tools::Handler = std::sync::Arc::new(|input: Value, _ctx| {
        Box::pin(async move {
            let limit = input["limit"].as_u64().unwrap_or(0);
            let orders: Vec<Value> = (1..=limit.min(2))
                .map(|n| json!({"id": format!("ord_{n}"), "status": "open", "totalCents": 990 * n}))
                .collect();
            Ok(json!({"orders": orders}))
        })
    });
    let from_file = kindgi_tools::define_manifest(&manifest, Some(handler), &Default::default())?;
    show(
        "examples/tools/orders-lookup.json {customerId: cus_9} (limit defaults to 10):",
        &from_file
            .invoke(&json!({"customerId": "cus_9"}), ctx())
            .await,
    );
    show(
        "examples/tools/orders-lookup.json {customerId: \"\", limit: 99}:",
        &from_file
            .invoke(&json!({"customerId": "", "limit": 99}), ctx())
            .await,
    );

    // 4. A definition mistake is reported, every problem at once.
    let broken = Tool::define("acme.broken")
        .description("")
        .version("1.0")
        .input(json!({"type": "string"}))
        .output(json!({"type": "object"}))
        .handler(|input: Value, _ctx| async move { Ok(input) })
        .build();
    if let Err(err) = broken {
        println!("defining acme.broken failed ({}):", err.code.as_str());
        for problem in &err.problems {
            println!("  {problem}");
        }
    }
    Ok(())
}
