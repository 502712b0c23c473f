#!/usr/bin/env python3
"""Writes the seed corpus of every fuzz target (fuzz/corpus/TARGET/) from the project's own
examples, the spec's schemas and examples, and the Ajv differential vectors. Run from the
repo root: `python3 fuzz/seeds.py /work/shared` (the folder holding spec/ and vectors/)."""
import hashlib, json, os, sys, glob

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
shared = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "..", "shared")
out = os.path.join(root, "fuzz", "corpus")

def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)

def load(path):
    with open(path) as f:
        return json.load(f)

def dumps(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)

# -- schemas: Ajv vectors (schema NUL instance), spec schemas alone (validated against probes)
vectors = load(os.path.join(shared, "vectors", "ajv", "corpus.json"))
for config, target, limit in (("pack", "schema_pack", 40), ("mcp", "schema_mcp", 30)):
    seen = set()
    for v in vectors:
        if v["config"] != config:
            continue
        family = ".".join(v["id"].split(".")[:3])  # one per keyword family
        if family in seen:
            continue
        seen.add(family)
        if len(seen) > limit:
            break
        put(target, dumps(v["schema"]) + "\0" + dumps(v["instance"]))
for name in ("tool", "flow", "pack-index", "pack-protocol", "guardrail", "agent"):
    schema = load(os.path.join(shared, "spec", f"{name}.schema.json"))
    put("schema_pack", dumps(schema))
    put("schema_mcp", dumps(schema))
for draft in ("http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-06/schema#",
              "https://json-schema.org/draft/2019-09/schema"):
    put("schema_mcp", dumps({"$schema": draft, "type": "object", "properties": {"a": {"type": "integer"}},
                             "dependencies" if "draft" in draft else "dependentRequired": {"a": ["b"]}}) + "\0" + dumps({"a": 1}))

# -- tool manifests
manifests = glob.glob(os.path.join(root, "examples", "tools", "*.json")) + \
    glob.glob(os.path.join(root, "examples", "tools", "invalid", "*.json")) + \
    glob.glob(os.path.join(root, "crates", "kindgi-spec", "tests", "data", "tool.*.json"))
for m in manifests:
    put("manifest", dumps(load(m)))

# -- pack indexes, and the tools and flows inside them
indexes = glob.glob(os.path.join(root, "examples", "*", "index*.json")) + \
    [os.path.join(shared, "spec", "examples", "pack-index.example.python-pack.json")]
flow_keys = ("$schema", "id", "version", "name", "description", "nodes", "edges", "metadata", "maxParallelism", "output")
for i in indexes:
    index = load(i)
    put("pack_index", dumps(index))
    for t in index.get("tools", [])[:3]:
        tool = {k: v for k, v in t.items() if k != "modulePath"}
        tool.setdefault("version", "1.0.0")
        put("manifest", dumps(tool))
        put("schema_pack", dumps(t.get("input", {})))
    for f in index.get("flows", []):
        put("flow", dumps({k: v for k, v in f.items() if k in flow_keys}))
put("pack_index", dumps({"v": 1, "packId": "p", "packVersion": "1.0.0", "artifactVersion": "20260101.1",
                         "publishedAt": "2026-01-01T00:00:00.000Z", "tools": [], "guardrails": [], "agents": [], "flows": []}))
put("pack_index", dumps({"v": 2}))

# -- flows
put("flow", dumps(load(os.path.join(shared, "spec", "examples", "flow.example.with-loop.json"))))
start_end = lambda *ids: [{"id": f"e{n}", "from": a, "to": b} for n, (a, b) in enumerate(zip(("$start",) + ids, ids + ("$end",)))]
put("flow", dumps({"id": "f.a", "version": "1.0.0", "nodes": [{"id": "n1", "kind": "tool", "ref": "p.t"}], "edges": start_end("n1")}))
put("flow", dumps({"id": "f.b", "version": "1.0.0", "nodes": [
    {"id": "n1", "kind": "tool", "ref": "p.t", "outputSchema": {"type": "object"}},
    {"id": "n2", "kind": "tool", "ref": "p.u", "when": {"op": "and", "children": [
        {"op": "exists", "value": {"path": "nodeOutputs.n1.x"}}, {"op": "gt", "left": {"path": "runInput.n"}, "right": {"literal": 3}}]}}],
    "edges": start_end("n1", "n2"), "metadata": {"inputSchema": {"type": "object", "required": ["n"]}},
    "output": {"mapping": {"x": {"path": "nodeOutputs.n1.x"}}, "schema": {"type": "object"}}}))
put("flow", dumps({"id": "f.c", "version": "1.0.0", "nodes": [{"id": "n1", "kind": "tool", "ref": "p.t"}],
                   "edges": [{"id": "e1", "from": "$start", "to": "n1"}, {"id": "e2", "from": "n1", "to": "n1"}]}))

# -- when expressions (expression NUL environment)
ops = [
    {"op": "eq", "left": {"path": "runInput.a"}, "right": {"literal": 1}},
    {"op": "ne", "left": {"path": "runInput.zz"}, "right": {"literal": None}},
    {"op": "lt", "left": {"path": "runInput.b"}, "right": {"literal": "y"}},
    {"op": "gte", "left": {"path": "iterationIndex"}, "right": {"literal": 3.0}},
    {"op": "in", "value": {"path": "runInput.a"}, "set": {"path": "runInput.c"}},
    {"op": "notIn", "value": {"literal": 3}, "set": {"literal": [1, 2]}},
    {"op": "exists", "value": {"path": "nodeOutputs.a.b.c"}},
    {"op": "notExists", "value": {"path": "state.n"}},
    {"op": "truthy", "value": {"path": "iterationOutput.done"}},
    {"op": "falsy", "value": {"path": "state.s"}},
    {"op": "not", "child": {"op": "or", "children": [{"op": "truthy", "value": {"path": "runInput.e.f"}}, {"op": "and", "children": []}]}},
]
for o in ops:
    put("expr", dumps(o))
