//! The overhead `invoke` adds around a handler: a no-op tool with a small schema, and with a
//! larger one (nested objects, an array of 20 items, patterns, enums, defaults).
//!
//! Run: `cargo bench -p kindgi-tools --bench invoke`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{Criterion, black_box, criterion_group, criterion_main};
use futures::executor::block_on;
use kindgi_tools::{InvokeOptions, Tool, ToolContext, invoke_owned_with};
use serde_json::{Value, json};

fn noop_tool(id: &str, input: Value, output: Value) -> Tool {
    Tool::define(id)
        .description("does nothing")
        .version("1.0.0")
        .input(input)
        .output(output)
        .handler(|_input: Value, _ctx| async { Ok(json!({"ok": true})) })
        .build()
        .unwrap()
}

fn small() -> (Tool, Value) {
    let tool = noop_tool(
        "bench.small",
        json!({"type":"object","properties":{"msg":{"type":"string"}},"required":["msg"]}),
        json!({"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}),
    );
    (tool, json!({"msg":"hello"}))
}

fn large() -> (Tool, Value) {
    let line = json!({
        "type":"object",
        "properties":{
            "sku":{"type":"string","pattern":"^[A-Z]{3}-[0-9]{4}$"},
            "quantity":{"type":"integer","minimum":1,"maximum":1000},
            "unitCents":{"type":"integer","minimum":0},
            "currency":{"type":"string","enum":["EUR","USD","GBP"]},
            "gift":{"type":"boolean","default":false},
            "note":{"type":"string","maxLength":200}
        },
        "required":["sku","quantity","unitCents","currency"],
        "additionalProperties":false
    });
    let input = json!({
        "type":"object",
        "properties":{
            "orderId":{"type":"string","minLength":1,"maxLength":64},
            "customer":{
                "type":"object",
                "properties":{
                    "id":{"type":"string"},
                    "email":{"type":"string","format":"email"},
                    "name":{"type":"string","minLength":1},
                    "tier":{"type":"string","enum":["free","pro","enterprise"],"default":"free"}
                },
                "required":["id","email","name"],
                "additionalProperties":false
            },
            "lines":{"type":"array","items":line,"minItems":1,"maxItems":100},
            "shipping":{
                "type":"object",
                "properties":{
                    "country":{"type":"string","pattern":"^[A-Z]{2}$"},
                    "postcode":{"type":"string"},
                    "express":{"type":"boolean","default":false}
                },
                "required":["country"]
            },
            "tags":{"type":"array","items":{"type":"string"},"uniqueItems":true}
        },
        "required":["orderId","customer","lines"],
        "additionalProperties":false
    });
    let tool = noop_tool(
        "bench.large",
        input,
        json!({"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}),
    );
    let lines: Vec<Value> = (0..20)
        .map(|i| json!({"sku": format!("ABC-{:04}", i), "quantity": i + 1, "unitCents": 999, "currency": "EUR", "note": "fragile"}))
        .collect();
    let instance = json!({
        "orderId":"o-12345",
        "customer":{"id":"cus_1","email":"ada@example.com","name":"Ada"},
        "lines": lines,
        "shipping":{"country":"DE","postcode":"10115"},
        "tags":["b2b","priority","eu"]
    });
    (tool, instance)
}

fn bench(c: &mut Criterion) {
    let ctx = ToolContext::for_test();
    for (name, (tool, input)) in [("small", small()), ("large", large())] {
        assert!(
            block_on(tool.invoke(&input, ctx.clone())).is_ok(),
            "{name} input must be valid"
        );
        let mut group = c.benchmark_group(format!("invoke/{name}"));
        // The handler alone: what every invocation costs anyway.
        group.bench_function("handler-only", |b| {
            b.iter(|| block_on((tool.handler())(black_box(input.clone()), ctx.clone())))
        });
        // `invoke` (clones the input, validates it with defaults, runs, validates the output).
        group.bench_function("invoke", |b| {
            b.iter(|| block_on(tool.invoke(black_box(&input), ctx.clone())))
        });
        group.bench_function("invoke-owned-skip-output", |b| {
            b.iter(|| {
                block_on(invoke_owned_with(
                    &tool,
                    black_box(input.clone()),
                    ctx.clone(),
                    InvokeOptions::skip_output_validation(),
                ))
            })
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
