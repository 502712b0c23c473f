//! The seam through which a call gets its tool's env values and secrets (platform-api.md §7,
//! "Into a tool call"): before each call the runtime asks the [`CallValues`] provider the
//! host plugs in (none by default) for the values of the tool's `needsSpec.env` names and
//! for a secret resolver, for the call's tenant, and puts them in the [`ToolContext`].
//!
//! - A declared env name with neither a value nor a string `default` fails the call before
//!   the handler runs: `precondition-failed` with reason `env-value-missing` and the
//!   reference's message (in-process tools check it in `kindgi_tools::invoke`; for a pack
//!   tool the runtime checks it here, with the same words, before the pack is called).
//! - An in-process handler (an http tool's `authorization.secretRef`) resolves its secrets
//!   through `ctx.secrets`, a resolver.
//! - A pack tool gets exactly the secrets its `needsSpec.secrets` names, resolved here before
//!   the call (`ctx.secret_values`, sent as the wire's `ctx.secrets`). A name without a value
//!   whose schema does not accept `null` fails the call before it is sent:
//!   `precondition-failed` with reason `secret-value-missing`, naming the secret and the
//!   command that sets it.
//! - Every value resolved either way is taught to the run's [`SecretMask`] first, so it is
//!   masked (`***`) in whatever the run stores or sends.

use kindgi_spec::ToolManifest;
use kindgi_tools::ToolContext;
use kindgi_tools::context::SecretValues;
use kindgi_tools::dispatch::{ToolCallError, ToolDispatcher, ToolTransport};
use kindgi_tools::invoke::ENV_VALUE_MISSING;
use kindgi_tools::secret_mask::{MaskingResolver, SecretMask};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

pub use kindgi_core::ports::CallValues;

/// The tool's declared secret names (`needsSpec.secrets`), in declaration order.
pub fn declared_secrets(tool: &ToolManifest) -> Vec<String> {
    tool.needs_spec
        .as_ref()
        .and_then(|n| n.secrets.as_ref())
        .map(|s| s.keys().cloned().collect())
        .unwrap_or_default()
}

/// The tool's declared env names, in declaration order.
pub fn declared_env(tool: &ToolManifest) -> Vec<String> {
    tool.needs_spec
        .as_ref()
        .and_then(|n| n.env.as_ref())
        .map(|env| env.keys().cloned().collect())
        .unwrap_or_default()
}

fn string_default(schema: &Value) -> Option<&str> {
    schema.get("default").and_then(Value::as_str)
}

/// Fills `ctx.env` and `ctx.secrets` for a call of `tool` from `values` (when there is a
/// provider), and checks a pack tool's required env values and secrets. Every secret value
/// the call resolves is taught to `mask`.
pub async fn prepare_context(
    values: Option<&Arc<dyn CallValues>>,
    tool: &dyn ToolDispatcher,
    mut ctx: ToolContext,
    mask: &Arc<SecretMask>,
) -> Result<ToolContext, ToolCallError> {
    let manifest = tool.manifest();
    let names = declared_env(manifest);
    if let Some(values) = values {
        if !names.is_empty() {
            let env = values
                .env(&ctx.tenant_id, ctx.project_id.as_deref(), manifest, &names)
                .await
                .map_err(|why| ToolCallError {
                    code: "precondition-failed".into(),
                    message: format!(
                        "Tool \"{}\" was not run: env-unavailable: its env values could not be read: {why}",
                        manifest.id
                    ),
                    tool_id: manifest.id.clone(),
                    transport: false,
                    issues: Vec::new(),
                })?;
            let env: BTreeMap<String, String> =
                env.into_iter().filter(|(k, _)| names.contains(k)).collect();
            ctx.env = Some(Arc::new(env));
        }
        if let Some(secrets) = values.secrets(&ctx.tenant_id, ctx.project_id.as_deref(), manifest) {
            ctx.secrets = Some(Arc::new(MaskingResolver::new(secrets, mask.clone())));
        }
    }
    if tool.transport() == ToolTransport::Pack {
        check_env(manifest, &ctx)?;
        ctx.secret_values = pack_secrets(
            values,
            manifest,
            &ctx.tenant_id,
            ctx.project_id.as_deref(),
            mask,
        )
        .await?;
    }
    Ok(ctx)
}

