//! Guardrail checks for a Rust pack: the guardrail's index entry (id, check id, kind,
//! action, config schema, …) plus its `evaluate(config, trace, ctx)` and an optional load
//! step.

use kindgi_schema::{CompileOptions, Mode, Side};
use kindgi_spec::pack_index::IndexGuardrail;
use kindgi_spec::pack_protocol::CheckResult;
use kindgi_tools::HandlerError;
use serde_json::{Map, Value};
use std::future::Future;
use std::sync::Arc;

use super::SdkError;
use crate::service::registry::{CheckContext, Evaluate, LoadFn};

/// A guardrail check, ready to register with a [`super::Pack`].
#[derive(Clone)]
pub struct Check {
    pub(crate) guardrail: IndexGuardrail,
    pub(crate) evaluate: Evaluate,
    pub(crate) load: Option<LoadFn>,
}

impl std::fmt::Debug for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Check")
            .field("guardrail", &self.guardrail)
            .finish_non_exhaustive()
    }
}

impl Check {
    /// Starts a check for the guardrail `id` (kind `zero-llm`, action `halt` by default).
    pub fn define(id: impl Into<String>) -> CheckBuilder {
        CheckBuilder {
            guardrail: IndexGuardrail {
                id: id.into(),
                kind: "zero-llm".to_owned(),
                action: serde_json::json!({"on-violation": "halt"}),
                ..IndexGuardrail::default()
            },
            evaluate: None,
            load: None,
        }
    }

    /// The id a `check-invoke` names (`checkId`, else the guardrail id).
    pub fn check_id(&self) -> &str {
        self.guardrail.check_id()
    }

    pub fn guardrail_id(&self) -> &str {
        &self.guardrail.id
    }
}

/// Builds a [`Check`].
pub struct CheckBuilder {
    guardrail: IndexGuardrail,
    evaluate: Option<Evaluate>,
    load: Option<LoadFn>,
}

impl std::fmt::Debug for CheckBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckBuilder")
            .field("guardrail", &self.guardrail)
            .finish_non_exhaustive()
    }
}

impl CheckBuilder {
    /// The id `check-invoke` resolves (default: the guardrail id).
    pub fn check_id(mut self, check_id: impl Into<String>) -> Self {
        self.guardrail.check_id = Some(check_id.into());
        self
    }

    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.guardrail.name = Some(name.into());
        self
    }

    /// `zero-llm` (default), `llm-judge`, …
    pub fn kind(mut self, kind: impl Into<String>) -> Self {
        self.guardrail.kind = kind.into();
        self
    }

    /// `{"on-violation": <action>}` (default `halt`).
    pub fn on_violation(mut self, action: impl Into<String>) -> Self {
        self.guardrail.action = serde_json::json!({"on-violation": action.into()});
        self
    }

    /// The whole `action` object.
    pub fn action(mut self, action: Value) -> Self {
        self.guardrail.action = action;
        self
    }

    pub fn severity(mut self, severity: impl Into<String>) -> Self {
        self.guardrail.severity = Some(severity.into());
        self
    }

    pub fn scope(mut self, scope: Value) -> Self {
        self.guardrail.scope = Some(scope);
        self
    }

    /// Kindgi's before-tool stage (docs/guardrails.md): the runtime runs this check before
    /// each call of `tools` starts (every call when `tools` is empty) — the trace lists the
    /// calls that ran and the pending call last — and a failing `halt` verdict refuses the
    /// call. Sets the index entry's `stage` and `scope.tools` (kept with any other scope).
    pub fn before_tool<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.guardrail
            .extra
            .insert("stage".into(), Value::String("before-tool".into()));
        let tools: Vec<Value> = tools.into_iter().map(|t| Value::String(t.into())).collect();
        let mut scope = match self.guardrail.scope.take() {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        if tools.is_empty() {
            scope.remove("tools");
        } else {
            scope.insert("tools".into(), Value::Array(tools));
        }
        self.guardrail.scope = (!scope.is_empty()).then_some(Value::Object(scope));
        self
    }

    /// The JSON Schema the config is validated against before `evaluate` runs (as sent: no
    /// defaults are filled — `evaluate` applies its own).
    pub fn config_schema(mut self, schema: Value) -> Self {
        self.guardrail.config_schema = Some(schema);
        self
    }

    /// A default config the runtime passes (open object).
    pub fn config(mut self, config: Value) -> Self {
        self.guardrail.config = Some(config);
        self
    }

    /// `evaluate(config, trace, ctx)`. `ctx.signal` fires at the deadline or on disconnect.
    pub fn evaluate<F, Fut>(mut self, evaluate: F) -> Self
    where
        F: Fn(Map<String, Value>, Value, CheckContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CheckResult, HandlerError>> + Send + 'static,
    {
        self.evaluate = Some(Arc::new(move |config, trace, ctx| {
            Box::pin(evaluate(config, trace, ctx))
        }));
        self
    }

    /// A fallible step run once before the service listens; an `Err` refuses to boot.
    pub fn load<F>(mut self, load: F) -> Self
    where
        F: Fn() -> Result<(), String> + Send + Sync + 'static,
    {
        self.load = Some(Arc::new(load));
        self
    }

    /// Checks the definition: an `evaluate`, a compiling config schema.
    pub fn build(self) -> Result<Check, SdkError> {
        let id = self.guardrail.id.clone();
        if id.is_empty() {
            return Err(SdkError::Check {
                id,
                problem: "the guardrail id is empty".to_owned(),
            });
        }
        if let Some(schema) = &self.guardrail.config_schema {
            let options = CompileOptions {
                mode: Mode::Pack,
                side: Side::Output,
            };
            if let Err(e) = kindgi_schema::compile(schema, options) {
                return Err(SdkError::Check {
                    id,
                    problem: format!("its config schema does not compile: {e}"),
                });
            }
        }
        let Some(evaluate) = self.evaluate else {
            return Err(SdkError::Check {
                id,
                problem: "it has no evaluate function".to_owned(),
            });
        };
        Ok(Check {
            guardrail: self.guardrail,
            evaluate,
            load: self.load,
        })
    }
}
