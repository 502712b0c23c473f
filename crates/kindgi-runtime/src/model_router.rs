//! The model router: which model provider and model an agent turn calls.
//!
//! Per turn, over the tenant's registered providers (`/v1/providers`, the
//! [`ProviderRegistry`] port), of capability kind `llm-inference`:
//!
//! 1. A model fits when it has every feature the agent's `llm-inference` capability
//!    requires (`capabilities[].requirements[].feature`).
//! 2. The agent's `preferredProvider`, when registered and with a fitting model, is chosen;
//!    otherwise the providers rank by how many of the capability's `preferences[].feature`
//!    their `attributes` (or the model's features) match, then by id.
//! 3. Within the provider: the agent's `preferredModel` when it fits, then
//!    `metadata.defaultModel`, then the first fitting model.
//! 4. A provider marked `fallback` serves only when no other fits; the turn then carries the
//!    `fallback-provider` warning.
//!
//! With no `llm-inference` provider registered, the host-configured model serves
//! (`KINDGI_MODEL…`, else dev-echo), as before registrations existed. Registered providers
//! none of which fits fail the turn `capability-routing-failed`.
//!
//! The chosen registration's `secret_ref` is resolved through the host's
//! [`CallValues::provider_secrets`] on every turn (a rotated key takes effect at once); the
//! client is built by [`adapters::connect`] under the host's egress policy and cached per
//! tenant, provider, model and registration (its `created_at`), rebuilt when the key
//! changes. A chosen provider that cannot be connected fails the turn naming the provider,
//! its adapter and the setting.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use kindgi_core::ports::{ProviderRegistration, ProviderRegistry};
use kindgi_tools::egress::EgressPolicy;
use kindgi_tools::secret_mask::SecretMask;
use serde_json::Value;

use crate::call_values::CallValues;
use crate::catalogue::AgentSpec;
use crate::model::ModelProvider;
use crate::model::adapters::{self, Connection};

/// The warning code of a turn served by a fallback provider.
pub const FALLBACK_WARNING_CODE: &str = "fallback-provider";
/// Its words.
pub const FALLBACK_WARNING: &str = "No model provider other than a fallback fits this agent, so a fallback provider answered. Register a model provider (`kindgi providers register`) to get real answers.";

/// The most registrations read per turn (a tenant's whole registry, in pages).
const MAX_REGISTRATIONS: usize = 1000;
/// The most clients kept; the cache starts over when full.
const MAX_CACHED: usize = 1024;

/// What a turn calls.
#[derive(Debug, Clone)]
pub struct Routed {
    pub provider: Arc<dyn ModelProvider>,
    /// The registration's id (or the host model's `provider_id`).
    pub provider_id: String,
    pub model: String,
    /// Served by a `fallback` registration: the turn carries [`FALLBACK_WARNING_CODE`].
    pub fallback: bool,
}

/// Why a turn has no model to call. The text is the run's `failureMessage`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    #[error("capability-routing-failed: {0}")]
    NoFit(String),
    #[error(
        "model-invocation-failed: Model provider \"{provider}\" (adapter {adapter}) cannot be used: {why}"
    )]
    Unusable {
        provider: String,
        adapter: String,
        why: String,
    },
    #[error("model-invocation-failed: the model providers of this tenant cannot be read: {0}")]
    Registry(String),
}

type CacheKey = (String, String, String, i64);
/// A built client and the key it was built with.
type Cached = (Option<String>, Arc<dyn ModelProvider>);

/// The router a runtime holds: the registry, the host's model and egress policy, and the
/// clients built so far.
pub struct ModelRouter {
    registry: Option<Arc<dyn ProviderRegistry>>,
    host: Arc<dyn ModelProvider>,
    egress: EgressPolicy,
    cache: Mutex<HashMap<CacheKey, Cached>>,
}

