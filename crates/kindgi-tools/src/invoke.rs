//! Invoking a tool, exactly as the reference `invokeTool` does (tool.md §7):
//!
//! 0. `needsSpec.env`: every declared value present (the context's or the schema's string
//!    default) — else `precondition-failed`/`env-value-missing`; then each valid — else
//!    `precondition-failed`/`env-value-invalid`. The handler's `ctx.env` holds only the
//!    declared names.
//! 1. The input, validated on a copy with `default`s filled — else `input-validation-failed`
//!    (the handler is not called).
//! 2. The handler. A [`HandlerError::Precondition`] is `precondition-failed`; any other
//!    failure, a panic included, is `handler-error`.
//! 3. The output, validated unless skipped — else `output-validation-failed`.
//!
//! Invocation is total: it always returns a `Result`, never panics, and compiles nothing
//! (the validators were compiled when the tool was defined).

use futures::FutureExt;
use kindgi_schema::Issues;
use serde_json::Value;
use std::any::Any;
use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use crate::compiled::{CompiledTool, SchemaSlot};
use crate::context::ToolContext;
use crate::error::{InvokeError, InvokeErrorCode};
use crate::tool::{HandlerError, Tool};

/// `reason` of a missing env value.
pub const ENV_VALUE_MISSING: &str = "env-value-missing";
/// `reason` of an env value its schema refuses.
pub const ENV_VALUE_INVALID: &str = "env-value-invalid";

/// How to invoke.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InvokeOptions {
    /// Return the handler's output without validating it against the output schema.
    pub skip_output_validation: bool,
}

impl InvokeOptions {
    pub fn skip_output_validation() -> Self {
        Self {
            skip_output_validation: true,
        }
    }
}

/// Invokes `tool` with a copy of `input` (the caller's value is never changed).
pub async fn invoke(tool: &Tool, input: &Value, ctx: ToolContext) -> Result<Value, InvokeError> {
    invoke_owned_with(tool, input.clone(), ctx, InvokeOptions::default()).await
}

/// [`invoke`] with options.
pub async fn invoke_with(
    tool: &Tool,
    input: &Value,
    ctx: ToolContext,
    options: InvokeOptions,
) -> Result<Value, InvokeError> {
    invoke_owned_with(tool, input.clone(), ctx, options).await
}

/// Invokes `tool`, taking the input by value (no copy: defaults are filled into it).
pub async fn invoke_owned(
    tool: &Tool,
    input: Value,
    ctx: ToolContext,
) -> Result<Value, InvokeError> {
    invoke_owned_with(tool, input, ctx, InvokeOptions::default()).await
}

/// [`invoke_owned`] with options. Every other entry point ends here.
pub async fn invoke_owned_with(
    tool: &Tool,
    mut input: Value,
    ctx: ToolContext,
    options: InvokeOptions,
) -> Result<Value, InvokeError> {
    let id = tool.id();
    let compiled = tool.compiled().map_err(|failure| {
        // Only a tool assembled with `from_parts` can get here: definition refuses these.
        let code = match failure.slot {
            SchemaSlot::Output => InvokeErrorCode::OutputValidationFailed,
            SchemaSlot::Input => InvokeErrorCode::InputValidationFailed,
            SchemaSlot::Env => InvokeErrorCode::PreconditionFailed,
        };
        InvokeError {
            code,
            message: format!("Tool \"{id}\" {failure}"),
            tool_id: id.to_owned(),
            reason: None,
            errors: Vec::new(),
        }
    })?;

    // 0. Env preconditions.
    let ctx = prepare_env(id, compiled, ctx)?;

    // 1. Input, with defaults filled into our own copy.
    if let Err(errors) = compiled.input.validate_in_place(&mut input) {
        return Err(InvokeError {
            code: InvokeErrorCode::InputValidationFailed,
            message: format!("Input for tool \"{id}\" failed validation"),
            tool_id: id.to_owned(),
            reason: None,
            errors: errors.into(),
        });
    }

    // 2. The handler. A panic while building the future or while polling it is caught.
    let handler = tool.handler();
    let outcome = match std::panic::catch_unwind(AssertUnwindSafe(|| handler(input, ctx))) {
        Ok(future) => AssertUnwindSafe(future).catch_unwind().await,
        Err(panic) => Err(panic),
    };
    let output = match outcome {
        Ok(Ok(output)) => output,
        Ok(Err(HandlerError::Failed(message))) => return Err(handler_error(id, &message)),
        Ok(Err(HandlerError::Precondition { reason, message })) => {
            return Err(precondition_failed(id, reason, &message));
        }
        Err(panic) => return Err(handler_error(id, &panic_message(&*panic))),
    };

    // 3. Output.
    if !options.skip_output_validation {
        if let Err(errors) = compiled.output.validate(&output) {
            return Err(InvokeError {
                code: InvokeErrorCode::OutputValidationFailed,
                message: format!("Tool \"{id}\" handler produced output that failed validation"),
                tool_id: id.to_owned(),
                reason: None,
                errors: errors.into(),
            });
        }
    }
    Ok(output)
}