/// A pack tool's declared secrets, resolved now (`None` when it declares none); a missing
/// one that is required fails the call before it is sent.
async fn pack_secrets(
    values: Option<&Arc<dyn CallValues>>,
    manifest: &ToolManifest,
    tenant: &str,
    project: Option<&str>,
    mask: &SecretMask,
) -> Result<Option<Arc<SecretValues>>, ToolCallError> {
    let names = declared_secrets(manifest);
    if names.is_empty() {
        return Ok(None);
    }
    let id = &manifest.id;
    let (found, served_env) = match values {
        Some(values) => {
            let found = values
                .secret_values(tenant, project, manifest, &names)
                .await
                .map_err(|why| {
                    precondition(
                        id,
                        format!("secret-unavailable: its secrets could not be read: {why}"),
                    )
                })?;
            (found, values.served_env().to_owned())
        }
        None => (BTreeMap::new(), "local".to_owned()),
    };
    let found: BTreeMap<String, String> = found
        .into_iter()
        .filter(|(k, _)| names.contains(k))
        .collect();
    for value in found.values() {
        mask.add(value);
    }
    let missing: Vec<&String> = names
        .iter()
        .filter(|n| !found.contains_key(*n) && !accepts_null(manifest, n))
        .collect();
    if let Some(name) = missing.first() {
        let all = missing
            .iter()
            .map(|n| format!("\"{n}\""))
            .collect::<Vec<_>>()
            .join(", ");
        let (noun, verb) = if missing.len() == 1 {
            ("secret", "is")
        } else {
            ("secrets", "are")
        };
        return Err(precondition(
            id,
            format!(
                "{SECRET_VALUE_MISSING}: tool \"{id}\" needs {noun} {all}, which {verb} not set in env \"{served_env}\" for this tenant (its project or the tenant); set it with `kindgi secrets set {name} --env={served_env} --scope=tenant --from-stdin`"
            ),
        ));
    }
    Ok(Some(Arc::new(SecretValues(found))))
}

/// `reason` of a declared secret without a value.
pub const SECRET_VALUE_MISSING: &str = "secret-value-missing";

/// The reference's rule: a declared secret is required unless its schema accepts `null`.
fn accepts_null(manifest: &ToolManifest, name: &str) -> bool {
    manifest
        .needs_spec
        .as_ref()
        .and_then(|n| n.secrets.as_ref())
        .and_then(|s| s.get(name))
        .and_then(|schema| kindgi_schema::compile_inline(schema).ok())
        .is_some_and(|v| v.is_valid(&Value::Null))
}

fn precondition(id: &str, inner: String) -> ToolCallError {
    ToolCallError {
        code: "precondition-failed".into(),
        message: format!("Tool \"{id}\" was not run: {inner}"),
        tool_id: id.to_owned(),
        transport: false,
        issues: Vec::new(),
    }
}

/// The reference's step 0 for a tool the runtime does not invoke itself: every declared env
/// name has a value (the context's, else the schema's string default).
pub fn check_env(manifest: &ToolManifest, ctx: &ToolContext) -> Result<(), ToolCallError> {
    let Some(env) = manifest.needs_spec.as_ref().and_then(|n| n.env.as_ref()) else {
        return Ok(());
    };
    let given = ctx.env.as_deref();
    let missing: Vec<&str> = env
        .iter()
        .filter(|(name, schema)| {
            given.and_then(|g| g.get(*name)).is_none() && string_default(schema).is_none()
        })
        .map(|(name, _)| name.as_str())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let id = &manifest.id;
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
    Err(ToolCallError {
        code: "precondition-failed".into(),
        message: format!("Tool \"{id}\" was not run: {ENV_VALUE_MISSING}: {inner}"),
        tool_id: id.to_string(),
        transport: false,
        issues: Vec::new(),
    })
}