impl std::fmt::Debug for ModelRouter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelRouter")
            .field("registry", &self.registry.is_some())
            .field("host", &self.host.provider_id())
            .finish_non_exhaustive()
    }
}

/// What the agent asks of its model: the `llm-inference` capability's required and
/// preferred features, and its soft hints.
#[derive(Debug, Default)]
struct Wants {
    required: Vec<String>,
    preferred: Vec<String>,
    provider: Option<String>,
    model: Option<String>,
}

fn features_of(entry: &Value, key: &str) -> Vec<String> {
    entry
        .get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|r| match r {
                    Value::String(s) => Some(s.clone()),
                    other => other
                        .get("feature")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                })
                .collect()
        })
        .unwrap_or_default()
}

fn wants(agent: &AgentSpec) -> Wants {
    let mut w = Wants {
        provider: agent.preferred_provider.clone(),
        model: agent.preferred_model.clone(),
        ..Wants::default()
    };
    for cap in &agent.capabilities {
        let kind = cap
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("llm-inference");
        if kind != "llm-inference" {
            continue;
        }
        w.required.extend(features_of(cap, "requirements"));
        w.preferred.extend(features_of(cap, "preferences"));
    }
    w
}

fn is_llm(r: &ProviderRegistration) -> bool {
    r.metadata
        .get("capabilityKind")
        .and_then(Value::as_str)
        .is_none_or(|k| k == "llm-inference")
}

fn model_features(model: &Value) -> Vec<&str> {
    model
        .get("features")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The names of `r`'s models that have every required feature, in registration order.
fn fitting<'a>(r: &'a ProviderRegistration, w: &Wants) -> Vec<&'a str> {
    r.models()
        .iter()
        .filter(|m| {
            let have = model_features(m);
            w.required.iter().all(|f| have.contains(&f.as_str()))
        })
        .filter_map(|m| m.get("name").and_then(Value::as_str))
        .collect()
}

/// The model of `r` a turn calls: the preferred one, the default, the first (of `fits`).
fn choose_model<'a>(r: &'a ProviderRegistration, fits: &[&'a str], w: &Wants) -> Option<&'a str> {
    let pick = |name: Option<&str>| name.and_then(|n| fits.iter().copied().find(|f| *f == n));
    pick(w.model.as_deref())
        .or_else(|| pick(r.default_model()))
        .or_else(|| fits.first().copied())
}

fn score(r: &ProviderRegistration, model: &str, w: &Wants) -> usize {
    let attributes: Vec<&str> = r
        .metadata
        .get("attributes")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let features: Vec<&str> = r
        .models()
        .iter()
        .find(|m| m.get("name").and_then(Value::as_str) == Some(model))
        .map(model_features)
        .unwrap_or_default();
    w.preferred
        .iter()
        .filter(|p| attributes.contains(&p.as_str()) || features.contains(&p.as_str()))
        .count()
}

/// The registration and model among `regs` for `w`, or `None` when none fits.
fn pick<'a>(
    regs: &[&'a ProviderRegistration],
    w: &Wants,
) -> Option<(&'a ProviderRegistration, String)> {
    let mut ranked: Vec<(&'a ProviderRegistration, String, usize)> = Vec::new();
    for &r in regs {
        let fits = fitting(r, w);
        if let Some(model) = choose_model(r, &fits, w) {
            if w.provider.as_deref() == Some(r.id.as_str()) {
                return Some((r, model.to_owned()));
            }
            ranked.push((r, model.to_owned(), score(r, model, w)));
        }
    }
    ranked.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.id.cmp(&b.0.id)));
    ranked.into_iter().next().map(|(r, m, _)| (r, m))
}

fn max_output_tokens(r: &ProviderRegistration, model: &str) -> Option<u32> {
    r.models()
        .iter()
        .find(|m| m.get("name").and_then(Value::as_str) == Some(model))
        .and_then(|m| m.get("maxOutputTokens"))
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
}

