//! Manifest validation and (de)serialization speed, with the official `validateToolManifest`
//! for comparison when the reference is installed (`source .cache/reference.env`).
//!
//! `cargo bench -p kindgi-spec --bench validate` — prints microseconds per manifest for:
//! `validate_manifest` over kindgi-schema with a validator cache (the way kindgi-tools and
//! the API run it: nothing compiles twice), parse + serialize of a `ToolManifest`, and the
//! reference's `validateToolManifest` on the same manifest (Node 24, Ajv 8).
//! `KINDGI_BENCH_ITERS` sets the iterations (default 20000).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_schema::{CompileOptions, Dialect, Mode, Side, Validator, ValidatorCache};
use kindgi_spec::ToolManifest;
use kindgi_spec::validate::{
    ManifestCheck, Problem, SchemaEngine, SchemaMode, SchemaSide, tool_schema, validate_manifest,
};
use serde_json::{Value, json};
use std::hint::black_box;
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

/// A schema engine that compiles each schema once: the manifest schema up front (as
/// kindgi-tools' engine does), the others through a content-keyed cache.
struct CachedEngine {
    cache: ValidatorCache,
    manifest: Arc<Validator>,
}

impl SchemaEngine for CachedEngine {
    fn check_schema(
        &self,
        schema: &Value,
        mode: SchemaMode,
        side: SchemaSide,
    ) -> Result<(), String> {
        let side = if side == SchemaSide::Input {
            Side::Input
        } else {
            Side::Output
        };
        let mode = match mode {
            SchemaMode::Pack => {
                kindgi_schema::check_dialect(schema, &[Dialect::Draft2020])
                    .map_err(|e| e.message)?;
                Mode::Pack
            }
            SchemaMode::Mcp => Mode::Mcp,
        };
        self.cache
            .get_or_compile(schema, CompileOptions { mode, side })
            .map(drop)
            .map_err(|e| e.message)
    }

    fn check_need_schema(&self, schema: &Value) -> Result<(), String> {
        self.cache
            .get_or_compile_inline(schema)
            .map(drop)
            .map_err(|e| e.message)
    }

    fn validate(&self, schema: &Value, instance: &Value) -> Vec<Problem> {
        assert!(
            std::ptr::eq(schema, tool_schema()),
            "only the manifest schema is validated against"
        );
        match self.manifest.validate(instance) {
            Ok(()) => vec![],
            Err(issues) => issues
                .iter()
                .map(|i| Problem::new(i.instance_path(), i.message()))
                .collect(),
        }
    }
}

fn data(name: &str) -> Value {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn per_call_us(iters: u32, mut f: impl FnMut()) -> f64 {
    for _ in 0..iters / 10 {
        f(); // warm up (and fill the cache)
    }
    let start = Instant::now();
    for _ in 0..iters {
        f();
    }
    start.elapsed().as_secs_f64() * 1e6 / f64::from(iters)
}

fn reference_us(manifest: &Value, iters: u32) -> Option<f64> {
    let cli = std::env::var("KINDGI_CLI_NODE_MODULES").ok()?;
    let node = format!("{}/bin/node", std::env::var("KINDGI_NODE24_DIR").ok()?);
    let script = format!(
        r#"const {{ validateToolManifest }} = await import({tools:?});
const m = JSON.parse(require_input());
function require_input() {{ return {input:?}; }}
const n = {iters};
for (let i = 0; i < n / 10; i++) validateToolManifest(m);
const t = process.hrtime.bigint();
for (let i = 0; i < n; i++) {{ const r = validateToolManifest(m); if (r.kind !== 'ok') throw new Error(JSON.stringify(r)); }}
console.log(Number(process.hrtime.bigint() - t) / 1000 / n);"#,
        tools = format!("file://{cli}/@kindgi/tools/dist/index.js"),
        input = manifest.to_string(),
    );
    let mut child = Command::new(node)
        .args(["--input-type=module", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .ok()?;
    child.stdin.take()?.write_all(script.as_bytes()).ok()?;
    let out = child.wait_with_output().ok()?;
    String::from_utf8(out.stdout).ok()?.trim().parse().ok()
}

fn main() {
    let iters: u32 = std::env::var("KINDGI_BENCH_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    let options = CompileOptions {
        mode: Mode::Pack,
        side: Side::Output,
    };
    let engine = CachedEngine {
        cache: ValidatorCache::new(),
        manifest: Arc::new(kindgi_schema::compile(tool_schema(), options).unwrap()),
    };
    let check = ManifestCheck::default();
    // Each case uses only fields the reference's 1.1.0 schema knows, so it can run them too.
    let small = json!({
        "id": "test.echo", "description": "Echo the input as output", "version": "1.0.0",
        "input": {"type": "object", "properties": {"msg": {"type": "string"}}, "required": ["msg"]},
        "output": {"type": "object", "properties": {"msg": {"type": "string"}}, "required": ["msg"]}
    });
    let mut http = data("tool.http-every-field.json");
    http["spec"]["authorization"] =
        json!({"kind": "bearer", "secretRef": {"envName": "production", "name": "gh"}});
    http.as_object_mut().unwrap().remove("needsSpec");
    let every = data("tool.every-field.json");

    println!("iterations: {iters}");
    for (name, manifest, reference) in [
        ("small", &small, true),
        ("http, many fields", &http, true),
        ("every 1.3.0 field", &every, false),
    ] {
        validate_manifest(manifest, &check, &engine).unwrap();
        let ours = per_call_us(iters, || {
            black_box(validate_manifest(black_box(manifest), &check, &engine).unwrap());
        });
        let shape = per_call_us(iters, || {
            black_box(engine.validate(tool_schema(), black_box(manifest)));
        });
        let compiles = per_call_us(iters, || {
            let input =
                engine.check_schema(&manifest["input"], SchemaMode::Pack, SchemaSide::Input);
            let output =
                engine.check_schema(&manifest["output"], SchemaMode::Pack, SchemaSide::Output);
            assert!(black_box(input.is_ok() && output.is_ok()));
        });
        let text = manifest.to_string();
        let serde = per_call_us(iters, || {
            let m: ToolManifest = serde_json::from_str(black_box(&text)).unwrap();
            black_box(serde_json::to_string(&m).unwrap());
        });
        let theirs = if reference {
            reference_us(manifest, iters)
        } else {
            None
        };
        let theirs = theirs.map_or_else(|| "n/a".to_owned(), |t| format!("{t:.2} µs"));
        println!(
            "{name:>20}: validate_manifest {ours:.2} µs (shape {shape:.2}, input+output cache lookups {compiles:.2}) \
             | parse+serialize {serde:.2} µs | reference validateToolManifest {theirs}"
        );
    }
}
