"""Builds index.extras.json and index.import-throws.json from index.json (see make-indexes)."""

import importlib
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def tool_entry(module: str, attr: str) -> dict[str, Any]:
    t = getattr(importlib.import_module(module), attr)
    return {
        "id": t.id,
        "version": t.version,
        "description": t.description,
        "input": t.input_schema,
        "output": t.output_schema,
        "modulePath": module.replace(".", "/") + ".py",
    }


def guardrail_entry(module: str, attr: str) -> dict[str, Any]:
    g = getattr(importlib.import_module(module), attr)
    return {
        "id": g.id,
        "checkId": g.check_id,
        "kind": g.kind,
        "action": dict(g.action),
        "checkModulePath": module.replace(".", "/") + ".py",
        "configSchema": {"additionalProperties": True, "type": "object"},
    }


def with_entries(base: dict[str, Any], tools: list[dict[str, Any]], guardrails: list[dict[str, Any]]) -> dict[str, Any]:
    out = json.loads(json.dumps(base))
    out["tools"] = sorted(out["tools"] + tools, key=lambda e: (e["id"], e.get("version", "")))
    out["guardrails"] = sorted(out["guardrails"] + guardrails, key=lambda e: e["id"])
    return out


base = json.loads((HERE / "index.json").read_text("utf-8"))
extras = with_entries(
    base,
    [
        tool_entry("extras.versioned_v1", "versioned_v1"),
        tool_entry("extras.versioned_v2", "versioned_v2"),
        tool_entry("extras.bad_schema", "bad_schema"),
    ],
    [guardrail_entry("extras.check_waits", "check_waits")],
)
(HERE / "index.extras.json").write_text(canonical(extras), "utf-8")
import_throws = with_entries(
    base,
    [
        {
            "id": "conformance.import-throws",
            "version": "1.0.0",
            "description": "Its module raises on import.",
            "input": {"type": "object"},
            "output": {"type": "object"},
            "modulePath": "broken/import_throws.py",
        }
    ],
    [],
)
(HERE / "index.import-throws.json").write_text(canonical(import_throws), "utf-8")