/// The model's `sampling` flag (absent: it takes sampling settings).
fn takes_sampling(r: &ProviderRegistration, model: &str) -> bool {
    r.models()
        .iter()
        .find(|m| m.get("name").and_then(Value::as_str) == Some(model))
        .and_then(|m| m.get("sampling"))
        .and_then(Value::as_bool)
        .unwrap_or(true)
}

impl ModelRouter {
    pub fn new(
        registry: Option<Arc<dyn ProviderRegistry>>,
        host: Arc<dyn ModelProvider>,
        egress: EgressPolicy,
    ) -> ModelRouter {
        ModelRouter {
            registry,
            host,
            egress,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// The host-configured model (what serves a tenant without registrations).
    pub fn host(&self) -> &Arc<dyn ModelProvider> {
        &self.host
    }

    fn host_route(&self) -> Routed {
        Routed {
            provider: self.host.clone(),
            provider_id: self.host.provider_id().to_owned(),
            model: self.host.model().to_owned(),
            fallback: false,
        }
    }

    async fn registrations(&self, tenant: &str) -> Result<Vec<ProviderRegistration>, RouteError> {
        let Some(registry) = &self.registry else {
            return Ok(Vec::new());
        };
        let mut all: Vec<ProviderRegistration> = Vec::new();
        loop {
            let after = all.last().map(|r| r.id.clone());
            let page = registry
                .providers(tenant, after.as_deref(), 100)
                .await
                .map_err(|e| RouteError::Registry(e.to_string()))?;
            let done = page.len() < 100;
            all.extend(page);
            if done || all.len() >= MAX_REGISTRATIONS {
                return Ok(all);
            }
        }
    }

    /// The provider and model `agent`'s turn in `tenant` calls.
    pub async fn route(
        &self,
        tenant: &str,
        agent: &AgentSpec,
        values: Option<&Arc<dyn CallValues>>,
        mask: &SecretMask,
    ) -> Result<Routed, RouteError> {
        let regs = self.registrations(tenant).await?;
        let llm: Vec<&ProviderRegistration> = regs.iter().filter(|r| is_llm(r)).collect();
        if llm.is_empty() {
            return Ok(self.host_route());
        }
        let w = wants(agent);
        let (primary, fallbacks): (Vec<_>, Vec<_>) =
            llm.into_iter().partition(|r| !r.is_fallback());
        let (reg, model, fallback) = match pick(&primary, &w) {
            Some((r, m)) => (r, m, false),
            None => match pick(&fallbacks, &w) {
                Some((r, m)) => (r, m, true),
                None => {
                    return Err(RouteError::NoFit(format!(
                        "no registered model provider of this tenant has a model with the features agent \"{}\" requires ({})",
                        agent.id,
                        w.required.join(", ")
                    )));
                }
            },
        };
        let provider = self.connect(tenant, reg, &model, values, mask).await?;
        Ok(Routed {
            provider,
            provider_id: reg.id.clone(),
            model,
            fallback,
        })
    }

    async fn connect(
        &self,
        tenant: &str,
        reg: &ProviderRegistration,
        model: &str,
        values: Option<&Arc<dyn CallValues>>,
        mask: &SecretMask,
    ) -> Result<Arc<dyn ModelProvider>, RouteError> {
        let unusable = |why: String| RouteError::Unusable {
            provider: reg.id.clone(),
            adapter: reg.adapter_id.clone(),
            why,
        };
        let api_key = match &reg.secret_ref {
            None => None,
            Some(s) => {
                let resolver = values
                    .and_then(|v| v.provider_secrets(tenant))
                    .ok_or_else(|| {
                        unusable(format!(
                            "/secret_ref: this host keeps no secrets, so the secret \"{}\" cannot be read",
                            s.name
                        ))
                    })?;
                let key = resolver
                    .resolve(&s.env_name, &s.name)
                    .await
                    .map_err(|e| unusable(format!("/secret_ref: {e}")))?;
                // Masked in whatever the run stores (a model error quoting it, say).
                mask.add(&key);
                Some(key)
            }
        };
        let cache_key = (
            tenant.to_owned(),
            reg.id.clone(),
            model.to_owned(),
            reg.created_at,
        );
        if let Ok(cache) = self.cache.lock()
            && let Some((key, client)) = cache.get(&cache_key)
            && *key == api_key
        {
            return Ok(client.clone());
        }
        let connection = Connection {
            provider_id: &reg.id,
            adapter_id: &reg.adapter_id,
            config: &reg.adapter_config,
            api_key: api_key.clone(),
            model,
            max_output_tokens: max_output_tokens(reg, model),
            send_traceparent: reg.send_traceparent,
            sampling: takes_sampling(reg, model),
            egress: self.egress.clone(),
        };
        let client = adapters::connect(&connection).map_err(|e| unusable(e.to_string()))?;
        if let Ok(mut cache) = self.cache.lock() {
            if cache.len() >= MAX_CACHED {
                cache.clear();
            }
            cache.insert(cache_key, (api_key, client.clone()));
        }
        Ok(client)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reg(id: &str, metadata: Value) -> ProviderRegistration {
        ProviderRegistration {
            tenant: "t".into(),
            id: id.into(),
            adapter_id: adapters::OPENAI_COMPAT.into(),
            metadata,
            secret_ref: None,
            adapter_config: Default::default(),
            send_traceparent: false,
            created_at: 1,
            unregistered_at: None,
        }
    }

    fn model(name: &str, features: &[&str]) -> Value {
        json!({"name": name, "contextWindow": 1000, "features": features,
               "cost": {"promptUsdPer1kTokens": 0, "completionUsdPer1kTokens": 0}})
    }

    #[test]
    fn preferred_then_default_then_first() {
        let a = reg(
            "a",
            json!({"id": "a", "region": "unspecified", "defaultModel": "m2",
                   "models": [model("m1", &[]), model("m2", &[])]}),
        );
        let b = reg(
            "b",
            json!({"id": "b", "region": "unspecified", "models": [model("x", &[])]}),
        );
        let regs = vec![&a, &b];
        let mut w = Wants::default();
        assert_eq!(
            pick(&regs, &w).map(|(r, m)| (r.id.clone(), m)),
            Some(("a".into(), "m2".into()))
        );
        w.provider = Some("b".into());
        assert_eq!(
            pick(&regs, &w).map(|(r, m)| (r.id.clone(), m)),
            Some(("b".into(), "x".into()))
        );
        w.provider = Some("a".into());
        w.model = Some("m1".into());
        assert_eq!(pick(&regs, &w).map(|(_, m)| m), Some("m1".into()));
    }

    #[test]
    fn requirements_filter_and_preferences_rank() {
        let a = reg(
            "a",
            json!({"id": "a", "region": "r", "models": [model("plain", &[])]}),
        );
        let b = reg(
            "b",
            json!({"id": "b", "region": "r", "attributes": ["local"],
                   "models": [model("tools", &["tool-use"])]}),
        );
        let c = reg(
            "c",
            json!({"id": "c", "region": "r", "models": [model("t2", &["tool-use"])]}),
        );
        let regs = vec![&a, &b, &c];
        let w = Wants {
            required: vec!["tool-use".into()],
            ..Wants::default()
        };
        assert_eq!(pick(&regs, &w).map(|(r, _)| r.id.clone()), Some("b".into()));
        let w = Wants {
            preferred: vec!["local".into()],
            ..Wants::default()
        };
        assert_eq!(pick(&regs, &w).map(|(r, _)| r.id.clone()), Some("b".into()));
        let w = Wants {
            required: vec!["vision".into()],
            ..Wants::default()
        };
        assert!(pick(&regs, &w).is_none());
    }
}