impl Tool {
    /// Invokes this tool: see [`invoke`].
    pub async fn invoke(&self, input: &Value, ctx: ToolContext) -> Result<Value, InvokeError> {
        invoke(self, input, ctx).await
    }

    /// Invokes this tool with options: see [`invoke_with`].
    pub async fn invoke_with(
        &self,
        input: &Value,
        ctx: ToolContext,
        options: InvokeOptions,
    ) -> Result<Value, InvokeError> {
        invoke_with(self, input, ctx, options).await
    }
}

/// Step 0: resolves and checks the declared env values; returns the handler's context,
/// whose `env` holds exactly the declared names.
fn prepare_env(
    id: &str,
    compiled: &CompiledTool,
    mut ctx: ToolContext,
) -> Result<ToolContext, InvokeError> {
    if compiled.env.is_empty() {
        // Nothing declared: the handler sees no env at all (unchanged when none was passed).
        ctx.env = None;
        return Ok(ctx);
    }
    let given = ctx.env.as_deref();
    let mut values: Vec<(&str, String)> = Vec::with_capacity(compiled.env.len());
    let mut missing: Vec<&str> = Vec::new();
    for need in &compiled.env {
        match given
            .and_then(|env| env.get(&need.name))
            .or(need.default.as_ref())
        {
            Some(value) => values.push((&need.name, value.clone())),
            None => missing.push(&need.name),
        }
    }
    // Every missing name is reported together, before any value is checked.
    if !missing.is_empty() {
        let names = missing
            .iter()
            .map(|n| format!("\"{n}\""))
            .collect::<Vec<_>>()
            .join(", ");
        let inner = if missing.len() == 1 {
            format!(
                "tool \"{id}\" needs env value {names}: the context's `env` doesn't set it, and its schema has no default"
            )
        } else {
            format!(
                "tool \"{id}\" needs env values {names}: the context's `env` doesn't set them, and their schemas have no default"
            )
        };
        return Err(precondition_failed(
            id,
            ENV_VALUE_MISSING.to_owned(),
            &inner,
        ));
    }
    for (need, (name, value)) in compiled.env.iter().zip(&values) {
        if let Err(issues) = need.validator.validate(&Value::String(value.clone())) {
            let inner = format!(
                "env value \"{name}\" is \"{value}\", which doesn't match the schema tool \"{id}\" declares for it: {}",
                join_messages(&issues)
            );
            return Err(precondition_failed(
                id,
                ENV_VALUE_INVALID.to_owned(),
                &inner,
            ));
        }
    }
    let env: BTreeMap<String, String> = values
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value))
        .collect();
    ctx.env = Some(Arc::new(env));
    Ok(ctx)
}

fn join_messages(issues: &Issues) -> String {
    issues
        .iter()
        .map(|i| i.message())
        .collect::<Vec<_>>()
        .join("; ")
}

fn precondition_failed(id: &str, reason: String, message: &str) -> InvokeError {
    InvokeError {
        code: InvokeErrorCode::PreconditionFailed,
        message: format!("Tool \"{id}\" was not run: {reason}: {message}"),
        tool_id: id.to_owned(),
        reason: Some(reason),
        errors: Vec::new(),
    }
}

fn handler_error(id: &str, message: &str) -> InvokeError {
    InvokeError {
        code: InvokeErrorCode::HandlerError,
        message: format!("Tool \"{id}\" handler threw: {message}"),
        tool_id: id.to_owned(),
        reason: None,
        errors: Vec::new(),
    }
}

/// The text a panic was raised with (`panic!("…")` carries a `&str` or a `String`).
fn panic_message(panic: &(dyn Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "the handler panicked".to_owned()
    }
}
