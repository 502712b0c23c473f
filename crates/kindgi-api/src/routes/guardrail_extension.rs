//! Kindgi's additions to a guardrail definition (docs/guardrails.md), beyond the reference's
//! `guardrail.schema.json`: `stage` (`after-turn`, the default, or `before-tool`) and
//! `scope.tools` (the tools whose calls a before-tool guardrail judges).
//!
//! They are taken out before the reference schema judges the rest (it allows no other
//! fields), checked here, and put back, so the stored definition keeps them.

use serde_json::{Map, Value, json};

/// The stages a guardrail may declare.
const STAGES: [&str; 2] = ["after-turn", "before-tool"];

/// Built-in checks that judge the final answer only: before a call there is none, so as a
/// before-tool guardrail they would fail (or pass) whatever the call.
const OUTPUT_CHECKS: [&str; 4] = [
    "must-cite",
    "output-matches",
    "required-substring",
    "forbidden-substring",
];

/// The extension fields of one definition, taken out of it.
#[derive(Debug, Default)]
pub(crate) struct Extension {
    stage: Option<Value>,
    tools: Option<Value>,
}

impl Extension {
    /// Takes `stage` and `scope.tools` out of `definition`.
    pub(crate) fn take(definition: &mut Map<String, Value>) -> Extension {
        let stage = definition.remove("stage");
        let tools = definition
            .get_mut("scope")
            .and_then(Value::as_object_mut)
            .and_then(|s| s.remove("tools"));
        Extension { stage, tools }
    }

    /// Every way the fields are wrong, as `{path, message}` issues saying what to do.
    pub(crate) fn issues(&self, check: Option<&str>) -> Vec<Value> {
        let mut out = Vec::new();
        let stage = match &self.stage {
            None => Some("after-turn"),
            Some(Value::String(s)) if STAGES.contains(&s.as_str()) => Some(s.as_str()),
            Some(_) => {
                out.push(json!({"path": "/stage",
                    "message": "must be \"after-turn\" (the default) or \"before-tool\""}));
                None
            }
        };
        if let Some(tools) = &self.tools {
            let ok = tools.as_array().is_some_and(|a| {
                !a.is_empty() && a.iter().all(|t| t.as_str().is_some_and(|s| !s.is_empty()))
            });
            if !ok {
                out.push(json!({"path": "/scope/tools",
                    "message": "must be a non-empty list of tool ids"}));
            } else if stage == Some("after-turn") {
                out.push(json!({"path": "/scope/tools",
                    "message": "applies to before-tool guardrails only; set \"stage\": \"before-tool\" or remove it"}));
            }
        }
        if stage == Some("before-tool")
            && let Some(c) = check.filter(|c| OUTPUT_CHECKS.contains(c))
        {
            out.push(json!({"path": "/check",
                "message": format!("check \"{c}\" judges the final answer, which a before-tool guardrail does not have; use it after the turn")}));
        }
        out
    }

    /// Puts the fields back into `definition`.
    pub(crate) fn restore(self, definition: &mut Map<String, Value>) {
        if let Some(s) = self.stage {
            definition.insert("stage".into(), s);
        }
        if let Some(t) = self.tools
            && let Some(scope) = definition.get_mut("scope").and_then(Value::as_object_mut)
        {
            scope.insert("tools".into(), t);
        }
    }
}