put("expr", dumps(ops[0]) + "\0" + dumps({"runInput": {"a": 1.0}, "nodeOutputs": {"x.y": {"z": [1]}}}))
put("expr", dumps({"out": {"path": "runInput.a"}, "lit": {"literal": {"k": [1]}}, "gone": {"path": "runInput.nope"}}))

# -- pack service (header lines NUL body); the fuzz pack's tools are fuzz.echo, fuzz.defaults, fuzz.mirror
ctx = {"tenantId": "t-1", "runId": "run-1"}
bodies = [
    {"v": 2, "kind": "invoke", "tool": {"id": "fuzz.echo"}, "input": {"message": "hi"}, "ctx": ctx},
    {"v": 2.0, "kind": "invoke", "tool": {"id": "fuzz.echo", "version": "1.0.0"}, "input": {"message": ""}, "ctx": ctx},
    {"v": 2, "kind": "invoke", "tool": {"id": "fuzz.echo", "version": "9.9.9"}, "input": {"message": 7, "a": 1}, "ctx": ctx},
    {"v": 2, "kind": "invoke", "tool": {"id": "fuzz.defaults"}, "input": {"name": "x"}, "ctx": dict(ctx, requestId="r-1", env={"A": "b"})},
    {"v": 2, "kind": "invoke", "tool": {"id": "fuzz.mirror"}, "input": {"a": "not an integer"}, "ctx": ctx},
    {"v": 2, "kind": "invoke", "tool": {"id": "nope"}, "input": {}, "ctx": {"tenantId": 1}},
    {"v": 2, "kind": "check-invoke", "check": {"id": "fuzz.checks.min-length"}, "config": {"minLength": 2}, "trace": {"output": "hello", "runId": "r", "tenantId": "t"}},
    {"v": 2, "kind": "check-invoke", "check": {"id": "fuzz.checks.min-length"}, "config": [], "trace": {}},
    {"v": 1, "kind": "result"},
]
for b in bodies:
    put("pack_service", dumps(b))
put("pack_service", "kindgi-timeout-ms: 50\nkindgi-run-id: run-1\ntraceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\n\0" + dumps(bodies[0]))
put("pack_service", "content-type: application/json; charset=utf-8\nkindgi-protocol: 2\n\0" + dumps(bodies[3]))
put("pack_service", "content-type: text/plain\n\0" + dumps(bodies[0]))
put("pack_service", "kindgi-pack-token: wrong\n\0{}")
put("pack_service", "GET /v1/info\n\0")
put("pack_service", "GET /readyz\n\0")
put("pack_service", "POST /v1/nope\n\0[1]")
put("pack_service", "not json")

# -- pack client (first byte picks a status unless the input is a raw HTTP answer)
put("pack_client", "\0" + dumps({"v": 2, "kind": "result", "output": {"message": "hi"}}))
put("pack_client", "\0" + dumps({"v": 2, "kind": "error", "error": {"code": "input-validation-failed", "message": "m", "issues": []}}))
put("pack_client", "\0" + dumps({"v": 2, "kind": "check-result", "result": {"passed": False, "reason": "r"}}))
put("pack_client", "\x0f" + dumps({"error": "missing env", "missingEnv": ["A"]}))
put("pack_client", "\x06" + dumps({"error": "Bad pack token"}))
put("pack_client", "\x0d" + "oops")
put("pack_client", "\x12")
put("pack_client", "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n5\r\n{\"v\":\r\n0\r\n\r\n")
put("pack_client", "HTTP/1.1 503 Service Unavailable\r\nretry-after: 99999\r\ncontent-length: 2\r\n\r\n{}")

# -- /v1 API (first byte picks the route)
manifest = {"projectId": "proj-1", "id": "acme.lookup", "description": "Look an order up", "version": "1.0.0",
            "input": {"type": "object", "properties": {"orderId": {"type": "string", "pattern": "^o[0-9]+$"}}, "required": ["orderId"]},
            "output": {"type": "object"}, "effects": [{"kind": "reads", "resource": "orders"}], "mutating": False}
put("api", "T" + dumps(manifest))
put("api", "I" + dumps(dict(manifest, version="1.0.1")))
for m in manifests[:4]:
    put("api", "T" + dumps(dict(load(m), projectId="proj-1")))
put("api", "T" + dumps({"id": 7}))
put("api", "T[")
put("api", "R" + dumps({"flowId": "fuzz.check-order", "input": {"orderId": "o1"}, "dryRun": True, "wait": True}))
put("api", "R" + dumps({"flowId": "fuzz.note-order", "flowVersion": "1.0.0", "input": {"orderId": "o1"}, "waitMs": 200}))
put("api", "R" + dumps({"flowId": "fuzz.check-order", "input": {}}))
put("api", "R" + dumps({"flowId": "nope", "dryRun": "yes"}))
put("api", "Uacme.lookup/1.0.0")
put("api", "Crun_123")
put("api", "Qlimit=2&cursor=abc")
put("api", "Grun_123")
put("api", "Jlimit=5000&after=-1")
put("api", "Ffuzz.check-order")
